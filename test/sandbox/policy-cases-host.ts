/**
 * Policy rows for the third red team's argv findings: xxd's positional output file (F3), facts about the host in
 * metadata output (F9), sort's spill buffer (F11) and the jq filter check (F12). Written against the hostile fixture
 * of sandbox-fixture.ts, merged into ALLOWED and REFUSED by policy-cases.ts.
 */

/** The format stat runs with when the model gives none (rewrites.ts). */
const STAT_LONG =
  '  File: %N\\n  Size: %s\\tBlocks: %b\\t%F\\n Inode: %i\\tLinks: %h\\nAccess: (%04a/%A)  Uid: %u  Gid: %g\\n' +
  'Access: %x\\nModify: %y\\nChange: %z\\n Birth: %w\\n';

export const HOST_ALLOWED: Array<[string, string[]?]> = [
  // F9: owners are numeric in a long listing; stat's own formats leave the host out.
  ['ls -l README.md', ['--numeric-uid-gid', '-l', 'README.md']], ['ls -la src', ['--numeric-uid-gid', '-lA', 'src']],
  ['ls -g README.md', ['--numeric-uid-gid', '-g', 'README.md']], ['ls -o README.md', ['--numeric-uid-gid', '-o', 'README.md']],
  ['ls --format=long src', ['--numeric-uid-gid', '--format=long', 'src']], ['ls --full-time src', ['--numeric-uid-gid', '--full-time', 'src']],
  ['ls --format=verbose src', ['--numeric-uid-gid', '--format=verbose', 'src']], ['ls -ln src', ['-ln', 'src']], ['ls -n src', ['-n', 'src']],
  ['ls -1 src', ['-1', 'src']], ['ls --author -l src', ['--numeric-uid-gid', '--author', '-l', 'src']], ['ls --format=commas src', ['--format=commas', 'src']],
  ['stat README.md', [`--printf=${STAT_LONG}`, 'README.md']], ['stat -t README.md', ['--printf=%n %s %b %f %u %g %i %h %X %Y %Z %W\\n', '-t', 'README.md']],
  ["stat -c '%n %s %u %g %i %a %A %F %h %b %B %x %X %y %Y %z %Z %w %W %N %f' README.md"], ["stat --printf='%n\\n' README.md"],
  ["stat --format='%-10n|%10s|%.3Y' README.md"], ["stat --printf='\\045U\\n' README.md"], ["stat -c '100%% %n' README.md"], ["stat -c %s -t README.md", ['-c', '%s', '-t', 'README.md']],
  ["find . -printf '%U %G %i %m %s %p\\n'"], ['find . -user 0'], ['find . -group 0 -uid 0 -gid 0'],
  ["find . -printf '%p %TY-%Tm-%Td %TH:%TM\\n'"],
  ['tail -2 -- README.md'], ['tree -p src'], ['tree --inodes src'],
  // F11: sort's buffer from 64M to 256M in sort's own units (no suffix is KiB).
  ['sort -S 64M README.md'], ['sort -S 256M README.md'], ['sort --buffer-size=100M README.md'], ['sort -S 65536 README.md'],
  ['sort -S 67108864b README.md'], ['sort -m' + ' README.md'.repeat(16)], ['sort' + ' README.md'.repeat(17)], ['sort -S 64m README.md'], ['sort -S 65536k README.md'],
  // F12: what jq may do: its inputs, named fields, formats.
  ["jq '.env' patterns.txt"], ["jq -n '{\"env\": 1} | .env'"], ["jq -n '\"env $ENV import\"'"], ["jq -n '@sh \"\\(1)\"'"],
  ["jq -n 'input_filename'"], ["jq -n '[inputs] | length' patterns.txt"], ["jq -n '\"en\" + \"v\" | ltrimstr(\"e\")'"], ["jq -n 'getpath([\"a\"])'"],
  ["jq -n '\"\\\\(env)\"'"], ["jq -n 'now | gmtime | todate'"],
];

/** Rows of xxd (vim-common), run only where it is installed. */
export const HOST_OPTIONAL_ALLOWED: Array<[string, string[]?]> = [
  ['xxd -c 8 README.md'], ['xxd -c8 README.md'], ['xxd -cols 8 README.md'], ['xxd -l 16 -g 2 README.md'], ['xxd -u README.md'],
  ['xxd -s 4 -l 8 README.md'], ['xxd -- README.md'], ['xxd -- -dash.txt', ['--', './-dash.txt']], ['xxd -p -c 16 README.md'],
  ['xxd -len 8 README.md'], ['xxd -i -n name README.md'], ['xxd -name name -i README.md'], ['xxd -capitalize README.md'],
];

