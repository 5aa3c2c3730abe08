package mcp

import (
	"fmt"
	"slices"
	"sort"
)

// Offered are the tools of each server that answered, by server name:
// what the person's rules and policies may name.
func (m *Manager) Offered() map[string][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string][]string{}
	for name, st := range m.status {
		if st.State == "connected" {
			out[name] = []string{}
		}
	}
	for _, t := range m.tools {
		out[t.Server] = append(out[t.Server], t.Tool)
	}
	return out
}

// StrayPolicies are the per-tool policies (tools.NAME of a server's
// entry in ultra's config) that name a tool the server, which answered,
// does not offer: a typo that would leave the tool as it was.
func StrayPolicies(servers []Server, offered map[string][]string) []string {
	var out []string
	for _, s := range servers {
		tools, ok := offered[s.Name]
		if !ok {
			continue // it did not answer: nothing to say yet
		}
		var names []string
		for t := range s.Tools {
			if t != "*" && !slices.Contains(tools, t) {
				names = append(names, t)
			}
		}
		sort.Strings(names)
		for _, t := range names {
			out = append(out, fmt.Sprintf("MCP server %q has no tool %q, so the policy [mcp.servers.%s.tools] %s = %q of ultra's config applies to nothing (%s)",
				s.Name, t, s.Name, t, s.Tools[t], Suggest(t, tools)))
		}
	}
	return out
}

// Suggest is "did you mean X?" for the name of names closest to t, or
// the list of names when none is close.
func Suggest(t string, names []string) string {
	best, dist := "", 4
	for _, n := range names {
		if d := distance(t, n); d < dist && d <= len(t)/3+1 {
			best, dist = n, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	if len(names) == 0 {
		return "it offers no tools"
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	if len(sorted) > 8 {
		sorted = append(sorted[:8], "…")
	}
	return fmt.Sprintf("it offers %v", sorted)
}

// distance is the edit distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
