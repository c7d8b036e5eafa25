import { createReadStream } from 'node:fs';

/** Lines in `text`; a last line without a newline counts, an empty text has none. The one rule the tools share. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let count = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count += 1;
  return text.endsWith('\n') ? count : count + 1;
}

/** Lines in a file by the same rule, streamed: memory stays at one chunk whatever the size. */
export async function countFileLines(abs: string, signal?: AbortSignal): Promise<number> {
  let newlines = 0;
  let last = -1;
  for await (const chunk of createReadStream(abs, signal ? { signal } : {}) as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) newlines += 1;
    if (chunk.length > 0) last = chunk[chunk.length - 1] ?? -1;
  }
  return last === -1 || last === 10 ? newlines : newlines + 1;
}
