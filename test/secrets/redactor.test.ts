import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/secrets/redactor.js';
import { plantedSecrets, privateKeyPem } from '../support/planted-secrets.js';

const planted = plantedSecrets();
const redactor = new Redactor(true);

describe('each kind the preset covers, in a shell script', () => {
  it.each(planted.map((p) => [p.kind, p] as const))('%s is replaced by a marker naming kind and place', async (_, p) => {
    const text = `#!/bin/sh\n# deploy\n${p.line}\necho done\n`;
    const out = await redactor.redact(text, { kind: 'text', path: 'deploy.sh' });
    expect(out.text).not.toContain(p.value);
    expect(out.text).toContain(`[redacted: ${p.kind}, deploy.sh:3]`);
    expect(out.text.split('\n')).toHaveLength(5);
  });
});

describe('places in tool output', () => {
  const github = planted[0]!;
  it.each([
    ['read_file numbered lines', 'read_file', { path: 'src/app.js' }, `1\tconst a = 1;\n2\tconst t = "${github.value}";\n`, 'src/app.js:2'],
    ['rg -n over the tree', 'bash', { command: "rg -n token" }, `src/x.js:7:const t = "${github.value}";\n`, 'src/x.js:7'],
    ['rg -n in one file', 'bash', { command: 'rg -n token src/x.js' }, `7:const t = "${github.value}";\n`, 'src/x.js:7'],
    ['cat one file', 'bash', { command: 'cat conf/app.ini' }, `[a]\nb=1\ntoken=${github.value}\n`, 'conf/app.ini:3'],
    ["sed -n '10,12p'", 'bash', { command: "sed -n '10,12p' conf/app.ini" }, `x\ntoken=${github.value}\n`, 'conf/app.ini:11'],
    ['git show REV:path', 'git', { command: 'show HEAD~1:conf/app.ini' }, `x\ntoken=${github.value}\n`, 'conf/app.ini:2'],
    ['an unknown form', 'bash', { command: 'ls' }, `x\ntoken=${github.value}\n`, 'output line 2'],
  ])('%s', async (_, name, input, content, place) => {
    const out = await redactor.outcome(name, input, { content, summary: '2 lines', isError: false });
    expect(out.content).not.toContain(github.value);
    expect(out.content).toContain(`[redacted: GitHub token, ${place}]`);
    expect(out.summary).toBe('2 lines · 1 secret redacted');
  });

  it('a line removed in a commit (git log -p) is named with its old line and the commit', async () => {
    const log = [
      'commit 0123456789abcdef0123456789abcdef01234567',
      'Author: t <t@e>',
      '',
      '    drop the token',
      '',
      'diff --git a/deploy.sh b/deploy.sh',
      '--- a/deploy.sh',
      '+++ b/deploy.sh',
      '@@ -1,3 +1,2 @@',
      ' #!/bin/sh',
      `-${github.line}`,
      ' echo done',
    ].join('\n');
    const out = await redactor.outcome('git', { command: 'log -p' }, { content: log, summary: 's', isError: false });
    expect(out.content).not.toContain(github.value);
    expect(out.content).toContain('-GITHUB_TOKEN=[redacted: GitHub token, deploy.sh:2 (removed in commit 0123456789ab)]');
  });

  it('a private key shown by read_file (numbered lines) is found whole and blanked line by line', async () => {
    const key = privateKeyPem();
    const numbered = `# notes\n${key.text}\nend\n`.split('\n').map((l, i) => `${i + 1}\t${l}`).join('\n');
    const out = await redactor.outcome('read_file', { path: 'docs/setup.md' }, { content: numbered, summary: 's', isError: false });
    for (const part of key.body.match(/.{1,64}/g)!) expect(out.content).not.toContain(part);
    expect(out.content).toMatch(/^2\t\[redacted: private key, docs\/setup\.md:2-10\]$/m);
    expect(out.content.split('\n')).toHaveLength(numbered.split('\n').length);
  });

  it.each([
    ['cut after BEGIN (head -4)', (lines: string[]) => lines.slice(0, 4)],
    ['cut before END (a window from line 3)', (lines: string[]) => lines.slice(2)],
  ])('a private key %s is left out too', async (_, cut) => {
    const key = privateKeyPem(11);
    const shown = cut(key.text.split('\n')).join('\n');
    const out = await redactor.outcome('bash', { command: 'cat docs/key.txt' }, { content: shown, summary: 's', isError: false });
    for (const part of key.body.match(/.{1,64}/g)!) expect(out.content).not.toContain(part.slice(0, 40));
    expect(out.content).toContain('[redacted: private key, docs/key.txt:');
  });

  it.each([
    ['read_file: a line cut at 2000 characters', 'read_file', { path: 'dist/app.min.js' }, `1\tvar a=1;var t="${github.value.slice(0, 20)}… [line cut at 2000 characters; full line is 4000 bytes]`, 'dist/app.min.js:1'],
    ['bash: the last line before the truncation notice', 'bash', { command: 'rg -n x' }, `src/a.js:1:ok\nsrc/b.js:2:const t = "${github.value.slice(0, 20)}\n\n[output truncated: narrow the search]`, 'src/b.js:2'],
  ])('a token cut by a limit: %s', async (_, name, input, content, place) => {
    const out = await redactor.outcome(name, input, { content, summary: 's', isError: false });
    expect(out.content).not.toContain(github.value.slice(4, 20));
    expect(out.content).toContain(`[redacted: value cut by an output limit, ${place}]`);
  });

  it('a secretlint-disable comment in the output does not switch detection off', async () => {
    const text = `a.js:1:// secretlint-disable\n.env:1:${github.line}\n`;
    const out = await redactor.outcome('bash', { command: 'rg -n x' }, { content: text, summary: 's', isError: false });
    expect(out.content).not.toContain(github.value);
  });

  it('redaction off (--allow-secrets) passes everything through', async () => {
    const off = new Redactor(false);
    const out = await off.redact(github.line, { kind: 'text', path: 'a' });
    expect(out.text).toBe(github.line);
  });
});
