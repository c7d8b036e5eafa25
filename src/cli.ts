import { parseArgs, type Parsed } from './args.js';
import { resolveConfig, type Config, type RawFlags } from './config.js';
import { publishRunRoot } from './run-root.js';
import { admitRoot, realRoot } from './roots.js';
import { UsageError } from './errors.js';
import { usageErrorJson, wantsLocateJson } from './locate/usage.js';
import { EXIT } from './exit-codes.js';
import type { Io } from './io.js';
import { runOnce } from './run/oneshot.js';
import { chooseSandbox, sandboxMode, type SandboxChoice } from './sandbox/choose.js';
import type { SandboxMode } from './sandbox/kernel.js';
import { escapeControls } from './escape.js';
import { Redactor } from './secrets/redactor.js';
import { useSandbox } from './sandbox/exec.js';
import {
  confirmOnTerminal,
  describeLarge,
  LARGE_QUESTION_LABEL,
  largeQuestion,
  PIPED_MAX_BYTES,
  pipedCutWarning,
  readStdin,
  STDIN_IDLE_MS,
  withPipedText,
} from './run/question.js';
import { sessionListing } from './run/session-list.js';

/** What an embedder (the in-process tests) may set that no flag or environment variable reaches. */
type MainOptions = Pick<Config, 'headTimeoutMs'>;

