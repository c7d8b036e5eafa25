import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { MAX_RESULT_BYTES } from '../../src/mcp/fit.js';
import { reply, text, toolUse } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { structured, useMcp } from './harness.js';

// Results stay under ~25k tokens as a whole, not only the answer text: lists are cut, with a note, through the binary.
const ROWS = 900;
const table = Array.from({ length: ROWS }, (_, i) => `const row${i + 1} = 'the value of row ${i + 1}, long enough to make an excerpt';\n`).join('');
const repo = useRepo({ ...APP_FILES, 'src/table.js': table }, { git: true });
const mcp = useMcp(repo);

/** Bytes of the whole result as a client receives it: structuredContent and its text copy. */
function resultBytes(result: CallToolResult): number {
  return Buffer.byteLength(JSON.stringify(result.structuredContent)) + Buffer.byteLength((result.content[0] as { text: string }).text);
}

describe('spelunk mcp: the size of a result', () => {
  it('ask: hundreds of citations are cut to fit, the unverified ones kept, with a note that counts the rest', async () => {
    const api = await mcp.api();
    const lines = Array.from({ length: 400 }, (_, i) => `- src/table.js:${i + 1}`);
    const answer = `The rows:\n${lines.join('\n')}\n- src/missing.js:1\n- src/gone.js:2`;
    api.enqueue(reply(text(answer)));
    const { client } = await mcp.connect();
    // Listing the tools first makes the client check structuredContent against each tool's outputSchema.
    await client.listTools();
    const result = (await client.callTool({ name: 'ask', arguments: { question: 'Which rows?' } })) as CallToolResult;
    const out = structured(result);
    expect(resultBytes(result)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(out).toMatchObject({ answer_markdown: answer, truncated: true, stop_reason: 'end_turn' });
    const note = /^\[truncated: to stay under ~25k tokens this result leaves out (\d+) of 402 citations; ask_followup with a narrower question \(one file or one part of the answer\) to get them\]$/;
    expect(out.notes).toEqual([expect.stringMatching(note)]);
    const left = Number(note.exec(out.notes[0])![1]);
    expect(left).toBeGreaterThan(0);
    expect(out.citations).toHaveLength(402 - left);
    // The citations that did not check out are kept, in the answer's order after the rows kept before them.
    expect(out.citations.slice(-2).map((c: { path: string; status: string }) => `${c.path} ${c.status}`)).toEqual(['src/missing.js missing_file', 'src/gone.js missing_file']);
    expect(out.citations[0]).toEqual({ path: 'src/table.js', start_line: 1, end_line: 1, status: 'ok', excerpt: "const row1 = 'the value of row 1, long enough to make an excerpt';" });
  });

  it('audit: 200 findings are cut to the most severe that fit, the verdict and exit code from all of them', async () => {
    const api = await mcp.api();
    const severities = ['low', 'medium', 'high', 'critical'] as const;
    const findings = Array.from({ length: 200 }, (_, i) => ({
      rule_id: 'row-check',
      severity: severities[i % 4],
      category: 'correctness',
      title: `Row ${i + 1} is suspicious`,
      message: `Row ${i + 1} holds a value that the rest of the table never reads. `.repeat(6),
      path: 'src/table.js',
      start_line: i + 1,
    }));
    api.enqueue(reply(toolUse('report_findings', { verdict: 'fail', summary: '200 rows are suspicious', findings })), reply(text('Done.')));
    const { client } = await mcp.connect();
    await client.listTools();
    const result = (await client.callTool({ name: 'audit', arguments: { question: 'Is every row read?' } })) as CallToolResult;
    const out = structured(result);
    expect(resultBytes(result)).toBeLessThanOrEqual(MAX_RESULT_BYTES);
    expect(out).toMatchObject({ truncated: true, fail_on: 'high', exit_code: 4, audit: { verdict: 'fail', summary: '200 rows are suspicious' } });
    const note = /^\[truncated: to stay under ~25k tokens this result leaves out 1 of 1 tool_calls, (\d+) of 200 findings; run `spelunk audit --output-format json` for the whole result, or audit a narrower question \(one directory or one rule\)\]$/;
    expect(out.warnings.at(-1)).toMatch(note);
    const left = Number(note.exec(out.warnings.at(-1))![1]);
    const kept = out.audit.findings as Array<{ severity: string; start_line: number }>;
    expect(kept).toHaveLength(200 - left);
    // All 50 critical findings are kept before any high one, no low or medium one is, and the order is the report's.
    expect(kept.filter((f) => f.severity === 'critical')).toHaveLength(50);
    expect(kept.filter((f) => f.severity === 'low' || f.severity === 'medium')).toEqual([]);
    expect(kept.map((f) => f.start_line)).toEqual([...kept.map((f) => f.start_line)].sort((a, b) => a - b));
    expect(out.tool_calls).toEqual([]);
  });

  it.each([
    ['ask', 'answer_markdown', 'notes'],
    ['audit', 'result', 'warnings'],
  ])('%s: when only the answer is cut, %s is marked and %s names the cut answer', async (tool, field, notesKey) => {
    const api = await mcp.api();
    const long = `Row one is at src/table.js:1. ${'More detail. '.repeat(3_000)}`;
    if (tool === 'audit') api.enqueue(reply(toolUse('report_findings', { verdict: 'pass', summary: 'fine', findings: [] })), reply(text(long)));
    else api.enqueue(reply(text(long)));
    const { client } = await mcp.connect();
    const out = structured(await client.callTool({ name: tool, arguments: { question: 'Where is row one?' } }));
    expect(out.truncated).toBe(true);
    expect(out[field]).toMatch(/\[truncated: the answer had [\d,]+ characters/);
    const note = `[truncated: to stay under ~25k tokens this result cuts ${field} to the first 32,000 of its ${long.length.toLocaleString('en-US')} characters; ask_followup for the rest or ask a narrower question]`;
    expect(out[notesKey]).toContain(note);
  });

  it('a result under the limit is untouched', async () => {
    const api = await mcp.api();
    api.enqueue(reply(text('Row one is at src/table.js:1.')));
    const { client } = await mcp.connect();
    const out = structured(await client.callTool({ name: 'ask', arguments: { question: 'Where is row one?' } }));
    expect(out).toMatchObject({ truncated: false, notes: [] });
    expect(out.citations).toHaveLength(1);
  });
});
