/**
 * The policy table: commands the bash tool must accept and commands it must refuse, written against the hostile
 * fixture of sandbox-fixture.ts. `{ROOT}` stands for the fixture's real root. Shared by the policy test (verdicts) and
 * the bash tool test (every allowed command really runs and leaves the fixture untouched).
 */

import { HOST_ALLOWED, HOST_OPTIONAL_ALLOWED, HOST_REFUSED } from './policy-cases-host.js';
import { OPTIONAL_READER_ALLOWED, READER_ALLOWED, READER_REFUSED } from './policy-cases-readers.js';

/** Commands that must be accepted, with the argv they become when it is not simply the words. */
export const ALLOWED: Array<[string, string[]?]> = [
  ['rg -n needle'], ['rg -n needle src'], ["rg -n 'needle' src/a.ts"], ['"rg" needle', ['needle']], ["r''g needle", ['needle']],
  ['rg needle\\|hello', ['needle|hello']], ['rg -ez src', ['-ez', 'src']], ['rg -i -w needle .'], ['rg --files'], ["rg --files -g '*.ts'"],
  ['rg --files src'], ["rg -g '*.ts' needle"], ["rg --glob='*.ts' needle", ['--glob=*.ts', 'needle']],
  ["rg --type-add 'web:*.html' -t web needle"], ['rg -m5 needle'], ['rg -m=5 needle'], ['rg --max-count 5 needle'],
  ['rg -uuu needle'], ['rg -e needle -e other src'], ['rg needle -n'], ['rg -- -needle src'], ['rg -f patterns.txt src', ['-f', 'patterns.txt', 'src']],
  ['rg --ignore-file=.gitignore needle', ['--ignore-file=.gitignore', 'needle']], ['rg -C 2 needle'], ['rg --json needle'], ['rg --color=never needle'],
  ['rg --sort path needle'], ['rg -. needle'], ['rg --no-config needle'], ["rg 'héllo'"], ["rg 'foo$'", ['foo$']],
  ['rg "needle here"', ['needle here']], ["rg -c ''", ['-c', '']], ["rg -n needle 'name with space.txt'"],
  ['rg -n needle name\\ with\\ space.txt', ['-n', 'needle', 'name with space.txt']], ['rg needle\n', ['needle']],
  ['rg\tneedle', ['needle']], ["rg -n '#include'"], ["rg '{a,b}'"], ["rg 'needle|hello'"], ['rg -n needle links/inside'],
  ["rg -P '(?<=x)y'"], ['rg -- --pre=cat src'], ["rg -r '$1' 'f(o+)'"], ['rg "a\\$b"', ['a$b']], ['rg foo~bar'], ['rg -n needle ünïcode.txt'],
  ['grep -rn needle .'], ['grep -rn needle'], ['grep -n needle README.md'], ['grep -e needle -r src'],
  ["grep -ri --include='*.ts' needle src"], ['grep -r --exclude-dir=node_modules needle .'], ['grep -c needle README.md'],
  ['grep -5 needle README.md'], ['grep -d recurse needle .'], ['grep -D skip -r needle .'], ['grep -f patterns.txt README.md'],
  ["grep -E 'a|b' README.md"], ['grep --color=never needle README.md'], ['grep needle README.md -n'],
  ['find .'], ['find'], ["find src -name '*.ts'"], ['find . -name "*.ts" -type f'], ['find . -maxdepth 2 -type d'],
  ["find . \\( -name '*.ts' -o -name '*.js' \\) -print"], ["find . '(' -name a ')'"], ["find . ! -name '*.ts'"],
  ["find . -not -path './links/*'"], ['find . -newer README.md'], ["find . -newermt '2020-01-01'"],
  ['find . -samefile README.md'], ['find -P . -name x'], ["find . -printf '%p %s\\n'"], ['find . -size +1k -mtime -1'],
  ['find . -type f -empty'], ["find . -regextype posix-extended -regex '.*\\.ts'"], ['find src/*', ['src/a.ts', 'src/b.ts', 'src/c.js', 'src/nested']],
  // A glob match that cannot be read (a link out of the root, a FIFO) is skipped with a note, not the whole command.
  ['cat .*', ['.gitignore', '.hidden.ts']], ['cat *'], ['ls -d */'],
  ['ls'], ['ls -la'], ['ls -la src'], ['ls -R'], ['ls -lh --color=never src'], ['ls -1 src/*.ts', ['-1', 'src/a.ts', 'src/b.ts']],
  ['ls -d src/*/', ['-d', 'src/nested/']], ['ls -d src/ ./', ['-d', 'src/', '.']], ['ls --sort=size'], ["ls -I '*.ts' src"], ['ls -l links'],
  ['cat README.md'], ['cat -n README.md src/a.ts'], ['cat -- -dash.txt'], ["cat 'name with space.txt'"], ['cat ünïcode.txt'],
  ['cat *.md', ['README.md']], ['cat src/*.ts', ['src/a.ts', 'src/b.ts']], ['cat src/?.ts', ['src/a.ts', 'src/b.ts']],
  ['cat src/[ab].ts', ['src/a.ts', 'src/b.ts']], ['cat src/[!a].ts', ['src/b.ts']], ['cat "src"/*.ts', ['src/a.ts', 'src/b.ts']],
  ['cat {ROOT}/README.md'], ['cat src/../README.md'],
  ['head -n 5 README.md'], ['head -5 README.md'], ['head -c 10 README.md'], ['head -n5 README.md'], ['head --lines=5 README.md'],
  ['tail -n 5 README.md'], ['tail -5 README.md'], ['tail -n +2 README.md'], ['tail -c 10 README.md'],
  ['wc -l README.md'], ['wc -l src/*.ts', ['-l', 'src/a.ts', 'src/b.ts']], ['wc -lwc README.md'], ['wc -c src/a.ts src/b.ts'],
  ['file README.md'], ['file -b --mime-type README.md'], ['file -i src/a.ts'], ['file binary.bin'],
  // Red-team false refusals, fixed: a `$` bash keeps literally; look-alike, invisible and wide characters inside
  // single quotes are only text.
  ['rg -n "helper$" src', ['-n', 'helper$', 'src']], ['rg "a$ b"', ['a$ b']], ['rg "foo$|bar"', ['foo$|bar']], ['rg "x$)"', ['x$)']],
  ["rg '日本語（テスト）' src", ['日本語（テスト）', 'src']], ["rg 'a\u00a0b'", ['a\u00a0b']], ["rg 'a\u3000b'", ['a\u3000b']],
  ["rg '👨\u200d👩\u200d👧'", ['👨\u200d👩\u200d👧']], ["rg '｜'", ['｜']], ["rg 'x\u200by'", ['x\u200by']],
  // Bounded resource flags within their bounds; a long glob is matched in linear time.
  ['rg -j2 x'], ['rg --threads 8 x'], ['rg --regex-size-limit 10M x'], ['rg --dfa-size-limit=1M x'],
  // tree runs where no symbolic link leads out of the root: src here (the fixture's top level has links out).
  ['tree src'], ['tree -L 2 src'], ['tree -a -L 1 src'], ['tree -aL 1 src'], ['tree -J -L 1 src'], ['tree --gitignore -L 2 src'],
  ["tree -P '*.ts' src"], ['tree --dirsfirst --noreport src'], ['tree -I node_modules src'], ['tree -d src'], ['tree -F src'],
  ...READER_ALLOWED, ...OPTIONAL_READER_ALLOWED, ...HOST_ALLOWED, ...HOST_OPTIONAL_ALLOWED,
];

