package goal

import (
	"strings"
	"testing"
)

func TestDescribedSurfaces(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []Surface
	}{
		{"Fix Add so that it adds", nil},
		{"Add a /health endpoint that answers 200", []Surface{SurfaceHTTP}},
		{"GET /users returns the users as JSON", []Surface{SurfaceHTTP}},
		{"Add a handler: POST /users creates one", []Surface{SurfaceHTTP}},
		{"Add a /healthz route that returns 200", []Surface{SurfaceHTTP}},
		{"The REST API rejects empty names", []Surface{SurfaceHTTP}},
		{"Run an HTTP server on port 8080", []Surface{SurfaceHTTP}},
		{"The landing page shows the total", []Surface{SurfaceWeb}},
		{"A web page lists the todos", []Surface{SurfaceWeb}},
		{"Make the homepage show the latest posts", []Surface{SurfaceWeb}},
		{"The page should list the products", []Surface{SurfaceWeb}},
		{"The TUI shows a progress bar", []Surface{SurfaceTerminal}},
		{"An interactive prompt asks for the name", []Surface{SurfaceTerminal}},
		{"The GUI shows the result", []Surface{SurfaceDesktop}},
		{"A Tkinter app asks for confirmation in a dialog box", []Surface{SurfaceDesktop}},
		{"The API endpoint feeds the dashboard page", []Surface{SurfaceHTTP, SurfaceWeb}},
		// Words that only look like it, and what is not asked for.
		{"Fix the man page and the page size of the cache", nil},
		{"Use a sliding window over the input", nil},
		{"The command exits with status code 2", nil},
		{"Export a Go API for the parser", nil},
		{"Refactor the terminal colour handling", nil},
		{"Make the cleanup step delete /tmp/calc-cache when it is done", nil},
		{"Put /usr/local/bin first; Get / set config values", nil},
		{"Add a --endpoint flag to the CLI", nil},
		{"Fix the off-by-one in the interval endpoints of Range.Contains", nil},
		{"Parse the JSON API response in the client library", nil},
		{"Retry the HTTP API call in the SDK", nil},
		{"Refactor the compiler front-end", nil},
		{"Update the home page URL in package.json", nil},
		{"Make the library work in the browser via WASM", nil},
		{"Add a --no-gui flag", nil},
		{"Bump gtk dependency in the Debian packaging", nil},
		{"See the main window size constant", nil},
		{"Fix the TUI-free batch mode", nil},
		{"Out of scope: the dashboard page and the REST API.", nil},
		{"Do not change the web UI", nil},
		{"The CLI must keep working without a GUI.", nil},
		{"Fix Add.\n\n## Non-goals\n- a web page\n- new endpoints\n\n## Done\n- Add adds", nil},
		{"Fix Add.\n\n## Non-goals\n- a web page\n\n## Goals\n- a landing page shows the sum", []Surface{SurfaceWeb}},
	} {
		var got []Surface
		for _, d := range DescribedSurfaces(tc.text) {
			got = append(got, d.Surface)
			if d.Words == "" || !strings.Contains(strings.ToLower(tc.text), strings.ToLower(d.Words)) {
				t.Errorf("%q: words %q are not the text's", tc.text, d.Words)
			}
		}
		if strings.Join(surfaceStrings(got), ",") != strings.Join(surfaceStrings(tc.want), ",") {
			t.Errorf("%q: described %v, want %v", tc.text, got, tc.want)
		}
	}
}

func surfaceStrings(ss []Surface) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// browserCrit is a valid browser criterion.
func browserCrit(um UserModel) ProposedCriterion {
	return ProposedCriterion{Scenario: "a user opens the page", UserModel: um, Surface: SurfaceWeb, Channel: ChannelBrowser,
		Check:            Check{Start: "./serve", URL: "http://127.0.0.1:8080/", ExpectText: "Total: 5"},
		ExpectedEvidence: "the page's text"}
}

