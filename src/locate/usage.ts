/** Flags that take their value as the next word, as they can stand before `locate`. */
const VALUE_FLAGS = new Set(['-C', '--dir', '--output-format', '--k', '--sandbox', '-m', '--model']);

/**
 * Whether argv is `spelunk locate … --output-format json`, read from the words alone: a usage error can come before
 * the flags are parsed (an unknown flag), and a json caller must still get an object it can parse.
 */
export function wantsLocateJson(argv: readonly string[]): boolean {
  const command = argv.find((word, i) => !word.startsWith('-') && !VALUE_FLAGS.has(argv[i - 1] ?? ''));
  if (command !== 'locate') return false;
  return argv.some((word, i) => word === '--output-format=json' || (word === '--output-format' && argv[i + 1] === 'json'));
}

/** The json form of a usage error: one object on one line, `error` saying the kind and `message` what to do. */
export function usageErrorJson(message: string): string {
  return `${JSON.stringify({ type: 'error', error: 'usage', message })}\n`;
}
