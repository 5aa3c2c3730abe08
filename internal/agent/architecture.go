package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ultra-dev/ultra/internal/event"
)

// Architecture statuses of a review (event.ArchitectureClear, …).
const (
	ArchitectureClear    = event.ArchitectureClear
	ArchitectureConcerns = event.ArchitectureConcerns
	ArchitectureBlocked  = event.ArchitectureBlocked
)

// Architecture is a review's architecture status with its reasons: what
// must change, required unless the status is CLEAR.
type Architecture struct {
	Status  string   `json:"status"`
	Reasons []string `json:"reasons,omitempty"`
}

var architectureFields = []string{"status", "reasons"}

// missingArchitecture is the error of a final review that gives no
// architecture status: the model reads it, nothing is recorded.
const missingArchitecture = `architecture is missing: the final review gives the architecture status with its verdict, ` +
	`architecture: {status: "CLEAR" | "CONCERNS" | "BLOCKED", reasons: ["what must change", …]} (reasons are required unless CLEAR)`

// parseArchitecture validates the review's architecture field: nil for
// null; errors name the field.
func parseArchitecture(raw json.RawMessage) (*Architecture, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf(`architecture must be an object {status: "CLEAR" | "CONCERNS" | "BLOCKED", reasons: [...]}, not %s`, event.Truncate(string(raw), 40))
	}
	if err := unknownFields("architecture", m, architectureFields); err != nil {
		return nil, err
	}
	status, err := optString(m, "status")
	if err != nil {
		return nil, fmt.Errorf("architecture.%v", err)
	}
	a := &Architecture{Status: strings.TrimSpace(status)}
	switch {
	case a.Status == "":
		return nil, fmt.Errorf(`architecture.status is missing: "CLEAR", "CONCERNS" or "BLOCKED"`)
	case !slices.Contains(event.ArchitectureStatuses, a.Status):
		return nil, fmt.Errorf(`architecture.status: %q is not a status ("CLEAR", "CONCERNS" or "BLOCKED")`, a.Status)
	}
	if raw, ok := m["reasons"]; ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("architecture.reasons must be an array of strings, each what must change")
		}
		for i, it := range items {
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return nil, fmt.Errorf("architecture.reasons[%d] must be a string, not %s", i, event.Truncate(string(it), 40))
			}
			if s = strings.TrimSpace(s); s == "" {
				return nil, fmt.Errorf("architecture.reasons[%d] is empty: say what must change", i)
			}
			a.Reasons = append(a.Reasons, s)
		}
	}
	if a.Status != ArchitectureClear && len(a.Reasons) == 0 {
		return nil, fmt.Errorf("architecture.reasons is missing: status %s needs at least one reason, what must change", a.Status)
	}
	return a, nil
}

// ArchitectureStatus is the review's architecture status, "" when it
// gave none.
func (c ReviewCall) ArchitectureStatus() string {
	if c.Architecture == nil {
		return ""
	}
	return c.Architecture.Status
}

// Clean reports whether the review lets the change land as it is: it
// approves and its architecture status is CLEAR (or it gave none).
func (c ReviewCall) Clean() bool { return event.ReviewClean(c.Verdict, c.ArchitectureStatus()) }

// mustChange is what a review that is not clean asks to change: its
// blockers (lines, one each), then each architecture reason unless the
// status is CLEAR.
func mustChange(lines []string, a *Architecture) []string {
	out := slices.Clone(lines)
	if a != nil && a.Status != ArchitectureClear {
		for _, why := range a.Reasons {
			out = append(out, "architecture "+a.Status+": "+oneLine(why, 300))
		}
	}
	return out
}

// verdictWords is a review's verdict in words: "approve, architecture
// CLEAR"; the verdict alone when the review gave no architecture status.
func verdictWords(verdict string, a *Architecture) string {
	if a == nil {
		return verdict
	}
	return verdict + ", architecture " + a.Status
}

// reviewVerdictText is the ledger's line for a final review's verdict:
// the round, the verdict words, the architecture reasons and the
// blockers.
func reviewVerdictText(round int, verdict string, a *Architecture, blockers []string) string {
	s := fmt.Sprintf("round %d: %s", round, verdictWords(verdict, a))
	if a != nil && len(a.Reasons) > 0 {
		var rs []string
		for _, r := range a.Reasons {
			rs = append(rs, oneLine(r, 300))
		}
		s += " (" + strings.Join(rs, "; ") + ")"
	}
	if len(blockers) > 0 {
		s += "; blockers: " + strings.Join(blockers, "; ")
	}
	return s
}