// Each surface is proven only through its channels; command output
// proves only cli and data. A criterion without a surface has its
// channel's.
func TestCriterionSurface(t *testing.T) {
	withSurface := func(c ProposedCriterion, s Surface) ProposedCriterion { c.Surface = s; return c }
	curl := cmdCrit(Happy, "curl -s localhost:8080/ | grep 'Total: 5'", "Total")
	for _, tc := range []struct {
		name string
		c    ProposedCriterion
		want string // a problem at .surface containing this, or "" for none
	}{
		{"no surface: the channel's", curl, ""},
		{"cli through a command", withSurface(curl, SurfaceCLI), ""},
		{"data through a command", withSurface(curl, SurfaceData), ""},
		{"web through a command", withSurface(curl, SurfaceWeb), "a web criterion is proven only through the browser channel"},
		{"http through a command", withSurface(curl, SurfaceHTTP), "command output (curl | grep, a unit test, a dump) proves only the cli and data surfaces"},
		{"web through a browser", browserCrit(Happy), ""},
		{"desktop through a browser", withSurface(browserCrit(Happy), SurfaceDesktop), "the browser channel proves the web surface"},
		{"unknown surface", withSurface(curl, "screen"), `unknown value "screen": use one of "cli", "data"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range validateCriterion("c", tc.c) {
				if p.Where == "c.surface" {
					got = append(got, p.What)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Fatalf("unexpected problems %v", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Fatalf("problems %v, want one containing %q", got, tc.want)
			}
		})
	}
	if got := newCriterion("G001-C1", curl, false).Surface; got != SurfaceCLI {
		t.Errorf("recorded surface of a command criterion without one: %q, want cli", got)
	}
	if got := (Criterion{Channel: ChannelTmux}).SurfaceOf(); got != SurfaceTerminal {
		t.Errorf("surface of an older tmux criterion: %q, want terminal", got)
	}
}

// A goal that describes user-facing behaviour needs a criterion on that
// surface; the brief's surfaces need one in some goal.
func TestSurfaceProblems(t *testing.T) {
	page := validGoal("Show the total")
	page.Objective = "The landing page shows the total of the cart"
	ps := validateGoal("goals[0]", page)
	if len(ps) != 1 || ps[0].Where != "goals[0]" || !strings.Contains(ps[0].What, `describes a web page ("landing page")`) ||
		!strings.Contains(ps[0].What, `surface "web" and channel "browser"`) {
		t.Fatalf("a page proven by command output: %v", ps)
	}
	page.Criteria[0] = browserCrit(Happy)
	if ps := validateGoal("goals[0]", page); len(ps) != 0 {
		t.Fatalf("a page proven in a browser: %v", ps)
	}

	goals := []ProposedGoal{validGoal("Add todos")}
	if ps := BriefSurfaceProblems(goals, "Todos, with a REST API to add them"); len(ps) != 1 || !strings.Contains(ps[0].What, "the brief describes an http endpoint") {
		t.Fatalf("an endpoint of the brief proven by nothing: %v", ps)
	}
	if ps := BriefSurfaceProblems(append(goals, page), "Todos, and a web page that lists them"); len(ps) != 0 {
		t.Fatalf("the brief's page is proven by the second goal: %v", ps)
	}
	if ps := BriefSurfaceProblems(goals, "Fix Add"); len(ps) != 0 {
		t.Fatalf("a brief with nothing user-facing: %v", ps)
	}
}

// Only the criteria that show the change prove a surface: a regression
// check passes on the code as it was (a stock server's listing), so it
// proves nothing the goal adds; in a refactor every criterion counts.
func TestRegressionAloneProvesNoSurface(t *testing.T) {
	g := validGoal("Show the total")
	g.Objective = "The landing page shows the total"
	g.Criteria[2] = browserCrit(Regression)
	ps := validateGoal("goals[0]", g)
	if len(ps) != 1 || !strings.Contains(ps[0].What, "none of its criteria that show the change") {
		t.Fatalf("a page proven by a regression check alone: %v", ps)
	}
	if ps := BriefSurfaceProblems([]ProposedGoal{g}, "a landing page shows the total"); len(ps) != 1 {
		t.Fatalf("the brief's page proven by a regression check alone: %v", ps)
	}
	g.Refactor = true
	if ps := goalSurfaceProblems("goals[0]", g); len(ps) != 0 {
		t.Fatalf("a refactor's page kept working, by its regression check: %v", ps)
	}
}

// A user-facing criterion starts the program a user meets, not a test
// runner, an HTTP client or a shell to type commands into.
func TestStandInStart(t *testing.T) {
	for _, tc := range []struct {
		s     Surface
		start string
		want  string
	}{
		{SurfaceTerminal, "python3 app.py", ""},
		{SurfaceTerminal, "./calc --tui", ""},
		{SurfaceTerminal, "go test -count=1 -run '^TestAdd$' ./calc; sleep 30", `not "go test"`},
		{SurfaceTerminal, "bash", "not a shell (bash)"},
		{SurfaceTerminal, "TERM=xterm /bin/sh", "not a shell (sh)"},
		{SurfaceCLI, "bash", ""},
		{SurfaceWeb, "python3 -m http.server 8080", ""},
		{SurfaceWeb, "curl -s localhost:8080 > page.html && python3 -m http.server", `not "curl"`},
		{SurfaceDesktop, "xterm -e pytest -q", `not "pytest"`},
		{SurfaceHTTP, "npm run test & sleep 5", `not "npm run test"`},
		{SurfaceHTTP, "node server.js --test-mode", ""},
	} {
		got := standIn(tc.s, Check{Start: tc.start})
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s %q: %q, want %q", tc.s, tc.start, got, tc.want)
		}
	}
}
