/**
 * One planted secret of each kind secretlint's recommended preset covers, built at run time (so no credential-shaped
 * string sits in the source) from a seeded generator: the same values every run, none of them a real credential.
 */
export interface Planted {
  /** The kind the marker must name. */
  kind: string;
  /** A line that holds it (with whatever context the rule needs: a key name, a URL). */
  line: string;
  /** The value that must never leave: no output, request or file may contain it. */
  value: string;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const HEX = '0123456789abcdef';
const B64 = `${ALNUM}+/`;

/** `n` characters of `alphabet`, from a small linear congruential generator seeded with `seed`. */
function chars(alphabet: string, n: number, seed: number): string {
  let state = seed >>> 0;
  let out = '';
  for (let i = 0; i < n; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out += alphabet[(state >>> 16) % alphabet.length];
  }
  return out;
}

/** A PEM private key body that passes secretlint's checks (base64, starts with MI, long enough), 64 per line. */
export function privateKeyPem(seed = 7): { text: string; body: string } {
  const body = `MIIEow${chars(B64, 64 * 6, seed)}`;
  const lines = body.match(/.{1,64}/g)!.join('\n');
  return { text: `-----BEGIN RSA PRIVATE KEY-----\n${lines}\n-----END RSA PRIVATE KEY-----`, body };
}

/** Every kind, each on its own line of a config-like file. */
export function plantedSecrets(seed = 1): Planted[] {
  const s = (n: number): number => seed * 1000 + n;
  const github = `gh${'p'}_${chars(ALNUM, 36, s(1))}`;
  const awsId = `AK${'IA'}${chars(UPPER, 16, s(2))}`;
  const awsSecret = chars(ALNUM, 40, s(3));
  const npm = `np${'m'}_${chars(ALNUM, 36, s(4))}`;
  const slack = `xo${'xb'}-${chars('0123456789', 12, s(5))}-${chars('0123456789', 13, s(6))}-${chars(ALNUM, 24, s(7))}`;
  const webhook = `https://hooks.slack.com/services/T${chars(UPPER, 8, s(8))}/B${chars(UPPER, 8, s(9))}/${chars(ALNUM, 24, s(10))}`;
  const anthropic = `sk-${'ant'}-api03-${chars(`${ALNUM}_-`, 93, s(11)).replace(/[-_]$/, 'x')}AA`;
  const openai = `sk-${'proj'}-${chars(ALNUM, 74, s(12))}T3BlbkFJ${chars(ALNUM, 74, s(13))}`;
  const linear = `lin_${'api'}_${chars(ALNUM, 40, s(14))}`;
  const sendgrid = `S${'G'}.${chars(ALNUM, 22, s(15))}.${chars(ALNUM, 43, s(16))}`;
  const shopify = `shp${'at'}_${chars(HEX, 32, s(17))}`;
  const ops = `op${'s'}_${onePasswordBody(s(18))}`;
  const pgPass = chars(ALNUM, 14, s(19));
  const myPass = chars(ALNUM, 14, s(20));
  const mongoPass = chars(ALNUM, 14, s(21));
  const basicPass = chars(ALNUM, 14, s(22));
  return [
    { kind: 'GitHub token', line: `GITHUB_TOKEN=${github}`, value: github },
    { kind: 'AWS access key ID', line: `AWS_ACCESS_KEY_ID=${awsId}`, value: awsId },
    { kind: 'AWS secret access key', line: `aws_secret_access_key = ${awsSecret}`, value: awsSecret },
    { kind: 'npm access token', line: `NPM_TOKEN=${npm}`, value: npm },
    { kind: 'Slack token', line: `SLACK_BOT=${slack}`, value: slack },
    { kind: 'Slack incoming webhook', line: `SLACK_HOOK=${webhook}`, value: webhook },
    { kind: 'Anthropic API key', line: `ANTHROPIC_API_KEY=${anthropic}`, value: anthropic },
    { kind: 'OpenAI API key', line: `OPENAI_API_KEY=${openai}`, value: openai },
    { kind: 'Linear API key', line: `LINEAR=${linear}`, value: linear },
    { kind: 'SendGrid API key', line: `SENDGRID=${sendgrid}`, value: sendgrid },
    { kind: 'Shopify API key', line: `SHOPIFY=${shopify}`, value: shopify },
    { kind: '1Password service account token', line: `OP_TOKEN=${ops}`, value: ops },
    { kind: 'PostgreSQL connection string', line: `DATABASE_URL=postgres://admin:${pgPass}@db.internal.example:5432/app`, value: pgPass },
    { kind: 'MySQL connection string', line: `MYSQL_URL=mysql://root:${myPass}@mysql.internal.example:3306/app`, value: myPass },
    { kind: 'MongoDB connection string', line: `MONGO_URL=mongodb://app:${mongoPass}@mongo.internal.example:27017/app`, value: mongoPass },
    { kind: 'basic auth credential', line: `MIRROR=https://deploy:${basicPass}@mirror.corp.io/repo`, value: basicPass },
  ];
}

/** A 1Password service account token's body: base64 of a JSON object (secretlint decodes it), ending in `fQ==`. */
function onePasswordBody(seed: number): string {
  let json = `{"email":"${chars(ALNUM, 12, seed).toLowerCase()}@1passwordserviceaccounts.lcl","secretKey":"A3-${chars(UPPER, 30, seed + 1)}","srpX":"${chars(HEX, 64, seed + 2)}"}`;
  while (json.length % 3 !== 1) json = json.replace('{', '{ ');
  return Buffer.from(json).toString('base64');
}
