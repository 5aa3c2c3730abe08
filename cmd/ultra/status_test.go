package main

import (
	"strings"
	"testing"

	"github.com/ultra-dev/ultra/internal/agent"
)

func TestStatusLineSaysTheReasonOnce(t *testing.T) {
	for _, c := range []struct{ status, reason, want string }{
		{"interrupted", "interrupted", "status   interrupted\n"},
		{"escalated", "retries exhausted", "status   escalated: retries exhausted\n"},
		{"complete", "", "status   complete\n"},
	} {
		var b strings.Builder
		printStatus(&b, &agent.Status{ID: "r", Status: c.status, Reason: c.reason})
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s/%s:\n%s", c.status, c.reason, b.String())
		}
	}
}

func TestClipKeepsWhatFits(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"12345", 5, "12345"},
		{"123456", 5, "1234…"},
		{"a\x1b[31mb\n c", 10, "ab c"},
	} {
		if got := clip(c.s, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
