import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { isInside } from '../sandbox/paths.js';
import { SECRET_RULE, type Finding } from './report.js';

/** Key of our fingerprint; bump the version if the hashed text ever changes, or every alert would reopen. */
export const FINGERPRINT_KEY = 'spelunk/v1';

/** Lines of a repository-relative file, or null when it cannot be read (the fingerprint then uses the title). */
export type LineReader = (relPath: string) => string[] | null;

/**
 * The fingerprint of each finding as SARIF carries it (`partialFingerprints["spelunk/v1"]`); the --baseline file
 * lists these. sha256 of rule id + path + the region's source with whitespace collapsed: identical across runs,
 * unchanged when lines are inserted above, different when the flagged code changes. Findings that hash alike (the
 * same code twice in one file) get ":2", ":3"… in line order, as GitHub's own fingerprints do, so they stay distinct
 * alerts.
 */
export function findingFingerprints(findings: readonly Finding[], readLines: LineReader): string[] {
  const cache = new Map<string, string[] | null>();
  const hashes = findings.map((finding) => {
    if (!cache.has(finding.path)) cache.set(finding.path, readLines(finding.path));
    const region = regionText(cache.get(finding.path) ?? null, finding);
    // A secret finding's lines hold the secret: its fingerprint must not be a hash of them (a weak password could be
    // found again from it). Its kind and path key it; findings alike in one file are told apart by line order below.
    const basis = finding.rule_id === SECRET_RULE ? `secret:${finding.title}` : (region ?? `title:${finding.title}`);
    return createHash('sha256').update(`${finding.rule_id}\0${finding.path}\0${basis}`).digest('hex');
  });
  const order = findings.map((_, i) => i).sort((a, b) => (findings[a]?.start_line ?? 0) - (findings[b]?.start_line ?? 0));
  const seen = new Map<string, number>();
  const numbered: string[] = [];
  for (const i of order) {
    const hash = hashes[i] ?? '';
    const occurrence = (seen.get(hash) ?? 0) + 1;
    seen.set(hash, occurrence);
    numbered[i] = `${hash}:${occurrence}`;
  }
  return numbered;
}

function regionText(lines: string[] | null, finding: Finding): string | null {
  if (lines === null || finding.end_line > lines.length) return null;
  return lines
    .slice(finding.start_line - 1, finding.end_line)
    .map((line) => line.trim().replace(/\s+/g, ' '))
    .join('\n');
}

/** A `LineReader` (for the fingerprints and `toSarif`) that reads files under `root`, refusing anything outside it. */
export function fileLineReader(root: string): LineReader {
  return (relPath) => {
    try {
      const real = realpathSync(path.join(root, relPath));
      if (!isInside(root, real)) return null;
      return readFileSync(real, 'utf8').split(/\r?\n/);
    } catch {
      return null;
    }
  };
}

/** Lines either side of a finding's range searched for the code an earlier comment was anchored on. */
const ANCHOR_WINDOW_LINES = 3;

/** A finding's identity on a pull request: the fingerprint its comment carries, and those that mean the same finding. */
export interface FindingAnchor {
  /** sha256 of rule id + path + the code of its anchor line (the first non-blank line of the range), ":n" for the nth such line in the file. */
  own: string;
  /** The fingerprint of every non-blank line within ANCHOR_WINDOW_LINES of the range, own first: a range that moved or grew by a few lines still finds its comment. */
  nearby: string[];
}

/**
 * The review's fingerprints (not SARIF's, which hash the whole range for code scanning): a finding is its rule, its
 * path and the code of one line, so the model reporting `11-12` and then `11-13` for the same call, or the code moving
 * down a line, is the same finding; the same code twice in a file stays two findings (":1", ":2" by line order).
 * Without the file's lines (deleted, or the range past its end) the title stands in for the code.
 */
export function anchorFingerprints(findings: readonly Finding[], readLines: LineReader): FindingAnchor[] {
  const cache = new Map<string, string[] | null>();
  return findings.map((finding) => {
    if (!cache.has(finding.path)) cache.set(finding.path, readLines(finding.path));
    const lines = cache.get(finding.path) ?? null;
    const anchor = lines === null || finding.end_line > lines.length ? null : firstCodeLine(lines, finding.start_line, finding.end_line);
    if (lines === null || anchor === null) {
      const own = `${sha(`${finding.rule_id}\0${finding.path}\0title:${finding.title}`)}:1`;
      return { own, nearby: [own] };
    }
    const print = (line: number) => lineFingerprint(finding, lines, line);
    const from = Math.max(1, finding.start_line - ANCHOR_WINDOW_LINES);
    const to = Math.min(lines.length, finding.end_line + ANCHOR_WINDOW_LINES);
    const nearby = [print(anchor)];
    for (let line = from; line <= to; line++) if (line !== anchor && normalised(lines[line - 1]) !== '') nearby.push(print(line));
    return { own: nearby[0]!, nearby };
  });
}

function firstCodeLine(lines: string[], start: number, end: number): number | null {
  for (let line = start; line <= end; line++) if (normalised(lines[line - 1]) !== '') return line;
  return null;
}

/** The fingerprint of one line as a finding's anchor: its code, and which occurrence of that code in the file it is. */
function lineFingerprint(finding: Finding, lines: string[], line: number): string {
  const code = normalised(lines[line - 1]);
  let occurrence = 0;
  for (let i = 0; i < line; i++) if (normalised(lines[i]) === code) occurrence++;
  return `${sha(`${finding.rule_id}\0${finding.path}\0${code}`)}:${occurrence}`;
}

function normalised(line: string | undefined): string {
  return (line ?? '').trim().replace(/\s+/g, ' ');
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
