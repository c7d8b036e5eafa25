; spelunk's own addition to rust.scm (not vendored): each impl block as a definition, named by its type, so an
; outline shows which type the methods under it belong to; and a trait's method signatures (no body) as methods.

(impl_item
    type: [
      (type_identifier) @name
      (generic_type type: (type_identifier) @name)
      (scoped_type_identifier name: (type_identifier) @name)
    ]) @definition.impl

(declaration_list
    (function_signature_item
        name: (identifier) @name) @definition.method)
