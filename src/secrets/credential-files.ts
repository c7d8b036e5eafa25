/**
 * Files that are credentials by their name, whatever a scanner finds in them: a `.env`'s values are passwords whose
 * shape no rule knows. The list (README, Secrets, says why each is there):
 * - `.env`, `.env.*`, `*.env`, `.envrc`: dotenv and direnv files, the usual home of database passwords and API keys;
 *   templates meant to be committed (`.env.example`, `.env.sample`, `.env.template`, `.env.dist`, `.env.tpl`) are not;
 * - `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.p8`, `*.ppk`, `*.jks`, `*.keystore`, `id_rsa`/`id_dsa`/`id_ecdsa`/
 *   `id_ed25519` (and their variants, not `.pub`): private keys and key stores;
 * - `.npmrc`, `.pypirc`, `.netrc`/`_netrc`, `.git-credentials`, `.pgpass`, `.htpasswd`: tools' token and password files
 *   (in `.npmrc` and `.pypirc` only the values of credential keys, `_authToken`, `password`, …: the rest are settings);
 * - `credentials` and `credentials*.json|yml|yaml|toml|ini` (`~/.aws/credentials`, Google's `credentials.json`),
 *   `client_secret*.json` (Google OAuth clients); `secrets*.json|yml|yaml|toml|ini` (Rails' config/secrets.yml and
 *   its kin) and `*.tfvars` (Terraform variables, where provider keys are passed).
 */
const TEMPLATE = /\.(example|sample|template|dist|tpl)$/i;
const KEY_STORE = /\.(pem|key|p12|pfx|p8|ppk|jks|keystore)$/i;
const SSH_KEY = /^id_(rsa|dsa|ecdsa|ed25519)(?!.*\.pub$)/;
const TOOL_FILES = new Set(['.npmrc', '.pypirc', '.netrc', '_netrc', '.git-credentials', '.pgpass', '.htpasswd', '.envrc']);
const CREDENTIALS = /^((credentials|secrets)([-_.][\w.-]*)?\.(json|ya?ml|toml|ini)|credentials|client_secret[\w.-]*\.json|[\w.-]+\.tfvars)$/i;

/** How a credential file's lines are shown: keys kept and values left out, or nothing of a key's material. */
type CredentialShape = 'keyed' | 'json' | 'key-material';

/** True when `path` (repository-relative, or a bare name) names a credential file. */
export function isCredentialFile(path: string): boolean {
  return credentialShape(path) !== null;
}

/** The shape of a credential file's text, or null for a file that is not one by name. */
export function credentialShape(path: string): CredentialShape | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (name === '') return null;
  if (KEY_STORE.test(name) || SSH_KEY.test(name)) return 'key-material';
  if (TOOL_FILES.has(name)) return 'keyed';
  if (CREDENTIALS.test(name)) return /\.json$/i.test(name) ? 'json' : 'keyed';
  const dotenv = name === '.env' || name.startsWith('.env.') || /^[\w.-]+\.env$/.test(name);
  return dotenv && !TEMPLATE.test(name) ? 'keyed' : null;
}

/** A part of a line to leave out: offsets into the line's text. */
interface ValueSpan {
  start: number;
  end: number;
}

const PEM_FENCE = /^\s*-----(BEGIN|END) [A-Z0-9 ]+-----\s*$/;
const COMMENT = /^\s*(#|;|\/\/\s|$)/;
const SECTION = /^\s*\[[^\]]*\]\s*$/;
const SETTINGS_FILES = /(^|\/)\.(npmrc|pypirc)$/;
const CREDENTIAL_KEY = /auth|token|password|passwd|secret|credential|username|email|key/i;
const NETRC_WORDS = /\b(login|password|account)(\s+)(\S+)/g;
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;
const JSON_SCALAR = /(:\s*)(-?\d[\d.eE+-]*|true|false)/g;

/**
 * The values of one line of a credential file, to be left out: what follows `=` or `:` (the key stays, so the model
 * sees the file's structure: `DB_PASSWORD=` and no password), every JSON value, every `.netrc` login and password, and
 * all of a key file but its BEGIN/END lines. Comments and section headers are kept (secretlint still reads them).
 */
export function credentialValues(body: string, shape: CredentialShape, path: string): ValueSpan[] {
  if (shape === 'key-material') return PEM_FENCE.test(body) || body.trim() === '' ? [] : [{ start: 0, end: body.length }];
  if (COMMENT.test(body) || SECTION.test(body)) return [];
  if (shape === 'json') return jsonValues(body);
  if (/(^|\/)_?\.?netrc$/.test(path) || /^\s*(machine|default)\b/.test(body)) {
    return [...body.matchAll(NETRC_WORDS)].map((m) => ({ start: m.index + m[1]!.length + m[2]!.length, end: m.index + m[0].length }));
  }
  const eq = body.indexOf('=');
  const colon = body.indexOf(':');
  const at = eq >= 0 ? eq : colon;
  if (at <= 0) return [{ start: 0, end: body.length }];
  // .npmrc and .pypirc are mostly settings (registry, package-lock=false): only their credential keys hold secrets.
  if (SETTINGS_FILES.test(path) && !CREDENTIAL_KEY.test(body.slice(0, at))) return [];
  const value = body.slice(at + 1);
  const lead = value.length - value.trimStart().length;
  const start = at + 1 + lead;
  return start >= body.trimEnd().length ? [] : [{ start, end: body.trimEnd().length }];
}

function jsonValues(body: string): ValueSpan[] {
  const spans: ValueSpan[] = [];
  for (const m of body.matchAll(JSON_STRING)) {
    const after = body.slice(m.index + m[0].length);
    if (/^\s*:/.test(after)) continue;
    spans.push({ start: m.index, end: m.index + m[0].length });
  }
  for (const m of body.matchAll(JSON_SCALAR)) spans.push({ start: m.index + m[1]!.length, end: m.index + m[0].length });
  return spans.sort((a, b) => a.start - b.start);
}
