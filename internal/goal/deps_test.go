package goal

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestGoalNumber(t *testing.T) {
	for _, c := range []struct {
		ref  string
		want int
	}{
		{"G001", 1}, {"G12", 12}, {"G002-add-mul", 2}, {" G003 ", 3},
		{"g001", 0}, {"1", 0}, {"G", 0}, {"G001_x", 0}, {"G00001", 0}, {"", 0},
	} {
		if got := GoalNumber(c.ref); got != c.want {
			t.Errorf("GoalNumber(%q) = %d, want %d", c.ref, got, c.want)
		}
	}
}

func TestDependencyProblems(t *testing.T) {
	where := func(i int) string { return fmt.Sprintf("goals[%d]", i) }
	for _, c := range []struct {
		name string
		deps [][]string
		want []string // substrings of the problems, in order
	}{
		{"none", [][]string{nil, nil, nil}, nil},
		{"earlier and later", [][]string{{"G003"}, {"G001"}, nil}, nil},
		{"full ids", [][]string{nil, {"G001-health"}}, nil},
		{"unknown number", [][]string{nil, {"G004"}}, []string{"goals[1].depends_on[0]: G004 names no goal: the proposal has 2"}},
		{"not a number", [][]string{{"health"}, nil}, []string{`goals[0].depends_on[0]: "health" is not a goal's number`}},
		{"itself", [][]string{nil, {"G002"}}, []string{"goals[1].depends_on[0]: a goal cannot depend on itself"}},
		{"twice", [][]string{nil, {"G001", "G001-x"}}, []string{"goals[1].depends_on[1]: G001-x is named twice"}},
		{"two-cycle", [][]string{{"G002"}, {"G001"}}, []string{"goals[0].depends_on: the dependencies form a cycle (G001 → G002 → G001)"}},
		{"three-cycle", [][]string{{"G003"}, {"G001"}, {"G002"}, nil}, []string{"cycle (G001 → G003 → G002 → G001)"}},
		{"cycle past a chain", [][]string{nil, {"G001", "G003"}, {"G004"}, {"G002"}}, []string{"cycle (G002 → G003 → G004 → G002)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			goals := make([]ProposedGoal, len(c.deps))
			for i := range goals {
				goals[i].DependsOn = c.deps[i]
			}
			ps := dependencyProblems(goals, where)
			if len(ps) != len(c.want) {
				t.Fatalf("problems %v, want %d", ps, len(c.want))
			}
			for i, p := range ps {
				if !strings.Contains(p.String(), c.want[i]) {
					t.Errorf("problem %q, want it to contain %q", p, c.want[i])
				}
			}
		})
	}
}

func TestOrder(t *testing.T) {
	mk := func(deps ...[]string) []Goal {
		gs := make([]Goal, len(deps))
		for i := range gs {
			gs[i] = Goal{ID: fmt.Sprintf("G%03d-x", i+1), DependsOn: deps[i]}
		}
		return gs
	}
	for _, c := range []struct {
		name  string
		goals []Goal
		want  []int
	}{
		{"list order", mk(nil, nil, nil), []int{0, 1, 2}},
		{"a later dependency first", mk([]string{"G003-x"}, nil, nil), []int{1, 2, 0}},
		{"stable", mk(nil, []string{"G004-x"}, nil, nil), []int{0, 2, 3, 1}},
		{"chain backwards", mk([]string{"G002-x"}, []string{"G003-x"}, nil), []int{2, 1, 0}},
		{"unknown dependency ignored", mk([]string{"G009-x"}, nil), []int{0, 1}},
		{"cycle last", mk([]string{"G002-x"}, []string{"G001-x"}, nil), []int{2, 0, 1}},
		{"empty", nil, []int{}},
	} {
		if got := Order(c.goals); !slices.Equal(got, c.want) {
			t.Errorf("%s: Order = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDependenciesResolvedAndCurrent(t *testing.T) {
	p := Proposal{Goals: []ProposedGoal{{Title: "Mul"}, {Title: "Div", DependsOn: []string{"G003"}}, {Title: "Sub"}}}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	goals := p.ToGoals(at)
	if !slices.Equal(goals[1].DependsOn, []string{"G003-sub"}) {
		t.Fatalf("DependsOn %v", goals[1].DependsOn)
	}
	f := &File{Goals: goals}
	if g := f.Current(); g.ID != "G001-mul" {
		t.Fatalf("current %s", g.ID)
	}
	f.Goals[0].Status = Complete
	if g := f.Current(); g.ID != "G003-sub" {
		t.Fatalf("current %s: G002 waits for G003", g.ID)
	}
	if w := f.Waiting(&f.Goals[1]); !slices.Equal(w, []string{"G003-sub"}) {
		t.Fatalf("waiting %v", w)
	}
	f.Goals[2].Status = Complete
	if g := f.Current(); g.ID != "G002-div" || len(f.Waiting(g)) != 0 {
		t.Fatalf("current %s", g.ID)
	}
	if PlanDigest(goals) == PlanDigest((Proposal{Goals: []ProposedGoal{{Title: "Mul"}, {Title: "Div"}, {Title: "Sub"}}}).ToGoals(at)) {
		t.Fatal("the plan digest ignores dependencies")
	}
}
