import type { OutStream } from '../io.js';

/** OSC 8 opener and closer; the terminator is ST (`ESC \`), which every OSC 8 terminal accepts. */
const OSC8_OPEN = '\x1b]8;;';
const ST = '\x1b\\';
/** What may appear in a URL inside OSC 8: printable ASCII only (a control character would end or forge the sequence). */
const SAFE_URL = /^[\x21-\x7e]+$/;

/**
 * Whether to write OSC 8 hyperlinks to `stream`: never off a terminal; FORCE_HYPERLINK=0 off, any other value on;
 * else what supports-hyperlinks says about the terminal (it knows which emulators understand OSC 8).
 */
export function hyperlinksEnabled(
  stream: OutStream,
  env: Readonly<Record<string, string | undefined>>,
  detect: (() => boolean) | null,
): boolean {
  if (stream.isTTY !== true) return false;
  const force = env.FORCE_HYPERLINK;
  if (force !== undefined && force !== '') return force !== '0' && force.toLowerCase() !== 'false';
  return detect?.() ?? false;
}

/** `text` as a clickable link to `url`; plain `text` when the URL is not safe to embed. */
export function osc8(url: string, text: string): string {
  return SAFE_URL.test(url) ? `${OSC8_OPEN}${url}${ST}${text}${OSC8_OPEN}${ST}` : text;
}

/**
 * The URL a citation opens: `file://<abs>` by default, or the SPELUNK_EDITOR_URL template with `{abs}`, `{path}` and
 * `{line}` filled in (`vscode://file/{abs}:{line}`). Paths are percent-encoded; null for a template that is unsafe.
 */
export function citationUrl(abs: string, rel: string, line: number | null, template: string | null): string | null {
  const encodedAbs = encodeURI(abs).replace(/#/g, '%23').replace(/\?/g, '%3F');
  if (template === null) return `file://${encodedAbs}`;
  const url = template
    .replace(/\{abs\}/g, encodedAbs)
    .replace(/\{path\}/g, encodeURI(rel))
    .replace(/\{line\}/g, String(line ?? 1));
  return SAFE_URL.test(url) ? url : null;
}
