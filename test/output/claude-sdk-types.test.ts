import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { httpError, reply, startMockApi, text, toolUse, type MockApi, type Scripted } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';
import { CLAUDE_SHAPE_GAPS } from './claude-shape-gaps.js';

/**
 * spelunk's json and stream-json output, recorded from real runs against the local Messages API server, type-checked
 * by tsc against the Claude Agent SDK's `SDKMessage` types: the lines a Claude Code reader knows (system/init,
 * assistant, user, result) must satisfy Claude Code's own types, except for the fields CLAUDE_SHAPE_GAPS lists (the
 * README's "What still differs from Claude Code" says why). spelunk's own lines must use types and subtypes Claude
 * Code does not have, so its readers skip them.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const CLAUDE_TYPES = new Set(['system/init', 'assistant', 'user', 'result', 'stream_event']);

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
let scratch: string;

beforeAll(async () => {
  // Inside the checkout (git-ignored), so the generated file resolves the SDK from node_modules as the suite does.
  await fs.mkdir(path.join(ROOT, '.local'), { recursive: true });
  scratch = await fs.mkdtemp(path.join(ROOT, '.local', 'sdk-types-'));
});
afterAll(async () => {
  await fs.rm(scratch, { recursive: true, force: true });
});
afterEach(async () => {
  await api?.close();
});

async function record(format: 'json' | 'stream-json', flags: string[], replies: Scripted[]): Promise<Record<string, unknown>[]> {
  api = await startMockApi({ minCacheTokens: 256 });
  api.enqueue(...replies);
  const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url };
  const run = await runCli(['-C', repo.root, '--output-format', format, ...flags, 'where is login handled?'], { env });
  await api.close();
  return run.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

const kind = (line: Record<string, unknown>): string => (line['type'] === 'system' ? `system/${String(line['subtype'])}` : String(line['type']));

/** The recorded runs: every result subtype a run can reach without a signal, in both formats. */
async function recordAll(): Promise<Record<string, unknown>[]> {
  const tool = () => reply(text('Looking.'), toolUse('read_file', { path: 'src/auth.js' }));
  return [
    ...(await record('stream-json', [], [tool(), reply(text('Login is handled in src/auth.js:1.'))])),
    ...(await record('stream-json', ['--include-partial-messages'], [tool(), reply(text('Login is handled in src/auth.js:1.'))])),
    ...(await record('stream-json', ['--max-turns', '1'], [tool()])),
    ...(await record('stream-json', ['--max-budget-usd', '0.0005'], [tool()])),
    ...(await record('stream-json', [], [httpError(400, 'invalid_request_error', 'bad request')])),
    ...(await record('json', [], [tool(), reply(text('src/auth.js:1'))])),
  ];
}

