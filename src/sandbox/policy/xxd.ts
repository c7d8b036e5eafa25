import type { Word } from './lexer.js';
import type { Parsed, Role } from './roles.js';
import { lookup, type ProgramPolicy } from './tables.js';

/**
 * How xxd spells a value flag in full: `-cols 8` takes the next word, while `-c8` (or `-co`) is an attached value.
 * xxd compares these prefixes, so `-lenX` also takes the next word.
 */
const FULL_NAMES: Readonly<Record<string, readonly string[]>> = {
  c: ['ols'], g: ['roup'], o: ['ffset'], s: ['kip', 'eek'], l: ['en'], n: ['ame'],
};

const OUTPUT = 'xxd reads every word after its first operand as the output file it would write (even one that starts with -, such as -u); put the flags before the file';

/**
 * xxd's own loop (xxd.c main): flags only until the first word that is not one (or `--`), each word one flag whose
 * first letter decides (`-ps` is `-p`; `--len` is `-len`); a value flag takes the rest of its word, or the next word
 * when the rest is empty or spells the flag's full name. After that the first word is the input and the second the
 * output file; there is no permutation. Only the plain spellings are accepted here; the others are refused.
 */
export function parseXxd(policy: ProgramPolicy, words: readonly Word[]): Parsed {
  const roles: Role[] = [];
  const given = new Set<string>();
  let i = 0;
  for (; i < words.length; i += 1) {
    const text = (words[i] as Word).text;
    if (text === '--') {
      roles[i] = { kind: 'flag' };
      i += 1;
      break;
    }
    if (!text.startsWith('-') || text === '-') break;
    if (text.startsWith('--')) return refuse(`xxd ${text}: xxd's flags take one dash (-c 8, -l 16, -p); give each as its own word`);
    const letter = text[1] as string;
    const rest = text.slice(2);
    const rule = lookup(policy.short, letter);
    if (rule === undefined) return refuse(`xxd -${letter} is not an allowed flag; allowed: ${Object.keys(policy.short).filter((ch) => policy.short[ch]?.type !== 'deny').join('')}`);
    if (rule.type === 'deny') return refuse(`xxd -${letter} is refused: it ${rule.reason}`);
    roles[i] = { kind: 'flag' };
    given.add(`-${letter}`);
    if (rule.type === 'bool') {
      if (rest !== '') return refuse(`xxd ${text}: xxd reads a word by its first letter only (${text} is -${letter}); give each flag as its own word`);
      continue;
    }
    const full = (FULL_NAMES[letter] ?? []).some((name) => rest.startsWith(name));
    if (rest !== '' && !full) continue;
    const value = words[i + 1];
    if (value === undefined) return refuse(`xxd ${text} needs a value`);
    roles[i + 1] = { kind: 'value', value: 'text', flag: `-${letter}` };
    i += 1;
  }
  const operands = words.length - i;
  // A pipeline's later stage reads the stage before it: the table it is checked with needs no path.
  if (operands === 0) return policy.needsPath === undefined ? { ok: true, roles, given } : refuse('xxd would read standard input, which is not available; give it a file path');
  if (operands > 1) return refuse(OUTPUT);
  roles[i] = { kind: 'operand', value: 'path' };
  return { ok: true, roles, given };
}

function refuse(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}
