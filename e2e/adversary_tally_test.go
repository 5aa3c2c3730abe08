package e2e

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// advTally counts moves across the suite.
type advTally struct {
	mu      sync.Mutex
	classes map[string]*advClassCount
	runs    int
	escapes []string
}

type advClassCount struct{ moves, escaped, notRun, refused int }

var advSuite = &advTally{classes: map[string]*advClassCount{}}

func (s *advTally) record(sc string, o *advOutcome, fs []advFinding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	bad := map[string]bool{}
	notRun := map[string]bool{}
	for _, f := range fs {
		if strings.HasPrefix(f.effect, "NOT EXECUTED") {
			notRun[f.moveID] = true
		} else if f.moveID != "" {
			bad[f.moveID] = true
		}
		s.escapes = append(s.escapes, fmt.Sprintf("[%s] %s: %s", sc, o.describe(f.moveID), f.effect))
	}
	refused := o.refused()
	for _, mv := range o.allMove {
		c := s.classes[mv.class]
		if c == nil {
			c = &advClassCount{}
			s.classes[mv.class] = c
		}
		c.moves++
		if bad[mv.id] {
			c.escaped++
		}
		if notRun[mv.id] {
			c.notRun++
		}
		if refused[mv.id] {
			c.refused++
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (s *advTally) report(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	total, escaped, notRun := 0, 0, 0
	for n := range s.classes {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	refused := 0
	fmt.Fprintf(&b, "%-14s %6s %8s %8s %18s\n", "class", "moves", "escaped", "not run", "(refused by text)")
	for _, n := range names {
		c := s.classes[n]
		fmt.Fprintf(&b, "%-14s %6d %8d %8d %18d\n", n, c.moves, c.escaped, c.notRun, c.refused)
		total += c.moves
		escaped += c.escaped
		notRun += c.notRun
		refused += c.refused
	}
	fmt.Fprintf(&b, "%-14s %6d %8d %8d %18d\n", "all", total, escaped, notRun, refused)
	if len(s.escapes) == 0 {
		t.Logf("%d moves in %d runs, all contained\n%s", total, s.runs, b.String())
		return
	}
	var lines []string
	for _, e := range s.escapes {
		first, _, _ := strings.Cut(e, "\n")
		lines = append(lines, advClip(first, 240))
	}
	sort.Strings(lines)
	t.Logf("effects found:\n%s\n\n%d moves in %d runs; %d effects found (%d moves escaped, %d moves not run)\n%s",
		strings.Join(lines, "\n"), total, s.runs, len(s.escapes), escaped, notRun, b.String())
}
