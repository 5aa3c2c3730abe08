package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// A web page proven only by curl | grep is refused at proposal: a goal
// that describes a page needs a criterion on the web surface, and a
// command criterion that claims the web surface is refused too. The run
// goes on with a proposal that describes no page, and what it recorded
// names each criterion's surface.
func TestWebPageByCurlRefused(t *testing.T) {
	t.Parallel()
	dir := repo(t, calcProject)
	curl := map[string]any{"run": "curl -s http://127.0.0.1:8080/ | grep 'Total: 5'", "expect_exit": 0}
	others := []map[string]any{
		crit("edge", "command", "Add adds, as its test shows", map[string]any{"run": "go test -count=1 -run '^TestAdd$' ./calc", "expect_exit": 0}),
		crit("regression", "command", "both tests are still there", map[string]any{"run": "grep -c '^func Test' calc/calc_test.go", "expect_stdout": "^2\\s*$"}),
	}
	page := goalsOf("Show the total", append([]map[string]any{crit("happy", "command", "the landing page shows the total", curl)}, others...)...)
	page["goals"].([]any)[0].(map[string]any)["objective"] = "The landing page shows the total of Add(2, 3)"
	webCurl := crit("happy", "command", "the page shows the total", curl)
	webCurl["surface"] = "web"
	claimed := goalsOf("Show the total", append([]map[string]any{webCurl}, others...)...)
	steps := append([]step{fixSteps()[0], calls(call("goals", page)), calls(call("goals", claimed))}, fixSteps()[1:]...)
	m := newModel(t, steps...)
	res := ultra(t, dir, runArgs(m, "fix calc")...)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	var outs []string
	for _, e := range ofType(res.events(t), "tool_result") {
		if data(e)["tool"] == "goals" {
			outs = append(outs, data(e)["output"].(string))
		}
	}
	if len(outs) != 3 {
		t.Fatalf("%d goals results, want 3: %q", len(outs), outs)
	}
	for _, want := range []string{"refused", `goals[0]: the goal describes a web page ("landing page"), but none of its criteria that show the change`, `surface "web" and channel "browser"`} {
		if !strings.Contains(outs[0], want) {
			t.Fatalf("the first refusal lacks %q:\n%s", want, outs[0])
		}
	}
	for _, want := range []string{"refused", "goals[0].criteria[0].surface: a web criterion is proven only through the browser channel", "proves only the cli and data surfaces"} {
		if !strings.Contains(outs[1], want) {
			t.Fatalf("the second refusal lacks %q:\n%s", want, outs[1])
		}
	}
	// The accepted plan records each criterion's surface.
	id := runID(t, res.events(t))
	b, err := exec.Command("git", "-C", dir, "show", "ultra/"+id+":.ultra/runs/"+id+"/goals.json").Output()
	if err != nil {
		t.Fatalf("goals.json on the run's branch: %v", err)
	}
	if n := strings.Count(string(b), `"surface": "cli"`); n != 3 {
		t.Fatalf("goals.json names %d cli surfaces, want 3:\n%s", n, b)
	}
}
