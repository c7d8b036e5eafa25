import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { makeRepo } from './temp-repo.js';
import { plantedSecrets, privateKeyPem, type Planted } from './planted-secrets.js';

/**
 * A repository holding one secret of every kind the preset covers, in a script (found by secretlint) and in a
 * git-ignored `.env` (a credential file by name), plus a private key, a credentials.json, a token in AGENTS.md, and a
 * token committed and then deleted (only `git log -p` reaches it). `values` is every string that must never leave.
 */
export interface SecretRepo {
  root: string;
  planted: Planted[];
  /** Every secret value: no request, output or saved file may contain one. */
  values: string[];
  cleanup(): Promise<void>;
}

export async function makeSecretRepo(): Promise<SecretRepo> {
  const planted = plantedSecrets(1);
  const key = privateKeyPem(3);
  const deleted = plantedSecrets(9)[0]!;
  const inAgents = plantedSecrets(5)[0]!;
  const jsonSecret = 'Zq8v' + 'Lr2mXp4Tn7Wc';
  const repo = await makeRepo(
    {
      '.gitignore': '.env\n',
      '.env': `${planted.map((p) => p.line).join('\n')}\nDB_PASSWORD=${jsonSecret}-env\n`,
      '.env.example': 'DB_PASSWORD=changeme\n',
      'deploy.sh': `${planted.map((p) => p.line).join('\n')}\n`,
      'id_rsa': `${key.text}\n`,
      'config/credentials.json': `{\n  "client_id": "app",\n  "client_secret": "${jsonSecret}"\n}\n`,
      'AGENTS.md': `# Agents\nUse the staging token ${inAgents.value} for the smoke test.\n`,
      'old/deploy-old.sh': `#!/bin/sh\n${deleted.line}\n`,
      'src/app.js': 'export const port = 8080;\n',
    },
    { git: true },
  );
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
  execFileSync('git', ['rm', '-q', 'old/deploy-old.sh'], { cwd: repo.root, env });
  execFileSync('git', ['commit', '-q', '-m', 'drop the old deploy script'], { cwd: repo.root, env });
  const values = [
    ...planted.map((p) => p.value),
    ...key.body.match(/.{1,64}/g)!.map((chunk) => chunk.slice(0, 48)),
    deleted.value,
    inAgents.value,
    jsonSecret,
  ];
  return { root: repo.root, planted, values, cleanup: repo.cleanup };
}

/** Every file under `dir`, as text (saved sessions, SARIF, review files). */
export async function readTree(dir: string): Promise<string> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  const texts = await Promise.all(entries.filter((e) => e.isFile()).map((e) => fs.readFile(path.join(e.parentPath, e.name), 'utf8')));
  return texts.join('\n');
}

/** The values of `values` found in `text`, whole or by their first or last 12 characters (shortened in the answer). */
export function leaked(text: string, values: readonly string[]): string[] {
  return values.filter((v) => text.includes(v) || text.includes(v.slice(0, 12)) || text.includes(v.slice(-12))).map((v) => `${v.slice(0, 8)}…`);
}
