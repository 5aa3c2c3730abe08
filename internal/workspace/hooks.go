package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// InstallHooks gives the worktree wt its own hooks directory, hooksDir,
// through worktree-scoped configuration (the person's checkout keeps its
// hooks). Its pre-commit runs check, a shell command that must succeed,
// and then the repository's own pre-commit; its pre-push refuses every
// push (a run never publishes; a person pushes from their checkout); the
// repository's other hooks are linked as they are.
func InstallHooks(ctx context.Context, repo, wt, hooksDir, check string) error {
	// One read of the repository's settings: its hooks path and whether
	// worktree-scoped configuration is on.
	hooks, worktreeConfig := "", false
	for _, kv := range PersonConfig(ctx, wt, `^(core\.hookspath|extensions\.worktreeconfig)$`) {
		k, v := kv[0], kv[1]
		switch k {
		case "core.hookspath":
			hooks = v
		case "extensions.worktreeconfig":
			worktreeConfig = v == "true"
		}
	}
	orig, err := hooksPath(ctx, repo, wt, hooks)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(hooksDir, 0o755); err != nil {
		return err
	}
	if entries, err := os.ReadDir(orig); err == nil {
		for _, e := range entries {
			name := e.Name()
			if name == "pre-commit" || name == "pre-push" || strings.HasSuffix(name, ".sample") || e.IsDir() {
				continue
			}
			_ = os.Symlink(filepath.Join(orig, name), filepath.Join(hooksDir, name))
		}
	}
	own := filepath.Join(orig, "pre-commit")
	script := "#!/bin/sh\n# Installed by ultra: a commit in this run's worktree must be of a tree its gate passed.\n" +
		check + " || exit 1\n" +
		"if [ -x " + ShellQuote(own) + " ]; then exec " + ShellQuote(own) + " \"$@\"; fi\n"
	if err := os.WriteFile(filepath.Join(hooksDir, "pre-commit"), []byte(script), 0o755); err != nil {
		return err
	}
	prePush := "#!/bin/sh\necho \"ultra: pushing from a run's worktree is refused: a run never publishes. Land it (ultra land), or push its branch from your own checkout.\" >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(hooksDir, "pre-push"), []byte(prePush), 0o755); err != nil {
		return err
	}
	if !worktreeConfig {
		if err := enableWorktreeConfig(ctx, repo); err != nil {
			return err
		}
	}
	_, err = LockedGit(ctx, repo, wt, "config", "--worktree", "core.hooksPath", hooksDir)
	return err
}

// enableWorktreeConfig turns on worktree-scoped configuration. Runs
// starting at once race for the repository's config lock: the loser
// retries until the winner's setting shows.
func enableWorktreeConfig(ctx context.Context, repo string) error {
	var err error
	for i := 0; i < 50; i++ {
		if v, _ := gitOut(ctx, repo, nil, "config", "--bool", "--get", "extensions.worktreeConfig"); v == "true" {
			return nil
		}
		if _, err = gitOut(ctx, repo, nil, "config", "extensions.worktreeConfig", "true"); err == nil {
			return nil
		}
		time.Sleep(time.Duration(10+i*5) * time.Millisecond)
	}
	return err
}

// PersonConfig is the settings of dir's repository whose key matches the
// regular expression pattern, as a person's git reads them (key, value, in
// git's order, the last one winning): without the settings ultra gives
// its own git commands (safeConfig), which would hide the repository's.
func PersonConfig(ctx context.Context, dir, pattern string) [][2]string {
	out, _ := gitOut(ctx, dir, nil, "config", "--show-scope", "--get-regexp", pattern)
	var kvs [][2]string
	for _, line := range strings.Split(out, "\n") {
		scope, kv, ok := strings.Cut(line, "\t")
		if !ok || scope == "command" {
			continue
		}
		k, v, _ := strings.Cut(kv, " ")
		kvs = append(kvs, [2]string{k, v})
	}
	return kvs
}

// PersonConfigValue is the value of key as a person's git reads it (see
// PersonConfig), "" when it is not set.
func PersonConfigValue(ctx context.Context, dir, key string) string {
	v := ""
	for _, kv := range PersonConfig(ctx, dir, "^"+regexp.QuoteMeta(strings.ToLower(key))+"$") {
		v = kv[1]
	}
	return v
}

// hooksPath is where the repository's hooks are, as seen from wt, given
// its core.hooksPath setting p.
func hooksPath(ctx context.Context, repo, wt, p string) (string, error) {
	if p != "" {
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(wt, p)
		}
		return p, nil
	}
	if fi, err := os.Stat(filepath.Join(repo, ".git")); err == nil && fi.IsDir() {
		return filepath.Join(repo, ".git", "hooks"), nil
	}
	common, err := gitOut(ctx, wt, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	return filepath.Join(common, "hooks"), nil
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// IndexTree writes the tree of dir's index (the tree a commit would
// record) and returns its hash. Inside a hook, git's GIT_INDEX_FILE names
// the index being committed.
func IndexTree(ctx context.Context, dir string) (string, error) {
	t, err := gitOut(ctx, dir, nil, "write-tree")
	if err != nil {
		return "", fmt.Errorf("reading the index: %w", err)
	}
	return t, nil
}
