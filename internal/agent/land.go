package agent

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/ultra-dev/ultra/internal/gate"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/verify"
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
	d, res, err := o.judgeTree(ctx, row, st, req, input, nil)
	if err != nil {
		return d, res, "", err
	}
	path, err := gatefile.Write(runDir, d)
	return d, res, path, err
}