function program(lines: Record<string, unknown>[]): string {
  const gaps = (keys: readonly string[]) => keys.map((k) => JSON.stringify(k)).join(' | ') || 'never';
  const own = lines.filter((l) => !CLAUDE_TYPES.has(kind(l)));
  const ownTypes = [...new Set(own.filter((l) => l['type'] !== 'system').map((l) => JSON.stringify(l['type'])))];
  const ownSubtypes = [...new Set(own.filter((l) => l['type'] === 'system').map((l) => JSON.stringify(l['subtype'])))];
  return `import type { ModelUsage, SDKAssistantMessage, SDKMessage, SDKPartialAssistantMessage, SDKResultMessage, SDKSystemMessage, SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';

/** Keys of any member of a union (a gap named here must exist in Claude Code's type). */
type AnyKey<T> = T extends unknown ? keyof T : never;
/** T with the keys K optional: a gap spelunk does not fill, still checked when present. */
type Relax<T, K extends AnyKey<T>> = T extends unknown ? Omit<T, K> & Partial<Pick<T, K & keyof T>> : never;
type ApiMessage = SDKAssistantMessage['message'];
type Message = Omit<Relax<ApiMessage, ${gaps(CLAUDE_SHAPE_GAPS.message)}>, 'usage' | 'content'> & {
  usage: Relax<ApiMessage['usage'], ${gaps(CLAUDE_SHAPE_GAPS.usage)}>;
  content: Array<Relax<ApiMessage['content'][number], ${gaps(CLAUDE_SHAPE_GAPS.contentBlock)}>>;
};
type Assistant = Omit<SDKAssistantMessage, 'message'> & { message: Message };
type Init = Relax<SDKSystemMessage, ${gaps(CLAUDE_SHAPE_GAPS.init)}>;
type ResultUsage = Relax<SDKResultMessage['usage'], ${gaps(CLAUDE_SHAPE_GAPS.usage)}>;
type PerModel = Relax<ModelUsage, ${gaps(CLAUDE_SHAPE_GAPS.modelUsage)}>;
type Result = SDKResultMessage extends infer R
  ? R extends SDKResultMessage
    ? Omit<R, 'usage' | 'modelUsage'> & { usage: ResultUsage; modelUsage: Record<string, PerModel> }
    : never
  : never;
type StreamEvent = SDKPartialAssistantMessage['event'];
type MessageDelta = Extract<StreamEvent, { type: 'message_delta' }>;
type BlockStart = Extract<StreamEvent, { type: 'content_block_start' }>;
type RelaxedEvent =
  | Exclude<StreamEvent, { type: 'message_start' | 'message_delta' | 'content_block_start' }>
  | (Omit<Extract<StreamEvent, { type: 'message_start' }>, 'message'> & { message: Omit<Message, 'content'> & { content: [] } })
  | (Omit<Relax<MessageDelta, ${gaps(CLAUDE_SHAPE_GAPS.messageDelta)}>, 'delta' | 'usage'> & {
      delta: Relax<MessageDelta['delta'], ${gaps(CLAUDE_SHAPE_GAPS.messageDeltaDelta)}>;
      usage: Relax<MessageDelta['usage'], ${gaps(CLAUDE_SHAPE_GAPS.messageDeltaUsage)}>;
    })
  | (Omit<BlockStart, 'content_block'> & { content_block: Relax<BlockStart['content_block'], ${gaps(CLAUDE_SHAPE_GAPS.contentBlock)}> });
type PartialLine = Omit<SDKPartialAssistantMessage, 'event'> & { event: RelaxedEvent };
type Known = Init | Assistant | SDKUserMessage | Result | PartialLine;

/** Checks a line structurally, without excess-property errors: spelunk's extra fields are allowed. */
const line = <T extends Known>(value: T): T => value;

${lines.filter((l) => CLAUDE_TYPES.has(kind(l))).map((l) => `line(${JSON.stringify(l)});`).join('\n')}

// The check bites: the budget stop under its old name is not a Claude Code result.
// @ts-expect-error
line({ ...(${JSON.stringify(lines.find((l) => l['type'] === 'result'))}), subtype: 'error_max_budget' });

// spelunk's own lines: types and system subtypes no Claude Code message has.
type Clash<A, B> = [Extract<A, B>] extends [never] ? true : false;
export const ownTypesAreUnknownToClaudeCode: Clash<SDKMessage['type'], ${ownTypes.join(' | ') || 'never'}> = true;
export const ownSubtypesAreUnknownToClaudeCode: Clash<Extract<SDKMessage, { type: 'system' }>['subtype'], ${ownSubtypes.join(' | ') || 'never'}> = true;
`;
}

describe("Claude Code's message types (@anthropic-ai/claude-agent-sdk SDKMessage)", () => {
  it('recorded json and stream-json lines type-check against SDKMessage, but for the listed gaps', async () => {
    const lines = await recordAll();
    const kinds = new Set(lines.map(kind));
    const streamed = lines.filter((l) => l['type'] === 'stream_event').map((l) => (l['event'] as { type: string }).type);
    expect(new Set(streamed)).toEqual(new Set(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']));
    for (const k of CLAUDE_TYPES) expect(kinds).toContain(k);
    const subtypes = lines.filter((l) => l['type'] === 'result').map((l) => l['subtype']);
    expect(subtypes).toEqual(['success', 'success', 'error_max_turns', 'error_max_budget_usd', 'error_during_execution', 'success']);
    for (const l of lines) expect(l['uuid'], kind(l)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await fs.writeFile(path.join(scratch, 'lines.ts'), program(lines));
    const config = {
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', skipLibCheck: true, types: [] },
      files: ['lines.ts'],
    };
    await fs.writeFile(path.join(scratch, 'tsconfig.json'), JSON.stringify(config));
    let output = '';
    try {
      execFileSync(process.execPath, [TSC, '-p', scratch], { encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output).toBe('');
  }, 60_000);

  it('docs/ci.md lists every gap the type check allows', () => {
    const ci = readFileSync(path.join(ROOT, 'docs', 'ci.md'), 'utf8');
    const section = ci.slice(ci.indexOf('## What still differs from Claude Code'));
    const listed = section.slice(0, section.indexOf('\n## ', 1));
    for (const key of Object.values(CLAUDE_SHAPE_GAPS).flat()) expect(listed, key).toContain(`\`${key}\``);
  });
});
