package e2e

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// webfetch is offered to a chat only under a profile with the network,
// and never reaches this machine (ultra's model server here), whatever
// the address names it by.
func TestWebFetchInAChat(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	m := newModel(t,
		calls(call("webfetch", map[string]any{"url": "http://127.0.0.1:1/"}),
			call("webfetch", map[string]any{"url": "http://localhost/v1/models"}),
			call("webfetch", map[string]any{"url": "http://[::ffff:7f00:1]/"})),
		text("done"),
		text("a chat without the network"),
	)
	chat := func(profile string) result {
		return ultra(t, dir, "chat", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "--permission-profile", profile, "what is here?")
	}
	res := chat("trusted")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		outs = append(outs, data(e)["output"].(string))
	}
	if len(outs) != 3 {
		t.Fatalf("results %q", outs)
	}
	for _, o := range outs {
		if !strings.Contains(o, "webfetch refused") || !strings.Contains(o, "this machine") {
			t.Fatalf("a fetch of this machine: %s", o)
		}
	}
	if !slices.Contains(m.srv.Requests()[0].Tools, "webfetch") {
		t.Fatalf("trusted chat offered %v", m.srv.Requests()[0].Tools)
	}
	if r := chat("normal"); r.code != 0 || slices.Contains(m.srv.Requests()[2].Tools, "webfetch") {
		t.Fatalf("a chat under the normal profile: exit %d, offered %v", r.code, m.srv.Requests()[2].Tools)
	}
}

// A person's WebFetch deny rule and WebFetch hook hold for ultra's
// webfetch: the calls are refused before anything is fetched.
func TestWebFetchRulesAndHooks(t *testing.T) {
	t.Parallel()
	files := maps.Clone(calcProject)
	files[".claude/settings.json"] = `{"permissions": {"deny": ["WebFetch(domain:example.org)"]},
		"hooks": {"PreToolUse": [{"matcher": "WebFetch", "hooks": [{"type": "command",
			"command": "grep -q blocked.example.net && { echo 'hook: no fetching blocked.example.net' >&2; exit 2; }; exit 0"}]}]}}`
	dir := repo(t, files)
	m := newModel(t,
		calls(call("webfetch", map[string]any{"url": "https://docs.example.org/page"}),
			call("webfetch", map[string]any{"url": "https://blocked.example.net/"})),
		text("done"),
	)
	res := ultra(t, dir, "chat", "--output", "jsonl", "--provider", "openai", "--base-url", m.url, "--model", "scripted", "--permission-profile", "trusted", "what is here?")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		outs = append(outs, data(e)["output"].(string))
	}
	if len(outs) != 2 || !strings.Contains(outs[0], "Refused [permission-rule]") || !strings.Contains(outs[0], "WebFetch(domain:example.org)") ||
		!strings.Contains(outs[1], "Refused [hook]") || !strings.Contains(outs[1], "no fetching blocked.example.net") {
		t.Fatalf("results %q", outs)
	}
}
