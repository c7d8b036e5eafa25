import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toSarif } from '../src/output/sarif.js';

/**
 * spelunk's own licence, and the notices of the packages its bundles carry: dist/THIRD-PARTY-NOTICES.txt, written by
 * scripts/build.mjs from the files esbuild read (the global setup builds dist/ before the tests).
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { license: string; homepage?: string; files: string[]; dependencies: Record<string, string> };
const PLACEHOLDER = /your-org|example\.(com|org)|TODO/i;

describe('licences', () => {
  it('LICENSE is the MIT licence package.json names, held by the spelunk authors, and shipped', () => {
    const licence = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    expect(pkg.license).toBe('MIT');
    expect(licence).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} the spelunk authors\n/);
    expect(licence).toContain('The above copyright notice and this permission notice shall be included');
    expect(pkg.files).toEqual(expect.arrayContaining(['LICENSE', 'dist']));
  });

  it('no placeholder address: homepage and the SARIF informationUri are a real page or absent', () => {
    if (pkg.homepage !== undefined) expect(pkg.homepage).not.toMatch(PLACEHOLDER);
    const log = toSarif({ root: ROOT, toolVersion: '0', readLines: () => null, question: 'q', automationId: 'a/', report: { verdict: 'pass', summary: 's', findings: [] } } as never);
    expect(log.runs[0]!.tool.driver.informationUri).toBe(pkg.homepage);
  });

  describe('dist/THIRD-PARTY-NOTICES.txt', () => {
    const notices = readFileSync(path.join(ROOT, 'dist', 'THIRD-PARTY-NOTICES.txt'), 'utf8');
    const entries = notices.split(`\n${'-'.repeat(80)}\n\n`).slice(1);
    const names = entries.map((e) => /^(\S+)@[^@\s]+ \(/.exec(e)?.[1]);

    it('has an entry per bundled package, each with its licence text, no package twice at one version', () => {
      expect(notices).toMatch(new RegExp(`^spelunk's dist/ bundles code from these ${entries.length} packages`));
      for (const entry of entries) expect(entry, entry.slice(0, 80)).toMatch(/^\S+@\S+ \([^)]+\)\n\n(?:[\s\S]*(copyright|permission|licen[cs]e)[\s\S]*|\(no licence file in the package; its package\.json says [^)]+\))\n$/i);
      expect(new Set(entries.map((e) => e.split(' ')[0])).size).toBe(entries.length);
    });

    it.each([
      // In the main bundle, the MCP vendor file, the markdown renderer, the manifests and the table.
      '@anthropic-ai/sdk', 'yargs', 'shell-quote', '@modelcontextprotocol/sdk', 'zod', 'ajv', 'marked', 'marked-terminal', 'yaml', 'smol-toml', 'cli-table3',
      // Inlined in marked-terminal's own prebuilt file.
      'highlight.js', 'chalk',
      // The cloud chunk: Anthropic's cloud SDKs and the AWS and Google libraries they sign with.
      '@anthropic-ai/bedrock-sdk', '@anthropic-ai/vertex-sdk', '@anthropic-ai/foundry-sdk', '@aws-sdk/credential-providers', '@smithy/signature-v4', 'google-auth-library',
    ])('names %s', (name) => {
      expect(names).toContain(name);
    });

    it('leaves out what is not bundled: the runtime dependencies, installed beside dist/, and the test tools', () => {
      for (const name of [...Object.keys(pkg.dependencies), 'vitest', 'typescript', 'esbuild', '@anthropic-ai/claude-agent-sdk']) expect(names).not.toContain(name);
    });
  });
});
