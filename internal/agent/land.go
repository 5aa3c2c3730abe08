package agent

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/check"
	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// VerifyTree runs a stopped run's tests on its worktree as it is now and
// records the gate's decision as the run's next gate file (landing uses
// it for the merge of a base that moved).
func VerifyTree(ctx context.Context, o Options, row *store.Run) (gate.Decision, *verify.Result, string, error) {
	o = o.withDefaults()
	st, err := decodeState(row)
	if err != nil {
		return gate.Decision{}, nil, "", err
	}
	runDir := RunDir(o.StateRoot, row.ID)
	input, err := gateInput(ctx, runDir, row.ID, row.Workdir, o.Now())
	if err != nil {
		return gate.Decision{}, nil, "", err
	}
	req := verify.Request{Commands: st.VerifyCommands, Timeout: o.VerifyTimeout,
		LogDir: filepath.Join(runDir, "verify", fmt.Sprint(input.N))}
	d, res, err := o.judgeTree(ctx, row, st, req, input, nil, nil)
	if err != nil {
		return d, res, "", err
	}
	path, err := gatefile.Write(runDir, d)
	return d, res, path, err
}

// CriteriaOn runs every criterion of every goal of a run on tree (the
// merge that landing made) and says which essential ones do not pass:
// landing a run whose base moved must keep what its goals proved. The
// results are not recorded in the run's ledger (the run is finished);
// their evidence goes under evidence/RUN/…/land-TREE.
func CriteriaOn(ctx context.Context, o Options, row *store.Run, tree string) (failed []string, err error) {
	o = o.withDefaults()
	st, err := decodeState(row)
	if err != nil || st.Goals == nil {
		return nil, err
	}
	// The criteria come from goals.json: only from one the ledger vouches for.
	if err := checkGoals(row.Workdir, st.Goals.records(), st.Goals.LedgerSeq, st.Goals.LedgerHash, false); err != nil {
		return nil, fmt.Errorf("the run's goal records do not check out: %w", err)
	}
	r, err := newRunner(ctx, o, row, st, nil)
	if err != nil {
		return nil, err
	}
	if r.goalsBroken != nil {
		return nil, r.goalsBroken
	}
	if r.goals == nil || r.goals.file == nil {
		return nil, nil
	}
	label := "land-" + workspace.Short(tree)
	var ts []target
	for gi := range r.goals.file.Goals {
		g := &r.goals.file.Goals[gi]
		if g.Status == goal.Blocked {
			continue
		}
		for ci := range g.SuccessCriteria {
			if c := &g.SuccessCriteria[ci]; c.Superseded == "" && c.Essential {
				ts = append(ts, target{g, c})
			}
		}
	}
	r.runChecks(ctx, tree, ts, label, "check", func(i int, res check.Result) {
		if c := ts[i].c; res.Status != goal.CriterionPass {
			failed = append(failed, fmt.Sprintf("%s %s: %s", c.ID, res.Status, oneLine(firstNonEmpty(res.Reason, res.Summary), 200)))
		}
	})
	if ctx.Err() != nil {
		return failed, ctx.Err()
	}
	return failed, nil
}
