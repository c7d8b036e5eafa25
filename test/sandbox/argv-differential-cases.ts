/**
 * Argv shapes for the differential test (argv-differential.test.ts): each is run by the real program under strace in
 * a scratch directory, where a file is planted for every word (and for every tail of a flag word, so an attached
 * value such as `-fp.txt` has its `p.txt`), and checked by the policy with that directory as the root. The shapes are
 * the ways programs read a command line differently: GNU permutation (options after operands), `--`, attached and
 * clustered short values (`-c5`, `-nA`), optional arguments (`--color FILE`), long `=` forms, obsolete counts (`-5`,
 * `+5`), and xxd, which stops at its first operand and writes the next word. Values are valid ones: a program that
 * stops at a bad value (`sort -t -n`: "multi-character tab") opens nothing, which the tables do not try to predict.
 */

/** What a refusal must show the real program doing, so the row proves the refusal was needed. */
export interface Evidence {
  /** A word the program wrote (created, truncated). */
  writes?: string;
  /** The program started another one. */
  execs?: true;
  /** A word the program opened that the policy would not confine. */
  opens?: string;
}

export interface DiffRow {
  program: string;
  words: string[];
  /** Words planted as directories (each holding inner.txt) instead of files. */
  dirs?: string[];
  /** Files with given contents (after the planting). */
  files?: Record<string, string>;
  /** Check only that every word the program opens is confined (generated rows, valueFlagRows). */
  subset?: true;
  /** The refusal expected, by a fragment, and what the real program did that makes it necessary. */
  refused?: { fragment: string; evidence?: Evidence };
}

type Options = Omit<DiffRow, 'program' | 'words'>;

const row = (program: string, words: string | string[], options: Options = {}): DiffRow => ({
  program,
  words: typeof words === 'string' ? words.split(' ').filter((w) => w !== '') : words,
  ...options,
});

const D = { dirs: ['d', 'e'] };
const refused = (fragment: string, evidence?: Evidence): Options => ({ refused: { fragment, evidence } });
const BIG = { 'big.txt': Array.from({ length: 40_000 }, (_, i) => `line ${(i * 7919) % 40_000}`).join('\n') + '\n' };
const FILES = Array.from({ length: 17 }, (_, i) => `f${i}`);
const RANDOM = { 'r.txt': 'r'.repeat(65_536) };
const DIFFERENT = { 'b.txt': '{"k": "other"}\n' };

