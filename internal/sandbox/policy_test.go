package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestPolicyArgs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout Layout
		want   string // the mounts, in order, after the fixed prefix
		net    bool
	}{
		{"work tree only", Layout{Work: "/w"},
			"--bind /w /w --chdir /w", false},
		{"read-only work tree for restricted", Layout{Work: "/w", ReadOnlyWork: true, Protect: []string{"/w/.git"}},
			"--ro-bind /w /w --chdir /w", false},
		{"tmp replaced first, hidden paths under /tmp dropped, then hidden, git, home, work, writable, deps, protected",
			Layout{Work: "/s/wt", Tmp: "/s/tmp", Home: "/s/home", GitDir: "/r/.git",
				Hide: []string{"/s", "/tmp/x", "/h/.ssh"}, Writable: []string{"/s/log"},
				Deps:    []Bind{{Src: "/w/node_modules", Path: "/s/wt/node_modules"}},
				Protect: []string{"/s/wt/.git", "/s/wt/.ultra", "/elsewhere"}, Network: true},
			"--bind /s/tmp /tmp --tmpfs /s --tmpfs /h/.ssh --ro-bind /r/.git /r/.git --bind /s/home /s/home --bind /s/wt /s/wt " +
				"--bind /s/log /s/log --ro-bind /w/node_modules /s/wt/node_modules --ro-bind /s/wt/.git /s/wt/.git --ro-bind /s/wt/.ultra /s/wt/.ultra " +
				"--remount-ro /s --remount-ro /h/.ssh --chdir /s/wt", true},
		{"state and git dir inside the work tree are covered again after it",
			Layout{Work: "/repo", GitDir: "/repo/.git", Hide: []string{"/repo/.ultra/state"}},
			"--tmpfs /repo/.ultra/state --ro-bind /repo/.git /repo/.git --bind /repo /repo --ro-bind /repo/.git /repo/.git --tmpfs /repo/.ultra/state " +
				"--remount-ro /repo/.ultra/state --remount-ro /repo/.ultra/state --chdir /repo", false},
		{"what is hidden in the git directory stays hidden after it is shown read-only",
			Layout{Work: "/w", GitDir: "/r/.git", Hide: []string{"/r/.git/ultra-worktrees.lock"}},
			"--tmpfs /r/.git/ultra-worktrees.lock --ro-bind /r/.git /r/.git --tmpfs /r/.git/ultra-worktrees.lock --bind /w /w " +
				"--remount-ro /r/.git/ultra-worktrees.lock --remount-ro /r/.git/ultra-worktrees.lock --chdir /w", false},
		{"explicit working directory", Layout{Work: "/w", Dir: "/w/sub"}, "--bind /w /w --chdir /w/sub", false},
		{"work tree shown at another path, after what is hidden; what lies in it moves along, the rest stays",
			Layout{Work: "/s/runs/r/tree", WorkAt: "/s/checkout", Dir: "/s/runs/r/tree/mod", Tmp: "/s/runs/r/tmp", Home: "/s/runs/r/home",
				GitDir: "/s/runs/r/tree/.git", Hide: []string{"/s", "/h/.ssh", "/s/runs/r/tree/.env"},
				Writable: []string{"/s/log", "/s/runs/r/tree/out"},
				Deps:     []Bind{{Src: "/w/node_modules", Path: "/w/node_modules"}, {Src: "/w/.venv", Path: "/s/runs/r/tree/.venv"}},
				Protect:  []string{"/s/runs/r/tree/.ultra"}},
			"--bind /s/runs/r/tmp /tmp --tmpfs /s --tmpfs /h/.ssh --bind /s/runs/r/home /s/runs/r/home --bind /s/runs/r/tree /s/checkout " +
				"--bind /s/log /s/log --bind /s/runs/r/tree/out /s/checkout/out --ro-bind /w/node_modules /w/node_modules --ro-bind /w/.venv /s/checkout/.venv " +
				"--ro-bind /s/runs/r/tree/.git /s/checkout/.git --ro-bind /s/runs/r/tree/.ultra /s/checkout/.ultra --tmpfs /s/checkout/.env " +
				"--remount-ro /s --remount-ro /h/.ssh --remount-ro /s/checkout/.env --chdir /s/checkout/mod", false},
		{"read-only work tree shown at another path", Layout{Work: "/w", WorkAt: "/c", ReadOnlyWork: true},
			"--ro-bind /w /c --chdir /c", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.layout.Policy().Args()
			if args[len(args)-1] != "--" {
				t.Fatalf("no -- at the end: %v", args)
			}
			joined := strings.Join(args[:len(args)-1], " ")
			prefix := "--unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try "
			if !tc.net {
				prefix += "--unshare-net "
			}
			prefix += "--die-with-parent --new-session --cap-drop ALL --ro-bind / / --dev /dev --proc /proc "
			if !strings.HasPrefix(joined, prefix) {
				t.Fatalf("prefix:\n got %s\nwant %s", joined, prefix)
			}
			if got := strings.TrimPrefix(joined, prefix); got != tc.want {
				t.Fatalf("mounts:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestLayoutEnv(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/root", "SSH_AUTH_SOCK=/run/user/0/ssh", "XDG_CONFIG_HOME=/root/.config", "TMPDIR=/var/tmp", "DISPLAY=:0", "KEEP=1"}
	env := Layout{Home: "/s/home", Tmp: "/s/tmp"}.Env(base)
	for _, want := range []string{"PATH=/bin", "KEEP=1", "HOME=/s/home", "XDG_CONFIG_HOME=/s/home/.config", "XDG_CACHE_HOME=/s/home/.cache", "TMPDIR=/tmp"} {
		if !slices.Contains(env, want) {
			t.Errorf("missing %s in %v", want, env)
		}
	}
	for _, kv := range env {
		for _, gone := range []string{"HOME=/root", "SSH_AUTH_SOCK=", "XDG_CONFIG_HOME=/root", "TMPDIR=/var", "DISPLAY="} {
			if strings.HasPrefix(kv, gone) {
				t.Errorf("%s kept", kv)
			}
		}
	}
}

func TestSecretsCoverHomeAndAgents(t *testing.T) {
	s := Secrets("/home/p")
	for _, want := range []string{"/home/p/.ssh", "/home/p/.aws", "/home/p/.netrc", "/home/p/.git-credentials", "/home/p/.npmrc", "/run/user"} {
		if !slices.Contains(s, want) {
			t.Errorf("%s not hidden", want)
		}
	}
}

// A hidden path inside another hidden one is not mounted again: it is
// gone with the outer one, and bubblewrap could not remount it read-only
// once the outer one covers it.
func TestNestedHiddenMountedOnce(t *testing.T) {
	l := Layout{Work: "/w", Hide: []string{"/repo/.ultra/state", "/repo", "/other/.ultra/state"}, Home: "/repo/.ultra/state/runs/r/home"}
	var hidden []string
	for _, m := range l.Policy().Mounts {
		if m.Kind == Hidden {
			hidden = append(hidden, m.Path)
		}
	}
	if got := strings.Join(hidden, " "); got != "/repo /other/.ultra/state" {
		t.Errorf("hidden mounts %q, want /repo and /other/.ultra/state", got)
	}
}
