package policy

import (
	"strings"
	"testing"
)

var testGitRules = GitRules{
	Protected: []string{"main", "master", "release/*"},
	Base:      "main",
	RunBranch: "ultra/r1",
	Worktree:  "/w/run",
}

// gitCases are command lines with the expected verdict. For refusals,
// reason must appear in the verdict's reason; base, when set, replaces
// the rules' Base.
var gitCases = []struct {
	cmd     string
	ok      bool
	commits bool
	reason  string
	base    string
}{
	// Rule 1: read-only uses, and commands that are not git.
	{cmd: "git status && git diff && git log --oneline", ok: true},
	{cmd: "git show HEAD~3:go.mod", ok: true},
	{cmd: "git -C /repo log --oneline", ok: true},
	{cmd: "cd /repo && git status", ok: true},
	{cmd: "GIT_DIR=/repo/.git git log", ok: true},
	{cmd: "git branch -a", ok: true},
	{cmd: "git stash list", ok: true},
	{cmd: "git tag -l", ok: true},
	{cmd: "git config --get user.name", ok: true},
	{cmd: "git config user.name", ok: true},
	{cmd: "git worktree list", ok: true},
	{cmd: "go test ./...", ok: true},
	{cmd: "rm -rf build", ok: true},
	{cmd: "echo git push origin main", ok: true},
	{cmd: "grep -rn 'git push' docs", ok: true},
	{cmd: "command -v git", ok: true},

	// Rule 2: push, in all its disguises.
	{cmd: "git push", reason: "ultra never pushes"},
	{cmd: "git push origin ultra/r1", reason: "ultra land"},
	{cmd: "sh -c 'git push'", reason: "git push"},
	{cmd: "bash -lc 'cd sub && git push'", reason: "git push"},
	{cmd: "env -i git push", reason: "git push"},
	{cmd: "(cd .. && git push)", reason: "git push"},
	{cmd: "eval 'git push origin main'", reason: "git push"},
	{cmd: "xargs git push", reason: "git push"},
	{cmd: "/usr/bin/git push", reason: "git push"},
	{cmd: `"git" push`, reason: "git push"},
	{cmd: `\git push`, reason: "git push"},
	{cmd: "g'i't push", reason: "git push"},
	{cmd: "timeout 10 git push", reason: "git push"},
	{cmd: "nice -n 5 git push", reason: "git push"},
	{cmd: "command git push", reason: "git push"},
	{cmd: "exec git push", reason: "git push"},
	{cmd: "builtin exec git push", reason: "git push"},
	{cmd: "nohup git push &", reason: "git push"},
	{cmd: "sudo -u me git push", reason: "git push"},
	{cmd: "stdbuf -oL git --no-pager push", reason: "git push"},
	{cmd: "flock /tmp/lock git push", reason: "git push"},
	{cmd: "flock /tmp/lock -c 'git push'", reason: "git push"},
	{cmd: "watch -n 5 git push", reason: "git push"},
	{cmd: "find . -maxdepth 0 -exec git push \\;", reason: "git push"},
	{cmd: "echo ok; f() { git push; }; f", reason: "git push"},
	{cmd: "x=$(git push 2>&1)", reason: "git push"},
	{cmd: "diff <(git push) /dev/null", reason: "git push"},
	{cmd: "if true; then for i in 1; do git push; done; fi", reason: "git push"},
	{cmd: "bash <<'EOF'\ngit push\nEOF", reason: "git push"},
	{cmd: "echo 'git push' | bash", reason: "standard input"},
	{cmd: "parallel git push ::: origin", reason: "git push"},
	{cmd: "su -c 'git push' me", reason: "git push"},
	{cmd: "python3 -c 'import os; os.system(\"git push\")'", reason: "python3"},
	{cmd: "git lfs push origin", reason: "never pushes"},
	{cmd: "trap 'git push' EXIT", reason: "git push"},

	// Computed programs and scripts.
	{cmd: "$(echo git) push", reason: "computed"},
	{cmd: "$G commit -m x", reason: "commit"},
	{cmd: "$G status", ok: true},
	{cmd: `X='git push'; sh -c "$X"`, reason: "computed script"},
	{cmd: `eval "$CMD"`, ok: true},
	{cmd: `X='git push'; eval "$X"`, reason: "computed script"},
	{cmd: "git $SUB", reason: "computed"},
	{cmd: "git push 'unterminated", reason: "could not parse"},
	{cmd: "echo 'unterminated", ok: true},

	// Rule 3: commit.
	{cmd: "git commit -m x", ok: true, commits: true},
	{cmd: "git add -A && git commit -m 'done'", ok: true, commits: true},
	{cmd: "git commit -am \"$(cat msg.txt)\"", ok: true, commits: true},
	{cmd: "msg=fix; git commit -m \"$msg\"", ok: true, commits: true},
	{cmd: "find . -exec git commit -m x \\;", ok: true, commits: true},
	{cmd: "git -c user.name=ultra -c user.email=u@x commit -m x", ok: true, commits: true},
	{cmd: "git -c color.ui=never commit -m x", ok: true, commits: true},
	{cmd: "git commit -mn", ok: true, commits: true},
	{cmd: "git commit -m \"$(cat <<'EOF'\nfix: thing\n\nbody\nEOF\n)\"", ok: true, commits: true},
	{cmd: "git -C /w/run commit -m x", ok: true, commits: true},
	{cmd: "time git commit -m x", ok: true, commits: true},
	{cmd: "nohup sh -c 'git commit -n -m x' &", reason: "--no-verify"},
	{cmd: "git status", ok: true, commits: false},
	{cmd: "git commit -nm x", reason: "--no-verify"},
	{cmd: "git commit -a -n -m x", reason: "--no-verify"},
	{cmd: "git commit --no-verify -m x", reason: "--no-verify"},
	{cmd: "git commit --no-verif -m x", reason: "--no-verify"},
	{cmd: "git commit --amend --no-edit", reason: "--amend"},
	{cmd: "git commit --am -m x", reason: "--amend"},
	{cmd: "git commit $OPTS -m x", reason: "computed"},
	{cmd: "git commit -m x && git push", reason: "git push"},
	{cmd: "git -c core.hooksPath=/dev/null commit -m x", reason: "core.hooksPath"},
	{cmd: "git --config-env=core.hooksPath=HP commit -m x", reason: "core.hooksPath"},

	// Rules 4 and 5.
	{cmd: "git merge --no-verify topic", reason: "git merge"},
	{cmd: "git -c alias.p=push p", reason: "alias.p"},
	{cmd: "git -c core.fsmonitor=evil add .", reason: "core.fsmonitor"},
	{cmd: "git -c core.pager=less log", reason: "core.pager"}, // was ok: -c applies to every subcommand now, as in planning's read-only check
	{cmd: "git --frobnicate status", reason: "--frobnicate"},
	{cmd: "git --exec-path=/tmp/x add .", reason: "--exec-path"},
	{cmd: "git --frobnicate add .", reason: "--frobnicate"},

	// Rule 6: the environment.
	{cmd: "env GIT_DIR=/repo/.git git commit -m x", reason: "GIT_DIR"},
	{cmd: "GIT_INDEX_FILE=/tmp/i git commit -m x", reason: "GIT_INDEX_FILE"},
	{cmd: "export GIT_WORK_TREE=/repo; git add .", reason: "GIT_WORK_TREE"},
	{cmd: "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit -m x", reason: "GIT_CONFIG"},
	{cmd: "export GIT_DIR=/repo/.git; bash -c 'git commit -m x'", reason: "GIT_DIR"},
	{cmd: "sudo GIT_DIR=/repo/.git git commit -m x", reason: "GIT_DIR"},

	// Rule 7: other checkouts.
	{cmd: "git -C /repo checkout main", reason: "another checkout"},
	{cmd: "git -C /repo commit -m x", reason: "/repo"},
	{cmd: "bash -c \"git -C /repo commit -m x\"", reason: "/repo"},
	{cmd: "git -C sub add .", ok: true},
	{cmd: "git -C /w/run/sub add .", ok: true},
	{cmd: "git -C ../other add .", reason: "../other"},
	{cmd: "git --git-dir=/repo/.git add .", reason: "--git-dir"},
	{cmd: "git --work-tree /tmp/x add .", reason: "--work-tree"},
	{cmd: "git -C \"$D\" add .", reason: "computed"},
	{cmd: "cd /repo && git commit -m x", reason: "cd /repo"},
	{cmd: "cd /w/run/sub && git add -A", ok: true},
	{cmd: "cd sub && cd .. && git add -A", ok: true},
	{cmd: "cd .. && git add -A", reason: "cd .."},
	{cmd: "cd \"$X\" && git add -A", reason: "cd"},
	{cmd: "cd && git add -A", reason: "home directory"},
	{cmd: "cd /repo && cd /w/run && git commit -m x", ok: true, commits: true},
	{cmd: "(cd /repo && git status); git commit -m x", ok: true, commits: true},
	{cmd: "pushd /repo && popd && git add .", ok: true},
	{cmd: "for d in a b; do git add .; cd /repo; done", reason: "cd /repo"},
	{cmd: "f() { git commit -m x; }; cd /repo; f", reason: "cd /repo"},
	{cmd: "env -C /repo git add .", reason: "env -C /repo"},
	{cmd: "find / -name .git -execdir git add . \\;", reason: "find"},
	{cmd: "eval 'cd /repo'; git add .", reason: "cd /repo"},

	// Rule 8: reset.
	{cmd: "git reset", ok: true},
	{cmd: "git reset -q", ok: true},
	{cmd: "git reset --hard", ok: true},
	{cmd: "git reset --hard HEAD", ok: true},
	{cmd: "git reset HEAD -- a.go", ok: true},
	{cmd: "git reset -- a.go", ok: true},
	{cmd: "git reset a.go", ok: true},
	{cmd: "git reset -p", ok: true},
	{cmd: "git reset --hard HEAD~1", reason: "revision expression"},
	{cmd: "git reset --hard main", reason: "protected branch main"},
	{cmd: "git reset --soft abc1234", reason: "move the run's branch"},
	{cmd: "git reset 0123456789abcdef", reason: "move the run's branch"},
	{cmd: "git reset --hard origin/feature", reason: "ultra undo --to-last-green"},
	{cmd: "git reset --keep release/1.0", reason: "protected branch release/1.0"},
	{cmd: "git reset --hard feature/x", reason: "base branch feature/x", base: "feature/x"},
	{cmd: "git reset --hard feature/x", reason: "move the run's branch"},

	// Rule 9: checkout.
	{cmd: "git checkout main", reason: "protected branch main"},
	{cmd: "git checkout refs/heads/master", reason: "protected branch master"},
	{cmd: "git checkout -b x", reason: "-b"},
	{cmd: "git checkout -B x origin/x", reason: "-B"},
	{cmd: "git checkout --orphan x", reason: "--orphan"},
	{cmd: "git checkout --detach", reason: "--detach"},
	{cmd: "git checkout --ignore-other-worktrees main", reason: "--ignore-other-worktrees"},
	{cmd: "git checkout -", reason: "previous branch"},
	{cmd: "git checkout @{-1}", reason: "previous branch"},
	{cmd: "git checkout HEAD~2", reason: "revision expression"},
	{cmd: "git checkout deadbeef12", reason: "commit id"},
	{cmd: "git checkout feature/x", reason: "base branch", base: "feature/x"},
	{cmd: "git checkout main file.go", reason: "git checkout main -- <paths>"},
	{cmd: "git checkout main -- file.go", ok: true},
	{cmd: "git checkout HEAD~3 -- file.go", ok: true},
	{cmd: "git checkout -- file.go", ok: true},
	{cmd: "git checkout .", ok: true},
	{cmd: "git checkout ultra/r1", ok: true},
	{cmd: "git checkout internal/policy/shell.go", ok: true},

	// Rule 10: switch.
	{cmd: "git switch master", reason: "git switch"},
	{cmd: "git switch -c topic", reason: "ultra/r1"},
	{cmd: "git switch --detach HEAD", reason: "git switch"},
	{cmd: "git switch ultra/r1", ok: true},

	// Rule 11: branch.
	{cmd: "git branch topic", ok: true},
	{cmd: "git branch topic HEAD~2", ok: true},
	{cmd: "git branch --set-upstream-to=origin/x", ok: true},
	{cmd: "git branch -D ultra/r1", reason: "-D"},
	{cmd: "git branch -f main HEAD", reason: "-f"},
	{cmd: "git branch --delete topic", reason: "--delete"},
	{cmd: "git branch -m newname", reason: "-m"},
	{cmd: "git branch main", reason: "protected branch main"},
	{cmd: "git branch release/2.0 HEAD", reason: "protected branch release/2.0"},
	{cmd: "git branch refs/heads/main", reason: "protected branch main"},
	{cmd: "git branch ultra/r1", reason: "run's own branch"},
	{cmd: "git branch feature/x", reason: "base branch feature/x", base: "feature/x"},
	{cmd: "git branch -u origin/x main", reason: "protected branch main"},

	// Rule 12: history, refs and shared state.
	{cmd: "git rebase -i HEAD~3", reason: "git rebase"},
	{cmd: "git merge main", reason: "git merge"},
	{cmd: "git pull", reason: "git pull"},
	{cmd: "git cherry-pick abc1234", reason: "git cherry-pick"},
	{cmd: "git revert HEAD", reason: "git revert"},
	{cmd: "git update-ref refs/heads/main HEAD", reason: "git update-ref"},
	{cmd: "git symbolic-ref HEAD refs/heads/main", reason: "symbolic ref"},
	{cmd: "git symbolic-ref --short HEAD", ok: true},
	{cmd: "git bisect start", reason: "git bisect"},
	{cmd: "git notes add -m x", reason: "notes"},
	{cmd: "git notes list", ok: true},
	{cmd: "git tag v1", reason: "tags"},
	{cmd: "git tag -d v1", reason: "tags"},
	{cmd: "git stash", reason: "stash is shared"},
	{cmd: "git stash pop", reason: "stash is shared"},
	{cmd: "git worktree remove ../other", reason: "git worktree remove"},
	{cmd: "git worktree add /tmp/x main", reason: "worktree"},
	{cmd: "git config core.hooksPath /dev/null", reason: "git config core.hooksPath"},
	{cmd: "git config --unset user.name", reason: "git config"},
	{cmd: "git remote add evil https://x", reason: "remotes"},
	{cmd: "git remote show origin", ok: true},
	{cmd: "git update-index --assume-unchanged go.mod", reason: "--assume-unchanged"},
	{cmd: "git update-index --refresh", ok: true},
	{cmd: "git reflog expire --all", reason: "reflog"},
	{cmd: "git filter-branch --all", reason: "filter-branch"},
	{cmd: "git mergetool", reason: "mergetool"},
	{cmd: "git fetch origin main:main", reason: "protected branch main"},
	{cmd: "git fetch . HEAD:refs/heads/ultra/r1", reason: "run's own branch"},
	{cmd: "git fetch origin main", ok: true},
	{cmd: "git sparse-checkout set docs", reason: "sparse-checkout"},
	{cmd: "git sparse-checkout list", ok: true},

	// Rule 13: work in the worktree.
	{cmd: "echo hi | git apply", ok: true},
	{cmd: "git add -A", ok: true},
	{cmd: "git rm --cached secret.txt", ok: true},
	{cmd: "git mv a.go b.go && git restore --staged c.go", ok: true},
	{cmd: "git restore --source=main -- a.go", ok: true},
	{cmd: "git clean -fd", ok: true},
	{cmd: "git gc --prune=now && git fsck", ok: true},
	{cmd: "git clone https://example.com/x.git /tmp/x", ok: true},
	{cmd: "git format-patch -1 -o /tmp/p", ok: true},
	{cmd: "git submodule update --init", ok: true},
	{cmd: "git submodule foreach 'git push'", reason: "git push"},
	{cmd: "find . -name '*.go' -exec git add {} +", ok: true},
	{cmd: "find . -name x -exec git checkout {} \\;", reason: "computed"},
	{cmd: "echo main | xargs git checkout", reason: "computed"},
	{cmd: "ls | xargs git add", ok: true},

	// Rule 14: unknown subcommands and aliases.
	{cmd: "git ci -m x", reason: "`git ci` is not known"},
	{cmd: "git frobnicate", reason: "aliases are not followed"},
	{cmd: "shopt -s expand_aliases; alias gp='git push'; gp", reason: "alias"},

	// Review 1: git's dashed programs are git with a subcommand.
	{cmd: "/usr/lib/git-core/git-push --no-verify origin HEAD:main", reason: "ultra never pushes"},
	{cmd: "git-push origin HEAD:main", reason: "ultra never pushes"},
	{cmd: `"$(git --exec-path)"/git-push origin HEAD:main`, reason: "ultra never pushes"},
	{cmd: `"$(git --exec-path)/git-push" origin`, reason: "ultra never pushes"},
	{cmd: `$(git --exec-path)/git-commit --no-verify -m x`, reason: "--no-verify"},
	{cmd: `"$D"/git-$SUB origin`, reason: "dashed programs"},
	{cmd: `$D/gi"t-p"ush origin`, reason: "ultra never pushes"},
	{cmd: `${P}-push origin`, reason: "dashed programs"},
	{cmd: `$(which git) -c core.fsmonitor=x status`, reason: "core.fsmonitor"},
	{cmd: "git-commit --no-verify -m x", reason: "--no-verify"},
	{cmd: "git-commit -n -m x", reason: "--no-verify"},
	{cmd: "git-update-ref refs/heads/x HEAD", reason: "git update-ref"},
	{cmd: "timeout 5 /usr/lib/git-core/git-push", reason: "ultra never pushes"},
	{cmd: "strace -f git-push origin", reason: "ultra never pushes"},
	{cmd: "xargs git-push", reason: "ultra never pushes"},
	{cmd: "./scripts/git-frob.sh", ok: true}, // a script of its own, like any script
	{cmd: "git-commit -m x", ok: true, commits: true},
	{cmd: "/usr/lib/git-core/git-status", ok: true},
	{cmd: "git-log --oneline", ok: true},
	{cmd: `"$(git --exec-path)"/git-log --oneline`, ok: true},
	{cmd: `"$(git --exec-path)"/git-diff`, ok: true},
	{cmd: `$(which git) status`, ok: true},

	// Review 2: -c and --config-env are checked on every subcommand.
	{cmd: "git -c core.fsmonitor='git push; false' status", reason: "core.fsmonitor"},
	{cmd: "git -c diff.external=/tmp/x diff", reason: "diff.external"},
	{cmd: "git -c core.pager='sh -c x' log", reason: "core.pager"},
	{cmd: "git -c alias.x='!sh' x", reason: "alias.x"},
	{cmd: "git -c core.sshCommand='git push' fetch origin", reason: "core.sshCommand"},
	{cmd: "git --config-env=core.fsmonitor=V status", reason: "core.fsmonitor"},
	{cmd: "git -c $KV status", reason: "computed"},
	{cmd: "strace git -c alias.x='!git push' x", reason: "alias.x"},
	{cmd: "git -c color.ui=always log", ok: true},
	{cmd: "git -c core.quotepath=off status", ok: true},
	{cmd: "git -c user.name=ultra -c user.email=u@x log", ok: true},
	{cmd: "git -c color.diff=never -c diff.noprefix=true diff", ok: true},

	// Review 3: options and variables that make git run a program.
	{cmd: "git fetch --upload-pack='git push' origin", reason: "--upload-pack"},
	{cmd: "git fetch --upload=x origin", reason: "--upload"},
	{cmd: "git ls-remote --upload-pack=x origin", reason: "--upload-pack"},
	{cmd: "git ls-remote -u x origin", reason: "-u"},
	{cmd: "git ls-remote --exec=x origin", reason: "--exec"},
	{cmd: "git clone -u 'git push' /tmp/a /tmp/b", reason: "-u"},
	{cmd: "git clone -qu x /tmp/a /tmp/b", reason: "-u"},
	{cmd: "git archive --remote=. --exec=x HEAD", reason: "--exec"},
	{cmd: "git push --receive-pack=x origin", reason: "git push"},
	{cmd: "git grep -O foo", reason: "-O"},
	{cmd: "git grep -nOvim foo", reason: "-O"},
	{cmd: "git grep --open-files-in-pager=vim foo", reason: "--open-files-in-pager"},
	{cmd: "git grep --open foo", reason: "--open"},
	{cmd: "git diff --ext-diff", reason: "--ext-diff"},
	{cmd: "git log -p --ext-d", reason: "--ext-d"},
	{cmd: "git show --ext-diff HEAD", reason: "--ext-diff"},
	{cmd: "git difftool --extcmd=x", reason: "difftool"},
	{cmd: "git difftool", reason: "difftool"},
	{cmd: "git mergetool --tool=x", reason: "mergetool"},
	{cmd: "GIT_SSH_COMMAND='git push' git fetch origin", reason: "GIT_SSH_COMMAND"},
	{cmd: "GIT_EXTERNAL_DIFF=/tmp/x git diff", reason: "GIT_EXTERNAL_DIFF"},
	{cmd: "GIT_PAGER='sh -c x' git log", reason: "GIT_PAGER"},
	{cmd: "export GIT_PAGER=vim; git log", reason: "GIT_PAGER"},
	{cmd: "PAGER=$X git log", reason: "PAGER"},
	{cmd: "env GIT_PAGER=x git log", reason: "GIT_PAGER"},
	{cmd: `env GIT_PAGER="$X" git log`, reason: "GIT_PAGER"},
	{cmd: "sudo GIT_SSH_COMMAND=x git fetch", reason: "GIT_SSH_COMMAND"},
	{cmd: "GIT_EDITOR='git push' git commit", reason: "GIT_EDITOR"},
	{cmd: "read GIT_PAGER; git log", reason: "GIT_PAGER"},
	{cmd: "GIT_CONFIG_PARAMETERS=\"'core.fsmonitor=x'\" git status", reason: "GIT_CONFIG_PARAMETERS"},
	{cmd: "export GIT_PAGER=x; bash -c 'git log'", reason: "GIT_PAGER"},
	{cmd: "git diff --no-ext-diff", ok: true},
	{cmd: "git grep -e foo -- '*.go'", ok: true},
	{cmd: "git grep -n foo", ok: true},
	{cmd: "git ls-remote origin", ok: true},
	{cmd: "git clone -b main /tmp/a /tmp/b", ok: true},
	{cmd: "GIT_PAGER=cat git log", ok: true},
	{cmd: "GIT_PAGER= git log", ok: true},
	{cmd: "PAGER=less git log", ok: true},
	{cmd: "env GIT_PAGER=cat git log", ok: true},
	{cmd: `env FOO="$X" git commit -m x`, ok: true, commits: true},
	{cmd: "GIT_EDITOR=true git commit -m x", ok: true, commits: true},
	{cmd: "GIT_SSH_COMMAND=x ssh-keygen -l", ok: true},

	// Review 4: checkout with a bare "--", and remote-tracking branches.
	{cmd: "git checkout main --", reason: "protected branch main"},
	{cmd: "git checkout -f main --", reason: "protected branch main"},
	{cmd: "git checkout feature/x --", reason: "base branch feature/x", base: "feature/x"},
	{cmd: "git checkout HEAD~1 --", reason: "revision expression"},
	{cmd: "git checkout origin/main", reason: "remote-tracking"},
	{cmd: "git checkout origin/feature --", reason: "remote-tracking"},
	{cmd: "git checkout remotes/origin/x", reason: "remote-tracking"},
	{cmd: "F=; git checkout main -- $F", reason: "protected branch main"},
	{cmd: "echo | xargs git checkout main --", reason: "protected branch main"},
	{cmd: "git checkout main -- file.go", ok: true},
	{cmd: `git checkout main -- "$F"`, ok: true},
	{cmd: "git checkout origin/main -- file.go", ok: true},
	{cmd: "git checkout --", ok: true},
	{cmd: "git checkout topic", ok: true},
	{cmd: "git checkout file.go", ok: true},

	// Review 5: fetch destinations.
	{cmd: "git fetch origin main:refs/heads/feature-y", reason: "local branch"},
	{cmd: "git fetch origin HEAD:feature-y", reason: "feature-y"},
	{cmd: "git fetch origin HEAD:Main", reason: "Main"},
	{cmd: "git fetch origin '+refs/heads/*:refs/heads/*'", reason: "local branch"},
	{cmd: "git fetch origin 'refs/*:refs/*'", reason: "refs/heads/"},
	{cmd: "git fetch origin 'refs/heads/*:refs/h*'", reason: "refs/heads/"},
	{cmd: "git fetch origin main:REFS/heads/x", reason: "REFS/heads/x"},
	{cmd: "git fetch --refmap= origin main", reason: "--refmap"},
	{cmd: "git fetch --refmap='+refs/heads/*:refs/heads/*' origin", reason: "--refmap"},
	{cmd: "git fetch --refm=x origin", reason: "--refmap"},
	{cmd: "git fetch --prune origin 'refs/heads/*:refs/heads/*'", reason: "--prune"},
	{cmd: "git fetch $ARGS", reason: "computed"},
	{cmd: "git fetch origin", ok: true},
	{cmd: "git fetch origin main:refs/remotes/origin/main", ok: true},
	{cmd: "git fetch --prune origin '+refs/heads/*:refs/remotes/origin/*'", ok: true},
	{cmd: "git fetch origin refs/pull/1/head", ok: true},
	{cmd: "git fetch --all --prune", ok: true},
}

