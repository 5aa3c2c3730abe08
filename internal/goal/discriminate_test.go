package goal

import (
	"strings"
	"testing"
)

func TestExpectFor(t *testing.T) {
	for _, tc := range []struct {
		m                   UserModel
		readsOnly, refactor bool
		want                string
	}{
		{Happy, false, false, FailToPass}, {Edge, false, false, FailToPass}, {Adversarial, false, false, FailToPass},
		{Regression, false, false, PassToPass}, {Happy, false, true, PassToPass}, {Edge, false, true, PassToPass},
		{Happy, true, false, FailToPass}, {Happy, true, true, FailToPass}, {Regression, true, true, PassToPass},
	} {
		if got := ExpectFor(tc.m, tc.readsOnly, tc.refactor); got != tc.want {
			t.Errorf("ExpectFor(%s, reads only %v, refactor %v) = %s, want %s", tc.m, tc.readsOnly, tc.refactor, got, tc.want)
		}
	}
}

func TestBaseProblems(t *testing.T) {
	base := func(st CriterionStatus) *BaseResult { return &BaseResult{Status: st, Summary: "command → exit 0"} }
	crit := func(m UserModel, essential bool, b *BaseResult) Criterion {
		return Criterion{ID: "c", UserModel: m, Essential: essential, Expect: ExpectFor(m, false, false), Base: b}
	}
	refactor := func(c Criterion) Criterion { c.Expect = PassToPass; return c }
	for _, tc := range []struct {
		name     string
		g        Goal
		want     []string // substrings, one per problem, in order
		wantNone bool
	}{
		{name: "discriminating goal", wantNone: true, g: Goal{SuccessCriteria: []Criterion{
			crit(Happy, true, base(CriterionFail)), crit(Edge, true, base(CriterionFail)), crit(Regression, true, base(CriterionPass))}}},
		{name: "a check the base cannot run counts as failing there", wantNone: true, g: Goal{SuccessCriteria: []Criterion{
			crit(Happy, true, base(CriterionBlocked)), crit(Regression, true, base(CriterionPass))}}},
		{name: "happy passes on the base", g: Goal{SuccessCriteria: []Criterion{
			crit(Happy, true, base(CriterionPass)), crit(Edge, true, base(CriterionFail)), crit(Regression, true, base(CriterionPass))}},
			want: []string{"goals[0].criteria[0]: already passes on the base tree"}},
		{name: "regression fails on the base", g: Goal{SuccessCriteria: []Criterion{
			crit(Happy, true, base(CriterionFail)), crit(Regression, true, base(CriterionFail))}},
			want: []string{"goals[0].criteria[1]: user_model \"regression\" means it passes on the base tree"}},
		{name: "no essential criterion shows the change", g: Goal{SuccessCriteria: []Criterion{
			crit(Happy, false, base(CriterionFail)), crit(Regression, true, base(CriterionPass))}},
			want: []string{"goals[0].criteria: no essential criterion fails on the base tree"}},
		{name: "only regressions", g: Goal{SuccessCriteria: []Criterion{
			crit(Regression, true, base(CriterionPass)), crit(Regression, true, base(CriterionPass))}},
			want: []string{"no essential criterion fails on the base tree"}},
		{name: "a refactor passes everywhere", wantNone: true, g: Goal{Refactor: true, SuccessCriteria: []Criterion{
			refactor(crit(Happy, true, base(CriterionPass))), refactor(crit(Regression, true, base(CriterionPass)))}}},
		{name: "a refactor's criterion fails on the base", g: Goal{Refactor: true, SuccessCriteria: []Criterion{
			refactor(crit(Happy, true, base(CriterionFail))), refactor(crit(Regression, true, base(CriterionPass)))}},
			want: []string{"goals[0].criteria[0]: a refactor's criteria show that behaviour stays the same"}},
		{name: "superseded criteria do not count", g: Goal{SuccessCriteria: []Criterion{
			func() Criterion { c := crit(Happy, true, base(CriterionPass)); c.Superseded = "x"; return c }(), crit(Regression, true, base(CriterionPass))}},
			want: []string{"no essential criterion fails on the base tree"}},
		{name: "the criteria that show the change only read the source", g: Goal{SuccessCriteria: []Criterion{
			func() Criterion {
				c := crit(Happy, true, base(CriterionFail))
				c.Channel, c.Check = ChannelCommand, Check{Run: "grep -c 'func Mul' calc/calc.go"}
				return c
			}(), crit(Regression, true, base(CriterionPass))}},
			want: []string{"goals[0].criteria: the essential criteria that fail on the base tree only read files"}},
		{name: "one of them runs the program", wantNone: true, g: Goal{SuccessCriteria: []Criterion{
			func() Criterion {
				c := crit(Happy, true, base(CriterionFail))
				c.Channel, c.Check = ChannelCommand, Check{Run: "grep -c 'func Mul' calc/calc.go"}
				return c
			}(), func() Criterion {
				c := crit(Edge, true, base(CriterionFail))
				c.Channel, c.Check = ChannelCommand, Check{Run: "go run ./cmd/calc mul 2 3"}
				return c
			}(), crit(Regression, true, base(CriterionPass))}}},
		{name: "a person's criterion is not judged", wantNone: true, g: Goal{SuccessCriteria: []Criterion{
			crit(Happy, true, &BaseResult{Status: CriterionPending, NotRun: "added by a person"}), crit(Regression, true, base(CriterionPass))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := BaseProblems("goals[0]", tc.g)
			if tc.wantNone {
				if len(ps) > 0 {
					t.Fatalf("want no problem, got %v", ps)
				}
				return
			}
			if len(ps) != len(tc.want) {
				t.Fatalf("want %d problems, got %v", len(tc.want), ps)
			}
			for i, w := range tc.want {
				if !strings.Contains(ps[i].String(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, ps[i], w)
				}
			}
		})
	}
}

func TestBaseLine(t *testing.T) {
	for _, tc := range []struct {
		c    Criterion
		want string
	}{
		{Criterion{Expect: FailToPass, Base: &BaseResult{Status: CriterionFail}}, "fail on the base tree (fail to pass, as it must)"},
		{Criterion{Expect: FailToPass, Base: &BaseResult{Status: CriterionPass}}, "pass on the base tree (fail to pass, it must fail there)"},
		{Criterion{Expect: PassToPass, Base: &BaseResult{Status: CriterionPass}}, "pass on the base tree (pass to pass, as it must)"},
		{Criterion{Expect: PassToPass, Base: &BaseResult{NotRun: "added by a person"}}, "not run on the base: added by a person"},
		{Criterion{}, ""},
	} {
		if got := BaseLine(tc.c); got != tc.want {
			t.Errorf("BaseLine = %q, want %q", got, tc.want)
		}
	}
}

func TestProposalSizeLimits(t *testing.T) {
	good := func() ProposedGoal {
		zero := 0
		return ProposedGoal{Title: "t", Objective: "o", Criteria: []ProposedCriterion{
			{Scenario: "s", UserModel: Happy, Channel: ChannelCommand, Check: Check{Run: "./calc 2 3", ExpectStdout: "^5$"}, ExpectedEvidence: "e"},
			{Scenario: "s", UserModel: Edge, Channel: ChannelCommand, Check: Check{Run: "./calc 0 0", ExpectStdout: "^0$"}, ExpectedEvidence: "e"},
			{Scenario: "s", UserModel: Regression, Channel: ChannelCommand, Check: Check{Run: "./calc", ExpectExit: &zero}, ExpectedEvidence: "e"},
		}}
	}
	if ps := (Proposal{Goals: []ProposedGoal{good()}}).Validate(); len(ps) > 0 {
		t.Fatalf("the good proposal is refused: %v", ps)
	}
	for _, tc := range []struct {
		name  string
		edit  func(*ProposedGoal)
		where string
	}{
		{"huge title", func(g *ProposedGoal) { g.Title = strings.Repeat("x", MaxTitle+1) }, "goals[0].title"},
		{"title of two lines", func(g *ProposedGoal) { g.Title = "a\nb" }, "goals[0].title"},
		{"huge objective", func(g *ProposedGoal) { g.Objective = strings.Repeat("x", MaxObjective+1) }, "goals[0].objective"},
		{"huge scenario", func(g *ProposedGoal) { g.Criteria[0].Scenario = strings.Repeat("x", MaxText+1) }, "goals[0].criteria[0].scenario"},
		{"huge run", func(g *ProposedGoal) { g.Criteria[1].Check.Run = "./calc " + strings.Repeat("1", MaxScript) }, "goals[0].criteria[1].check.run"},
		{"huge pattern", func(g *ProposedGoal) { g.Criteria[0].Check.ExpectStdout = strings.Repeat("a", MaxPattern+1) }, "goals[0].criteria[0].check.expect_stdout"},
		{"too many criteria", func(g *ProposedGoal) {
			for len(g.Criteria) <= MaxCriteria {
				g.Criteria = append(g.Criteria, g.Criteria[0])
			}
		}, "goals[0].criteria"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := good()
			tc.edit(&g)
			ps := (Proposal{Goals: []ProposedGoal{g}}).Validate()
			found := false
			for _, p := range ps {
				if p.Where == tc.where && (strings.Contains(p.What, "at most") || strings.Contains(p.What, "one line")) {
					found = true
				}
			}
			if !found {
				t.Fatalf("want a size problem at %s, got %v", tc.where, ps)
			}
		})
	}
}

