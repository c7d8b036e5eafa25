/** True when `s` holds an escape character (a colour or any other sequence). */
export function hasAnsi(s: string): boolean {
  return s.includes('\x1b');
}

/** Removes CSI sequences (colours, cursor moves), OSC 8 hyperlink wrappers and carriage returns: the text a person sees. */
export function stripAnsi(s: string): string {
  return s.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, '').replace(/\x1b\]8;[^\x1b\x07]*(?:\x1b\\|\x07)/g, '').replace(/\r/g, '');
}
