// marked-terminal ships no types; @types/marked-terminal pins an old marked. Only what spelunk calls is declared.
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked';

  export function markedTerminal(options?: Record<string, unknown>, highlightOptions?: Record<string, unknown>): MarkedExtension;
}
