package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ultra-dev/ultra/internal/hooks"
)

// printSetup is doctor's summary of what a person brought: the MCP
// servers, hooks, permission rules and skills runs here follow, and
// where each comes from. What does not load is a finding above.
func printSetup(w io.Writer, p *project) {
	home, _ := os.UserHomeDir()
	short := func(path string) string {
		if rel, err := filepath.Rel(p.Root, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
		if home != "" && strings.HasPrefix(path, home+"/") {
			return "~/" + strings.TrimPrefix(path, home+"/")
		}
		return path
	}
	if servers, err := p.mcpServers(); err == nil {
		var names []string
		from := map[string]bool{}
		for _, s := range servers {
			names = append(names, s.Name)
			from[short(s.Source)] = true
		}
		line := "none"
		if len(servers) > 0 {
			line = fmt.Sprintf("%d: %s (%s); ultra mcp list starts them", len(servers), strings.Join(names, ", "), keys(from))
		}
		fmt.Fprintf(w, "setup      mcp      %s\n", line)
	}
	if set, hs, err := p.settings(); err == nil {
		var events []string
		from := map[string]bool{}
		for _, ev := range hooks.Events {
			n := 0
			for _, g := range hs.Events[ev] {
				for _, h := range g.Hooks {
					n++
					from[short(h.Source)] = true
				}
			}
			if n > 0 {
				events = append(events, fmt.Sprintf("%s %d", ev, n))
			}
		}
		line := "none"
		if len(events) > 0 {
			line = fmt.Sprintf("%s (%s)", strings.Join(events, ", "), keys(from))
		}
		fmt.Fprintf(w, "setup      hooks    %s\n", line)
		for _, n := range hs.Notes {
			fmt.Fprintf(w, "           left out: %s\n", n)
		}
		kinds := map[string]int{}
		from = map[string]bool{}
		for _, r := range set.Rules {
			kinds[r.Kind]++
			from[short(r.Source)] = true
		}
		line = "none"
		if len(set.Rules) > 0 {
			line = fmt.Sprintf("deny %d, ask %d, allow %d (%s)", kinds["deny"], kinds["ask"], kinds["allow"], keys(from))
		}
		fmt.Fprintf(w, "setup      rules    %s\n", line)
		for _, n := range set.Notes {
			fmt.Fprintf(w, "           left out: %s\n", n)
		}
	}
	all, probs := p.skills()
	line := fmt.Sprintf("%d", len(all))
	if len(probs) > 0 {
		line += fmt.Sprintf(", and %d problems that leave skills out (ultra skills lint)", len(probs))
	}
	fmt.Fprintf(w, "setup      skills   %s\n", line)
}

// keys are m's keys, sorted and joined.
func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}
