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
		{"The REST API rejects empty names", []Surface{SurfaceHTTP}},
		{"The landing page shows the total", []Surface{SurfaceWeb}},
		{"Users see the count in the browser", []Surface{SurfaceWeb}},
		{"A web page lists the todos", []Surface{SurfaceWeb}},
		{"The TUI shows a progress bar", []Surface{SurfaceTerminal}},
		{"An interactive prompt asks for the name", []Surface{SurfaceTerminal}},
		{"The GUI shows the result in the main window", []Surface{SurfaceDesktop}},
		{"A Tkinter dialog box asks for confirmation", []Surface{SurfaceDesktop}},
		{"The API endpoint feeds the dashboard page", []Surface{SurfaceHTTP, SurfaceWeb}},
		// Words that only look like it.
		{"Fix the man page and the page size of the cache", nil},
		{"Use a sliding window over the input", nil},
		{"The command exits with status code 2", nil},
		{"Export a Go API for the parser", nil},
		{"Refactor the terminal colour handling", nil},
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
