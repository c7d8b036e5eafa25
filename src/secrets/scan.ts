import { lintSource } from '@secretlint/core';
import { secretLintProfiler } from '@secretlint/profiler';
import { creator as recommended } from '@secretlint/secretlint-rule-preset-recommend';
type SecretLintCoreConfig = Parameters<typeof lintSource>[0]['options']['config'];
import { kindOf } from './kinds.js';

/** One secret secretlint found: UTF-16 offsets into the scanned text, and what it is. */
export interface ScanHit {
  start: number;
  end: number;
  kind: string;
  ruleId: string;
  messageId: string;
}

/**
 * secretlint's recommended preset, as shipped, with two changes made through its own configuration:
 * - the comment filter is off: a `secretlint-disable` comment is repository content, and in a tool result that joins
 *   several files (`rg -n`, `cat a b`, `git log -p`) one file's comment would switch detection off for the next
 *   file's lines, so anyone who can commit a comment could have a `.env` sent;
 * - the allow patterns below, each for a false positive measured on babel, deno and express (see README, Secrets):
 *   documentation placeholders, never a shape a real credential takes.
 */
/**
 * secretlint's `allows` (regular expressions matched against what a rule found) for URLs that only documentation and
 * tests write: a host under the reserved example.com/.net/.org (RFC 2606: never a real server), and the `user:pass`
 * placeholder pair. deno's URL tests and WPT expectations held all 14 basic-auth lines this redacted.
 */
const DOCUMENTATION_URLS = ['/:\\/\\/[^\\s/@]+@(?:[\\w-]+\\.)*example\\.(?:com|net|org)\\b/i', '/:\\/\\/user:pass@/'];

const CONFIG: SecretLintCoreConfig = {
  rules: [
    {
      id: '@secretlint/secretlint-rule-preset-recommend',
      rule: recommended,
      rules: [
        { id: '@secretlint/secretlint-rule-filter-comments', disabled: true },
        // Access key IDs (AKIA…) are off in the preset by default; an ID names the key a leaked secret belongs to.
        { id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } },
        { id: '@secretlint/secretlint-rule-basicauth', options: { allows: DOCUMENTATION_URLS } },
        { id: '@secretlint/secretlint-rule-database-connection-string', options: { allows: DOCUMENTATION_URLS } },
      ],
    },
  ],
};

/**
 * secretlint's profiler marks every step of every scan in the process-wide performance timeline and keeps each entry
 * in an array it searches on the next mark: over a session's tool results that is memory that only grows and a scan
 * that slows with every result (a 20-character text took 12 ms at p90 after 60 scans). Its marks are switched off;
 * nothing of spelunk reads them.
 */
secretLintProfiler.mark = (): void => {};

/** Every secret in `content`, in order of position. Never throws: a rule that fails reports nothing for this text. */
export async function scanText(content: string): Promise<ScanHit[]> {
  if (content === '') return [];
  const result = await lintSource({
    // No physical path: no rule reads a file (the p12 check would), and the scan sees only what is passed.
    source: { filePath: 'tool-output.txt', content, ext: '.txt', contentType: 'text' },
    options: { config: CONFIG, noPhysicFilePath: true, maskSecrets: true },
  });
  return result.messages
    .filter((m) => m.type === 'message')
    .map((m) => ({ start: m.range[0], end: m.range[1], kind: kindOf(m.messageId, m.ruleId), ruleId: m.ruleId, messageId: m.messageId }))
    .sort((a, b) => a.start - b.start || b.end - a.end);
}
