import { describe, expect, it } from 'vitest';
import { credentialShape } from '../../src/secrets/credential-files.js';
import { mayHoldSecret } from '../../src/secrets/gate.js';
import { Redactor } from '../../src/secrets/redactor.js';
import { plantedSecrets, privateKeyPem } from '../support/planted-secrets.js';

describe('credential files by name', () => {
  it.each([
    ['.env', 'keyed'],
    ['config/.env.production', 'keyed'],
    ['.env.local', 'keyed'],
    ['prod.env', 'keyed'],
    ['.envrc', 'keyed'],
    ['.env.example', null],
    ['.env.sample', null],
    ['deploy/.env.template', null],
    ['.env.dist', null],
    ['certs/server.pem', 'key-material'],
    ['tls/server.key', 'key-material'],
    ['id_rsa', 'key-material'],
    ['home/.ssh/id_ed25519', 'key-material'],
    ['id_rsa.pub', null],
    ['store.p12', 'key-material'],
    ['store.pfx', 'key-material'],
    ['.npmrc', 'keyed'],
    ['.pypirc', 'keyed'],
    ['.netrc', 'keyed'],
    ['.git-credentials', 'keyed'],
    ['.aws/credentials', 'keyed'],
    ['config/credentials.json', 'json'],
    ['credentials-prod.json', 'json'],
    ['client_secret_1234.apps.googleusercontent.com.json', 'json'],
    ['config/secrets.yml', 'keyed'],
    ['secrets.prod.json', 'json'],
    ['prod.tfvars', 'keyed'],
    ['src/secrets.ts', null],
    ['src/credentials.ts', null],
    ['environment.ts', null],
    ['keyboard.js', null],
    ['docs/env.md', null],
  ])('%s → %s', (file, shape) => {
    expect(credentialShape(file)).toBe(shape);
  });

  const redactor = new Redactor(true);
  it.each([
    ['.env: keys kept, values left out', '.env', 'export DB_PASSWORD="hunter22"\n# a comment\nPORT=8080\n', ['export DB_PASSWORD=[redacted: value in a credential file, .env:1]', '# a comment', 'PORT=[redacted: value in a credential file, .env:3]'], 'hunter22'],
    ['.npmrc: the token is left out, settings stay', '.npmrc', 'package-lock=false\n//registry.npmjs.org/:_authToken=abc123secret\n', ['package-lock=false', '//registry.npmjs.org/:_authToken=[redacted: value in a credential file, .npmrc:2]'], 'abc123secret'],
    ['.netrc: login and password, the machine stays', '.netrc', 'machine api.example.com login deploy password s3cretpw\n', ['machine api.example.com login [redacted: value in a credential file, .netrc:1] password [redacted: value in a credential file, .netrc:1]'], 's3cretpw'],
    ['.pypirc: the password, the section stays', '.pypirc', '[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc\n', ['[pypi]', 'username = [redacted: value in a credential file, .pypirc:2]', 'password = [redacted: value in a credential file, .pypirc:3]'], 'pypi-AgEIcHlwaS5vcmc'],
    ['credentials.json: minified, keys kept', 'credentials.json', '{"user":"svc","pass":"p4ssw0rd-x","port":5432}', ['{"user":[redacted: value in a credential file, credentials.json:1],"pass":[redacted: value in a credential file, credentials.json:1],"port":[redacted: value in a credential file, credentials.json:1]}'], 'p4ssw0rd-x'],
  ])('%s', async (_, file, content, expected, secret) => {
    const out = await redactor.outcome('read_file', { path: file }, { content: content.split('\n').map((l, i) => `${i + 1}\t${l}`).join('\n'), summary: 's', isError: false });
    expect(out.content).not.toContain(secret);
    expect(out.content.split('\n').map((l) => l.replace(/^\d+\t/, '')).slice(0, expected.length)).toEqual(expected);
  });

  it.each([
    ['a whole key: secretlint names the block', (t: string) => t, '[redacted: private key, certs/server.pem:1-9]'],
    ['the head of a key: its BEGIN line stays, the lines after it are left out', (t: string) => t.split('\n').slice(0, 4).join('\n'), '-----BEGIN RSA PRIVATE KEY-----\n[redacted: private key, certs/server.pem:2]'],
  ])('cat a key file, %s', async (_, cut, expected) => {
    const key = privateKeyPem(5);
    const out = await redactor.outcome('bash', { command: 'cat certs/server.pem' }, { content: cut(key.text), summary: 's', isError: false });
    expect(out.content.startsWith(expected)).toBe(true);
    expect(out.content).not.toContain(key.body.slice(0, 40));
    expect(out.content).not.toContain(key.body.slice(64, 104));
  });

  it('git grep over a revision: REV:path:line: names the file, and a .env there loses its value', async () => {
    const out = await redactor.outcome('git', { command: 'grep -n PASSWORD HEAD~3' }, { content: 'HEAD~3:.env:2:DB_PASSWORD=plainpw99\n', summary: 's', isError: false });
    expect(out.content).toBe('HEAD~3:.env:2:DB_PASSWORD=[redacted: value in a credential file, .env:2 (at HEAD~3)]\n');
  });

  it.each([
    ['rg --hidden -I', 'rg --hidden -I -n PASSWORD', true],
    ['rg -uu --json', 'rg -uu --json PASSWORD', true],
    ['grep -rh', 'grep -rh PASSWORD .', true],
    ['rg -I without --hidden (dot files are not searched)', 'rg -I -n PASSWORD', false],
  ])('a search that hides its file names and reaches dot files: %s → values left out: %s', async (_, command, left) => {
    const out = await redactor.outcome('bash', { command }, { content: 'DB_PASSWORD=plainpw99\n', summary: 's', isError: false });
    expect(out.content.includes('plainpw99')).toBe(!left);
  });

  it('a search that names no file but passes through a .env redacts what it matched there', async () => {
    const out = await redactor.outcome('bash', { command: 'rg -n PASSWORD' }, { content: 'src/db.js:3:const p = env.DB_PASSWORD;\n.env:2:DB_PASSWORD=plainpw99\n', summary: 's', isError: false });
    expect(out.content).toContain('src/db.js:3:const p = env.DB_PASSWORD;');
    expect(out.content).toContain('.env:2:DB_PASSWORD=[redacted: value in a credential file, .env:2]');
  });
});