export const DIFF_ROWS: DiffRow[] = [
  // `--` as a word after `--`, and other end-of-options corners
  row('cat', '-- --'), row('cat', '-- -- a.txt'), row('sed', '-n 1p -- -n'), row('grep', '-- -- a.txt'), row('rg', '-- -- a.txt'), row('wc', '-l -- -- -l'),
  row('head', '-n 1 -- -n 1'), row('ls', '-- -- -l'),
  // a flag's value is the next word even when it starts with a dash: a path value named -n is opened
  row('rg', '-e -n a.txt'), row('rg', '-f -n a.txt'), row('rg', '--ignore-file -n x a.txt'), row('grep', '-e -n a.txt'), row('grep', '-f -n a.txt'),
  row('grep', '--exclude-from -n -r x d', D), row('find', 'd -newer -n', D), row('diff', '--from-file -u b.txt'), row('realpath', '--relative-to -e a.txt'),
  row('hexdump', '-f -C a.txt', { files: { '-C': '1/1 "%02x"\n' } }), row('tree', '--gitfile -a d', D), row('sort', '-t - a.txt'),
  row('sort', '--random-source -r -R a.txt', { files: { '-r': 'r'.repeat(65_536) } }), row('xxd', '-s -1 a.txt'), row('cut', '-d - -f 1 a.txt'),
  // `--` as a flag's value is the value, not the end of options
  row('rg', '-e -- a.txt'), row('grep', '-e -- a.txt'), row('ls', '-I -- d', D), row('du', '--exclude -- d', D),
  row('diff', '--label -- a.txt b.txt'), row('tree', '-P -- d', D), row('find', 'd -name --', D), row('xxd', '-n -- -i a.txt'),
  row('jq', '--indent 2 -- . a.txt', refused('give the filter first')), row('stat', '-c -- a.txt'), row('file', '-F -- a.txt'),
  // rg (lexopt: permutation, -e=x drops the =, -fFILE attached)
  row('rg', '-n x a.txt'), row('rg', 'x a.txt -n'), row('rg', '-e x a.txt b.txt'), row('rg', '-ex a.txt'), row('rg', '-e=x a.txt'),
  row('rg', '-f p.txt a.txt'), row('rg', '-fp.txt a.txt'), row('rg', '-f=p.txt a.txt'), row('rg', '--file p.txt a.txt'), row('rg', '--file=p.txt a.txt'),
  row('rg', '--ignore-file i.txt x a.txt'), row('rg', '--ignore-file=i.txt x d', D), row('rg', 'x -- -n'), row('rg', '-- -x a.txt'),
  row('rg', '-g g.txt x a.txt'), row('rg', '--files d', D), row('rg', '--files -g x d', D), row('rg', '-tjs x a.txt'), row('rg', '-j2 x a.txt'),
  row('rg', '--color never x a.txt'), row('rg', '-C2 x a.txt'), row('rg', '-C 2 x a.txt'), row('rg', '-m 1 x a.txt'), row('rg', '-m1 -n x a.txt'),
  row('rg', '-r y x a.txt'), row('rg', '-ry x a.txt'), row('rg', '--type-add foo:*.foo x a.txt'), row('rg', '-uuu x d', D), row('rg', '-nie x a.txt'), row('rg', '-nix a.txt d', D),
  row('rg', '--pre cat x a.txt', refused('runs another program', { execs: true })),
  row('rg', '--pre=cat x a.txt', refused('runs another program', { execs: true })),
  // grep (getopt_long: permutation, -NUM, optional --color)
  row('grep', '-n x a.txt'), row('grep', 'x a.txt -n'), row('grep', '-e x a.txt b.txt'), row('grep', '-ex a.txt'), row('grep', '-f p.txt a.txt'),
  row('grep', '-fp.txt a.txt'), row('grep', '--file=p.txt a.txt'), row('grep', '--file p.txt a.txt'), row('grep', '-r x d', D), row('grep', 'x -r d', D),
  row('grep', '-A 1 x a.txt'), row('grep', '-A1 x a.txt'), row('grep', '-5 x a.txt'), row('grep', '--color x a.txt'), row('grep', '--color=never x a.txt'),
  row('grep', '-- -n a.txt'), row('grep', 'x -- -n'), row('grep', '--exclude-from e.txt -r x d', D), row('grep', '--exclude-from=e.txt -r x d', D),
  row('grep', '-d recurse x d', D), row('grep', '--include x.txt -r x d', D), row('grep', '-m1 x a.txt'), row('grep', '-e x -e y a.txt b.txt'),
  row('grep', '-rnf p.txt d', D), row('grep', '-nf p.txt a.txt'), row('grep', '--context 1 x a.txt'), row('grep', '-c x a.txt b.txt -h'),
  // find (its own grammar: options, starting points, expression)
  row('find', 'd', D), row('find', 'd -name a.txt', D), row('find', 'd -newer a.txt', D), row('find', '-P d', D), row('find', 'd -samefile a.txt', D),
  row('find', 'd -newermt 2020-01-01', D), row('find', 'd -newerma a.txt', D), row('find', ['d', '-printf', '%p\\n'], D), row('find', 'd -path a.txt', D),
  row('find', 'd -maxdepth 1', D), row('find', 'd ! -name x', D), row('find', 'd ( -name a -o -name b )', D), row('find', 'd e', D),
  row('find', 'd -anewer a.txt', D), row('find', 'd -cnewer a.txt', D), row('find', 'd -regex x', D), row('find', 'd -lname x', D),
  row('find', 'd -fprint out', { ...D, ...refused('writes a file', { writes: 'out' }) }),
  row('find', 'd -ls', { ...D, ...refused("user database") }),
  // ls
  row('ls', 'a.txt'), row('ls', '-l a.txt'), row('ls', 'a.txt -l'), row('ls', '-- -l'), row('ls', '-I a.txt d', D), row('ls', '-Ia.txt d', D),
  row('ls', '--ignore=a.txt d', D), row('ls', '-w 80 a.txt'), row('ls', '-w80 a.txt'), row('ls', '-T 4 a.txt'), row('ls', '--color a.txt'),
  row('ls', '--color=never a.txt'), row('ls', '--sort size a.txt'), row('ls', '--hide a.txt d', D), row('ls', '-d d', D), row('ls', '-R d', D),
  row('ls', '--format long a.txt'), row('ls', '--time-style iso -l a.txt'), row('ls', '--block-size 1K -s a.txt'), row('ls', '--tabsize=4 a.txt'),
  row('ls', '--classify a.txt'), row('ls', '-lw 80 a.txt'), row('ls', '-1 a.txt b.txt'), row('ls', '--quoting-style c a.txt'),
  // cat, head, tail, wc
  row('cat', 'a.txt'), row('cat', '-n a.txt b.txt'), row('cat', 'a.txt -n'), row('cat', '-- -n'), row('cat', '-nA a.txt'), row('cat', '--number a.txt'),
  row('head', '-n 2 a.txt'), row('head', '-n2 a.txt'), row('head', '-2 a.txt'), row('head', 'a.txt -n 1'), row('head', '-c 5 a.txt'),
  row('head', '--lines=2 a.txt'), row('head', '--lines 2 a.txt'), row('head', '-- -n'), row('head', '-n -2 a.txt'), row('head', '-qn1 a.txt b.txt'),
  row('head', '+2 a.txt', refused('obsolete', { opens: '+2' })),
  row('tail', '-n 2 a.txt'), row('tail', '-n +2 a.txt'), row('tail', '-n+2 a.txt'), row('tail', '-2 a.txt'), row('tail', '-c +3 a.txt'),
  row('tail', 'a.txt -n 1'), row('tail', '-- -n'), row('tail', '-q a.txt b.txt'), row('tail', '-2 a.txt b.txt', refused('only as the first word')), row('tail', 'a.txt -2', refused('only as the first word')), row('tail', '--lines=1 a.txt'),
  row('tail', '+2 a.txt', refused('obsolete')),
  row('wc', 'a.txt'), row('wc', '-l a.txt b.txt'), row('wc', 'a.txt -l'), row('wc', '-- -l'), row('wc', '-lwc a.txt'), row('wc', '--lines a.txt'),
  row('wc', '--files0-from=f.txt', { files: { 'f.txt': 'a.txt\0' }, ...refused('reads the list of files', { opens: 'f.txt' }) }),
  // file
  row('file', 'a.txt'), row('file', '-b a.txt'), row('file', 'a.txt -b'), row('file', '-- -b'), row('file', '-F : a.txt'), row('file', '-F: a.txt'),
  row('file', '-e elf a.txt'), row('file', '-P bytes=100 a.txt'), row('file', '--separator : a.txt'), row('file', '--mime-type a.txt'),
  row('file', '--exclude elf a.txt'), row('file', '-bi a.txt'),
  row('file', '-m m.txt a.txt', refused('loads a magic file', { opens: 'm.txt' })),
  // tree (a value flag takes the next word, even mid-cluster)
  row('tree', 'd', D), row('tree', '-L 1 d', D), row('tree', 'd -L 1', D), row('tree', '-P a.txt d', D), row('tree', '-I a.txt d', D),
  row('tree', '-aL 1 d', D), row('tree', '-La 1 d', D), row('tree', '--gitfile g.txt d', D), row('tree', '--gitfile=g.txt d', D),
  row('tree', '--charset ascii d', D), row('tree', '--charset=ascii d', D), row('tree', '--filelimit 10 d', D), row('tree', '-- d', D),
  row('tree', '--sort name d', D), row('tree', '--sort=name d', D), row('tree', '--infofile i.txt d', D), row('tree', '-d d e', D), row('tree', '-L1 d', { ...D, ...refused('not an allowed flag') }), row('tree', '-L=1 d', { ...D, ...refused('not an allowed flag') }), row('tree', '--filelimit=10 d', D),
  row('tree', '-o out d', { ...D, ...refused('writes files', { writes: 'out' }) }),
  // sort
  row('sort', 'a.txt'), row('sort', '-k 2 a.txt'), row('sort', '-k2 a.txt'), row('sort', 'a.txt -r'), row('sort', '-t , a.txt'), row('sort', '-t, a.txt'),
  row('sort', '-- -r'), row('sort', '-S 64M a.txt'), row('sort', '-S64M a.txt'), row('sort', '--random-source r.txt -R a.txt', { files: RANDOM }),
  row('sort', '--random-source=r.txt -R a.txt', { files: RANDOM }), row('sort', '--check a.txt'), row('sort', '--check=quiet a.txt'), row('sort', '--parallel 2 a.txt'),
  row('sort', '-m a.txt b.txt'), row('sort', '-nk 1 a.txt'), row('sort', '-S 64M big.txt', { files: BIG }),
  row('sort', ['-m', ...FILES.slice(0, 16)]), row('sort', ['-m', ...FILES], refused('at most 16 files', { writes: '' })),
  row('sort', ['--merge', ...FILES], refused('at most 16 files', { writes: '' })), row('sort', ['-mu', ...FILES], refused('at most 16 files', { writes: '' })),
  row('sort', FILES), row('sort', ['--batch-size=2', '-m', 'f0', 'f1', 'f2'], refused('temporary files', { writes: '' })),
  row('sort', '--compress-program=cat -S 1 big.txt', { files: BIG, ...refused('runs another program', { execs: true }) }),
  row('sort', '-o out a.txt', refused('writes files', { writes: 'out' })), row('sort', '-oout a.txt', refused('writes files', { writes: 'out' })),
  row('sort', '-S 1 big.txt', { files: BIG, ...refused('give a size from 64M', { writes: '' }) }),
  row('sort', '-T d -S 1 big.txt', { files: BIG, ...D, ...refused('temporary files', { writes: 'd' }) }),
  // uniq, cut, nl, tac
  row('uniq', 'a.txt'), row('uniq', '-c a.txt'), row('uniq', 'a.txt -c'), row('uniq', '-f 1 a.txt'), row('uniq', '-f1 a.txt'), row('uniq', '-s 1 a.txt'),
  row('uniq', '-w 2 a.txt'), row('uniq', '--group a.txt'), row('uniq', '--all-repeated=none a.txt'), row('uniq', '-- -c'),
  row('uniq', 'a.txt out', refused('the output file', { writes: 'out' })), row('uniq', 'a.txt -c out', refused('the output file', { writes: 'out' })),
  row('cut', '-f 1 a.txt'), row('cut', '-f1 a.txt'), row('cut', ['-d', ' ', '-f', '1', 'a.txt']), row('cut', '-d: -f1 a.txt'), row('cut', 'a.txt -c 1-2'),
  row('cut', '--output-delimiter , -f1 a.txt'), row('cut', '-c1 -- -c'), row('cut', '-sf1 a.txt'),
  row('nl', 'a.txt'), row('nl', '-b a a.txt'), row('nl', '-ba a.txt'), row('nl', 'a.txt -ba'), row('nl', '-s x a.txt'), row('nl', '-w3 a.txt'), row('nl', '-- -b'),
  row('tac', 'a.txt'), row('tac', '-s , a.txt'), row('tac', '-s, a.txt'), row('tac', 'a.txt -s x'), row('tac', '-- -s'), row('tac', '-rs x a.txt'),
  // stat, du
  row('stat', 'a.txt'), row('stat', '-c %n a.txt'), row('stat', '-c%n a.txt'), row('stat', 'a.txt -c %s'), row('stat', '--format=%n a.txt'),
  row('stat', '--printf %n a.txt'), row('stat', '-t a.txt'), row('stat', '-c %n -- -c'), row('stat', '--cached never a.txt'),
  row('stat', '-f a.txt', refused('reports the host filesystem')),
  row('du', 'd', D), row('du', '-s d', D), row('du', 'd -s', D), row('du', '-d 1 d', D), row('du', '-d1 d', D), row('du', '--max-depth=1 d', D),
  row('du', '-B 1K d', D), row('du', '-B1K d', D), row('du', '--exclude a.txt d', D), row('du', '-t 1 d', D), row('du', '--time d', D),
  row('du', '-- -s', { dirs: ['-s'] }), row('du', '-sh d e', D),
  row('du', '-X x.txt d', { ...D, ...refused('reads the list of files', { opens: 'x.txt' }) }),
  // diff, cmp
  row('diff', 'a.txt b.txt'), row('diff', '-u a.txt b.txt'), row('diff', 'a.txt b.txt -u'), row('diff', '-U 1 a.txt b.txt'), row('diff', '-U1 a.txt b.txt'),
  row('diff', '--unified a.txt b.txt'), row('diff', '--unified=1 a.txt b.txt'), row('diff', '--from-file a.txt b.txt'),
  row('diff', '--from-file=a.txt b.txt c.txt'), row('diff', '--to-file=a.txt b.txt'), row('diff', '-r d e', D), row('diff', '-x a.txt -r d e', D),
  row('diff', '-xa.txt -r d e', D), row('diff', '-I re a.txt b.txt'), row('diff', '--label l a.txt b.txt'), row('diff', '-C 1 a.txt b.txt'),
  row('diff', '-- -u a.txt'), row('diff', '-q a.txt b.txt', { files: DIFFERENT }),
  row('diff', '-X x.txt d e', { ...D, ...refused('reads the list of files', { opens: 'x.txt' }) }),
  row('diff', '-l a.txt b.txt', { files: DIFFERENT, ...refused('the pr program', { execs: true }) }),
  row('cmp', 'a.txt b.txt'), row('cmp', '-l a.txt b.txt'), row('cmp', 'a.txt b.txt -l'), row('cmp', '-i 1 a.txt b.txt'), row('cmp', '-i1 a.txt b.txt'),
  row('cmp', '-n 2 a.txt b.txt'), row('cmp', '--bytes=2 a.txt b.txt'), row('cmp', '-- -l a.txt'),
  row('cmp', 'a.txt b.txt 1 1', refused('byte offsets')),
  // od, xxd, hexdump, strings
  row('od', 'a.txt'), row('od', '-c a.txt'), row('od', 'a.txt -c'), row('od', '-t x1 a.txt'), row('od', '-tx1 a.txt'), row('od', '-N 4 a.txt'),
  row('od', '-N4 a.txt'), row('od', '-w a.txt'), row('od', '-w8 a.txt'), row('od', '-A x a.txt'), row('od', '-j 1 a.txt'), row('od', '--width a.txt'),
  row('od', '--strings a.txt'), row('od', '-S 3 a.txt'), row('od', '-- -c'), row('od', '--endian=big a.txt'), row('od', 'a.txt b.txt'), row('od', 'a.txt +1', refused('byte offset')), row('od', 'a.txt 1', refused('byte offset')),
  row('od', '-- a.txt +1', refused('byte offset')), row('od', 'a.txt 0x10b', refused('byte offset')), row('od', '-c a.txt 1.', refused('byte offset')),
  row('od', '-t x1 a.txt ./1'), row('od', 'a.txt ./+1'),
  row('xxd', 'a.txt'), row('xxd', '-c 8 a.txt'), row('xxd', '-c8 a.txt'), row('xxd', '-cols 8 a.txt'), row('xxd', '-u a.txt'), row('xxd', '-- -u'),
  row('xxd', '-l 4 a.txt'), row('xxd', '-len 4 a.txt'), row('xxd', '-s 1 a.txt'), row('xxd', '-seek 1 a.txt'), row('xxd', '-g 2 a.txt'),
  row('xxd', '-cols a.txt b.txt'), row('xxd', '-len a.txt b.txt'), row('xxd', '-capitalize a.txt'), row('xxd', '-i -n v a.txt'), row('xxd', '-p a.txt'),
  row('xxd', 'a.txt -u', refused('the output file', { writes: '-u' })), row('xxd', 'a.txt -c5', refused('the output file', { writes: '-c5' })),
  row('xxd', 'a.txt -c/../x', refused('the output file', { writes: '-c/../x' })), row('xxd', 'a.txt out', refused('the output file', { writes: 'out' })),
  row('xxd', '-- a.txt -u', refused('the output file', { writes: '-u' })), row('xxd', 'a.txt --', refused('the output file', { writes: '--' })), row('xxd', 'a.txt -- x', refused('the output file')),
  row('xxd', '-ps a.txt', refused('by its first letter only')),
  row('hexdump', 'a.txt'), row('hexdump', '-C a.txt'), row('hexdump', 'a.txt -C'), row('hexdump', '-n 4 a.txt'), row('hexdump', '-n4 a.txt'),
  row('hexdump', '-s 1 a.txt'), row('hexdump', ['-e', '"%x"', 'a.txt']), row('hexdump', '-f fmt.txt a.txt', { files: { 'fmt.txt': '1/1 "%02x"\n' } }),
  row('hexdump', '-L a.txt'), row('hexdump', '--length 4 a.txt'), row('hexdump', '-- -C'), row('hexdump', '-Cn 4 a.txt'),
  row('strings', 'a.txt'), row('strings', '-n 3 a.txt'), row('strings', '-n3 a.txt'), row('strings', 'a.txt -a'), row('strings', '-t x a.txt'),
  row('strings', '-tx a.txt'), row('strings', '-e s a.txt'), row('strings', '-s | a.txt'), row('strings', '-- -a'),
  row('strings', '@opts', { files: { opts: '-a\n' }, ...refused('a file of further options', { opens: 'opts' }) }),
  row('strings', '-n @opts a.txt', { files: { opts: '4\n' }, ...refused('a file of further options', { opens: 'opts' }) }),
  row('strings', '-- @opts', { files: { opts: '-a\n' }, ...refused('a file of further options', { opens: 'opts' }) }),
  row('strings', '-e @opts a.txt', { files: { opts: 's\n' }, ...refused('a file of further options', { opens: 'opts' }) }),
  // basename, dirname, realpath, pwd: the first two open nothing
  row('basename', 'd/a.txt', D), row('basename', '-s .txt a.txt'), row('basename', '-a a.txt b.txt'), row('basename', '--suffix=.txt a.txt'),
  row('dirname', 'd/a.txt', D), row('dirname', '-z a.txt'),
  row('realpath', 'a.txt'), row('realpath', 'a.txt d', D), row('realpath', '--relative-to d a.txt', D), row('realpath', '--relative-to=d a.txt', D),
  row('realpath', '--relative-base=d a.txt', D), row('realpath', '-s a.txt'), row('realpath', 'a.txt -e'), row('realpath', '-- -e'),
  row('pwd', ''), row('pwd', '-P'),
  // sed (the first operand is the script unless -e gave one)
  row('sed', '-n 1p a.txt'), row('sed', '-n a.txt -e 1p'), row('sed', '-n -e 1p a.txt b.txt'), row('sed', '1p -n a.txt'), row('sed', '-n -- 1p a.txt'),
  row('sed', '-ne 1p a.txt'), row('sed', '-n --expression=1p a.txt'), row('sed', '-n -s 1p a.txt'), row('sed', '-n -E /x/p a.txt'),
  row('sed', ['-n', '1w out', 'a.txt'], refused('line printer', { writes: 'out' })),
  // jq (1.6: options anywhere, the first operand is the filter)
  row('jq', '. a.txt'), row('jq', '-r . a.txt'), row('jq', '. a.txt -r'), row('jq', '-n 1'), row('jq', '--indent 2 . a.txt'), row('jq', '--tab . a.txt'),
  row('jq', '-nr 1'), row('jq', '. -- a.txt'), row('jq', '-e . a.txt b.txt'), row('jq', '--seq . a.txt'), row('jq', '-n input a.txt'), row('jq', '--indent=2 . a.txt', refused('never with =')), row('jq', '-- . a.txt', refused('give the filter first')),
  row('jq', '-n -- 1', refused('give the filter first')), row('jq', '--tab=1 . a.txt', refused('never with =')),
  row('jq', '. a.txt --tab'), row('jq', '-rn 1'), row('jq', '-S . a.txt b.txt'),
  row('jq', '-f prog.jq a.txt', { files: { 'prog.jq': '.\n' }, ...refused('reads the filter from a file', { opens: 'prog.jq' }) }),
  row('jq', '--slurpfile v s.txt . a.txt', refused('reads a file into a variable', { opens: 's.txt' })),
  row('jq', '--rawfile v s.txt . a.txt', refused('reads a file into a variable', { opens: 's.txt' })),
  row('jq', '--arg v a.txt . b.txt', refused('binds a variable')),
  // base64, paste, checksums, comm, join
  row('base64', 'a.txt'), row('base64', '-w 0 a.txt'), row('base64', '-w0 a.txt'), row('base64', 'a.txt -w 0'), row('base64', '--wrap=0 a.txt'),
  row('base64', '-- -d'),
  row('paste', 'a.txt b.txt'), row('paste', '-d , a.txt b.txt'), row('paste', '-d, a.txt'), row('paste', 'a.txt -s'), row('paste', '-- -s'),
  row('paste', '--delimiters=, a.txt'),
  row('sha256sum', 'a.txt'), row('sha256sum', 'a.txt b.txt'), row('sha1sum', '--tag a.txt'), row('md5sum', 'a.txt --tag'), row('md5sum', '-- -c'),
  row('sha256sum', '-c sums.txt', { files: { 'sums.txt': '0000  a.txt\n' }, ...refused('reads the list of files', { opens: 'sums.txt' }) }),
  row('comm', 'a.txt b.txt'), row('comm', '-12 a.txt b.txt'), row('comm', 'a.txt b.txt -3'), row('comm', '--output-delimiter , a.txt b.txt'),
  row('comm', '-- -1 a.txt'),
  row('join', 'a.txt b.txt'), row('join', '-t , a.txt b.txt'), row('join', '-t, a.txt b.txt'), row('join', '-1 2 a.txt b.txt'), row('join', '-12 a.txt b.txt'),
  row('join', '-j 1 a.txt b.txt'), row('join', '-o 1.1 a.txt b.txt'), row('join', '-e x a.txt b.txt'), row('join', '-a 1 a.txt b.txt'),
  row('join', '-v1 a.txt b.txt'), row('join', '-t , -- a.txt b.txt'), row('join', 'a.txt b.txt -i'), row('join', '-- -i a.txt'),
];

