/**
 * The fetch globals the SDK touches, without Node's fetch. In Node 20 `Headers`, `FormData`, `Request` and `Response`
 * are lazy getters that load all of undici (a cost on every start; docs/bench-log.md) on first touch, and the
 * SDK touches `Headers` on every request and `FormData` in every body check. scripts/build.mjs injects this file's
 * exports into the bundle in place of those globals (esbuild `inject`), and agent/http-fetch.ts sends the requests,
 * so a run never loads undici. Tests that import the sources use Node's own globals: both must behave alike.
 */

/** A header name is an HTTP token (RFC 9110 §5.6.2): anything else could not be sent, or would split the header. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** NUL, CR or LF in a value could start a second header or request on the wire (header injection): refused. */
const FORBIDDEN_IN_VALUE = /[\0\r\n]/;
/** Leading and trailing HTTP whitespace is not part of a value (Fetch: "normalize"). */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

type HeaderPairs = Iterable<readonly [string, string] | readonly string[]>;
export type HeadersInitLike = HeaderPairs | Record<string, string | readonly string[]> | Headers | null | undefined;

/** The Fetch standard's Headers as the SDK and http-fetch.ts use it: case-insensitive, sorted, values joined by ", ". */
export class Headers {
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeadersInitLike) {
    if (init === null || init === undefined) return;
    if (typeof init !== 'object') throw new TypeError("Failed to construct 'Headers': The provided value is not of type 'HeadersInit'");
    if (Symbol.iterator in init) {
      for (const pair of init as HeaderPairs) {
        const entry = [...pair];
        if (entry.length !== 2) throw new TypeError('Headers constructor: expected name/value pair to be length 2, found ' + entry.length);
        this.append(String(entry[0]), String(entry[1]));
      }
      return;
    }
    for (const [name, value] of Object.entries(init as Record<string, string | readonly string[]>)) {
      this.append(name, String(value));
    }
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const list = this.#values.get(key);
    if (list) list.push(headerValue(value));
    else this.#values.set(key, [headerValue(value)]);
  }

  set(name: string, value: string): void {
    this.#values.set(headerName(name), [headerValue(value)]);
  }

  get(name: string): string | null {
    return this.#values.get(headerName(name))?.join(', ') ?? null;
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  delete(name: string): void {
    this.#values.delete(headerName(name));
  }

  getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])];
  }

  /** Sorted by name; set-cookie once per value, every other name once with its values joined (Fetch: "sort and combine"). */
  *entries(): IterableIterator<[string, string]> {
    const names = [...this.#values.keys()].sort();
    for (const name of names) {
      const list = this.#values.get(name);
      if (list === undefined) continue;
      if (name === 'set-cookie') for (const value of list) yield [name, value];
      else yield [name, list.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}

/**
 * Never constructed: the SDK only asks whether a request body is one (`body instanceof FormData`) before it sends JSON,
 * and spelunk never uploads a form. Constructing one says so rather than sending something else.
 */
export class FormData {
  constructor() {
    throw new TypeError('FormData is not available in spelunk (no request sends a form)');
  }
}

function headerName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name "${text}"`);
  return text.toLowerCase();
}

function headerValue(value: string): string {
  const text = String(value).replace(EDGE_WHITESPACE, '');
  if (FORBIDDEN_IN_VALUE.test(text)) throw new TypeError(`Headers: invalid header value ${JSON.stringify(text)}`);
  return text;
}
