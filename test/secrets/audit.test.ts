import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, toolUse, type MockApi } from '../support/mock-api.js';
import { plantedSecrets } from '../support/planted-secrets.js';
import { leaked, makeSecretRepo, type SecretRepo } from '../support/secret-repo.js';

let repo: SecretRepo;
let api: MockApi;

beforeAll(async () => {
  repo = await makeSecretRepo();
});
afterAll(async () => {
  await repo?.cleanup();
});
afterEach(async () => {
  await api?.close();
});

interface AuditRun {
  code: number;
  stdout: string;
  stderr: string;
  requests: string;
  sarif: string;
}

/** An audit whose model reads deploy.sh, cites the token and files `verdict` with no findings of its own. */
async function audit(argv: string[], verdict: 'pass' | 'fail' = 'pass', env: Record<string, string> = {}): Promise<AuditRun> {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(
    reply(toolUse('read_file', { path: 'deploy.sh' })),
    reply(toolUse('report_findings', { verdict, summary: 'Looked at deploy.sh.', findings: [] })),
    reply(text('There is a GitHub token at `deploy.sh:1`.')),
  );
  const sarif = path.join(repo.root, '..', `out-${Date.now()}.sarif`);
  const run = await runCli(['audit', '-C', repo.root, '--output-format', 'json', '--sarif', sarif, ...argv, 'any hard-coded secrets?'], {
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, ...env },
    cwd: repo.root,
  });
  const written = await fs.readFile(sarif, 'utf8').catch(() => '');
  return { code: run.code, stdout: run.stdout, stderr: run.stderr, requests: JSON.stringify(api.requests.map((r) => r.body)), sarif: written };
}

describe('audit: spelunk\'s own secret findings', () => {
  it('reports every secret of the work tree as a `secret` finding (kind, place, no value), fails the verdict, and is in SARIF', async () => {
    const r = await audit([]);
    expect(r.code, r.stderr).toBe(4);
    const result = JSON.parse(r.stdout);
    const secrets = result.audit.findings.filter((f: { rule_id: string }) => f.rule_id === 'secret');
    expect(result.audit.verdict).toBe('fail');
    for (const [i, p] of repo.planted.entries()) {
      expect(secrets).toContainEqual(expect.objectContaining({ path: 'deploy.sh', start_line: i + 1, title: p.kind, severity: 'high' }));
    }
    expect(secrets).toContainEqual(expect.objectContaining({ path: 'AGENTS.md', start_line: 2, title: 'GitHub token' }));
    expect(secrets).toContainEqual(expect.objectContaining({ path: 'id_rsa', start_line: 1, title: 'private key' }));
    expect(secrets).toContainEqual(expect.objectContaining({ path: 'config/credentials.json', start_line: 3, severity: 'medium' }));
    expect(secrets.some((f: { path: string }) => f.path === '.env')).toBe(false);
    expect(result.citations).toContainEqual(expect.objectContaining({ path: 'deploy.sh', start_line: 1, status: 'ok' }));
    expect(r.sarif).toContain('"ruleId": "secret"');
    for (const text of [r.stdout, r.stderr, r.requests, r.sarif]) expect(leaked(text, repo.values)).toEqual([]);
  });

  it('--fail-on critical: the secret findings (high) are reported but do not fail the run', async () => {
    const r = await audit(['--fail-on', 'critical']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).audit.findings.length).toBeGreaterThan(10);
  });

  it.each([
    ['SPELUNK_ALLOW_SECRETS=1 is refused (exit 2, one line)', [], { SPELUNK_ALLOW_SECRETS: '1' }, 2, 'not honoured by audit'],
    ['SPELUNK_ALLOW_SECRETS=yes is refused', [], { SPELUNK_ALLOW_SECRETS: 'yes' }, 2, 'must be 1 or 0'],
  ])('%s', async (_, argv, env, code, said) => {
    const r = await audit(argv, 'pass', env);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(said);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('--allow-secrets given on the command line sends the values, and still reports the findings', async () => {
    const r = await audit(['--allow-secrets']);
    expect(r.requests).toContain(repo.planted[0]!.value);
    expect(r.stderr).toContain('--allow-secrets: secrets in the repository go to the model');
    expect(JSON.parse(r.stdout).audit.findings.some((f: { rule_id: string }) => f.rule_id === 'secret')).toBe(true);
  });
});

describe('audit --diff: only the secrets the change adds', () => {
  let changed: SecretRepo;
  const added = plantedSecrets(4)[0]!;
  beforeAll(async () => {
    changed = await makeSecretRepo();
    const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
    await fs.writeFile(path.join(changed.root, 'ci.sh'), `#!/bin/sh\n${added.line}\n`);
    execFileSync('git', ['add', 'ci.sh'], { cwd: changed.root, env });
    execFileSync('git', ['commit', '-q', '-m', 'ci'], { cwd: changed.root, env });
  });
  afterAll(async () => {
    await changed?.cleanup();
  });

  it('finds ci.sh:2 and nothing of the files the change does not touch; the review payload comments on it', async () => {
    api = await startMockApi({ minCacheTokens: 256 });
    api.enqueue(reply(toolUse('report_findings', { verdict: 'pass', summary: 'fine', findings: [] })), reply(text('done')));
    const review = path.join(changed.root, '..', 'review.json');
    const run = await runCli(['audit', '-C', changed.root, '--diff', 'HEAD~1', '--review-output', review, '--output-format', 'json', 'secrets?'], {
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url },
      cwd: changed.root,
    });
    expect(run.code, run.stderr).toBe(4);
    const findings = JSON.parse(run.stdout).audit.findings;
    expect(findings).toEqual([expect.objectContaining({ rule_id: 'secret', path: 'ci.sh', start_line: 2, title: 'GitHub token', diff_class: 'changed-line' })]);
    const payload = await fs.readFile(review, 'utf8');
    expect(JSON.parse(payload).comments).toEqual([expect.objectContaining({ path: 'ci.sh', line: 2, body: expect.stringContaining('GitHub token') })]);
    expect(leaked(run.stdout + run.stderr + payload + JSON.stringify(api.requests.map((r) => r.body)), [added.value])).toEqual([]);
  });
});

describe('fingerprints of secret findings', () => {
  it('are not a hash of the line that holds the secret', async () => {
    const { createHash } = await import('node:crypto');
    const { findingFingerprints } = await import('../../src/audit/fingerprint.js');
    const line = 'DB_PASSWORD=hunter22';
    const finding = { rule_id: 'secret', severity: 'high' as const, title: 'value in a credential file', message: 'm', path: '.env', start_line: 1, end_line: 1 };
    const [print] = findingFingerprints([finding], () => [line]);
    const ofLine = createHash('sha256').update(`secret\0.env\0${line}`).digest('hex');
    expect(print).not.toContain(ofLine);
    const [model] = findingFingerprints([{ ...finding, rule_id: 'hardcoded-password' }], () => [line]);
    expect(model).toContain(createHash('sha256').update(`hardcoded-password\0.env\0${line}`).digest('hex'));
  });
});
