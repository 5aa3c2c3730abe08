package policy

import (
	"strings"
	"testing"
)

// shellCases are command lines with the expected verdict. For refusals,
// reason (when set) must appear in the verdict's reason.
var shellCases = []struct {
	cmd      string
	readOnly bool
	reason   string
}{
	// Variables that change which programs run, set by loops and readers.
	{cmd: "read PATH <<< tools; cat go.mod", reason: "PATH"},
	{cmd: "for PATH in tools; do cat go.mod; done", reason: "PATH"},
	{cmd: "select PATH in tools; do cat go.mod; done", reason: "PATH"},
	{cmd: "read HOME <<< x; git status", reason: "HOME"},
	{cmd: "mapfile -t LD_PRELOAD < list; ls", reason: "LD_PRELOAD"},
	{cmd: "for f in *.go; do wc -l \"$f\"; done", readOnly: true},
	{cmd: "read -r first <<< abc; echo \"$first\"", readOnly: true},
	// Plain reading.
	{cmd: "ls -la", readOnly: true},
	{cmd: "cat README.md", readOnly: true},
	{cmd: "head -n 20 main.go | tail -5", readOnly: true},
	{cmd: "wc -l *.go", readOnly: true},
	{cmd: "grep -rn 'func main' --include='*.go' .", readOnly: true},
	{cmd: "rg -n TODO internal/", readOnly: true},
	{cmd: "rg --pretty foo", readOnly: true},
	{cmd: "find . -name '*.go' -not -path './vendor/*'", readOnly: true},
	{cmd: "find . -type f -name \"$pat\" -print", readOnly: true},
	{cmd: "file go.mod && stat go.mod", readOnly: true},
	{cmd: "du -sh . ; df -h", readOnly: true},
	{cmd: "tree -L 2 internal", readOnly: true},
	{cmd: "pwd", readOnly: true},
	{cmd: "echo hello world", readOnly: true},
	{cmd: "printf '%s\\n' a b", readOnly: true},
	{cmd: "true || false", readOnly: true},
	{cmd: "test -f go.mod && echo yes", readOnly: true},
	{cmd: "[ -d internal ] && ls internal", readOnly: true},
	{cmd: "which go; type ls; command -v git", readOnly: true},
	{cmd: "basename /a/b.go; dirname /a/b.go; realpath .; readlink -f .", readOnly: true},
	{cmd: "sort -u names.txt | uniq -c | sort -rn", readOnly: true},
	{cmd: "uniq -c names.txt", readOnly: true},
	{cmd: "cut -d: -f1 /etc/passwd | tr a-z A-Z | nl", readOnly: true},
	{cmd: "diff a.txt b.txt; cmp a b; comm -12 a b", readOnly: true},
	{cmd: "column -t data.tsv", readOnly: true},
	{cmd: "jq '.name' package.json", readOnly: true},
	{cmd: "yq '.services' compose.yaml", readOnly: true},
	{cmd: "awk '{print $1}' f", readOnly: true},
	{cmd: "awk -F: '$3 > 100 {print $1}' /etc/passwd", readOnly: true},
	{cmd: "awk '/error|warn/ { n++ } END { print n }' log.txt", readOnly: true},
	{cmd: "awk '{ if ($2 > 5) print $1 }' f", readOnly: true},
	{cmd: "awk '{ print ($1 > 2) }' f", readOnly: true},
	{cmd: "awk '{ s += $1 } END { printf \"%d\\n\", s / NR }' f", readOnly: true},
	{cmd: "sed -n 1,5p f", readOnly: true},
	{cmd: "sed -n '/^func /p' main.go", readOnly: true},
	{cmd: "sed 's/foo/bar/g' f", readOnly: true},
	{cmd: "sed -e 's|a|b|' -e '/x/d' f", readOnly: true},
	{cmd: "sed ':a;N;$!ba;s/\\n/ /g' f", readOnly: true},
	{cmd: "env", readOnly: true},
	{cmd: "env -u HOME", readOnly: true},
	{cmd: "date +%Y-%m-%d; uname -a; whoami; id; hostname; nproc; free -m; ps aux", readOnly: true},
	{cmd: "seq 1 10; sleep 1", readOnly: true},
	{cmd: "md5sum go.sum; sha256sum go.sum", readOnly: true},
	{cmd: "xxd -l 64 bin.dat; od -c f; hexdump -C f; strings bin", readOnly: true},
	{cmd: "go list ./...", readOnly: true},
	{cmd: "go list -m -json all", readOnly: true},
	{cmd: "go doc fmt.Println; go version; go env GOPATH", readOnly: true},
	{cmd: "cd internal && ls", readOnly: true},
	{cmd: "(cd internal; ls) && { pwd; }", readOnly: true},
	{cmd: "for f in *.go; do wc -l \"$f\"; done", readOnly: true},
	{cmd: "for i in 1 2 3; do echo $((i * 2)); done", readOnly: true},
	{cmd: "if [ -f go.mod ]; then cat go.mod; else echo none; fi", readOnly: true},
	{cmd: "while read -r line; do echo \"$line\"; done < list.txt", readOnly: true},
	{cmd: "case $x in a) echo a;; *) echo other;; esac", readOnly: true},
	{cmd: "echo $(cat f)", readOnly: true},
	{cmd: "diff <(sort a) <(sort b)", readOnly: true},
	{cmd: "ls 2>/dev/null", readOnly: true},
	{cmd: "grep -r foo . 2>&1 | head", readOnly: true},
	{cmd: "ls >&2", readOnly: true},
	{cmd: "ls &> /dev/null", readOnly: true},
	{cmd: "cat <<EOF\nhello\nEOF", readOnly: true},
	{cmd: "grep foo <<< \"$text\"", readOnly: true},
	{cmd: "X=1 ls", readOnly: true},
	{cmd: "/bin/ls -l /usr/bin/env", readOnly: true},
	{cmd: "bash -c \"ls -la\"", readOnly: true},
	{cmd: "bash -lc 'git status && git log -1'", readOnly: true},
	{cmd: "time ls", readOnly: true},
	{cmd: "! grep -q foo f", readOnly: true},
	{cmd: "set -euo pipefail; ls", readOnly: true},
	{cmd: "timeout 10 grep -r foo .", readOnly: true},
	{cmd: "find . -name '*.go' | xargs grep -n TODO", readOnly: true},
	{cmd: "find . -name '*.go' -print0 | xargs -0 wc -l", readOnly: true},
	{cmd: "[[ -n $x && $x == a* ]] && echo yes", readOnly: true},
	{cmd: "echo ${#HOME} ${HOME:-none} ${PATH%%:*}", readOnly: true},
	{cmd: "", readOnly: true},
	{cmd: "# just a comment", readOnly: true},

	// Git, read-only.
	{cmd: "git status && git diff", readOnly: true},
	{cmd: "git log --oneline -n 20", readOnly: true},
	{cmd: "git -C sub log", readOnly: true},
	{cmd: "git --no-pager diff --stat HEAD~1", readOnly: true},
	{cmd: "git -c color.ui=never log -p", readOnly: true},
	{cmd: "git show HEAD:go.mod", readOnly: true},
	{cmd: "git blame -L 1,20 main.go", readOnly: true},
	{cmd: "git branch", readOnly: true},
	{cmd: "git branch -a -v", readOnly: true},
	{cmd: "git branch --show-current", readOnly: true},
	{cmd: "git branch --list 'feat/*'", readOnly: true},
	{cmd: "git branch --contains HEAD", readOnly: true},
	{cmd: "git tag", readOnly: true},
	{cmd: "git tag -l 'v1.*' -n5", readOnly: true},
	{cmd: "git rev-parse --abbrev-ref HEAD; git ls-files | head", readOnly: true},
	{cmd: "git ls-tree -r HEAD --name-only", readOnly: true},
	{cmd: "git cat-file -p HEAD", readOnly: true},
	{cmd: "git describe --tags; git shortlog -sn", readOnly: true},
	{cmd: "git remote -v", readOnly: true},
	{cmd: "git remote", readOnly: true},
	{cmd: "git config --get user.name", readOnly: true},
	{cmd: "git config --list --show-origin", readOnly: true},
	{cmd: "git config --get-regexp '^remote'", readOnly: true},
	{cmd: "git stash list", readOnly: true},
	{cmd: "git reflog", readOnly: true},
	{cmd: "git reflog show main", readOnly: true},
	{cmd: "git show-ref; git merge-base main HEAD; git for-each-ref refs/heads", readOnly: true},
	{cmd: "git count-objects -v; git worktree list", readOnly: true},
	{cmd: "git grep -n TODO -- '*.go'", readOnly: true},
	{cmd: "git log --format=%H -- $(git ls-files '*.go')", readOnly: true},

	// Redirections and tee.
	{cmd: "echo hi > f", reason: "redirection to a file (> f)"},
	{cmd: "echo hi >> log.txt", reason: "redirection to a file (>> log.txt)"},
	{cmd: "ls >| out", reason: "redirection"},
	{cmd: "ls &> out.txt", reason: "redirection to a file"},
	{cmd: "ls 2> err.txt", reason: "2> err.txt"},
	{cmd: "ls >& out.txt", reason: "redirection to a file"},
	{cmd: "cat <> f", reason: "redirection"},
	{cmd: "cat a | tee b", reason: "tee writes to files"},
	{cmd: "cat <<EOF > f\nhello\nEOF", reason: "redirection to a file (> f)"},
	{cmd: "cat <<EOF\n$(rm -rf x)\nEOF", reason: "rm"},
	{cmd: "{ ls; } > out", reason: "redirection"},
	{cmd: "ls {fd}> out", reason: "variable file descriptor"},
	{cmd: "echo hi > \"$OUT\"", reason: "redirection"},

	// sed, awk, sort, uniq, find.
	{cmd: "sed -i s/a/b/ f", reason: "sed -i edits files in place"},
	{cmd: "sed -ni 's/a/b/p' f", reason: "sed -i"},
	{cmd: "sed -i.bak 's/a/b/' f", reason: "sed -i"},
	{cmd: "sed --in-place 's/a/b/' f", reason: "in place"},
	{cmd: "sed --in 's/a/b/' f", reason: "in place"},
	{cmd: "sed 's/a/b/' f -i", reason: "sed -i"},
	{cmd: "sed 's/a/b/w out.txt' f", reason: "writes to a file"},
	{cmd: "sed -n '1w out.txt' f", reason: "sed w writes"},
	{cmd: "sed 's/.*/date/e' f", reason: "runs the result as a command"},
	{cmd: "sed '1e rm -rf x' f", reason: "sed e runs a command"},
	{cmd: "sed 'b foo;w out\n:foo' f", reason: "sed w writes"},
	{cmd: "sed 's/[/]/x/' f", reason: "use another delimiter"},
	{cmd: "sed 's|[^/]*$||' f", readOnly: true},
	{cmd: "sed -f script.sed f", reason: "sed -f"},
	{cmd: "sed \"$SCRIPT\" f", reason: "computed"},
	{cmd: "awk '{print > \"x\"}' f", reason: "awk print > writes to a file"},
	{cmd: "awk '{print $1 >> \"out\"}' f", reason: "awk print >"},
	{cmd: "awk '{printf(\"%s\\n\", $1) > \"out\"}' f", reason: "awk print >"},
	{cmd: "awk '{system(\"rm x\")}' f", reason: "system"},
	{cmd: "awk '{print | \"sh\"}' f", reason: "pipes"},
	{cmd: "awk 'BEGIN { \"date\" | getline d }'", reason: "pipes"},
	{cmd: "awk -i inplace '{print}' f", reason: "inplace"},
	{cmd: "awk -f prog.awk f", reason: "-f runs a program file"},
	{cmd: "gawk '{ f = \"system\"; @f(\"id\") }'", reason: "system"},
	{cmd: "awk '{ if (1) /# / ; print | \"sh\" }'", reason: "pipes"},
	{cmd: "sort -o out f", reason: "sort -o writes"},
	{cmd: "sort -rno out f", reason: "sort -o writes"},
	{cmd: "sort --output=out f", reason: "sort --output"},
	{cmd: "sort --out=out f", reason: "sort --output"},
	{cmd: "sort --compress-program=sh f", reason: "runs a program"},
	{cmd: "for f in *; do sort \"$f\"; done", reason: "could be an option"},
	{cmd: "for f in *; do sort -- \"$f\"; done", readOnly: true},
	{cmd: "sort \"$HOME/x\"", readOnly: true},
	{cmd: "uniq in.txt out.txt", reason: "writes the second one"},
	{cmd: "bash -c 'uniq -- \"$@\"' _ in out", reason: "several files"},
	{cmd: "a=(x y); uniq -- \"${a[@]}\"", reason: "several files"},
	{cmd: "uniq -- \"$HOME/x\"", readOnly: true},
	{cmd: "find . -name '*.go' -delete", reason: "find -delete removes files"},
	{cmd: "find . -exec rm {} \\;", reason: "find -exec runs commands"},
	{cmd: "find . -execdir ls \\;", reason: "-execdir"},
	{cmd: "find . -fprint out", reason: "writes to a file"},
	{cmd: "find . $(echo -delete)", reason: "could be an option"},
	{cmd: "find . {-delete,-print}", reason: "could be an option"},
	{cmd: "sort {-o,x} f", reason: "could be an option"},
	{cmd: "sort a{-o,x} f", readOnly: true},
	{cmd: "yq -i '.a = 1' f.yaml", reason: "yq -i"},
	{cmd: "tree -o out.txt", reason: "tree -o"},
	{cmd: "file -C -m magic", reason: "file -C"},
	{cmd: "xxd in.bin out.hex", reason: "writes the second one"},
	{cmd: "rg --pre sh foo", reason: "rg --pre"},
	{cmd: "date -s '2020-01-01'", reason: "sets the system clock"},
	{cmd: "date 010100002020", reason: "sets the clock"},
	{cmd: "hostname evil", reason: "sets the host name"},

	// Option values and operands. xxd: options end at the first operand,
	// the second operand is an output file, and which words are values
	// follows xxd's own parser (-c8, -cols 8, -ca is -c with value "a").
	{cmd: "xxd file", readOnly: true},
	{cmd: "xxd -c 16 file", readOnly: true},
	{cmd: "xxd -l 32 -s 4 file", readOnly: true},
	{cmd: "xxd -c8 -g1 -s+4 -l0x20 -o 16 file", readOnly: true},
	{cmd: "xxd -cols 8 -len 32 -seek 4 -groupsize 2 -offset 16 file", readOnly: true},
	{cmd: "xxd --cols 8 file", readOnly: true},
	{cmd: "xxd -ps -c 0 file; xxd -plain -u -a -d -E file", readOnly: true},
	{cmd: "xxd -i -C -n name file; xxd -name x y", readOnly: true},
	{cmd: "xxd -R always file", readOnly: true},
	{cmd: "xxd -- -r", readOnly: true},
	{cmd: "xxd -c \"$n\" \"$f\"", readOnly: true},
	{cmd: "xxd -ca file out", reason: "writes the second one"},
	{cmd: "xxd -cap file out", reason: "writes the second one"},
	{cmd: "xxd -capitalize x y", reason: "writes the second one"},
	{cmd: "xxd -nx x y", reason: "writes the second one"},
	{cmd: "xxd -a -b x y", reason: "writes the second one"},
	{cmd: "xxd -ps x y", reason: "writes the second one"},
	{cmd: "xxd file -r", reason: "writes the second one"},
	{cmd: "xxd - out", reason: "writes the second one"},
	{cmd: "xxd -- x y", reason: "writes the second one"},
	{cmd: "xxd -r x y", reason: "xxd -r"},
	{cmd: "xxd -r x", reason: "xxd -r"},
	{cmd: "xxd -p -revert x", reason: "xxd -r"},
	{cmd: "xxd --r x", reason: "xxd -r"},
	{cmd: "xxd -x file", reason: "not known"},
	{cmd: "xxd -l 32 ./*.bin", reason: "several files"},
	{cmd: "xxd -l 32 *.bin", reason: "could be an option"},
	{cmd: "xxd -c $n f", reason: "single word"},
	// tree takes the values of clustered options from the next words.
	{cmd: "tree -L 2 -P '*.go' --charset utf8 --sort=name internal", readOnly: true},
	{cmd: "tree -L3 -ad . ; tree -I -o", readOnly: true},
	{cmd: "tree -Lo 2 out.txt", reason: "tree -o"},
	{cmd: "tree -PIo a b out.txt", reason: "tree -o"},
	{cmd: "tree -L2o out.txt", reason: "tree -o"},
	{cmd: "tree -H . -L 2 -R", reason: "tree -R"},
	{cmd: "tree -P $p .", reason: "single word"},
	// date --resolution takes no value; --rfc-3339 does.
	{cmd: "date --resolution 010100002020", reason: "sets the clock"},
	{cmd: "date --rfc-3339 seconds; date -d yesterday +%F", readOnly: true},
	{cmd: "date -t 60", reason: "date -t"},
	// yq --split-exp-file writes files too.
	{cmd: "yq --split-exp-file=names.yq '.' f.yaml", reason: "writes files"},
	{cmd: "yq --split-exp-file names.yq '.' f.yaml", reason: "writes files"},
	{cmd: "yq -o json --from-file prog.yq f.yaml", readOnly: true},
	// env -u's value must stay one word.
	{cmd: "x='A rm -rf y'; env -u $x", reason: "env -u"},
	{cmd: "env -u HOME -u PATH", readOnly: true},
	// find: a test's value is skipped, not taken for the next test.
	{cmd: "x=-delete; find . -name -name \"$x\"", reason: "could be an option"},
	{cmd: "find . -name -delete", readOnly: true},
	// awk: one-true-awk reads only an option word's first letter and
	// ignores long options; gawk and mawk differ on some letters.
	{cmd: "awk -v n=1 -F, '{print n}' f; awk --assign=n=1 -e '{print n}' f", readOnly: true},
	{cmd: "awk -bF '{system(\"id\")}' f", reason: "separate word"},
	{cmd: "awk --assign '{system(\"id\")}' f", reason: "--assign="},
	{cmd: "awk --field-separator '{system(\"id\")}' f", reason: "--field-separator="},
	{cmd: "awk -Z x '{system(\"id\")}' f", reason: "awk -Z"},
	{cmd: "awk -ex '{system(\"id\")}' f", reason: "as the next word"},
	{cmd: "awk --source=1 '{system(\"id\")}' f", reason: "as the next word"},
	// sed: -l is a flag in BSD sed, -I edits in place there.
	{cmd: "sed -l 's/a/b/w out' p f", reason: "sed -l"},
	{cmd: "sed -I x p f", reason: "sed -I"},
	{cmd: "sed --line-length=40 -n l f", readOnly: true},
	// BSD xargs -J, -R and -S take values.
	{cmd: "ls | xargs -J grep rm", reason: "xargs would run `rm`"},
	{cmd: "ls | xargs -0 -n 1 -P 4 grep -l x", readOnly: true},
	// macOS base64 -o writes a file; macOS arch runs a program.
	{cmd: "base64 -d -w 0 f; base64 -b 76 -i f", readOnly: true},
	{cmd: "base64 -i in -o out", reason: "base64 -o"},
	{cmd: "base64 --output=out in", reason: "base64 --output"},
	{cmd: "arch", readOnly: true},
	{cmd: "arch rm -rf x", reason: "arch"},
	{cmd: "arch -x86_64 /bin/rm x", reason: "arch"},

	// Interpreters, shells and other ways to run code.
	{cmd: "python -c 'open(\"x\",\"w\")'", reason: "python -c runs arbitrary code"},
	{cmd: "python3 script.py", reason: "runs arbitrary code"},
	{cmd: "node -e 'require(\"fs\").writeFileSync(\"x\",\"\")'", reason: "node -e runs arbitrary code"},
	{cmd: "ruby -e 'puts 1'", reason: "ruby -e"},
	{cmd: "perl -pi -e 's/a/b/' f", reason: "perl -e"},
	{cmd: "deno run x.ts", reason: "deno"},
	{cmd: "bun x.ts", reason: "bun"},
	{cmd: "bash -c \"rm -rf x\"", reason: "bash -c: rm deletes files"},
	{cmd: "sh -c \"$CMD\"", reason: "computed"},
	{cmd: "bash script.sh", reason: "without -c"},
	{cmd: "bash -c 'bash -c \"touch x\"'", reason: "touch"},
	{cmd: "eval 'ls'", reason: "eval runs arbitrary code"},
	{cmd: "source env.sh", reason: "source"},
	{cmd: ". ./env.sh", reason: "source"},
	{cmd: "exec ls", reason: "exec"},
	{cmd: "export FOO=1", reason: "`export` changes shell state"},
	{cmd: "declare -a x", reason: "declare"},
	{cmd: "f() { ls; }; f", reason: "function definitions"},
	{cmd: "$CMD args", reason: "the command name $CMD is computed"},
	{cmd: "\"$(echo ls)\" -la", reason: "computed"},
	{cmd: "./ls", reason: "not a system program"},
	{cmd: "/tmp/evil/ls", reason: "not a system program"},
	{cmd: "sleep 100 &", reason: "background"},
	{cmd: "coproc cat", reason: "coproc"},
	{cmd: "ls $(touch x)", reason: "touch creates or changes files"},
	{cmd: "echo `rm -f x`", reason: "rm deletes files"},
	{cmd: "cat <(rm x)", reason: "rm"},
	{cmd: "echo >(cat)", readOnly: true},
	{cmd: "PATH=/tmp/evil ls", reason: "assigning PATH"},
	{cmd: "GIT_PAGER='rm -rf /' git log", reason: "assigning GIT_PAGER"},
	{cmd: "LD_PRELOAD=/tmp/x.so ls", reason: "LD_PRELOAD"},
	{cmd: ": ${PATH:=/tmp}", reason: "assigning PATH"},
	{cmd: ": ${n:=3}", readOnly: true},
	{cmd: "printf -v x '%s' y", reason: "printf -v"},
	{cmd: "env rm -rf x", reason: "env runs a command"},
	{cmd: "env -S 'rm x'", reason: "env -S"},
	{cmd: "xargs rm < list", reason: "xargs would run `rm`"},
	{cmd: "ls | xargs -I{} sh -c 'cat {}'", reason: "xargs would run `sh`"},
	{cmd: "ls | xargs sed -n p", reason: "xargs would run `sed`"},
	{cmd: "command rm x", reason: "rm deletes files"},
	{cmd: "timeout 5 rm x", reason: "rm"},
	{cmd: "nohup ls", reason: "nohup"},

	// Bash evaluating text as code.
	{cmd: "x='a[$(touch p)]'; echo $((x))", reason: "arithmetic"},
	{cmd: "x='a[$(touch p)]'; [[ $x -eq 1 ]]", reason: "arithmetic"},
	{cmd: "x='a[$(touch p)]'; (( x ))", reason: "arithmetic"},
	{cmd: "let 'a[$(touch p)]=1'", reason: "arithmetic"},
	{cmd: "echo $(( $(cat n) + 1 ))", reason: "arithmetic"},
	{cmd: "[ -v 'a[$(touch p)]' ]", reason: "-v"},
	{cmd: "[[ -v 'a[$(touch p)]' ]]", reason: "-v"},
	{cmd: "test -v x && echo set", readOnly: true},
	{cmd: "read 'a[$(touch p)]' < f", reason: "read needs plain variable names"},
	{cmd: "x='$(touch p)'; echo \"${x@P}\"", reason: "prompt expansion"},
	{cmd: "x=a; echo ${!x}", reason: "indirect expansion"},
	{cmd: "a=$(cat f); [ $a ]", reason: "quote it"},
	{cmd: "x='a[$(touch p)]' bash -c 'echo $((x))'", reason: "arithmetic"},

	// Git, writing.
	{cmd: "git commit -m x", reason: "`git commit` is not known to be read-only"},
	{cmd: "git checkout main", reason: "git checkout"},
	{cmd: "git add .", reason: "git add"},
	{cmd: "git push origin main", reason: "git push"},
	{cmd: "git reset --hard", reason: "git reset"},
	{cmd: "git branch -D x", reason: "git branch -D"},
	{cmd: "git branch -m old new", reason: "git branch -m"},
	{cmd: "git branch newbranch", reason: "creates a branch"},
	{cmd: "git branch --set-upstream-to=origin/main", reason: "--set-upstream-to"},
	{cmd: "git tag v1.0", reason: "creates a tag"},
	{cmd: "git tag -d v1.0", reason: "git tag -d"},
	{cmd: "git remote add origin url", reason: "git remote"},
	{cmd: "git config user.name x", reason: "git config"},
	{cmd: "git config --unset user.name", reason: "--unset"},
	{cmd: "git stash", reason: "git stash"},
	{cmd: "git stash pop", reason: "git stash"},
	{cmd: "git reflog expire --all", reason: "reflog"},
	{cmd: "git worktree add ../x", reason: "worktree"},
	{cmd: "git diff --output=patch.txt", reason: "--output writes"},
	{cmd: "git log --out=x", reason: "--output writes"},
	{cmd: "git grep -O vim foo", reason: "git grep -O"},
	{cmd: "git -c core.pager='rm x' log", reason: "git -c core.pager"},
	{cmd: "git -c core.fsmonitor=./x status", reason: "core.fsmonitor"},
	{cmd: "git --exec-path=/tmp status", reason: "exec-path"},
	{cmd: "git log \"$REV\"", readOnly: true},
	{cmd: "git log $(cat f)", reason: "could be an option"},
	// An option's value that the shell may split into several words: git
	// takes only the first as the value and reads the rest as arguments.
	{cmd: "x='. clean -fdx .'; git -C $x status", reason: "the value $x of git -C must be a single word"},
	{cmd: "x='. clean -fdx .'; git --git-dir $x status", reason: "git --git-dir must be a single word"},
	{cmd: "x='. clean -fdx .'; git --work-tree $x status", reason: "git --work-tree must be a single word"},
	{cmd: "x='. clean -fdx .'; git --namespace $x status", reason: "git --namespace must be a single word"},
	{cmd: "x='refname evil'; git branch --sort $x", reason: "git branch --sort must be a single word"},
	{cmd: "git config --get --default $x", reason: "git config --default must be a single word"},
	{cmd: "git config --get --type $t core.bare", reason: "git config --type must be a single word"},
	{cmd: "git tag -l --contains $x", reason: "git tag --contains must be a single word"},
	{cmd: "git log --author $name", reason: "git log --author must be a single word"},
	{cmd: "git worktree list --expire $x", reason: "git worktree --expire must be a single word"},
	{cmd: "git -C=sub status", reason: "git -C takes its value as the next word"},
	// Subcommands that take --output from the diff machinery, and "--"
	// taken as an option's value, which does not end git's options.
	{cmd: "git rev-list --output=x HEAD", reason: "git rev-list --output writes"},
	{cmd: "git blame --output=x main.go", reason: "git blame --output writes"},
	{cmd: "git log -L -- --output=x", reason: "git log --output writes"},
	{cmd: "git log --decorate-refs -- --output=x", reason: "git log --output writes"},
	{cmd: "git reflog show --decorate-refs-exclude -- --output=x", reason: "git reflog --output writes"},
	{cmd: "git shortlog --grep -- --output=x", reason: "git shortlog --output writes"},
	{cmd: "git blame --grep -- --output=x main.go", reason: "git blame --output writes"},
	{cmd: "git diff --no-index -I -- --output=x a b", reason: "git diff --output writes"},
	{cmd: "git grep -e -- '-Otouch x'", reason: "git grep -O runs a program"},
	{cmd: "git grep --max-d -- -Ovim foo", reason: "git grep -O runs a program"},
	{cmd: "git stash list -- --output=x", reason: "git stash --output writes"},
	{cmd: "git --help -w log", reason: "git --help -w is not allowed"},
	{cmd: "git log --help --web", reason: "git --help --web is not allowed"},
	// Ordinary reading stays allowed.
	{cmd: "git -C sub status", readOnly: true},
	{cmd: "git -C \"$dir\" status", readOnly: true},
	{cmd: "git log --format=%H -n 3", readOnly: true},
	{cmd: "git branch --sort=-committerdate", readOnly: true},
	{cmd: "git branch --sort -committerdate", readOnly: true},
	{cmd: "git branch --contains \"$rev\"", readOnly: true},
	{cmd: "git config --get user.name", readOnly: true},
	{cmd: "git config -t bool --get core.bare", readOnly: true},
	{cmd: "git diff --stat HEAD~1", readOnly: true},
	{cmd: "git log --stat -- $(git ls-files '*.go')", readOnly: true},
	{cmd: "git log -L 1,5:main.go -n 2", readOnly: true},
	{cmd: "git blame -l -- main.go", readOnly: true},
	{cmd: "git grep -e foo -- '*.go'", readOnly: true},
	{cmd: "git stash list --oneline", readOnly: true},
	{cmd: "git --help log; git log --help; git --version", readOnly: true},

	// Other writers and builders.
	{cmd: "rm -rf /", reason: "rm deletes files"},
	{cmd: "mkdir x", reason: "mkdir"},
	{cmd: "touch y", reason: "touch"},
	{cmd: "cp a b", reason: "cp writes files"},
	{cmd: "mv a b", reason: "mv moves files"},
	{cmd: "chmod +x f", reason: "chmod"},
	{cmd: "ln -s a b", reason: "ln"},
	{cmd: "truncate -s 0 f", reason: "truncate"},
	{cmd: "dd if=/dev/zero of=f", reason: "dd"},
	{cmd: "npm install", reason: "command `npm` is not known to be read-only"},
	{cmd: "go test ./...", reason: "`go test`"},
	{cmd: "go build", reason: "`go build`"},
	{cmd: "go vet ./...", reason: "`go vet`"},
	{cmd: "go mod tidy", reason: "`go mod`"},
	{cmd: "go env -w GOFLAGS=-mod=mod", reason: "go env -w"},
	{cmd: "go list -mod=mod ./...", reason: "-mod=mod"},
	{cmd: "go list -export ./...", reason: "builds"},
	{cmd: "make", reason: "make"},
	{cmd: "curl -o x https://example.com", reason: "curl"},
	{cmd: "wget https://example.com", reason: "wget"},
	{cmd: "ls | sudo tee /etc/x", reason: "sudo"},
	{cmd: "less f", reason: "interactive"},
	{cmd: "unterminated 'quote", reason: "could not parse"},
	{cmd: "ls &&", reason: "could not parse"},
	{cmd: "if true; then", reason: "could not parse"},
}

