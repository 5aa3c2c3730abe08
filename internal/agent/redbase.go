package agent

import (
	"fmt"
	"sort"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/gate/gatefile"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/verify/report"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// noteRedBase says, once the baseline is in, that tests already fail on
// the base tree: the gate lets a tree through only when every test
// passes, those included, so a person learns it at the start (not after
// the first verification) and the model plans for it.
func (r *runner) noteRedBase() {
	if r.st.RedBaseSaid || r.baselineDone == nil {
		return
	}
	select {
	case <-r.baselineDone:
	default:
		return // still measured
	}
	r.st.RedBaseSaid = true
	b, err := gatefile.ReadBaseline(RunDir(r.o.StateRoot, r.row.ID))
	if err != nil || b == nil || !b.Evaluated || b.Failed+b.Errors == 0 {
		return
	}
	var failing []string
	for name, st := range b.Tests {
		if st == report.Failed || st == report.Error {
			failing = append(failing, name)
		}
	}
	sort.Strings(failing)
	what := fmt.Sprintf("%d test(s) already fail on the base tree", b.Failed+b.Errors)
	if len(failing) > 0 {
		what += " (" + workspace.ListSome(failing, 5) + ")"
	}
	if r.st.Checkpoint != "" || r.st.Phase.Phase == phase.Cleaning || r.st.Phase.Phase == phase.Complete {
		// The baseline came in after the gate passed (it runs beside
		// the model's work): those tests pass now, nothing to warn of
		// (the baseline event counts them).
		return
	}
	r.emit(event.Warning, event.WarningData{Message: what + ": the gate passes only when every test passes, these too; the run fixes them, or a person accepts the verdict with ultra gate waive " + r.row.ID})
	r.notes = append(r.notes, "Note from ultra: "+what+". The gate lets a tree through only when every test passes, these included: plan to make them pass too (or say why they cannot, and a person decides).")
}
