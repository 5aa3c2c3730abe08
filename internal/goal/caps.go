package goal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// signatureRules turn the parts of a failure text that change from run to
// run into placeholders, in order: temporary paths, UUIDs, hex ids and
// addresses, times, host ports, durations, then every other number.
var signatureRules = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?:/private)?/(?:tmp|var/tmp|var/folders|dev/shm)(?:/[^\s'":,;)\]}]*)?`), "<tmp>"},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	{regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), "<hex>"},
	// runs of six or more hex digits with a digit and a letter (commit
	// ids, digests), not plain words like "decade" nor plain numbers
	{regexp.MustCompile(`(?i)\b(?:[0-9a-f]*[0-9][0-9a-f]*[a-f]|[0-9a-f]*[a-f][0-9a-f]*[0-9])[0-9a-f]*\b`), "<hex?>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`), "<time>"},
	{regexp.MustCompile(`(?i)(localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]):\d{1,5}\b`), "${1}:<port>"},
	{regexp.MustCompile(`\b(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h))+\b`), "<dur>"},
	{regexp.MustCompile(`\d+`), "N"},
	{regexp.MustCompile(`\s+`), " "},
}

// minHexLen is how long a run of hex digits must be to count as an id;
// shorter ones ("1a") are left to the number rule.
const minHexLen = 6

// NormalizeFailure is a failure text with what changes between runs (temp
// paths, ids, times, ports, durations, numbers) replaced by placeholders
// and white space folded.
func NormalizeFailure(reason string) string {
	s := reason
	for _, r := range signatureRules {
		if r.with != "<hex?>" {
			s = r.re.ReplaceAllString(s, r.with)
			continue
		}
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			if len(m) < minHexLen {
				return m
			}
			return "<hex>"
		})
	}
	return strings.TrimSpace(s)
}

// FailureSignature is a stable short signature of a failure: the same
// failure twice gives the same signature even when temp paths, ids,
// ports, durations or numbers differ. It is 16 hex digits of a sha256.
func FailureSignature(status CriterionStatus, reason string) string {
	sum := sha256.Sum256([]byte(string(status) + "\n" + NormalizeFailure(reason)))
	return hex.EncodeToString(sum[:8])
}

// Record stores the result of running criterion critID's check: its
// status, evidence and capture time, and the failure counters: a pass
// clears them; a fail or blocked result with the same signature as the
// last failure counts one more, another signature starts again at one;
// a pending status leaves them. It reports whether the criterion exists.
func (g *Goal) Record(critID string, st CriterionStatus, sig string, ev *Evidence, now time.Time) bool {
	c := g.Criterion(critID)
	if c == nil {
		return false
	}
	c.Status = st
	c.CapturedEvidence = ev
	at := now
	c.CapturedAt = &at
	switch st {
	case CriterionPass:
		c.LastFailure, c.SameFailures = "", 0
	case CriterionFail, CriterionBlocked:
		if c.SameFailures > 0 && c.LastFailure == sig {
			c.SameFailures++
		} else {
			c.LastFailure, c.SameFailures = sig, 1
		}
	}
	g.UpdatedAt = now
	return true
}

// Verdict is what Judge decides about a goal.
type Verdict struct {
	Complete bool
	Failed   bool
	// Reason: why it is complete, the diagnosis of a failure, or why it
	// goes on.
	Reason string
	// Missing lists the essential criteria not passing yet, each with
	// why, and the gate when it did not pass.
	Missing []string
}

// Judge decides a goal from its criteria and whether the gate passed.
// It is complete only when the gate passed and every essential criterion
// that is not superseded passed (and there is at least one). Otherwise
// it failed when an essential, live criterion failed MaxSameFailures
// times in a row the same way (the reason is a diagnosis naming the
// criterion, its scenario and the failure), or when the goal used
// MaxCycles cycles (the reason names them and what still fails).
// Otherwise it goes on, Missing saying what is left.
func (g Goal) Judge(gatePassed bool) Verdict {
	var v Verdict
	essential := 0
	for _, c := range g.SuccessCriteria {
		if !live(c) || !c.Essential {
			continue
		}
		essential++
		if c.Status != CriterionPass {
			v.Missing = append(v.Missing, missing(c))
		}
	}
	if essential == 0 {
		v.Missing = append(v.Missing, "no essential criterion is left to decide the goal: a person must add or restore one")
	}
	if !gatePassed {
		v.Missing = append(v.Missing, "the gate did not pass")
	}
	if len(v.Missing) == 0 {
		v.Complete = true
		v.Reason = fmt.Sprintf("the gate passed and all %d essential criteria passed", essential)
		return v
	}
	for _, c := range g.SuccessCriteria {
		if live(c) && c.Essential && c.Status != CriterionPass && c.SameFailures >= MaxSameFailures {
			v.Failed = true
			v.Reason = fmt.Sprintf("criterion %s (%s) failed %d times in a row the same way (signature %s): %s; scenario: %s",
				c.ID, c.UserModel, c.SameFailures, c.LastFailure, summary(c), c.Scenario)
			return v
		}
	}
	if g.Attempt >= MaxCycles {
		v.Failed = true
		v.Reason = fmt.Sprintf("used %d of %d build/verify cycles and still not complete: %s", g.Attempt, MaxCycles, strings.Join(v.Missing, "; "))
		return v
	}
	if !gatePassed {
		v.Reason = fmt.Sprintf("the tests must pass before the criteria run; cycle %d of %d: iterate", g.Attempt, MaxCycles)
		return v
	}
	v.Reason = fmt.Sprintf("%d of %d essential criteria pass; cycle %d of %d: iterate", essential-countCriteria(v.Missing), essential, g.Attempt, MaxCycles)
	return v
}

// countCriteria counts the Missing items that are criteria.
func countCriteria(missing []string) int {
	n := 0
	for _, m := range missing {
		if strings.HasPrefix(m, "criterion ") {
			n++
		}
	}
	return n
}

// missing says why criterion c is not passing.
func missing(c Criterion) string {
	switch c.Status {
	case CriterionPending, "":
		return fmt.Sprintf("criterion %s (%s): not run yet", c.ID, c.UserModel)
	}
	return fmt.Sprintf("criterion %s (%s): %s: %s", c.ID, c.UserModel, c.Status, summary(c))
}

// summary is the captured evidence's summary, or a note that there is
// none.
func summary(c Criterion) string {
	if c.CapturedEvidence != nil && strings.TrimSpace(c.CapturedEvidence.Summary) != "" {
		return strings.TrimSpace(c.CapturedEvidence.Summary)
	}
	return "no evidence captured"
}
