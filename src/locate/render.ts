import { escapeControls } from '../escape.js';
import { explainLines } from './explain.js';
import type { LocateResult } from './locate.js';

/**
 * The text form: one block per file, best first: `path  score`, then its best symbols and lines, each as
 * `path:line`, so a terminal or editor can open them and the citation verifier accepts them as they are.
 */
export function renderText(result: LocateResult): string {
  const out: string[] = [];
  result.results.forEach((hit, i) => {
    out.push(`${i + 1}. ${escapeControls(hit.path)}  (score ${hit.score.toFixed(3)})`);
    for (const s of hit.symbols) out.push(`   ${s.kind} ${escapeControls(s.name)}  ${escapeControls(hit.path)}:${s.line}`);
    for (const l of hit.lines) out.push(`   ${escapeControls(hit.path)}:${l.line}  ${escapeControls(l.text)}`);
    if (hit.explain) out.push(...explainLines(hit.explain).map((l) => escapeControls(l)));
  });
  if (result.results.length === 0) out.push('no matching files');
  return `${out.join('\n')}\n`;
}

/** The JSON form: one object on one line. */
export function renderJson(result: LocateResult): string {
  return `${JSON.stringify(result)}\n`;
}
