import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { EFFORTS, effortLevels, effortProblem } from '../../src/agent/effort.js';
import { runCli } from '../support/cli.js';
import { reply, startMockApi, text, type MockApi } from '../support/mock-api.js';
import { APP_FILES, useRepo } from '../support/temp-repo.js';

let api: MockApi;
const repo = useRepo(APP_FILES, { git: true });
const env = () => ({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url });
const messages = () => api.requests.filter((r) => r.path === '/v1/messages');

afterEach(async () => {
  await api?.close();
});

describe('the local API validates output_config.effort as the Messages API does', () => {
  const base = { max_tokens: 64, messages: [{ role: 'user' as const, content: 'q' }] };
  it.each([
    ['claude-sonnet-5-5', { effort: 'extreme' }, false, "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"],
    ['claude-sonnet-5-5', 'high', false, 'output_config: Input should be a valid dictionary'],
    ['claude-sonnet-5-5', { effort: 'low', speed: 'fast' }, false, 'output_config.speed: Extra inputs are not permitted'],
    ['claude-sonnet-4-5', { effort: 'low' }, false, 'This model (claude-sonnet-4-5) does not support the effort parameter.'],
    ['claude-haiku-4-5-20251001', { effort: 'high' }, false, 'This model (claude-haiku-4-5) does not support the effort parameter.'],
    ['claude-opus-4-5', { effort: 'max' }, false, 'Effort level "max" is not supported by claude-opus-4-5. Supported levels: low, medium, high.'],
    ['claude-opus-4-6', { effort: 'xhigh' }, false, 'Effort level "xhigh" is not supported by claude-opus-4-6. Supported levels: low, medium, high, max.'],
    ['claude-opus-5', { effort: 'max' }, false, 'Effort level "max" requires thinking to be enabled for claude-opus-5.'],
    ['claude-opus-5', { effort: 'max' }, true, null],
    ['claude-sonnet-5-5', { effort: 'max' }, false, null],
    ['claude-opus-4-5', { effort: 'low' }, false, null],
  ])('%s with output_config %j (thinking %s) → %s', async (model, outputConfig, thinking, error) => {
    api = await startMockApi();
    api.enqueue(reply(text('ok')));
    const client = new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 });
    const params = { ...base, model, output_config: outputConfig, ...(thinking ? { thinking: { type: 'adaptive' } } : {}) };
    const outcome = await client.messages.create(params as unknown as Anthropic.MessageCreateParamsNonStreaming).then(
      () => null,
      (e: unknown) => e,
    );
    if (error === null) return expect(outcome).toBeNull();
    expect(outcome).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect(api.requests[0]).toMatchObject({ status: 400, error });
  });

  it("spelunk's table never allows what the API rejects: every model × level it accepts passes the local API", async () => {
    api = await startMockApi();
    const client = new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 });
    const models = ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5', 'claude-sonnet-5', 'claude-opus-5', 'claude-opus-4-8', 'claude-opus-4-7', 'claude-opus-4-6', 'claude-sonnet-4-6', 'claude-opus-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5'];
    const rejected: string[] = [];
    for (const model of models) {
      expect(effortLevels(model), model).not.toBeNull();
      for (const effort of EFFORTS) {
        for (const thinking of [false, true]) {
          if (effortProblem(model, effort, thinking) !== null) continue;
          api.enqueue(reply(text('ok')));
          const params = { ...base, model, output_config: { effort }, ...(thinking ? { thinking: { type: 'adaptive' } } : {}) };
          await client.messages.create(params as unknown as Anthropic.MessageCreateParamsNonStreaming).catch(() => rejected.push(`${model} ${effort} ${thinking}`));
        }
      }
    }
    expect(rejected).toEqual([]);
  });
});

describe('--effort', () => {
  it.each([
    // [argv, effort sent (null: no output_config)]
    [[], 'medium'],
    [['--output-format', 'json'], 'high'],
    [['--output-format', 'stream-json'], 'high'],
    [['--effort', 'low'], 'low'],
    [['--effort', 'max', '--output-format', 'json'], 'max'],
    [['-m', 'claude-opus-4-5'], 'medium'],
    // No effort for a model that rejects it, and none by default for a model spelunk does not know.
    [['-m', 'claude-sonnet-4-5'], null],
    [['-m', 'claude-unknown-7'], null],
    [['-m', 'claude-unknown-7', '--effort', 'low'], 'low'],
    [['-m', 'claude-opus-5', '--effort', 'max', '--thinking'], 'max'],
  ] as const)('%j → effort %s in every request', async (argv, effort) => {
    api = await startMockApi();
    api.enqueue(reply(text('The router is in src/router.js:1.')));
    const run = await runCli(['-C', repo.root, ...argv, 'where is the router?'], { env: env() });
    expect(run.stderr).not.toContain('API 400');
    expect(run.code).toBe(0);
    const body = messages()[0]!.body;
    if (effort === null) expect(body).not.toHaveProperty('output_config');
    else expect(body.output_config).toEqual({ effort });
    if (!(argv as readonly string[]).some((a) => a.endsWith('json'))) {
      expect(run.stderr.includes(`· effort ${effort}`)).toBe(effort !== null);
    }
  });

  it('an audit defaults to high', async () => {
    api = await startMockApi();
    api.enqueue(reply(text('No findings.')));
    await runCli(['-C', repo.root, 'audit', '--output-format', 'json', 'any injection?'], { env: env() });
    expect(messages()[0]!.body.output_config).toEqual({ effort: 'high' });
  });

  it.each([
    [['--effort', 'extreme'], '--effort must be low, medium, high or max (got "extreme")'],
    [['--effort', 'xhigh'], '--effort must be low, medium, high or max (got "xhigh")'],
    [['-m', 'claude-sonnet-4-5', '--effort', 'low'], 'claude-sonnet-4-5 does not support an effort setting; drop --effort'],
    [['-m', 'claude-opus-4-5', '--effort', 'max'], 'claude-opus-4-5 does not support --effort max; use low, medium, high, or a newer model'],
    [['-m', 'claude-opus-5', '--effort', 'max'], '--effort max on claude-opus-5 needs --thinking'],
  ])('%j → exit 2 with one line, nothing sent', async (argv, message) => {
    api = await startMockApi();
    const run = await runCli(['-C', repo.root, ...argv, 'q'], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`spelunk: ${message}`);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(messages()).toHaveLength(0);
  });
});

describe('/effort in the REPL (piped)', () => {
  it('shows the setting, refuses a bad level, and changes the effort of the next question', async () => {
    api = await startMockApi();
    api.enqueue(reply(text('first')), reply(text('second')));
    const stdin = ['/effort', '/effort extreme', '/effort high', 'second question', ''].join('\n');
    const run = await runCli(['-C', repo.root, '-i', 'first question'], { env: env(), stdin });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('effort medium; /effort low|medium|high|max changes it\n');
    expect(run.stderr).toContain('unknown effort "extreme"; use /effort low|medium|high|max\n');
    expect(run.stderr).toContain('effort high from the next question on\n');
    expect(messages().map((r) => r.body.output_config)).toEqual([{ effort: 'medium' }, { effort: 'high' }]);
  });
});
