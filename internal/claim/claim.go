// Package claim holds the intent claims of a parallel run's workers: what
// a worker says it will change (files and, where it can say, line ranges
// or symbols), whether two claims overlap, who waits on whom, and whether
// a change stays inside what its worker claimed. It is pure: no files, no
// processes, no clock; the store keeps the claims and the agent acts on
// these answers.
//
// A claim is a courtesy and a rule at once: the claim tool tells a
// worker early that another holds what it wants, and ultra refuses to
// merge a goal's commit whose change reaches outside the claims its
// worker held (Outside), whatever the worker ran to make it.
package claim

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// Claim is one worker's claim on a file, or on lines of it.
type Claim struct {
	ID     int64  `json:"id,omitempty"` // the store's id (0 before it is stored)
	Run    string `json:"run"`          // the parallel run the workers belong to
	Worker string `json:"worker"`       // the worker's run
	Goal   string `json:"goal"`
	Path   string `json:"path"` // a repository path, cleaned (Normalize)
	// Start and End are lines, 1-based and inclusive, of the file as the
	// worker's tree holds it; both 0: the whole file.
	Start int `json:"start,omitempty"`
	End   int `json:"end,omitempty"`
	// Symbol is the symbol the worker named, when the lines come from one.
	Symbol string `json:"symbol,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Whole reports that c claims the whole file.
func (c Claim) Whole() bool { return c.Start == 0 && c.End == 0 }

// String is c as people read it: "a/b.go", "a/b.go:10-50", "a/b.go:10-50 (Foo)".
func (c Claim) String() string {
	s := c.Path
	if !c.Whole() {
		s += fmt.Sprintf(":%d-%d", c.Start, c.End)
	}
	if c.Symbol != "" {
		s += " (" + c.Symbol + ")"
	}
	return s
}

// Overlaps reports that a and b claim something in common: the same file,
// and either claims it whole or their lines meet.
func Overlaps(a, b Claim) bool {
	if a.Path != b.Path {
		return false
	}
	if a.Whole() || b.Whole() {
		return true
	}
	return a.Start <= b.End && b.Start <= a.End
}

// Covers reports that c holds every line of want.
func Covers(c, want Claim) bool {
	if c.Path != want.Path {
		return false
	}
	if c.Whole() {
		return true
	}
	return !want.Whole() && c.Start <= want.Start && want.End <= c.End
}

// Conflict is a claim a worker wants that overlaps one another worker
// holds.
type Conflict struct {
	Want Claim `json:"want"`
	Held Claim `json:"held"`
}

// String names the holder, as the model and people read it.
func (c Conflict) String() string {
	return fmt.Sprintf("%s overlaps %s, held by worker %s for goal %s", c.Want, c.Held, c.Held.Worker, c.Held.Goal)
}

// Conflicts are the overlaps of want (one worker's) with held, the claims
// every worker of the run holds now; a worker's own claims never
// conflict with it.
func Conflicts(want, held []Claim) []Conflict {
	var out []Conflict
	for _, w := range want {
		for _, h := range held {
			if h.Worker != w.Worker && Overlaps(w, h) {
				out = append(out, Conflict{Want: w, Held: h})
			}
		}
	}
	return out
}

// Holders are the workers that hold what the conflicts want, each once,
// in order.
func Holders(cs []Conflict) []string {
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c.Held.Worker) {
			out = append(out, c.Held.Worker)
		}
	}
	return out
}

// New are the claims of want that worker does not hold already (a claim
// covered by one of its own adds nothing).
func New(want, own []Claim) []Claim {
	var out []Claim
	for _, w := range want {
		if !slices.ContainsFunc(own, func(o Claim) bool { return o.Worker == w.Worker && Covers(o, w) }) {
			out = append(out, w)
		}
	}
	return out
}

// Normalize cleans a path a worker claims: relative to the repository,
// slash-separated, inside it, and never ultra's records or git's own
// files (no worker changes those).
func Normalize(p string) (string, error) {
	p = strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	if p == "" {
		return "", fmt.Errorf("the path is empty")
	}
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("%s is absolute: name it relative to the repository's root", p)
	}
	c := path.Clean(p)
	switch {
	case c == "." || c == ".." || strings.HasPrefix(c, "../"):
		return "", fmt.Errorf("%s is not a file inside the repository", p)
	case c == ".ultra" || strings.HasPrefix(c, ".ultra/"):
		return "", fmt.Errorf("%s is ultra's own: no worker writes it", p)
	case c == ".git" || strings.HasPrefix(c, ".git/"):
		return "", fmt.Errorf("%s is git's own: no worker writes it", p)
	}
	return c, nil
}

// WaitCycle says whether worker waiting on holders would close a cycle of
// waits (each worker of waits waits on those it lists): the cycle, from
// worker back to it, or nil. A claim that would close one is refused: the
// workers in it could never go on.
func WaitCycle(waits map[string][]string, worker string, holders []string) []string {
	seen := map[string]bool{}
	var path []string
	var walk func(w string) bool
	walk = func(w string) bool {
		if w == worker {
			return true
		}
		if seen[w] {
			return false
		}
		seen[w] = true
		path = append(path, w)
		for _, next := range waits[w] {
			if walk(next) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	for _, h := range holders {
		path = path[:0]
		if walk(h) {
			return append(append([]string{worker}, path...), worker)
		}
	}
	return nil
}