describe('the gate: every kind the preset covers passes it, ordinary text does not', () => {
  it.each(plantedSecrets(2).map((p) => [p.kind, p.line] as const))('%s', (_, line) => {
    expect(mayHoldSecret(`some text ${line} more`)).toBe(true);
  });
  it.each([
    ['prose', '# Agents\nRun the tests with npm test. Keep functions short.\n'],
    ['paths', 'See packages/babel-core/src/config/files/index.ts for details.\n'],
    ['code', 'export function readFile(path) { return fs.readFileSync(path, "utf8"); }\n'],
  ])('%s', (_, text) => {
    expect(mayHoldSecret(text)).toBe(false);
  });
});

describe('tuned false positives', () => {
  const redactor = new Redactor(true);
  it.each([
    ['a URL with a password at example.com (deno url_test.ts)', 'tests/url_test.ts', '"http://user:secret1@example.com:8080/x",', false],
    ['the user:pass placeholder at another host', 'tests/url_test.ts', '"http://user:pass@xn--lck1c3crb1723bpq4a.com/a",', false],
    ['a real-looking basic auth URL', 'deploy.sh', 'curl https://deploy:Xk29fjq8Lm@ci.corp.io/hook', true],
    ['a certificate in a .pem (public)', 'certs/RootCA.pem', '-----BEGIN CERTIFICATE-----\nMIIDIzCCAgugAwIBAgIJAMKPPW4tsOymMA0GCSqGSIb3DQEBCwUAMCcxCzAJBgNV\n-----END CERTIFICATE-----', false],
    ['a key after a certificate in the same .pem', 'certs/both.pem', '-----BEGIN CERTIFICATE-----\nMIIDIzCC\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nshort\n-----END PRIVATE KEY-----', true],
  ])('%s → redacted: %s', async (_, file, content, redacted) => {
    const out = await redactor.redact(content, { kind: 'text', path: file });
    expect(out.hits.length > 0).toBe(redacted);
  });
});
