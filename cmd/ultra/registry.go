package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ultra-dev/ultra/internal/config"
)

// The registry of repositories is the list of repositories where runs
// started or the TUI opened, kept in $XDG_STATE_HOME/ultra/repos.json so that
// `ultra tasks --all-repos` can find them.

type knownRepo struct {
	Root string    `json:"root"`
	Seen time.Time `json:"seen"` // when ultra last opened its store
}

type repoRegistry struct {
	Repos []knownRepo `json:"repos"`
}

// registryFresh: a repository seen more recently than this is not
// written again (opening a store stays cheap).
const registryFresh = time.Hour

func registryPath() (string, error) {
	state, err := config.StateDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the repository registry: %w", err)
	}
	return filepath.Join(state, "repos.json"), nil
}

// rememberRepo records that a run or chat started in the repository at
// root, or the TUI opened there. It is best effort: a registry that cannot be written costs only
// --all-repos its entry.
func rememberRepo(root string) {
	path, err := registryPath()
	if err != nil {
		return
	}
	now := time.Now()
	if reg, err := readRegistry(path); err == nil {
		for _, r := range reg.Repos {
			if r.Root == root && now.Sub(r.Seen) < registryFresh {
				return
			}
		}
	}
	_ = updateRegistry(path, func(reg *repoRegistry) {
		for i := range reg.Repos {
			if reg.Repos[i].Root == root {
				reg.Repos[i].Seen = now
				return
			}
		}
		reg.Repos = append(reg.Repos, knownRepo{Root: root, Seen: now})
	})
}

// forgetRepo takes the repository at root out of the registry (a
// scratch repository that is removed).
func forgetRepo(root string) {
	path, err := registryPath()
	if err != nil {
		return
	}
	if d, err := filepath.EvalSymlinks(root); err == nil {
		root = d
	}
	_ = updateRegistry(path, func(reg *repoRegistry) {
		reg.Repos = slices.DeleteFunc(reg.Repos, func(r knownRepo) bool { return r.Root == root })
	})
}

// knownRepos lists the registered repositories, in the order they were
// first seen.
func knownRepos() ([]knownRepo, error) {
	path, err := registryPath()
	if err != nil {
		return nil, err
	}
	reg, err := readRegistry(path)
	if err != nil {
		return nil, err
	}
	return reg.Repos, nil
}

func readRegistry(path string) (repoRegistry, error) {
	var reg repoRegistry
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return reg, nil
	}
	if err != nil {
		return reg, fmt.Errorf("reading the repository registry %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &reg); err != nil {
		return reg, fmt.Errorf("the repository registry %s is corrupt: %w (remove it; ultra writes it again as repositories are used)", path, err)
	}
	return reg, nil
}

// updateRegistry changes the registry under a lock, so two processes
// registering at once both count, and replaces the file whole.
func updateRegistry(path string, change func(*repoRegistry)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	reg, err := readRegistry(path)
	if err != nil {
		reg = repoRegistry{} // a corrupt registry is rebuilt from what is used next
	}
	change(&reg)
	reg.Repos = slices.DeleteFunc(reg.Repos, func(r knownRepo) bool { return r.Root == "" })
	b, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// otherStates are the .ultra/state directories of the repositories ultra
// knows other than root, those that exist: a run's contained commands
// must not read them (their stores, their TUI history) any more than
// their own. Read once, when the run starts.
func otherStates(root string) []string {
	repos, err := knownRepos()
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range repos {
		d := filepath.Join(r.Root, ".ultra", "state")
		if fi, err := os.Stat(d); r.Root != root && err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	return out
}