export const HOST_REFUSED: Array<[string, string]> = [
  // F3: xxd stops at its first operand; every word after it is the output file.
  ['xxd README.md -u', 'every word after its first operand as the output file'], ['xxd README.md -c5', 'the output file'],
  ['xxd README.md -c/../../x', 'the output file'], ['xxd README.md -c 5', 'the output file'], ['xxd README.md --', 'the output file'],
  ['xxd README.md README.md', 'the output file'], ['xxd -- README.md -u', 'the output file'],
  ['xxd -c 8', 'standard input'], ['xxd -ps README.md', 'by its first letter only'],
  ['xxd -pu README.md', 'by its first letter only'], ['xxd --len 8 README.md', 'take one dash'], ['xxd --r README.md', 'take one dash'],
  ['xxd -rs README.md', 'turns a hex dump back into binary'], ['xxd -x README.md', 'not an allowed flag'], ['xxd -c', 'needs a value'],
  ['xxd -cols', 'needs a value'], ['xxd - out', 'the output file'], ['xxd -', 'standard input'],
  // Found by the argv differential test: GNU tail reads -NUM only as its first word before one file.
  // binutils strings expands @FILE wherever it stands: `strings -n @/etc/hostname x` printed the file in its error.
  ['strings -n @/etc/hostname README.md', 'a file of further options'], ['strings -e @patterns.txt README.md', 'a file of further options'],
  ['strings -- @patterns.txt', 'a file of further options'], ['strings README.md @patterns.txt', 'a file of further options'],
  ['od README.md +1', 'byte offset'], ['od README.md 10', 'byte offset'], ['od -c README.md 0x10', 'byte offset'],
  ['jq --indent=2 . patterns.txt', 'never with ='], ['jq -- . patterns.txt', 'give the filter first'], ['tree -L1 src', 'not an allowed flag'],
  ['tail -2 README.md src/a.ts', 'only as the first word'], ['tail README.md -2', 'only as the first word'], ['tail -2 -q README.md', 'only as the first word'],
  // F9: the host's filesystem, devices, mount points and user names.
  ['stat -f .', 'reports the host filesystem'], ['stat --file-system .', 'reports the host filesystem'], ['stat -tf .', 'reports the host filesystem'],
  ["stat -c '%m' .", 'the directive %m is not accepted'], ["stat -c '%d' .", 'the directive %d'], ["stat -c '%D' .", 'the directive %D'],
  ["stat -c '%U' .", 'the directive %U'], ["stat -c '%G' .", 'the directive %G'], ["stat -c '%C' .", 'the directive %C'], ["stat -c '%o' .", 'the directive %o'],
  ["stat -c '%t %T' .", 'the directive %t'], ["stat -c '%Hd' .", 'the directive %Hd'], ["stat -c '%Lr' .", 'the directive %Lr'],
  ["stat --printf='%n %-8U' .", 'the directive %-8U'], ["stat --format='%n %10m' .", 'the directive %10m'], ["stat -c '%n %' .", 'the directive %'],
  ["stat -c%U .", 'the directive %U'], ["stat --printf '%s%G\\n' .", 'the directive %G'], ["stat -c '%%%U' .", 'the directive %U'],
  ["stat -c '%n' -c '%m' .", 'the directive %m'], ["stat --form='%m' .", 'abbreviation'],
  ['find . -ls', "prints owner names from the host's user database"], ['find . -nouser', "host's user database"], ['find . -nogroup', "host's group database"],
  ['find . -user root', 'give the numeric id'], ['find . -group root', 'give the numeric id'], ['find . -user 0x0', 'give the numeric id'],
  ['find . -fstype ext4', 'type of the host filesystem'], ["find . -printf '%u'", '%u is refused'], ["find . -printf '%g'", '%g is refused'],
  ["find . -printf '%-10u'", '%u is refused'], ["find . -printf '%D'", '%D is refused'], ["find . -printf '%F'", '%F is refused'],
  ["find . -printf '%Z'", '%Z is refused'], ["find . -printf '%TZ'", 'not accepted'], ["find . -printf '%Az'", 'not accepted'],
  ['ls -Z src', 'not an allowed flag'], ['ls --context src', 'not an allowed flag'], ['ls -lZ src', 'not an allowed flag'],
  ["rg --hyperlink-format 'file://{host}{path}' x", 'not an allowed flag'], ['find . -context x', 'not an allowed test'],
  ['find . -printf %u', '%u is refused'], ["find . -printf '%p %Tz'", 'not accepted'], ['find . -nouser -print', "host's user database"],
  ['tree -u src', "owner names from the host's user database"], ['tree -g src', 'owner names'], ['tree -pug src', 'owner names'],
  ['tree --device src', 'device number'], ['ls --format=l -F', 'accepts only'], ['ls --format=lo -F src', 'accepts only'],
  ['ls --format=v src', 'accepts only'],
  // F11: a small buffer spills into $TMPDIR outside the repository; sizes are read as sort reads them.
  ['sort -S 1 README.md', 'give a size from 64M to 256M'], ['sort -S 1b README.md', 'from 64M'], ['sort -S 63M README.md', 'from 64M'],
  ['sort -S 65535 README.md', 'from 64M'], ['sort -S 1% README.md', 'from 64M'], ['sort -S 50% README.md', 'from 64M'], ['sort -S 257M README.md', 'to 256M'],
  ['sort -S 300000 README.md', 'to 256M'], ['sort -S 2G README.md', 'to 256M'], ['sort -S1K README.md', 'from 64M'], ['sort --buffer-size=1 README.md', 'from 64M'],
  ["sort -S ' 64M' README.md", 'from 64M'], ['sort -S +64M README.md', 'from 64M'], ['sort -S 64MB README.md', 'from 64M'], ['sort -S 64MiB README.md', 'from 64M'],
  ['sort -nS1 README.md', 'from 64M'], ['sort -S 64M -S 1 README.md', 'from 64M'], ['sort -S 1G -S 64M README.md', 'to 256M'], ['sort -S 1Y README.md', 'to 256M'],
  ['sort -m' + ' README.md'.repeat(17), 'sort -m takes at most 16 files here (17 given)'], ['sort --merge src/a.ts src/b.ts' + ' README.md'.repeat(15), 'at most 16 files'],
  ['sort -mu src/*.ts' + ' README.md'.repeat(15), 'at most 16 files here (17 given)'],
  ['sort -uT/tmp README.md', 'temporary files'], ['sort -T . README.md', 'temporary files'], ['sort -oout README.md', 'writes files'],
  ['sort -uo out README.md', 'writes files'], ['sort --compress-prog=sh README.md', 'abbreviation'], ['sort --compress-program sh -S 64M README.md', 'runs another program'],
  ['sort --temporary-directory /tmp README.md', 'temporary files'],
  // F12: blanks and comments after $, names in interpolations, and the rest of the refused names.
  ["jq -n '$ ENV'", 'the filter uses $ENV'], ["jq -n '$\tENV'", 'the filter uses $ENV'],
  ["jq -n '$ __loc__'", 'the filter uses $__loc__'], ["jq -n '$__loc__'", '$__loc__'],
  ["jq -n '$__prog_args'", '$__prog_args'], ["jq -n '{$ENV}'", '$ENV'], ["jq -n '{$__loc__}'", '$__loc__'],
  ["jq -n '\"\\(env.HOME)\"'", 'the filter uses env'], ["jq -n '\"a\\(\"b\\(env)\")\"'", 'the filter uses env'], ["jq -n '\"\\(1) \\($ENV)\"'", '$ENV'],
  ["jq -n 'env.PATH'", 'the filter uses env'], ["jq -n '[env]'", 'env'], ["jq -n '..env'", 'the filter uses env'], ["jq -n '. env'", 'env'],
  ["jq -n 'import \"x\" as x; 1'", 'the filter uses import'], ["jq -n 'include \"x\"; 1'", 'include'], ["jq -n 'modulemeta'", 'modulemeta'],
  ["jq -n 'get_search_list'", 'get_search_list'], ["jq -n 'get_jq_origin'", 'get_jq_origin'], ["jq -n 'get_prog_origin'", 'get_prog_origin'],
  ["jq -n 'now | localtime'", 'the filter uses localtime'], ["jq -n 'now | strflocaltime(\"%Z\")'", 'strflocaltime'],
  ["jq -n 'def f: env; f'", 'env'], ["jq -n '1 as $x | env'", 'env'], ["jq -e '$ENV' patterns.txt", '$ENV'],
  ["jq --null-input '$ ENV'", '$ENV'], ["jq -n -e '$ ENV'", '$ENV'], ["jq -ne '$ ENV'", '$ENV'],
];