func TestClassifyShell(t *testing.T) {
	if len(shellCases) < 80 {
		t.Fatalf("only %d cases", len(shellCases))
	}
	for _, tc := range shellCases {
		v := ClassifyShell(tc.cmd)
		if v.ReadOnly != tc.readOnly {
			t.Errorf("ClassifyShell(%q) = %+v, want ReadOnly=%v", tc.cmd, v, tc.readOnly)
			continue
		}
		if v.ReadOnly && v.Reason != "" {
			t.Errorf("ClassifyShell(%q): read-only with reason %q", tc.cmd, v.Reason)
		}
		if !v.ReadOnly && v.Reason == "" {
			t.Errorf("ClassifyShell(%q): refused without a reason", tc.cmd)
		}
		if tc.reason != "" && !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("ClassifyShell(%q) reason = %q, want it to contain %q", tc.cmd, v.Reason, tc.reason)
		}
	}
}

func TestSedScriptReason(t *testing.T) {
	cases := []struct {
		script string
		ok     bool
	}{
		{"p", true},
		{"1,5p", true},
		{"/start/,/end/{s/a/b/g;p}", true},
		{"$!N;P;D", true},
		{"0~3d", true},
		{"/x/I,+2d", true},
		{"\\%path%d", true},
		{"s/[[:space:]]*$//", true},
		{"y/abc/xyz/", true},
		{"1i\\\nheader", true},
		{"a text ; w out", true}, // the text of a runs to the end of the line
		{"r other.txt", true},
		{"w out", false},
		{"s/a/b/w out", false},
		{"s/a/b/e", false},
		{"1e id", false},
		{"/x/W out", false},
		{"s/a/b/;w out", false},
		{"s/[\\/]/x/", false},
		{"k", false},
		{"s/a/b", false},
	}
	for _, tc := range cases {
		why := sedScriptReason(tc.script)
		if (why == "") != tc.ok {
			t.Errorf("sedScriptReason(%q) = %q, want ok=%v", tc.script, why, tc.ok)
		}
	}
}

