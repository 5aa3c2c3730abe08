package fleet

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// A rescued job goes again at once; a job whose run failed to start
// waits longer after each failure, rescues not counted.
func TestRetryAfter(t *testing.T) {
	failed := rivertype.AttemptError{Error: "run R did not start: git clone: exit 128"}
	rescued := rivertype.AttemptError{Error: rescuedError}
	for _, c := range []struct {
		name string
		errs []rivertype.AttemptError
		want time.Duration
	}{
		{"no error", nil, 0},
		{"rescued", []rivertype.AttemptError{rescued}, 0},
		{"failed once", []rivertype.AttemptError{failed}, 30 * time.Second},
		{"failed twice", []rivertype.AttemptError{failed, failed}, 2 * time.Minute},
		{"failed three times", []rivertype.AttemptError{failed, failed, failed}, 8 * time.Minute},
		{"failed four times", []rivertype.AttemptError{failed, failed, failed, failed}, 32 * time.Minute},
		{"rescued after failing", []rivertype.AttemptError{failed, rescued}, 0},
		{"failed after a rescue", []rivertype.AttemptError{rescued, failed}, 30 * time.Second},
		{"many failures are capped", []rivertype.AttemptError{failed, failed, failed, failed, failed, failed, failed}, 30 * time.Second << 8},
	} {
		if got := retryAfter(c.errs); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
