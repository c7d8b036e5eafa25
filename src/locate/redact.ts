import type { LocateResult } from './locate.js';
import { Redactor } from '../secrets/redactor.js';

/**
 * locate's result with the lines it quotes redacted: `spelunk locate` prints them and the MCP tool hands them to a
 * client's model. `allow`: --allow-secrets.
 */
export async function redactLocate(result: LocateResult, allow: boolean): Promise<LocateResult> {
  if (allow) return result;
  const redactor = new Redactor(true);
  const results = await Promise.all(
    result.results.map(async (hit) => ({
      ...hit,
      lines: await Promise.all(
        hit.lines.map(async (l) => ({ ...l, text: (await redactor.redact(l.text, { kind: 'text', path: hit.path, firstLine: l.line })).text })),
      ),
    })),
  );
  return { ...result, results };
}
