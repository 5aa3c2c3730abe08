package e2e

import (
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
