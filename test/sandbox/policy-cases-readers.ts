/**
 * Policy rows for the readers added beside search and listing (sort … jq), and for the flags that would make any
 * output depend on a symbolic link's target outside the root. Written against the hostile fixture of
 * sandbox-fixture.ts, merged into ALLOWED and REFUSED by policy-cases.ts.
 */

export const READER_ALLOWED: Array<[string, string[]?]> = [
  ['sort README.md'], ['sort -u -r README.md src/a.ts'], ['sort -k 2 -t , README.md'], ['sort -n -S 64M README.md'], ['sort --parallel=2 README.md'],
  ['uniq README.md'], ['uniq -c README.md'], ['cut -d " " -f 1 README.md', ['-d', ' ', '-f', '1', 'README.md']], ['cut -c1-5 README.md'],
  ['nl README.md'], ['nl -ba README.md'], ['tac README.md'], ['stat README.md'], ["stat -c '%n %s' README.md src/a.ts"],
  ['du -sh src'], ['du -a src'], ['du -h --max-depth=1'], ['du'],
  ['diff README.md src/a.ts', ['--no-dereference', 'README.md', 'src/a.ts']], ['diff -u src/a.ts src/b.ts', ['--no-dereference', '-u', 'src/a.ts', 'src/b.ts']],
  ['diff -rq src src', ['--no-dereference', '-rq', 'src', 'src']], ['cmp README.md src/a.ts'], ['cmp -l src/a.ts src/b.ts'],
  ['od -c README.md'], ['od -A x -t x1z -N 16 binary.bin'], ['od -w8 binary.bin'], ['basename src/a.ts .ts'], ['basename -a x/y z/w'], ['dirname src/a.ts'],
  ['realpath README.md src'], ['realpath --relative-to=src README.md'], ['pwd'], ['pwd -P'],
  ["sed -n '1,2p' README.md", ['--sandbox', '-n', '1,2p', 'README.md']], ["sed -n '2p' README.md"], ["sed -n '$p' README.md"],
  ["sed -n '/needle/p' README.md"], ["sed -n '1,+1p' src/a.ts src/b.ts"], ["sed -n '$=' README.md"], ["sed -n -e '1p' README.md"],
  ["sed --quiet '1p;2p' README.md"], ["sed -n '2q;1p' README.md"],
  ['base64 README.md'], ['base64 -d patterns.txt'], ['paste -s README.md'], ['paste -d , README.md src/a.ts'], ['sha256sum README.md src/a.ts'],
  ['md5sum README.md'], ['sha1sum --tag README.md'], ['comm README.md src/a.ts'], ['comm -12 README.md src/a.ts'], ['join README.md src/a.ts'], ['join -t , -1 2 README.md src/a.ts'],
];

/** Rows of optional programs (xxd: vim-common, hexdump: bsdextrautils, strings: binutils, jq). */
export const OPTIONAL_READER_ALLOWED: Array<[string, string[]?]> = [
  ['xxd README.md'], ['xxd -l 16 binary.bin'], ['xxd -p binary.bin'], ['xxd -c 8 -g 1 binary.bin'],
  ['hexdump -C binary.bin'], ['hexdump -n 8 binary.bin'], ['strings binary.bin'], ['strings -n 3 binary.bin'],
  ["jq -n '1+1'"], ["jq -r '.' patterns.txt"], ['jq -n \'{"a": [1,2]} | .a | length\''],
];