/** Commands that must be refused, with a fragment of the reason the model is given. */
export const REFUSED: Array<[string, string]> = [
  // operators and comments
  ['rg x | head', 'pipes'], ['rg x|head', 'pipes'], ['rg x |& cat', 'pipes'], ['rg x || ls', 'chaining (||)'],
  ['rg x && ls', 'chaining (&&)'], ['rg x; ls', 'chaining (;)'], ['rg x ;; ls', 'chaining (;;)'], ['rg x &', 'background'],
  ['rg x > out.txt', 'redirection (>)'], ['rg x >> out.txt', 'redirection (>>)'], ['rg x 2>&1', 'redirection (>&)'],
  ['rg x &> out', 'redirection (&>)'], ['rg x >| out', 'redirection (>|)'], ['cat < README.md', 'redirection (<)'],
  ['cat <<EOF', 'redirection (<<)'], ['cat <<< hi', 'redirection (<<<)'], ['cat <(ls)', 'process substitution'],
  ['cat >(ls)', 'process substitution'], ['(rg x)', 'subshells'], ['find . ( -name a )', "quote the parentheses"],
  ['rg x # comment', 'comments'], ['rg a#b', 'comments'],
  // expansions, inside double quotes too
  ['rg $(whoami)', 'command substitution'], ['rg "$(whoami)"', 'inside double quotes'], ['rg `whoami`', 'backticks'],
  ['rg "`whoami`"', 'backticks'], ['rg $HOME', 'variable expansion'], ['rg "$ANTHROPIC_API_KEY"', 'variable expansion'],
  ['rg ${PATH}', 'parameter expansion'], ['rg "${PATH}"', 'parameter expansion'], ['rg $IFS', 'variable expansion'],
  ['cat$IFS/etc/passwd', 'variable expansion'], ["rg $'\\x7c'", 'ANSI-C'], ['rg $"x"', 'locale'], ['rg $[1+1]', 'arithmetic'],
  ['rg $((1+1))', 'command substitution'], ['rg x $', 'variable expansion'], ['cat ~/.ssh/id_rsa', 'tilde'],
  ['cat ~root/.bashrc', 'tilde'], ['cat {README.md,/etc/passwd}', 'brace expansion'], ['rg x src/{a,b}.ts', 'brace expansion'],
  ['rg x {1..3}', 'brace expansion'], ['rg "a\\`b"', 'ambiguous'],
  // raw characters shell-quote does not check
  ['rg x\nls', 'newlines'], ['rg x\n\n', 'newlines'], ['rg x\rls', 'carriage return'], ['rg x\0', 'NUL'],
  ['rg x\u00a0src', 'non-ASCII whitespace U+00A0'], ['rg x\u2028ls', 'U+2028'], ['rg x\u3000src', 'U+3000'],
  ['rg x\u200bsrc', 'U+200B'], ['rg \u202ex', 'U+202E'], ['rg\ufeff x', 'U+FEFF'], ['rg x\u2066', 'U+2066'],
  ['rg x \uff5c ls', '"|"'], ['rg x\uff1bls', '";"'], ['rg x \uff06 ls', '"&"'], ['rg x \uff1e out', '">"'],
  ['rg x\u037e ls', '";"'], ['rg \uff04HOME', '"$"'], ['rg x \u001b[31m', 'control character U+001B'],
  ['rg x\u0085', 'control character U+0085'], ['rg x\ud800', 'unpaired surrogate'], ["rg 'x", 'unbalanced single quote'],
  ['rg "x', 'unbalanced double quote'], ['rg x\\', 'trailing backslash'], [`rg ${'a'.repeat(9000)}`, 'limit is 8192'],
  [`rg x ${'README.md '.repeat(299)}`, 'limit is 256'], ['', 'empty'], ['   ', 'empty'],
  // programs
  ['FOO=1 rg x', 'variable assignments'], ['PATH=/tmp rg x', 'variable assignments'], ['env rg x', 'run the program directly'],
  ['timeout 5 rg x', 'run the program directly'], ['nice rg x', 'run the program directly'], ['xargs rg', 'run the program directly'],
  ["sh -c 'rg x'", 'run the program directly'], ["bash -c 'rg x'", 'run the program directly'],
  ['busybox cat README.md', 'run the program directly'], ['exec rg x', 'run the program directly'],
  ['command rg x', 'run the program directly'], ['/usr/bin/rg x', 'by bare name (rg, not /usr/bin/rg)'], ['./rg x', 'bare name'], ['bin/rg x', 'bare name'],
  ['RG x', 'case-sensitive'], ['Rg x', 'case-sensitive'], ['CAT README.md', 'case-sensitive'], ["python3 -c 'print(1)'", 'run the program directly'],
  ['awk 1 README.md', 'rg -o'], ['git log', 'git is not run through bash; use the git tool'], ['git log --oneline -n 5', 'use the git tool and send it `log --oneline -n 5`'], ['r* x', 'glob'],
  ['rm -rf .', 'rm is not an allowed program; nothing can be changed here'], ['cp README.md x', 'not an allowed program'], ['curl http://example.com', 'not an allowed program'],
  // rg
  ['rg --pre=cat x', 'runs another program'], ['rg --pre cat x', 'runs another program'], ['rg --pr=cat x', 'abbreviation of --pre'],
  ["rg --pre-glob '*' x", 'runs another program'], ['rg -z x', 'decompressor'], ['rg -zn x', 'decompressor'], ['rg -nz x', 'decompressor'],
  ['rg --search-zip x', 'decompressor'], ['rg --search x', 'abbreviation of --search-zip'], ['rg --hostname-bin=/bin/sh x', 'runs another program'],
  ['rg -L x', 'follows symbolic links'], ['rg --follow x', 'follows symbolic links'], ['rg -nL x', 'follows symbolic links'],
  ['rg --ignore-file=/etc/passwd x', 'outside the repository root'], ['rg --ignore-file=links/etc/passwd x', 'outside the repository root'],
  ['rg -f /etc/passwd src', 'outside the repository root'], ['rg -f/etc/passwd src', 'outside the repository root'],
  ['rg -f=/etc/passwd src', 'outside the repository root'], ['rg --file=/etc/passwd', 'outside the repository root'],
  ['rg -f - src', 'standard input'], ['rg x /etc', 'outside the repository root'], ['rg x ..', 'outside the repository root'],
  ['rg x ../', 'outside the repository root'], ['rg x links/etc', 'outside the repository root'], ['rg x up', 'outside the repository root'],
  ['rg x links/dotdot', 'outside the repository root'], ['rg x links/chain1', 'outside the repository root'],
  ['rg x links/sibling', 'outside the repository root'], ['rg x {ROOT}-old', 'outside the repository root'],
  ['rg x {ROOT}-old/secret.txt', 'outside the repository root'], ['rg x {ROOT}/../repo-old/secret.txt', 'outside the repository root'],
  ['rg x /proc/self/environ', '/proc is never readable'], ['rg x /dev/stdin', '/dev is never readable'], ['rg x -', 'standard input'],
  ['rg x fifo', 'FIFO'], ['rg --max-c 1 x', 'abbreviation of --max-count'], ['rg foo*', "single quotes: 'foo*'"],
  ['rg -g *.ts x', "quote it: -g '*.ts'"], ['rg --glob=*.ts x', '--glob=*.ts contains an unquoted glob'], ['rg x nosuchfile', 'no such file'],
  ['rg --engine=foo x', 'accepts only'], ['rg --files /etc', 'outside the repository root'], ['rg -m', 'needs a value'],
  // grep
  ['grep -R x .', 'follows symbolic links'], ['grep -rR x .', 'follows symbolic links'], ['grep --dereference-recursive x .', 'follows symbolic links'],
  ['grep --deref x .', 'abbreviation'], ['grep -rf /etc/passwd x', 'grep -f: /etc/passwd is outside the repository root'],
  ['grep -f/etc/passwd x README.md', 'outside the repository root'], ['grep --file=/etc/passwd README.md', 'grep --file=/etc/passwd: /etc/passwd is outside'],
  ['grep --exclude-from=/etc/passwd -r x .', 'outside the repository root'], ['grep -D read -r x .', 'accepts only: skip'],
  ['grep --devices=read -r x .', 'accepts only: skip'], ['grep -d foo x README.md', 'accepts only'], ['grep x', 'standard input'],
  ['grep x -', 'standard input'], ['grep x /etc/passwd', 'outside the repository root'], ['grep -r x /', 'outside the repository root'],
  ['grep --include=*.ts -r x .', 'unquoted glob'], ['grep -X awk x README.md', 'not an allowed flag'], ['grep x fifo', 'FIFO'],
  // find
  ['find . -exec cat {} ;', 'find -exec is refused'], ["find . -exec cat '{}' ';'", 'runs another program'],
  ["find . -execdir ls ';'", 'runs another program'], ["find . -ok rm ';'", 'runs another program'],
  ["find . -okdir rm ';'", 'runs another program'], ['find . -delete', 'deletes'], ['find . -fprint out', 'writes a file'],
  ['find . -fprint0 out', 'writes a file'], ["find . -fprintf out '%p'", 'writes a file'], ['find . -fls out', 'writes a file'],
  ['find -L .', 'follows symbolic links'], ['find -H .', 'dereferences'], ['find . -follow', 'follows symbolic links'],
  ['find . -L', 'must come before'], ['find . -newer /etc/passwd', 'outside the repository root'],
  ['find . -anewer /etc/passwd', 'outside the repository root'], ['find . -newermm /etc/passwd', 'outside the repository root'],
  ['find . -samefile /etc/passwd', 'outside the repository root'], ['find . -files0-from list', 'reads the list'],
  ['find /etc -name passwd', 'outside the repository root'], ['find .. -name x', 'outside the repository root'],
  ['find links/etc', 'outside the repository root'], ['find . -name *.ts', "quote it: -name '*.ts'"], ['find . -xtype l', 'symbolic links'],
  ['find . -regextype foo -regex x', 'accepts only'], ['find . -name', 'needs a value'], ['find -- .', 'not needed'],
  ['find . -name x foo', 'out of place'], ['find . foo', 'no such file'], ['find -D tree .', 'not an allowed test'],
  // ls
  ['ls -L', 'follows symbolic links'], ['ls --dereference', 'follows symbolic links'], ['ls --deref', 'abbreviation'],
  ['ls -lL src', 'follows symbolic links'], ['ls -H links', 'dereferences'], ['ls /etc', 'outside the repository root'],
  ['ls ..', 'outside the repository root'], ['ls ~', 'tilde'], ['ls links/etc', 'outside the repository root'],
  ['ls -I *.ts src', 'unquoted glob'], ['ls --hyperlink', 'not an allowed flag'], ['ls ../*', 'reaches outside'],
  ['ls /etc/*', 'the glob /etc/* reaches outside the repository root'], ['ls links/etc/*', 'reaches outside'], ['ls */../../*', 'reaches outside'],
  ["ls 'src/*.ts'", 'no such file'], ['ls src/*.rs', 'glob matched nothing'],
  // cat, head, tail, wc
  ['cat /etc/passwd', 'outside the repository root'], ['cat ../repo-old/secret.txt', 'outside the repository root'],
  ['cat {ROOT}-old/secret.txt', 'outside the repository root'], ['cat links/chain1', 'outside the repository root'],
  ['cat links/etc/passwd', 'outside the repository root'], ['cat links/sibling/secret.txt', 'outside the repository root'],
  ['cat up/outside/secret.txt', 'outside the repository root'], ['cat -', 'standard input'], ['cat /dev/stdin', '/dev is never readable'],
  ['cat /proc/self/environ', '/proc is never readable'], ['cat fifo', 'FIFO'], ['cat', 'standard input'],
  ['tail -f README.md', 'forever'], ['tail -F README.md', 'forever'], ['tail -5f README.md', 'forever'],
  ['tail -f5 README.md', 'forever'], ['tail -nf -f README.md', 'forever'], ['tail --follow README.md', 'forever'],
  ['tail --follow=name README.md', 'forever'], ['tail --fol README.md', 'abbreviation of --follow'], ['tail --retry README.md', 'forever'],
  ['tail --pid=1 README.md', 'forever'], ['tail -s 1 README.md', 'forever'], ['tail -', 'standard input'], ['tail', 'standard input'],
  ['tail +5f', 'obsolete +5f'], ['tail -- +5f', 'obsolete +5f'], ['head +5 README.md', 'obsolete'], ['head -5x README.md', 'not supported'],
  ['wc --files0-from=list', 'reads the list'], ['wc --files0-from list', 'reads the list'], ['wc --files0 list', 'abbreviation of --files0-from'],
  ['wc', 'standard input'],
  // file
  ['file -C -m magic', 'writes files'], ['file -C', 'writes files'], ['file -z x.gz', 'decompressor'], ['file -Z README.md', 'decompressor'],
  ['file -bz README.md', 'decompressor'], ['file --uncompress README.md', 'decompressor'], ['file -m /etc/magic README.md', 'magic file'],
  ['file -f list', 'list of files'], ['file --files-from list', 'list of files'], ['file -s README.md', 'devices'],
  ['file -p README.md', 'access times'], ['file -S README.md', 'seccomp'], ['file', 'standard input'],
  // tree
  ['tree -o out.txt', 'writes files'], ['tree -R', 'writes 00Tree.html'], ['tree -l', 'follows symbolic links'],
  ['tree -al', 'follows symbolic links'], ['tree --fromfile list', 'list of files'], ['tree --hintro=/etc/passwd', 'HTML intro'],
  ['tree --houtro x', 'HTML outro'], ['tree -H .', 'HTML'], ['tree /etc', 'outside the repository root'],
  ['tree links/etc', 'outside the repository root'], ['tree -P *.ts', 'unquoted glob'], ['tree --gitfile=/etc/passwd', 'outside the repository root'],
  ['tree --filel 3', 'abbreviation of --filelimit'],
  // quote tricks that spell a refused flag or a different program
  ['tail -\\f README.md', 'forever'], ["tail '-f' README.md", 'forever'], ['tail "-"f README.md', 'forever'],
  ["rg '--pre'=cat x", 'runs another program'], ["find . -e'x'ec cat '{}' ';'", 'runs another program'],
  ["'rg ' x", 'not an allowed program'], ["r'g' --pre=cat x", 'runs another program'], ['cat procself', '/proc is never readable'],
  // Deny rules the table walk found without a row (policy.test.ts fails on any uncovered rule).
  ['ls --dereference-command-line links', 'follows symbolic links'], ['ls --dereference-command-line-symlink-to-dir links', 'follows symbolic links'],
  ['tail --sleep-interval=1 README.md', 'forever'], ['tail --max-unchanged-stats=1 README.md', 'forever'],
  ['file -L README.md', 'follows symbolic links'], ['file --compile', 'writes files'], ['file --magic-file=/etc/magic README.md', 'magic file'],
  ['file --uncompress-noreport README.md', 'decompressor'], ['file --dereference README.md', 'follows symbolic links'],
  ['file --special-files README.md', 'devices'], ['file --preserve-date README.md', 'access times'], ['file --no-sandbox README.md', 'seccomp'],
  ['tree -T title', 'HTML output'], ['tree --fromtabfile list', 'list of files'], ['tree --fflinks', 'list of files'],
  ['tree --nolinks', 'HTML output'], ['tree --hyperlink', 'terminal hyperlinks'],
  // Red team: tables consulted by own property only (Object.prototype is not a table).
  ['constructor', 'not an allowed program'], ['__proto__ x', 'not an allowed program'], ['toString', 'not an allowed program'],
  ['hasOwnProperty x', 'not an allowed program'], ['find constructor', 'no such file'], ['find . constructor', 'no such file'],
  ['find . -constructor', 'not an allowed test'], ['find -__proto__ .', 'not an allowed test'], ['rg --constructor x', 'not an allowed flag'],
  ['ls --__proto__', 'not an allowed flag'], ['grep --toString x README.md', 'not an allowed flag'], ['tree --valueOf', 'not an allowed flag'],
  // Red team: GNU tail's obsolete first-argument form `[-+][NUM][bcl]f` follows forever.
  ['tail -cf README.md', 'obsolete -cf'], ['tail -cf -- README.md', 'obsolete -cf'], ['tail +f', 'obsolete +f'],
  ['tail -lf README.md', 'obsolete -lf'], ['tail -bf README.md', 'obsolete -bf'], ['tail -5cf README.md', 'obsolete -5cf'],
  ['tail +5cf README.md', 'obsolete +5cf'], ['tail -f', 'obsolete -f'],
  // Red team: one call may not take the machine.
  ['rg -j 99999 x', 'from 1 to 8'], ['rg -j0 x', 'from 1 to 8'], ['rg --threads=9 x', 'from 1 to 8'], ['rg -j 2x x', 'from 1 to 8'],
  ["rg --regex-size-limit 100G '(?:\\w{1000}){1000}'", 'from 1 to 268435456'], ['rg --dfa-size-limit=1G x', 'from 1 to 268435456'],
  [`ls ${'*'.repeat(33)}Z`, 'at most 32'], ['ls **********************Z', 'the glob matched nothing'],
  // Red team: links into /proc are refused by their text, whichever process resolves them.
  ['cat link-proc-cwd/etc/passwd', '/proc is never readable'], ['ls -la link-proc-cwd/', '/proc is never readable'],
  ["rg -a -uu --max-depth 2 -g environ --no-messages -o 'ANTHROPIC_API_KEY=[^\\x00]*' link-proc-cwd/code/proc", '/proc is never readable'],
  // Red team: z → /proc/self/cwd/code/proj, code → sub, sub/proj → /: in a child whose cwd is the root, z is /.
  ['cat z/etc/passwd', '/proc is never readable'], ['ls z/', '/proc is never readable'], ['cat code/proj/etc/passwd', 'outside the repository root'],
  ['ls z/*', 'reaches outside'], ['wc -l code/*/etc/passwd', 'link out of the repository'],
  // Unquoted, the same characters keep their refusals.
  ['rg 日本語（テスト）', 'looks like the shell character "("'], ['rg a\u00a0b', 'U+00A0'], ['rg "a\u202eb"', 'bidi'],
  ["rg 'a\u202eb'", 'bidi'], ['rg "$HOME"', 'variable expansion'], ['rg "a$b"', 'variable expansion'], ['rg "a${b}"', 'parameter expansion'],
  ['rg "a$(ls)"', 'command substitution'], ['rg "$1"', 'variable expansion'], ['rg "$@"', 'variable expansion'],
  // The most fundamental reason first: a refused flag before a quoting problem.
  ['find pages -name *.md -exec cat {} ;', 'find -exec is refused'], ['rg --pre=cat x | head', 'runs another program'],
  ['foo x | head', 'foo is not an allowed program'], ['tail -f README.md > out', 'forever'],
  // Only a refused flag or program is more fundamental; an unknown flag leaves the lexer's reason. Blanks split leniently.
  ['rg --nosuchflag x | head', 'pipes'], ['  foo  x | head', 'foo is not an allowed program'], ['"rg" --pre=cat x | head', 'runs another program'],
  // A word is an assignment only when it starts with a name; anything else is an unknown program.
  ['1A=b x', '1A=b is not an allowed program'],
  // Skipped glob matches are listed, five at most.
  ['cat links/[cd]*', 'every match of links/[cd]* is a link out of the repository or a file that cannot be read here (links/chain1, links/chain2, links/dangling, links/dangling-rel, links/dotdot)'],
  ['cat links/[cdes]*', '(links/chain1, links/chain2, links/dangling, links/dangling-rel, links/dotdot and 2 more)'],
  ...READER_REFUSED, ...HOST_REFUSED,
];