func TestAwkProgramReason(t *testing.T) {
	cases := []struct {
		prog string
		ok   bool
	}{
		{"{print $1}", true},
		{"NR==1", true},
		{"$3 > 100", true},
		{"/a|b/ {print}", true},
		{"{ n = split($0, a, \"/\"); print a[n] }", true},
		{"{ x = $1 / 2; print x }", true},
		{"{ i++ / 2 }", true},
		{"BEGIN { while ((getline line < \"f\") > 0) print line }", true},
		{"length > 80", true},
		{"{ print a[$1 > 2] }", true},
		{"{print > \"f\"}", false},
		{"{print $1, $2 > $3}", false},
		{"{ \"ls\" | getline x }", false},
		{"{ print |& \"cat\" }", false},
		{"{ system(\"id\") }", false},
		{"@load \"filefuncs\"", false},
		{"# comment\n{print}", false},
		{"{ print \"a\" / 2 }", false},
		{"/[/]/", false},
		{"{ print \"unterminated }", false},
	}
	for _, tc := range cases {
		why := awkProgramReason(tc.prog)
		if (why == "") != tc.ok {
			t.Errorf("awkProgramReason(%q) = %q, want ok=%v", tc.prog, why, tc.ok)
		}
	}
}

func TestShellWritesProtected(t *testing.T) {
	prot := []string{".ultra/"}
	cases := []struct {
		cmd    string
		hit    bool
		reason string
	}{
		{cmd: "echo x > .ultra/state/x", hit: true, reason: "redirection writes .ultra/state/x"},
		{cmd: "echo x >> ./.ultra/log", hit: true},
		{cmd: "ls 2> /work/repo/.ultra/err", hit: true},
		{cmd: "go test ./... &> \"$ROOT/.ultra/out\"", hit: true},
		{cmd: "rm -rf .ultra", hit: true, reason: "`rm` would change .ultra"},
		{cmd: "rm -rf .u*", hit: true},
		{cmd: "rm -rf ./.ULTRA/", hit: true},
		{cmd: "mv .ultra/plan.md plan.md", hit: true},
		{cmd: "cp notes.md .ultra/plan.md", hit: true, reason: "`cp` would write into .ultra/plan.md"},
		{cmd: "touch .ultra/x", hit: true},
		{cmd: "ln -s .ultra/ledger.jsonl led", hit: true, reason: "`ln` would make a path to .ultra/ledger.jsonl (writing through a link changes what it points at)"},
		{cmd: "echo x | tee -a .ultra/log", hit: true},
		{cmd: "sed -i 's/a/b/' .ultra/plan.md", hit: true},
		{cmd: "truncate -s 0 .ultra/db", hit: true},
		{cmd: "chmod -R 777 .ultra", hit: true},
		{cmd: "find .ultra -delete", hit: true},
		{cmd: "dd if=/dev/zero of=.ultra/db", hit: true},
		{cmd: "go test -coverprofile=.ultra/c.out ./...", hit: true},
		{cmd: "cd .ultra && rm -rf state", hit: true},
		{cmd: "bash -c 'rm .ultra/x'", hit: true, reason: "bash -c"},
		{cmd: "eval 'rm .ultra/x'", hit: true},
		{cmd: "ls $(rm -rf .ultra)", hit: true},
		{cmd: "git clean -fdx", hit: true},
		{cmd: "rm -rf ../.ultra", hit: true},
		{cmd: "rm 'unterminated .ultra", hit: true, reason: "could not parse"},
		{cmd: "for f in .ultra/*; do rm \"$f\"; done", hit: true},
		{cmd: "pushd .ultra && rm x", hit: true},
		{cmd: "python3 -c 'open(\".ultra/x\",\"w\")'", hit: true, reason: "mention .ultra"},
		{cmd: "cp -t .ultra a b", hit: true},
		{cmd: "tar -xzf a.tgz -C .ultra", hit: true},
		{cmd: "git stash --all", hit: true},

		{cmd: "cat .ultra/plan.md"},
		{cmd: "grep -r foo .ultra/ > /tmp/out"},
		{cmd: "ls -la .ultra"},
		{cmd: "cp .ultra/plan.md /tmp/plan.md"},
		{cmd: "rm -rf build/ dist/"},
		{cmd: "rm -rf *"},
		{cmd: "echo .ultra > notes.txt"},
		{cmd: "sed -i 's/.ultra/x/' README.md"},
		{cmd: "touch src/.ultrafoo"},
		{cmd: "go test ./... > test.log 2>&1"},
		{cmd: "git clean -fd"},
		{cmd: "rm \"$f\""},
		{cmd: "cd .ultra && cd .. && rm -rf build"},
		{cmd: "mkdir -p x/.ultra-not"},
		{cmd: "cp -r .ultra backup"},
		{cmd: "cd .ultra/state && ls"},
		{cmd: "git clean -n"},
		{cmd: "diff .ultra/a .ultra/b"},
	}
	if len(cases) < 15 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		hit, why := ShellWritesProtected(tc.cmd, prot)
		if hit != tc.hit {
			t.Errorf("ShellWritesProtected(%q) = %v, %q; want %v", tc.cmd, hit, why, tc.hit)
			continue
		}
		if hit && why == "" {
			t.Errorf("ShellWritesProtected(%q): no reason", tc.cmd)
		}
		if tc.reason != "" && !strings.Contains(why, tc.reason) {
			t.Errorf("ShellWritesProtected(%q) reason = %q, want it to contain %q", tc.cmd, why, tc.reason)
		}
	}
	if hit, _ := ShellWritesProtected("rm -rf .ultra", nil); hit {
		t.Error("no protected prefixes should protect nothing")
	}
}

// FuzzClassifyShell checks that no input panics, that refusals carry a
// reason, and that a read-only verdict never coexists with a write into
// the state directory.
func FuzzClassifyShell(f *testing.F) {
	for _, tc := range shellCases {
		f.Add(tc.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := ClassifyShell(cmd)
		if v.ReadOnly == (v.Reason != "") {
			t.Fatalf("ClassifyShell(%q) = %+v", cmd, v)
		}
		hit, why := ShellWritesProtected(cmd, []string{".ultra/"})
		if hit && why == "" {
			t.Fatalf("ShellWritesProtected(%q): hit without a reason", cmd)
		}
		if hit && v.ReadOnly {
			t.Fatalf("%q is read-only yet writes .ultra: %s", cmd, why)
		}
	})
}
