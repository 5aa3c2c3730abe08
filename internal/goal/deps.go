package goal

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// goalRef is how a goal names another: its number (G001, the first goal
// proposed), or its whole id (G001-slug).
var goalRef = regexp.MustCompile(`^G(\d{1,4})(-[a-z0-9-]*)?$`)

// GoalNumber is the number a reference to a goal names (G001 and
// G001-slug are 1), or 0 when ref is not one.
func GoalNumber(ref string) int {
	m := goalRef.FindStringSubmatch(strings.TrimSpace(ref))
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n
}

// dependencyProblems checks the depends_on of a proposal's goals: each
// names another goal of the proposal by its number, and together they
// form no cycle (a cycle could never start). where names goal i.
func dependencyProblems(goals []ProposedGoal, where func(i int) string) []Problem {
	var ps []Problem
	edges := make([][]int, len(goals))
	for i, g := range goals {
		for j, ref := range g.DependsOn {
			at := fmt.Sprintf("%s.depends_on[%d]", where(i), j)
			n := GoalNumber(ref)
			switch {
			case n == 0:
				ps = append(ps, Problem{at, fmt.Sprintf("%q is not a goal's number: name a goal of this proposal as G001 (the first), G002, …", ref)})
			case n > len(goals):
				ps = append(ps, Problem{at, fmt.Sprintf("%s names no goal: the proposal has %d", ref, len(goals))})
			case n == i+1:
				ps = append(ps, Problem{at, "a goal cannot depend on itself"})
			case slices.Contains(edges[i], n-1):
				ps = append(ps, Problem{at, fmt.Sprintf("%s is named twice", ref)})
			default:
				edges[i] = append(edges[i], n-1)
			}
		}
	}
	if cycle := findCycle(edges); cycle != nil {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = fmt.Sprintf("G%03d", i+1)
		}
		ps = append(ps, Problem{where(cycle[0]) + ".depends_on", "the dependencies form a cycle (" + strings.Join(names, " → ") +
			"), so none of these goals could ever start: drop one of them"})
	}
	return ps
}

// findCycle returns one cycle of the graph whose node i depends on each
// of edges[i], as the nodes in order with the first repeated at the end;
// nil when there is none.
func findCycle(edges [][]int) []int {
	const (
		unseen = iota
		open
		closed
	)
	state := make([]int, len(edges))
	var stack []int
	var found []int
	var visit func(i int) bool
	visit = func(i int) bool {
		state[i] = open
		stack = append(stack, i)
		for _, j := range edges[i] {
			switch state[j] {
			case open:
				at := slices.Index(stack, j)
				found = append(slices.Clone(stack[at:]), j)
				return true
			case unseen:
				if visit(j) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = closed
		return false
	}
	for i := range edges {
		if state[i] == unseen && visit(i) {
			return found
		}
	}
	return nil
}

// resolveDependencies turns the proposal's references (numbers) into the
// ids of goals; references Validate refused are left out.
func resolveDependencies(goals []Goal, proposed []ProposedGoal) {
	for i, pg := range proposed {
		for _, ref := range pg.DependsOn {
			n := GoalNumber(ref)
			if n < 1 || n > len(goals) || n == i+1 || slices.Contains(goals[i].DependsOn, goals[n-1].ID) {
				continue
			}
			goals[i].DependsOn = append(goals[i].DependsOn, goals[n-1].ID)
		}
	}
}

// Order is the order goals are worked in: the list's, except that a
// goal comes after every goal it depends on. It is stable: of the goals
// whose dependencies are placed, the first in the list comes next. A
// dependency on a goal that is not in the list is ignored; goals caught
// in a cycle (which validation refuses) come last, in list order.
func Order(goals []Goal) []int {
	index := make(map[string]int, len(goals))
	for i, g := range goals {
		index[g.ID] = i
	}
	placed := make([]bool, len(goals))
	out := make([]int, 0, len(goals))
	for len(out) < len(goals) {
		next := -1
		for i, g := range goals {
			if placed[i] {
				continue
			}
			ready := true
			for _, d := range g.DependsOn {
				if j, ok := index[d]; ok && !placed[j] && j != i {
					ready = false
					break
				}
			}
			if ready {
				next = i
				break
			}
		}
		if next < 0 {
			for i := range goals {
				if !placed[i] {
					placed[i] = true
					out = append(out, i)
				}
			}
			break
		}
		placed[next] = true
		out = append(out, next)
	}
	return out
}

// Waiting lists the dependencies of g that are not complete yet (a
// dependency on a goal not in f counts as met). A goal starts in a
// parallel run only when none is left.
func (f *File) Waiting(g *Goal) []string {
	var out []string
	for _, d := range g.DependsOn {
		if dep := f.Goal(d); dep != nil && dep.Status != Complete {
			out = append(out, d)
		}
	}
	return out
}