/**
 * One row per value-taking flag of every table, its value a separate word named like a file: where a table says a
 * flag takes a value but the program reads the flag alone, the program opens that word as an operand while the
 * policy never confined it. These rows check the direction that matters for confinement only (every word the program
 * opens is confined); a program may reject the value and open nothing.
 */
export function valueFlagRows(policies: Readonly<Record<string, unknown>>): DiffRow[] {
  const rows: DiffRow[] = [];
  for (const [program, table] of Object.entries(policies)) {
    if (typeof table !== 'object' || table === null) continue;
    const policy = table as import('../../src/sandbox/policy/tables.js').ProgramPolicy;
    const flags = [
      ...Object.entries(policy.short).map(([ch, rule]) => [`-${ch}`, rule] as const),
      ...Object.entries(policy.long).map(([name, rule]) => [`--${name}`, rule] as const),
    ];
    for (const [flag, rule] of flags) {
      if (rule.type !== 'value' || rule.optional === true || rule.value === 'path') continue;
      const bounded = policy.bounds !== undefined && Object.hasOwn(policy.bounds, flag.replace(/^--?/, ''));
      const value = rule.choices?.[0] ?? (bounded ? (program === 'sort' && /S|buffer/.test(flag) ? '64M' : '2') : rule.sets === 'pattern' && program === 'sed' ? '1p' : 'v.txt');
      const pattern = policy.operands === 'pattern-then-paths' && rule.sets !== 'pattern' ? [program === 'sed' ? '1p' : program === 'jq' ? 'type' : 'x'] : [];
      const before = program === 'sed' ? ['-n'] : [];
      rows.push({ program, words: [...before, flag, value, ...pattern, 'a.txt'], subset: true });
    }
  }
  return rows;
}

