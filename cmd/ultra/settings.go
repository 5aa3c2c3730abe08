package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/hooks"
	"github.com/ultra-dev/ultra/internal/jsonpos"
	"github.com/ultra-dev/ultra/internal/rules"
)

// settingsFiles are the settings.json files whose permission rules and
// hooks runs follow, in Claude Code's order of precedence (all of them hold; a deny
// anywhere wins): the project's .ultra/settings.json, then, unless
// permissions.claude_settings is false, .claude/settings.local.json,
// .claude/settings.json and the person's ~/.claude/settings.json. The
// project's are read from the person's checkout, never from a run's
// worktree.
func (p *project) settingsFiles() []string {
	files := []string{filepath.Join(p.Root, ".ultra", "settings.json")}
	if p.Config.Permissions.ReadsClaudeSettings() {
		files = append(files, filepath.Join(p.Root, ".claude", "settings.local.json"), filepath.Join(p.Root, ".claude", "settings.json"))
		if home, err := os.UserHomeDir(); err == nil {
			files = append(files, filepath.Join(home, ".claude", "settings.json"))
		}
	}
	return files
}

// settings reads the permission rules and the hooks of every settings
// file there is; a file that does not read, a rule or a hook that does
// not parse is an error naming the file.
func (p *project) settings() (rules.Set, hooks.Config, error) {
	var s rules.Set
	var h hooks.Config
	home, _ := os.UserHomeDir()
	for _, f := range p.settingsFiles() {
		data, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return s, h, err
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(data, &doc); err != nil {
			return s, h, jsonpos.Error(f, data, err)
		}
		if err := s.Add(f, data, home); err != nil {
			return s, h, err
		}
		if err := h.Add(f, data); err != nil {
			return s, h, err
		}
	}
	return s, h, nil
}