/**
 * Refusals that must not tell whether a path outside the root exists. `{X}` is filled with each of two values; the
 * outside path (third column, `{X}` filled the same way, relative to the root) exists with the first and not with the
 * second, and the two refusals must be the same text once the value is put back as `{X}`.
 */
export const OUTSIDE_PAIRS: Array<[command: string, existing: string, missing: string, outside: string, fragment: string]> = [
  ['ls {X}/*', '/etc', '/spelunk-no-such-dir-5e1b', '{X}', 'the glob {X}/* reaches outside the repository root'],
  ['ls {X}/*', '{ROOT}-old', '{ROOT}-nothere', '{X}', 'reaches outside'],
  ['ls links/{X}/*', 'etc', 'dangling', 'links/{X}/.', 'reaches outside'],
  ['ls links/{X}/*', 'sibling', 'dangling-rel', 'links/{X}/.', 'reaches outside'],
  ['ls links/{X}/*.txt', 'sibling', 'dangling-rel', 'links/{X}/.', 'reaches outside'],
  ['ls {X}/*', '../outside', '../nothere', '{X}', 'reaches outside'],
  ['ls {X}/*', 'up/outside', 'up/nothere', '{X}', 'reaches outside'],
  ['ls {X}/*', 'src/../../outside', 'src/../../nothere', '{X}', 'reaches outside'],
  ['ls */../..{X}/*', '/outside', '/nothere', '..{X}', 'reaches outside'],
  // A literal part after a glob names a path below each match; below a link out it is not looked up either.
  ['ls links/e*{X}', '/passwd', '/nothere', 'links/etc{X}', 'link out of the repository'],
  ['cat src/*/../../..{X}', '/outside/secret.txt', '/outside/nothere.txt', '..{X}', 'link out of the repository'],
  ['wc -l links/s*{X}', '/secret.txt', '/nothere.txt', 'links/sibling{X}', 'link out of the repository'],
];