/**
 * For the programs whose first operand is a pattern, script or filter (never confined), one row per flag the table
 * reads alone, followed by that operand: where the program takes the next word as the flag's file instead, it would
 * open a word the policy took for the pattern.
 */
export function boolFlagRows(policies: Readonly<Record<string, unknown>>): DiffRow[] {
  const rows: DiffRow[] = [];
  for (const [program, table] of Object.entries(policies)) {
    if (typeof table !== 'object' || table === null) continue;
    const policy = table as import('../../src/sandbox/policy/tables.js').ProgramPolicy;
    if (policy.operands !== 'pattern-then-paths') continue;
    const flags = [
      ...Object.entries(policy.short).map(([ch, rule]) => [`-${ch}`, rule] as const),
      ...Object.entries(policy.long).map(([name, rule]) => [`--${name}`, rule] as const),
    ];
    for (const [flag, rule] of flags) {
      if (rule.type !== 'bool' && !(rule.type === 'value' && rule.optional === true)) continue;
      const operand = program === 'sed' ? '1p' : program === 'jq' ? 'type' : 'v.txt';
      rows.push({ program, words: [...(program === 'sed' && flag !== '-n' ? ['-n'] : []), flag, operand, 'a.txt'], subset: true });
    }
  }
  return rows;
}