/** The whole CLI: parses argv, runs one question or the REPL, and maps every failure to an exit code. */
export async function main(argv: readonly string[], io: Io, options: MainOptions = {}): Promise<number> {
  let debug = argv.includes('--debug');
  try {
    const parsed = await parseArgs(argv, io.stdout.columns);
    if (parsed.kind === 'output') {
      io.stdout.write(parsed.text);
      return EXIT.ok;
    }
    // `--resume` with no id lists the sessions to pick from (no key needed: nothing is sent).
    if (parsed.flags.resume?.trim() === '' && !parsed.audit && !parsed.mcp && !parsed.locate) {
      if (parsed.question !== null) {
        throw new UsageError(
          '--resume needs a session id to continue with a question; run spelunk --resume alone to list them, or -c for the latest',
        );
      }
      io.stdout.write(await sessionListing(await realRoot(parsed.flags.dir ?? '.', io.cwd), io));
      return EXIT.ok;
    }
    if (parsed.locate) {
      // rg runs for locate too: the sandbox is chosen first, from --sandbox or SPELUNK_SANDBOX alone (no config needed).
      const mode = sandboxMode(parsed.flags.sandbox, io.env.SPELUNK_SANDBOX);
      if (mode === null) {
        throw new UsageError(
          `--sandbox (or SPELUNK_SANDBOX) must be auto, required or off (got "${escapeControls(parsed.flags.sandbox ?? io.env.SPELUNK_SANDBOX ?? '')}")`,
        );
      }
      const probe = chooseSandbox(mode);
      const root = await realRoot(parsed.flags.dir ?? '.', io.cwd);
      const refused = await admit(root, io, parsed.flags);
      if (refused !== null) return refused;
      await startSandbox(mode, io, probe);
      // Imported only here, and before the config: locate needs no API key, and other commands never load it.
      const { runLocate } = await import('./locate/command.js');
      const piped = parsed.question ?? (io.stdin.isTTY ? null : (await readStdin(io.stdin)).text.trim() || null);
      return await runLocate(piped, root, parsed.flags, io);
    }
    // The probe (one sandboxed `true`, a child's wall time) runs while the config is resolved: in parallel, not in
    // series. A mode that is not one is left to resolveConfig's usage error; no child of the run starts before the
    // probe has answered.
    const early = sandboxMode(parsed.flags.sandbox, io.env.SPELUNK_SANDBOX);
    const probe = early === null ? null : chooseSandbox(early);
    const config: Config = { ...(await resolveConfig(parsed.flags, io.env, io.cwd, parsed.audit, parsed.mcp)), ...options };
    debug = config.debug;
    const refused = await admit(config.root, io, parsed.flags, parsed.mcp);
    if (refused !== null) return refused;
    publishRunRoot(config.root);
    await startSandbox(config.sandboxMode, io, probe ?? undefined);
    if (config.allowSecrets === true) {
      io.stderr.write('spelunk: --allow-secrets: secrets in the repository go to the model and the outputs unredacted for this run\n');
    }
    if (parsed.mcp) {
      // Imported only here: the MCP SDK (and zod) must not cost the ordinary one-shot start-up anything.
      const { runMcp } = await import('./mcp/server.js');
      return await runMcp(config, io);
    }
    const question = await gatherQuestion(parsed, config, io);
    if (question === DECLINED) return EXIT.usage;
    if (question === INTERRUPTED) return EXIT.interrupted;
    if (question !== null && !config.interactive) return await runOnce(config, question, io);
    if (config.outputFormat !== 'text') {
      throw new UsageError(`--output-format ${config.outputFormat} needs a question; the REPL is text only`);
    }
    if (parsed.audit) throw new UsageError('audit runs once; drop -i/--interactive');
    // Imported only here: a one-shot start does not evaluate the REPL (or node:readline).
    const { runRepl } = await import('./run/repl.js');
    return await runRepl(config, io, question, { allowLargeQuestion: parsed.flags.allowLargeQuestion === true });
  } catch (error) {
    if (error instanceof UsageError) {
      // `locate --output-format json` gets the error as json on stdout too, so a caller parsing it never chokes.
      if (wantsLocateJson(argv)) io.stdout.write(usageErrorJson(error.message));
      io.stderr.write(`spelunk: ${error.message}\n`);
      return EXIT.usage;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`spelunk: internal error: ${message}${debug ? '' : ' (rerun with --debug for the stack trace)'}\n`);
    if (debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return EXIT.failure;
  }
}

/**
 * Before any program reads the root (src/roots.ts): the home directory asked about on a terminal (refused elsewhere
 * and by the MCP server), then the special-file walk. The exit code when the person said no (2) or pressed Ctrl+C (130).
 */
async function admit(root: string, io: Io, flags: Pick<RawFlags, 'allowHome' | 'quiet'>, mcp = false): Promise<number | null> {
  const ask = (prompt: string): ReturnType<typeof confirmOnTerminal> => confirmOnTerminal(io, prompt);
  const admitted = await admitRoot(root, io, { allowHome: flags.allowHome === true, quiet: flags.quiet === true, nonInteractive: mcp, ask });
  if (admitted === 'declined') return EXIT.usage;
  return admitted === 'interrupted' ? EXIT.interrupted : null;
}

/** The user said no to sending a large question on the terminal (exit 2), or pressed Ctrl+C there (exit 130). */
const DECLINED = Symbol('declined');
const INTERRUPTED = Symbol('interrupted');

/**
 * The question as the model will get it: the argument, or all of stdin when there is none; with both, the piped text
 * follows the question in a delimited block (capped, with a notice when cut). A question over LARGE_QUESTION_BYTES
 * is confirmed on a terminal and refused elsewhere unless --allow-large-question.
 */
async function gatherQuestion(
  parsed: Extract<Parsed, { kind: 'run' }>,
  config: Config,
  io: Io,
): Promise<string | null | typeof DECLINED | typeof INTERRUPTED> {
  // With -i, piped stdin is the REPL's input, a question a line, not one question.
  const stdinIsInput = !io.stdin.isTTY && !(config.interactive && !parsed.audit);
  let question = parsed.question;
  if (question === null && stdinIsInput) {
    const text = (await readStdin(io.stdin)).text.trim();
    question = text === '' ? null : await redactStdin(text, config);
  } else if (question !== null && stdinIsInput) {
    const onSlow = (): void =>
      void io.stderr.write(
        'spelunk: waiting for stdin to end (piped text goes to the model with the question); run with </dev/null if there is none\n',
      );
    const piped = await readStdin(io.stdin, { cap: PIPED_MAX_BYTES, firstDataMs: STDIN_IDLE_MS, ...(config.quiet ? {} : { onSlow }) });
    if (piped.idle && !config.quiet) {
      io.stderr.write(
        `spelunk: no stdin data within ${STDIN_IDLE_MS / 1000} s; answering the question alone (redirect stdin from /dev/null to skip the wait)\n`,
      );
    }
    if (piped.text.trim() !== '') question = withPipedText(question, { ...piped, text: await redactStdin(piped.text, config) });
    if (piped.cut && !config.quiet) io.stderr.write(`warning: ${pipedCutWarning(piped)}\n`);
  }
  if (parsed.audit && question === null) throw new UsageError('audit needs a question: spelunk audit "does every handler check auth?"');
  if (question === null && stdinIsInput) {
    throw new UsageError('no question: pass it as an argument (spelunk "where is X?") or on stdin, or run in a terminal for the REPL');
  }
  const large = question === null || parsed.flags.allowLargeQuestion ? null : largeQuestion(question, config.model);
  if (large === null) return question;
  const what = describeLarge(large, config.model);
  if (io.stdin.isTTY !== true || io.stderr.isTTY !== true) {
    throw new UsageError(
      `${what}; over ${LARGE_QUESTION_LABEL} a question is sent only with --allow-large-question (or when confirmed on a terminal)`,
    );
  }
  const answer = await confirmOnTerminal(io, `${what}. Send it? [y/N] `);
  if (answer === 'yes') return question;
  io.stderr.write(answer === 'interrupted' ? '\nspelunk: interrupted; not sent\n' : 'spelunk: not sent\n');
  return answer === 'interrupted' ? INTERRUPTED : DECLINED;
}

/** Piped text without its secrets (`[redacted: GitHub token, stdin:3]`): it goes to the model and the saved session. */
async function redactStdin(text: string, config: Config): Promise<string> {
  return (await new Redactor(config.allowSecrets !== true).redact(text, { kind: 'text', path: 'stdin' })).text;
}

/**
 * Before any child runs: every program from here on starts in the sandbox chosen now (exit 2 when required fails).
 * `started` is the probe for `mode` already under way.
 */
async function startSandbox(mode: SandboxMode, io: Io, started?: Promise<SandboxChoice>): Promise<void> {
  const sandbox = await (started ?? chooseSandbox(mode));
  if (!sandbox.ok) throw new UsageError(sandbox.error);
  if (sandbox.notice !== null) io.stderr.write(`${sandbox.notice}\n`);
  useSandbox(sandbox.sandbox);
}