func TestReadsOnly(t *testing.T) {
	for _, tc := range []struct {
		ch   Channel
		run  string
		want bool
	}{
		{ChannelCommand, "grep -c 'return a + b' calc/calc.go", true},
		{ChannelCommand, "cat calc.go | grep Mul | wc -l", true},
		{ChannelCommand, "test -f calc/mul.go && grep -q Mul calc/mul.go", true},
		{ChannelCommand, "go build ./... && go vet ./...", true},
		{ChannelCommand, "/usr/bin/grep -c x f", true},
		{ChannelCommand, "go run ./cmd/calc mul 2 3", false},
		{ChannelCommand, "go test -run TestMul ./calc", false},
		{ChannelCommand, "python3 calc.py mul 2 3 | grep -x 6", false},
		{ChannelCommand, "./calc mul 2 3", false},
		{ChannelCommand, "$PROG mul 2 3", false},
		{ChannelCommand, "grep -q -- --json README.md", false},
		{ChannelCommand, "grep -c 'Mul' docs/calc.md NOTES.txt", false},
		{ChannelCommand, "grep -rc Mul .", true},
		{ChannelCommand, "grep -c Mul README.md calc.go", true},
		{ChannelHTTP, "", false},
	} {
		c := Check{Run: tc.run}
		if got := ReadsOnly(tc.ch, c); got != tc.want {
			t.Errorf("ReadsOnly(%s, %q) = %v, want %v", tc.ch, tc.run, got, tc.want)
		}
	}
}
