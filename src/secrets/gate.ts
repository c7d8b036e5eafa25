/**
 * Whether a text could hold anything secretlint's recommended preset reports, decided without loading it: every rule
 * of the preset needs one of these, so a text with none of them is passed without a scan (most tool results, and
 * nearly every AGENTS.md, which is read before the first request). A wide net, never a verdict: text it lets through
 * is scanned by secretlint, which decides. scripts/bench/secrets-fp.mjs checks on real repositories that no file the
 * gate lets pass holds a finding.
 * - a run of 16 or more token characters with a digit, or of 20 or more with both cases (every token and key the
 *   preset knows: GitHub, AWS, npm, Slack, OpenAI, Anthropic, Linear, SendGrid, Shopify, 1Password, base64 keys);
 * - credentials in a URL (`scheme://user:password@`: basic auth, database connection strings, webhooks with keys);
 * - twelve digits in groups of four (an AWS account ID); a PEM fence.
 */
const TOKEN_RUN = /[A-Za-z0-9_+/=-]{16,}/g;
const URL_CREDENTIAL = /:\/\/[^\s:@/]+:[^\s@/]+@/;
const ACCOUNT_ID = /\d{4}-?\d{4}-?\d{4}/;
const PEM = /-----BEGIN/;
const SLACK_HOOK = /hooks\.slack\.com/i;

export function mayHoldSecret(text: string): boolean {
  if (PEM.test(text) || URL_CREDENTIAL.test(text) || ACCOUNT_ID.test(text) || SLACK_HOOK.test(text)) return true;
  for (const m of text.matchAll(TOKEN_RUN)) {
    const run = m[0];
    if (/\d/.test(run)) return true;
    if (run.length >= 20 && /[a-z]/.test(run) && /[A-Z]/.test(run)) return true;
  }
  return false;
}
