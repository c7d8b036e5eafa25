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