func TestCheckGit(t *testing.T) {
	for _, tc := range gitCases {
		r := testGitRules
		if tc.base != "" {
			r.Base = tc.base
		}
		v := CheckGit(tc.cmd, r)
		ok := v.Refused == ""
		if ok != tc.ok {
			t.Errorf("CheckGit(%q) allowed=%v, want %v (reason %q)", tc.cmd, ok, tc.ok, v.Refused)
			continue
		}
		if v.Commits != tc.commits {
			t.Errorf("CheckGit(%q).Commits = %v, want %v", tc.cmd, v.Commits, tc.commits)
		}
		if !tc.ok && tc.reason != "" && !strings.Contains(v.Refused, tc.reason) {
			t.Errorf("CheckGit(%q) reason %q, want it to mention %q", tc.cmd, v.Refused, tc.reason)
		}
	}
	if len(gitCases) < 70 {
		t.Errorf("only %d cases", len(gitCases))
	}
}

// TestCheckGitReasons checks that every refusal says what was refused
// and what to do instead.
func TestCheckGitReasons(t *testing.T) {
	for _, tc := range gitCases {
		if tc.ok {
			continue
		}
		v := CheckGit(tc.cmd, testGitRules)
		if v.Refused == "" {
			continue // a case that depends on Base; TestCheckGit covers it
		}
		if tc.reason == "" {
			t.Errorf("case %q has no expected reason", tc.cmd)
		}
		if !strings.Contains(v.Refused, "git") {
			t.Errorf("CheckGit(%q) reason %q does not mention git", tc.cmd, v.Refused)
		}
		if v.Commits {
			t.Errorf("CheckGit(%q) refused but Commits is set", tc.cmd)
		}
	}
}

// TestCheckGitNoRules checks the guard with empty rules: no worktree,
// nothing protected.
func TestCheckGitNoRules(t *testing.T) {
	for _, tc := range []struct {
		cmd string
		ok  bool
	}{
		{"git push", false},
		{"git checkout main", true},
		{"git -C /anywhere add .", false},
		{"git add . && git commit -m x", true},
	} {
		if v := CheckGit(tc.cmd, GitRules{}); (v.Refused == "") != tc.ok {
			t.Errorf("CheckGit(%q, no rules) = %+v, want allowed=%v", tc.cmd, v, tc.ok)
		}
	}
}

func FuzzCheckGit(f *testing.F) {
	for _, tc := range gitCases {
		f.Add(tc.cmd)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		v := CheckGit(cmd, testGitRules)
		if v.Refused != "" && v.Commits {
			t.Errorf("CheckGit(%q) refused with Commits set", cmd)
		}
	})
}
