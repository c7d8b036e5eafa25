import { readFileSync } from 'node:fs';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';

/**
 * The official SARIF 2.1.0 JSON Schema (OASIS final, "rtm.5", draft-04), as shipped by the MIT-licensed npm package
 * @microsoft/jest-sarif 1.0.0-beta.0 (lib/schemas/sarif-2.1.0-rtm.5.json), copied unchanged.
 */
const SCHEMA = JSON.parse(readFileSync(new URL('./sarif-2.1.0-rtm.5.schema.json', import.meta.url), 'utf8')) as object;

/** Returns a validator that throws with every schema error (formats such as uri and date-time included). */
export function sarifValidator(): (log: unknown) => void {
  // unicodeRegExp off: the official schema's `language` pattern has a stray "]" that is valid only without the u flag.
  const ajv = new AjvDraft04.default({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats.default(ajv);
  const validate = ajv.compile(SCHEMA);
  return (log) => {
    if (!validate(log)) throw new Error(`invalid SARIF 2.1.0: ${ajv.errorsText(validate.errors, { separator: '\n' })}`);
  };
}
