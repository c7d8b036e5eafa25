import pkg from '../../package.json' with { type: 'json' };
import { severityAtLeast, type Finding, type Severity } from '../audit/report.js';

export type SarifLevel = 'error' | 'warning' | 'note';

/** How each severity shows in SARIF: GitHub's Advanced Security and PR formatters read the rule's default level. */
export const LEVEL: Readonly<Record<Severity, SarifLevel>> = { critical: 'error', high: 'error', medium: 'warning', low: 'note' };
/**
 * GitHub code scanning labels a rule Critical (≥ 9.0), High (7.0–8.9), Medium (4.0–6.9) or Low from this CVSS-like
 * score, which it reads as a string; each value sits inside its band so the label matches the model's severity.
 */
export const SECURITY_SEVERITY: Readonly<Record<Severity, string>> = { critical: '9.5', high: '8.0', medium: '5.5', low: '2.0' };
/**
 * `tool.driver.informationUri` (SARIF2005): where a reader learns what spelunk is, package.json's `homepage`. The
 * project has no public page yet, so there is none: GitHub links a SARIF tool's informationUri, and a placeholder would
 * send readers to someone else's site. Set `homepage` and the driver carries it.
 */
export const INFORMATION_URI: string | undefined = (pkg as { homepage?: string }).homepage;
/** Characters of the audit question quoted in a rule's description. */
const MAX_QUESTION_CHARS = 300;

export interface SarifRule {
  id: string;
  /** A PascalCase form of the id (SARIF's "friendly name"). */
  name: string;
  shortDescription: { text: string };
  fullDescription: { text: string };
  /** What the rule means and how to fix it; GitHub shows `markdown` on the alert page (GH2012 requires it). */
  help: { text: string; markdown: string };
  defaultConfiguration: { level: SarifLevel };
  /** `security-severity` only on a rule whose findings are security problems: GitHub shows it as a security label. */
  properties: { 'security-severity'?: string; tags: string[] };
}

/**
 * A rule per normalised rule id. The model names rules as it audits, so there is no fixed catalogue: the descriptions
 * and help come from the id and the audit question only, so they read the same in every upload of an audit whichever
 * findings it has and in whatever order (GitHub shows the latest upload's text on every alert of the rule). GitHub
 * reads severity per rule, so a rule takes its most severe finding's level and score; `tags` are the findings'
 * categories (`security` is what makes GitHub show the score as a security label).
 */
export function ruleFor(id: string, findings: readonly Finding[], question: string | undefined): SarifRule {
  const worst = findings.reduce<Severity>((max, f) => (severityAtLeast(f.severity, max) ? f.severity : max), 'low');
  const tags = [...new Set(findings.flatMap((f) => (f.category ? [f.category] : [])))].sort();
  // From the id alone, so an upload whose first finding is another one does not rename the rule on GitHub.
  const title = ruleTitle(id);
  const asked = question === undefined ? '' : ` for the audit question "${collapseWhitespace(question).slice(0, MAX_QUESTION_CHARS)}"`;
  const full = `problems of the kind "${id}" that spelunk's audit found${asked}; each result's severity is its own.`;
  const fix = [
    'Each result names the code and gives the evidence in its message.',
    'Change that code so it no longer shows the problem, then run the audit again: the alert closes when the finding is gone.',
    'If the finding is wrong or accepted, keep it out of failing runs with a baseline (spelunk audit … --baseline FILE --update-baseline) or dismiss the alert.',
  ];
  return {
    id,
    name: pascalCase(id),
    shortDescription: { text: title },
    fullDescription: { text: capitalise(full) },
    help: {
      text: `${capitalise(full)}\n\nHow to fix: ${fix.join(' ')}`,
      markdown: `**${escapeMarkdown(title)}** (rule ${escapeMarkdown(id)})\n\n${escapeMarkdown(capitalise(full))}\n\n#### How to fix\n\n${fix.map((line) => `- ${escapeMarkdown(line)}`).join('\n')}`,
    },
    defaultConfiguration: { level: LEVEL[worst] },
    properties: { ...(tags.includes('security') ? { 'security-severity': SECURITY_SEVERITY[worst] } : {}), tags },
  };
}

/** `shell-injection` → `Shell injection`: the rule's short description, stable across uploads. */
function ruleTitle(id: string): string {
  const words = id.split(/[^A-Za-z0-9]+/).filter((w) => w !== '').join(' ').toLowerCase();
  return words === '' ? 'Spelunk finding' : capitalise(words);
}

/** `shell-injection` → `ShellInjection`; an id without letters or digits keeps a fixed name. */
function pascalCase(id: string): string {
  const name = id.split(/[^A-Za-z0-9]+/).filter((w) => w !== '').map((w) => `${w[0]!.toUpperCase()}${w.slice(1)}`).join('');
  return name === '' ? 'SpelunkFinding' : name;
}

/** SARIF text is prose in a JSON file that GitHub renders: runs of whitespace become one space (nothing to escape for a terminal). */
function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function capitalise(s: string): string {
  return `${s.charAt(0).toUpperCase()}${s.slice(1)}`;
}

/** The model's words go into markdown GitHub renders: no links, images, HTML or emphasis of its making. */
function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+!<>|~]/g, (c) => `\\${c}`);
}