export const READER_REFUSED: Array<[string, string]> = [
  // sort writes with -o, spills to temporary files, runs compressors, reads file lists
  ['sort -o out README.md', 'writes files'], ['sort --output=README.md README.md', 'writes files'], ['sort -T /tmp README.md', 'temporary files'],
  ['sort --temporary-directory=. README.md', 'temporary files'], ['sort --compress-program=sh README.md', 'runs another program'],
  ['sort --batch-size=2 README.md', 'temporary files'], ['sort --files0-from=patterns.txt', 'reads the list of files'],
  ['sort -S 2G README.md', 'give a size from 64M to 256M'], ['sort --parallel=64 README.md', 'must be a number from 1 to 8'], ['sort', 'standard input'],
  ['sort /etc/passwd', 'outside the repository root'], ['sort --random-source=/dev/urandom README.md', '/dev is never readable'],
  // uniq's second operand is its output file
  ['uniq README.md out.txt', 'the output file it would write'], ['uniq README.md src/b.ts', 'at most 1 file here: a second operand is the output file it would write'], ['uniq README.md src/a.ts', 'it would write'],
  ['cut -f 1', 'standard input'], ['nl', 'standard input'], ['tac links/chain1', 'outside the repository root'],
  ['stat -L README.md', 'follows symbolic links'], ['stat --dereference README.md', 'follows symbolic links'], ['stat links/etc', 'outside the repository root'],
  ['du -L', 'follows symbolic links'], ['du -D src', 'follows symbolic links'], ['du -H src', 'follows symbolic links'], ['du -X patterns.txt', 'reads the list of files'],
  ['du --dereference', 'follows symbolic links'], ['du --dereference-args src', 'follows symbolic links'],
  ['du --exclude-from=patterns.txt', 'reads the list of files'], ['du --files0-from=patterns.txt', 'reads the list of files'], ['du /', 'outside the repository root'],
  ['diff -X patterns.txt src src', 'reads the list of files'], ['diff -l README.md src/a.ts', 'the pr program'], ['diff --exclude-from=patterns.txt src src', 'reads the list'],
  ['diff --paginate README.md src/a.ts', 'the pr program'], ['diff README.md /etc/passwd', 'outside the repository root'], ['diff README.md -', 'standard input'],
  ['diff --to-file=/etc/passwd README.md', 'outside the repository root'], ['diff README.md src/a.ts src/b.ts', 'at most 2 files here: diff compares two'],
  ['cmp README.md src/a.ts 10 20', 'byte offsets'], ['cmp README.md src/a.ts src/b.ts', 'at most 2 files here: further operands are byte offsets'], ['od', 'standard input'],
  ['xxd -r README.md', 'turns a hex dump back into binary'], ['xxd README.md out.bin', 'it would write'], ['xxd -ps README.md out.bin', 'by its first letter only'],
  ['xxd', 'standard input'], ['hexdump', 'standard input'], ['hexdump -f /etc/passwd binary.bin', 'outside the repository root'], ['strings -T elf64 binary.bin', 'object-file back end'], ['strings --target=elf64 binary.bin', 'object-file back end'],
  ['strings @patterns.txt', 'a file of further options'], ['pwd src', 'pwd takes no arguments'], ['realpath /etc', 'outside the repository root'],
  ['sha256sum -c README.md', 'reads the list of files'], ['md5sum --check README.md', 'reads the list of files'], ['sha1sum --check README.md', 'reads the list'], ['sha1sum -c README.md', 'reads the list'], ['md5sum -c README.md', 'reads the list'], ['sha256sum --check README.md', 'reads the list'],
  ['base64 README.md src/a.ts', 'base64 reads one file'], ['comm README.md src/a.ts src/b.ts', 'comm compares two files'], ['paste', 'standard input'], ['join README.md src/a.ts src/b.ts', 'join joins two files'],
  ['readlink links/etc', 'ls -l LINK shows where a link points'],
  // sed prints lines, nothing else
  ['sed -i s/a/b/ README.md', 'edits files in place'], ['sed --in-place -n 1p README.md', 'edits files in place'], ['sed -f patterns.txt README.md', 'reads the script from a file'],
  ['sed --file=patterns.txt README.md', 'reads the script from a file'], ["sed '1,5p' README.md", 'without -n sed prints every line'],
  ["sed -n 's/a/b/w out' README.md", 'sed runs here only as a line printer'], ["sed -n '1w out' README.md", 'line printer'], ["sed -n '1r /etc/passwd' README.md", 'line printer'],
  ["sed -n '1e id' README.md", 'line printer'], ["sed -n -e '1p' -e 'w out' README.md", 'line printer'], ["sed -n '/x/w out' README.md", 'line printer'],
  ["sed -n '1{p}' README.md", 'line printer'], ["sed -n '1p' /etc/passwd", 'outside the repository root'], ["sed -n '1p'", 'standard input'],
  // jq: no modules, files read into variables, environment or argument lists
  ['jq -f patterns.txt README.md', 'reads the filter from a file'], ['jq --from-file patterns.txt README.md', 'reads the filter from a file'],
  ['jq -L / . README.md', 'loads modules'], ['jq --library-path / . README.md', 'loads modules'], ['jq --arg x 1 . README.md', 'binds a variable'],
  ["jq --argjson x 1 . README.md", 'binds a variable'], ['jq --slurpfile x /etc/passwd . README.md', 'reads a file into a variable'],
  ['jq --rawfile x /etc/passwd . README.md', 'reads a file into a variable'], ['jq --args . README.md', 'turns the remaining words'],
  ['jq --jsonargs . README.md', 'turns the remaining words'], ["jq -n 'env'", 'reads the environment'], ["jq -n '$ENV.HOME'", 'reads the environment'],
  ["jq -n 'import \"a\" as a; 1'", 'reads the environment or files'], ["jq -n 'include \"a\"; 1'", 'files outside the inputs'], ["jq -n '\"\\(env)\"'", 'environment'],
  ['jq .', 'give it a JSON file, or -n'], ['jq . /etc/passwd', 'outside the repository root'],
  // output that would depend on a symbolic link's target outside the root
  ['ls --group-directories-first', 'depends on its target'], ['ls -lF', 'marks the type of what a symbolic link points to'],
  ['find . -executable', 'asks the kernel about the file a symbolic link points to'], ['find . -readable', 'asks the kernel'], ['find . -writable', 'asks the kernel'],
  ["find . -printf '%Y'", '%Y is refused'], ["find . -printf '%p %Q'", 'the directive %Q is not accepted'], ['tree', 'symbolic links to outside the repository'],
  ['tree -d', 'symbolic links to outside the repository'],
];
