/**
 * The words a marker and a finding use for each message of secretlint's recommended preset (its message ids, which
 * are stable across its releases); an id not listed is named from secretlint's rule id, so a new rule still redacts.
 */
const KIND_BY_MESSAGE: Readonly<Record<string, string>> = {
  AWSAccessKeyID: 'AWS access key ID',
  AWSSecretAccessKey: 'AWS secret access key',
  AWSAccountID: 'AWS account ID',
  PrivateKeyP12: 'GCP service account key (p12)',
  PrivateKeyJSON: 'GCP service account key',
  PackageJSON_xOauthToken: 'GitHub token',
  Npmrc_authToken: 'npm auth token',
  NPM_ACCESS_TOKEN: 'npm access token',
  SLACK_TOKEN: 'Slack token',
  IncomingWebhook: 'Slack incoming webhook',
  BasicAuth: 'basic auth credential',
  OPENAI_TOKEN: 'OpenAI API key',
  ANTHROPIC_API_KEY: 'Anthropic API key',
  LINEAR_API_TOKEN: 'Linear API key',
  PrivateKey: 'private key',
  SENDGRID_KEY: 'SendGrid API key',
  SHOPIFY_KEY: 'Shopify API key',
  GITHUB_TOKEN: 'GitHub token',
  OPS_TOKEN: '1Password service account token',
  MongoDBConnection: 'MongoDB connection string',
  MySQLConnection: 'MySQL connection string',
  PostgreSQLConnection: 'PostgreSQL connection string',
};

/** `GitHub token` for secretlint's GITHUB_TOKEN message; the rule's short name for an unknown one. */
export function kindOf(messageId: string, ruleId: string): string {
  return KIND_BY_MESSAGE[messageId] ?? `${ruleId.replace(/^@secretlint\/secretlint-rule-/, '')} secret`;
}

/** The kind of a value left out because of the file it is in (credential files by name, see credential-files.ts). */
export const CREDENTIAL_VALUE = 'value in a credential file';
