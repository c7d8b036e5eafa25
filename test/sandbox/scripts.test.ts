import { describe, expect, it } from 'vitest';
import { checkJqFilter } from '../../src/sandbox/policy/scripts.js';
import { statFormatReason } from '../../src/sandbox/policy/readers.js';

/**
 * The jq filter check read as jq 1.6's lexer reads a filter: newlines and comments between `$` and a name (which the
 * bash tool's lexer never lets through, so these rows call the check directly), interpolations inside strings,
 * fields. `null` accepts; otherwise a fragment of the refusal.
 */
describe('checkJqFilter', () => {
  it.each<[string, string | null]>([
    ['$ENV', 'uses $ENV'], ['$ ENV', 'uses $ENV'], ['$\nENV', 'uses $ENV'], ['$\t\r\nENV', 'uses $ENV'], ['$ # c\nENV', 'uses $ENV'],
    ['$#c\n#d\n ENV.HOME', 'uses $ENV'], ['#\n$ENV', 'uses $ENV'], ['1 # $ENV\n| $ENV', 'uses $ENV'], ['$\n__loc__', 'uses $__loc__'],
    ['$ __prog_args', 'uses $__prog_args'], ['$__anything', 'uses $__anything'], ['"\\(env)"', 'uses env'], ['"a\\("\\("\\(env)")")"', 'uses env'],
    ['"\\((1)) \\(env)"', 'uses env'], ['"\\(")") \\($ENV)"', 'uses $ENV'], ['[.[] | env]', 'uses env'], ['..env', 'uses env'],
    ['import "a" as a; 1', 'uses import'], ['include "a"; 1', 'uses include'], ['localtime', 'uses localtime'], ['modulemeta', 'modulemeta'],
    ['# just a comment\n1', null], ['1 # $ENV', null], ['"$ENV env import"', null], ['"\\\\(env)"', null], ['.env', null], ['.a.env', null],
    ['."env"', null], ['{"env": 1}', null], ['$x', null], ['1 as $env | $env', null], ['input_filename', null], ['[inputs]', null],
    ['@sh "\\(.)"', null], ['"\\"\\(1)\\"" | ltrimstr("x")', null], ['environment', null], ['getpath(["env"])', null],
  ])('%j → %s', (filter, fragment) => {
    const reason = checkJqFilter(filter);
    if (fragment === null) return expect(reason).toBeNull();
    expect(reason).toContain(fragment);
  });
});

/** stat's format directives: the file's own facts pass, the host's are refused (the directive is named). */
describe('statFormatReason', () => {
  it.each<[string, string | null]>([
    ['%n %N %s %b %B %f %F %a %A %u %g %h %i %w %W %x %X %y %Y %z %Z', null], ['%%', null], ['100%% %n', null], ['%-10n|%10s|%.3Y|%\'s', null],
    ['no directive', null], ['%m', '%m'], ['%d', '%d'], ['%D', '%D'], ['%U', '%U'], ['%G', '%G'], ['%C', '%C'], ['%o', '%o'], ['%t', '%t'],
    ['%T', '%T'], ['%Hd', '%Hd'], ['%Lr', '%Lr'], ['%-8U', '%-8U'], ['%n %', '% is not'], ['%%%U', '%U'], ['%q', '%q'], ['%S', '%S'],
  ])('%j → %s', (format, fragment) => {
    const reason = statFormatReason(format);
    if (fragment === null) return expect(reason).toBeNull();
    expect(reason).toContain(`the directive ${fragment}`);
  });
});
