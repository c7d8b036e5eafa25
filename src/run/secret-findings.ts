import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { ChangedFile, DiffScope } from '../audit/diff.js';
import { SECRET_RULE, type AuditReport, type Finding, type FindingsSink } from '../audit/report.js';
import { walkFiles } from '../preamble/rg-walk.js';
import { bundledRg } from '../sandbox/programs.js';
import { Redactor, type SecretHit } from '../secrets/redactor.js';

export { SECRET_RULE };
/** Files larger than this (1 MiB) are not scanned: generated or data files, not where a credential is written. */
const MAX_FILE_BYTES = 1024 * 1024;
/** The audit's scan of a whole repository stops after this many files, and says so. */
const MAX_FILES = 20_000;
const WALK_TIMEOUT_MS = 30_000;
const SNIFF_BYTES = 8 * 1024;

/**
 * Adds spelunk's own `secret` findings to an audit's report, whatever the model looked at: every secret in the
 * files of the work tree (ignore rules honoured), or with a change (`--diff`) only those on lines it adds. A finding
 * names the kind and the place, never the value. With a report whose verdict was pass (or none at all), a secret at
 * `high` makes it fail: a hard-coded credential is a finding on its own. Never throws; a scan that could not run is a
 * warning.
 */
export async function addSecretFindings(sink: FindingsSink, root: string, change: DiffScope | null): Promise<void> {
  const scanned = await scanRepository(root, change).catch((error: unknown) => ({ findings: [], warning: `the secret scan failed: ${String(error)}` }));
  if (scanned.warning !== null) sink.warnings.push(scanned.warning);
  if (scanned.findings.length === 0) return;
  sink.report = withFindings(sink.report, scanned.findings);
}

function withFindings(report: AuditReport | null, found: Finding[]): AuditReport {
  const said = `spelunk's secret scan found ${found.length} secret${found.length === 1 ? '' : 's'} (rule ${SECRET_RULE}; values not shown)`;
  if (report === null) return { verdict: 'fail', summary: `report_findings was not called; ${said}.`, findings: found };
  const verdict = report.verdict === 'fail' || found.some((f) => f.severity === 'high') ? 'fail' : report.verdict;
  return { ...report, verdict, summary: `${report.summary} ${capital(said)}.`, findings: [...report.findings, ...found] };
}

async function scanRepository(root: string, change: DiffScope | null): Promise<{ findings: Finding[]; warning: string | null }> {
  const listed = change ? { files: change.files.filter((f) => !f.deleted && f.lines.length > 0).map((f) => f.path), warning: null } : await listFiles(root);
  const scope = new Map<string, ChangedFile>((change?.files ?? []).map((f) => [f.path, f]));
  const redactor = new Redactor(true);
  const findings: Finding[] = [];
  for (const rel of listed.files) {
    const text = await readText(root, rel);
    if (text === null) continue;
    const { hits } = await redactor.redact(text, { kind: 'text', path: rel });
    const file = scope.get(rel);
    for (const hit of hits) {
      if (hit.line === null) continue;
      if (file && !file.lines.some(([a, b]) => a <= (hit.endLine ?? hit.line!) && b >= hit.line!)) continue;
      findings.push(findingOf(hit, rel));
    }
  }
  return { findings, warning: listed.warning };
}

function findingOf(hit: SecretHit, rel: string): Finding {
  const line = hit.line!;
  const end = Math.max(line, hit.endLine ?? line);
  const byName = hit.ruleId === 'credential-file';
  const found = byName ? `${rel} is a credential file by its name` : `found by secretlint (${hit.ruleId})`;
  return {
    rule_id: SECRET_RULE,
    // A value of a credential file by name may be a harmless setting (a registry URL in .npmrc): reported, not failing.
    severity: byName ? 'medium' : 'high',
    title: hit.kind,
    message: `A ${hit.kind} is written at ${rel}:${line}${end > line ? `-${end}` : ''} (${found}); its value is not shown. Remove it from the repository, and revoke it if it was ever pushed.`,
    path: rel,
    start_line: line,
    end_line: end,
    category: 'security',
  };
}

/** Files of the work tree as `rg --files --hidden` lists them (ignore rules honoured, no .git, no symlinks). */
async function listFiles(root: string): Promise<{ files: string[]; warning: string | null }> {
  const rg = await bundledRg();
  if (rg === null) return { files: [], warning: 'the secret scan did not run: the ripgrep binary was not found' };
  const files: string[] = [];
  const walk = await walkFiles({ rgPath: rg, cwd: root, args: [], timeoutMs: WALK_TIMEOUT_MS, onPath: (rel) => void files.push(rel) });
  if (!walk.ok) return { files: [], warning: `the secret scan did not run: ${walk.reason}` };
  files.sort();
  if (files.length <= MAX_FILES) return { files, warning: null };
  return { files: files.slice(0, MAX_FILES), warning: `the secret scan read the first ${MAX_FILES} of ${files.length} files` };
}

/** A regular text file's content, or null (missing, a symlink, too large, binary). */
async function readText(root: string, rel: string): Promise<string | null> {
  const abs = path.join(root, rel);
  const st = await fs.lstat(abs).catch(() => null);
  if (st === null || !st.isFile() || st.size > MAX_FILE_BYTES) return null;
  const bytes = await fs.readFile(abs).catch(() => null);
  if (bytes === null || bytes.subarray(0, SNIFF_BYTES).includes(0)) return null;
  return bytes.toString('utf8');
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The change with its text redacted (the diff goes to the model in the first message of an audit); the changed
 * files and lines, which scope the findings, are kept. `allow`: --allow-secrets.
 */
export async function redactChange(change: DiffScope, allow: boolean): Promise<DiffScope> {
  const { text } = await new Redactor(!allow).redact(change.text, { kind: 'tool', name: 'git', input: { command: 'diff' } });
  return text === change.text ? change : { ...change, text };
}
