package agent

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/store"
)

func TestFingerprintParseBranchList(t *testing.T) {
	const a, b = "1111111111111111111111111111111111111111", "2222222222222222222222222222222222222222"
	cases := []struct {
		name   string
		out    string
		want   []branchTip
		unread []string
	}{
		{name: "empty output", out: ""},
		{name: "blank lines only", out: "\n \n"},
		{
			name: "checked-out branch",
			out:  a + "\x00refs/heads/ultra/run-1\x00*",
			want: []branchTip{{name: "ultra/run-1", commit: a, head: true}},
		},
		{
			name: "protected branch not checked out",
			out:  a + "\x00refs/heads/main\x00 ",
			want: []branchTip{{name: "main", commit: a}},
		},
		{
			// workspace.Git trims the output: the last line loses its blank mark.
			name: "not checked out, last line trimmed",
			out:  a + "\x00refs/heads/main\x00",
			want: []branchTip{{name: "main", commit: a}},
		},
		{
			name: "branch name with slashes",
			out:  b + "\x00refs/heads/release/v1/hotfix\x00 ",
			want: []branchTip{{name: "release/v1/hotfix", commit: b}},
		},
		{
			name: "several branches, the middle one checked out",
			out:  a + "\x00refs/heads/main\x00 \n" + b + "\x00refs/heads/ultra/r\x00*\n" + a + "\x00refs/heads/release/1.0\x00",
			want: []branchTip{
				{name: "main", commit: a},
				{name: "ultra/r", commit: b, head: true},
				{name: "release/1.0", commit: a},
			},
		},
		{
			// The old format's lines are not misread as branches.
			name:   "unreadable lines are kept apart",
			out:    "* " + a + " main\n  " + b + " dev\n" + a + "\x00refs/tags/v1\x00 \n" + a + "\x00refs/heads/x\x00?",
			unread: []string{"* " + a + " main", "  " + b + " dev", a + "\x00refs/tags/v1\x00 ", a + "\x00refs/heads/x\x00?"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, unread := parseBranchList(tc.out)
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(unread, tc.unread) {
				t.Errorf("parseBranchList(%q) = %+v, unread %q; want %+v, unread %q", tc.out, got, unread, tc.want, tc.unread)
			}
		})
	}
}

// TestFingerprintSeesProtectedBranches runs gitFingerprint on a real
// worktree: the protected branches and the base, none of them checked out
// there, are in the fingerprint, and moving one of them changes it.
func TestFingerprintSeesProtectedBranches(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	repo, wt := t.TempDir(), filepath.Join(t.TempDir(), "wt")
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", "-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(repo, "init", "-q")
	git(repo, "commit", "-q", "--allow-empty", "-m", "one")
	first := git(repo, "rev-parse", "HEAD")
	git(repo, "commit", "-q", "--allow-empty", "-m", "two")
	second := git(repo, "rev-parse", "HEAD")
	for _, b := range []string{"dev", "release/1.0", "feat/a/b"} {
		git(repo, "branch", b)
	}
	git(repo, "worktree", "add", "-q", "-b", "ultra/r", wt)

	r := &runner{row: &store.Run{Workdir: wt, Workspace: store.Workspace{Branch: "ultra/r", Base: "dev"}}}
	fp, tip := r.gitFingerprint()
	if tip != second {
		t.Errorf("ownTip = %q, want %q", tip, second)
	}
	for _, want := range []string{"branch main " + second, "branch release/1.0 " + second, "branch dev " + second, "HEAD ultra/r", "hooks "} {
		if !strings.Contains(fp, want) {
			t.Errorf("fingerprint lacks %q:\n%s", want, fp)
		}
	}
	for _, not := range []string{"feat/a/b", "unread", "branch ultra/r"} {
		if strings.Contains(fp, not) {
			t.Errorf("fingerprint has %q:\n%s", not, fp)
		}
	}

	// An unprotected branch may move; main, the base and the worktree's
	// branch choice may not.
	git(repo, "update-ref", "refs/heads/feat/a/b", first)
	if again, _ := r.gitFingerprint(); again != fp {
		t.Errorf("moving feat/a/b changed the fingerprint:\n%s\n---\n%s", fp, again)
	}
	git(repo, "update-ref", "refs/heads/main", first)
	if moved, _ := r.gitFingerprint(); moved == fp {
		t.Errorf("moving main left the fingerprint as it was:\n%s", fp)
	}
	git(repo, "update-ref", "refs/heads/main", second)
	git(repo, "update-ref", "refs/heads/dev", first)
	if moved, _ := r.gitFingerprint(); moved == fp {
		t.Errorf("moving the base left the fingerprint as it was:\n%s", fp)
	}
	git(repo, "update-ref", "refs/heads/dev", second)
	git(wt, "checkout", "-q", "-b", "other")
	if moved, _ := r.gitFingerprint(); moved == fp {
		t.Errorf("switching the worktree's branch left the fingerprint as it was:\n%s", fp)
	}
}
