package goal

import (
	"fmt"
	"strings"
)

// A criterion proves something about a change only if its result depends
// on the change. Before a plan is accepted ultra runs every proposed
// check on the code the run started from (the base tree), contained,
// exactly as it will run it later, and BaseProblems reads those results:
//
//   - fail to pass: a happy, edge or adversarial criterion must not pass
//     on the base tree (a check the base cannot even run counts as
//     failing there); it passes only once the change exists;
//   - pass to pass: a regression criterion, and every criterion of a
//     refactor (a goal that asks for no change of behaviour) that runs
//     the program, must pass on the base tree and keep passing; a
//     refactor's criteria that only read files show the change of its
//     text (documentation, comments) and are fail to pass.
//
// Whatever does not depend on the tree at all (a system fact, a stock
// server, a program that prints a constant) passes on the base and is
// refused by the same rule, however it is written: the trivial-check
// filter (Trivial) is only the early, readable refusal in front of it.

// BaseProblems lists what is wrong with goal g's criteria given their
// results on the base tree (Criterion.Base), each at its place under
// where (goals[0]): a fail-to-pass criterion that already passes there,
// a pass-to-pass criterion that does not, and a goal (not a refactor)
// whose essential criteria include none that fails there and runs
// something (ReadsOnly: a grep of the source shows what the code says,
// not what it does). Criteria
// without a base result, or that a person added without one
// (BaseResult.NotRun), are not judged.
func BaseProblems(where string, g Goal) []Problem {
	var ps []Problem
	showsChange, readsOnly := false, false
	for i, c := range g.SuccessCriteria {
		if !live(c) || c.Base == nil || c.Base.NotRun != "" {
			if live(c) && c.Essential && c.Expect == FailToPass {
				showsChange = true // a person's criterion: not judged here
			}
			continue
		}
		at := fmt.Sprintf("%s.criteria[%d]", where, i)
		ok := Discriminates(c.Expect, c.Base.Status)
		switch {
		case ok && c.Expect == FailToPass && c.Essential && ReadsOnly(c.Channel, c.Check):
			readsOnly = true
		case ok && c.Expect == FailToPass && c.Essential:
			showsChange = true
		case ok:
		case c.Expect == FailToPass:
			ps = append(ps, Problem{at, fmt.Sprintf("already passes on the base tree, before any change (%s): it shows nothing about the change. "+
				"Check what only the changed code does (run what the goal builds, with inputs whose answer changes), or make it user_model \"regression\" if it must keep passing", baseSummary(c.Base))})
		case g.Refactor:
			ps = append(ps, Problem{at, fmt.Sprintf("a refactor's criteria show that behaviour stays the same, so each must pass on the base tree, but this one does not there (%s): fix the check", baseSummary(c.Base))})
		default:
			ps = append(ps, Problem{at, fmt.Sprintf("user_model \"regression\" means it passes on the base tree and keeps passing, but it does not pass there (%s): "+
				"fix the check, or make it happy, edge or adversarial if it shows the change", baseSummary(c.Base))})
		}
	}
	switch {
	case g.Refactor || showsChange || len(ps) > 0:
	case readsOnly:
		ps = append(ps, Problem{where + ".criteria", "the essential criteria that fail on the base tree only read files (grep, cat, test, wc, a build): they show what the code says, not what it does. " +
			"Add an essential one that runs the program, or its tests, and checks what it answers"})
	default:
		ps = append(ps, Problem{where + ".criteria", "no essential criterion fails on the base tree and must pass after the change, so no criterion observes what the goal changes: " +
			"add one that does (a goal that changes no behaviour is a refactor, which only a person declares)"})
	}
	return ps
}

// baseSummary is what a base result says, in one short line.
func baseSummary(b *BaseResult) string {
	s := strings.ToUpper(string(b.Status))
	if b.Summary != "" {
		s += ": " + b.Summary
	}
	if b.Status != CriterionPass && b.Reason != "" && !strings.Contains(b.Summary, b.Reason) {
		s += "; " + b.Reason
	}
	return clip(strings.Join(strings.Fields(s), " "), 300)
}

// BaseLine is a criterion's base result for a person: "fails on the base
// (as it must)", "PASSES on the base (it must not)", "not run on the base
// (why)", or "" when there is none.
func BaseLine(c Criterion) string {
	b := c.Base
	if b == nil {
		return ""
	}
	if b.NotRun != "" {
		return "not run on the base: " + b.NotRun
	}
	want := "must fail there"
	if c.Expect == PassToPass {
		want = "must pass there"
	}
	verdict := "as it must"
	if !Discriminates(c.Expect, b.Status) {
		verdict = "it " + want
	}
	return fmt.Sprintf("%s on the base tree (%s, %s)", b.Status, strings.ReplaceAll(c.Expect, "_", " "), verdict)
}
