import { parseArgs } from './args.js';
import { resolveConfig } from './config.js';
import { publishRunRoot } from './run-root.js';
import { UsageError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { Io } from './io.js';
import { runOnce } from './run/oneshot.js';
import { runRepl } from './run/repl.js';

/** The whole CLI: parses argv, runs one question or the REPL, and maps every failure to an exit code. */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  let debug = argv.includes('--debug');
  try {
    const parsed = await parseArgs(argv, io.stdout.columns);
    if (parsed.kind === 'output') {
      io.stdout.write(parsed.text);
      return EXIT.ok;
    }
    if (parsed.locate) {
      // Imported only here, and before the config: locate needs no API key, and other commands never load it.
      const { runLocate } = await import('./locate/command.js');
      return await runLocate(parsed.question ?? (io.stdin.isTTY ? null : await readQuestion(io.stdin)), parsed.flags, io);
    }
    const config = await resolveConfig(parsed.flags, io.env, io.cwd, parsed.audit, parsed.mcp);
    publishRunRoot(config.root);
    debug = config.debug;
    if (parsed.mcp) {
      // Imported only here: the MCP SDK (and zod) must not cost the ordinary one-shot start-up anything.
      const { runMcp } = await import('./mcp/server.js');
      return await runMcp(config, io);
    }
    // With -i, piped stdin is the REPL's input, a question a line, not one question.
    const stdinIsQuestion = !io.stdin.isTTY && !(config.interactive && !parsed.audit);
    const question = parsed.question ?? (stdinIsQuestion ? await readQuestion(io.stdin) : null);
    if (parsed.audit && question === null) throw new UsageError('audit needs a question: spelunk audit "does every handler check auth?"');
    if (question === null && stdinIsQuestion) {
      throw new UsageError('no question: pass it as an argument (spelunk "where is X?") or on stdin, or run in a terminal for the REPL');
    }
    if (question !== null && !config.interactive) return await runOnce(config, question, io);
    if (config.outputFormat !== 'text') throw new UsageError(`--output-format ${config.outputFormat} needs a question; the REPL is text only`);
    if (parsed.audit) throw new UsageError('audit runs once; drop -i/--interactive');
    return await runRepl(config, io, question);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`spelunk: ${error.message}\n`);
      return EXIT.usage;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`spelunk: internal error: ${message}${debug ? '' : ' (rerun with --debug for the stack trace)'}\n`);
    if (debug && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return EXIT.failure;
  }
}

/** All of stdin is one question (trailing whitespace trimmed); empty stdin means none. */
async function readQuestion(stdin: NodeJS.ReadableStream): Promise<string | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  return text === '' ? null : text;
}
