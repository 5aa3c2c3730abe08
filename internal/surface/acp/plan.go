package acp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ultra-dev/ultra/internal/event"
)

// goalsFile is what an editor is shown of `ultra goals RUN --json`.
type goalsFile struct {
	Goals []struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Status   string `json:"status"`
		Criteria []struct {
			ID        string `json:"id"`
			Scenario  string `json:"scenario"`
			Essential bool   `json:"essential"`
			Status    string `json:"status"`
		} `json:"successCriteria"`
	} `json:"goals"`
}

// PlanEntries are a run's goals and their criteria as ACP plan entries,
// from the text of `ultra goals RUN --json`: a goal is in progress or
// completed as ultra records it; a criterion is completed once it passed.
func PlanEntries(goalsJSON []byte) ([]sdk.PlanEntry, error) {
	var f goalsFile
	if err := json.Unmarshal(goalsJSON, &f); err != nil {
		return nil, fmt.Errorf("ultra goals --json: %v", err)
	}
	out := []sdk.PlanEntry{}
	for _, g := range f.Goals {
		st := sdk.PlanEntryStatusPending
		switch g.Status {
		case "in_progress":
			st = sdk.PlanEntryStatusInProgress
		case "complete":
			st = sdk.PlanEntryStatusCompleted
		}
		title := g.Title
		if g.Status == "failed" || g.Status == "blocked" || g.Status == "needs_user_decision" {
			title += " (" + g.Status + ")"
		}
		out = append(out, sdk.PlanEntry{Content: event.Printable(g.ID + " " + title), Priority: sdk.PlanEntryPriorityHigh, Status: st})
		for _, c := range g.Criteria {
			cs := sdk.PlanEntryStatusPending
			switch c.Status {
			case "pass":
				cs = sdk.PlanEntryStatusCompleted
			case "fail", "blocked":
				if st == sdk.PlanEntryStatusInProgress {
					cs = sdk.PlanEntryStatusInProgress
				}
			}
			pri := sdk.PlanEntryPriorityMedium
			if c.Essential {
				pri = sdk.PlanEntryPriorityHigh
			}
			text := c.ID + " " + c.Scenario
			if c.Status == "fail" || c.Status == "blocked" {
				text += " (" + c.Status + ")"
			}
			out = append(out, sdk.PlanEntry{Content: event.Printable(text), Priority: pri, Status: cs})
		}
	}
	return out, nil
}

// sendPlan sends the goals of f's run as a plan update, when it has any.
func (s *session) sendPlan(ctx context.Context, f *Fold) {
	switch f.Axes.Mode {
	case "chat", "research", "review":
		return // no goals: no branch of their own
	}
	out, code := s.proj.Backend.Exec(context.WithoutCancel(ctx), []string{"goals", f.Run, "--json"})
	if code != 0 {
		return
	}
	entries, err := PlanEntries([]byte(out))
	if err != nil || len(entries) == 0 {
		return
	}
	s.a.send(ctx, s.rec.ID, sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{Entries: entries}})
}
