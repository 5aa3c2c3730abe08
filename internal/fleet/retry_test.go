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
		name    string
		earlier []rivertype.AttemptError
		failed  bool
		want    time.Duration
	}{
		{"rescued", nil, false, 0},
		{"rescued after failing", []rivertype.AttemptError{failed, failed}, false, 0},
		{"failed once", nil, true, 30 * time.Second},
		{"failed twice", []rivertype.AttemptError{failed}, true, 2 * time.Minute},
		{"failed three times", []rivertype.AttemptError{failed, failed}, true, 8 * time.Minute},
		{"failed four times", []rivertype.AttemptError{failed, failed, failed}, true, 32 * time.Minute},
		{"failed after a rescue", []rivertype.AttemptError{rescued}, true, 30 * time.Second},
		{"failed after a failure and a rescue", []rivertype.AttemptError{failed, rescued}, true, 2 * time.Minute},
		{"many failures are capped", []rivertype.AttemptError{failed, failed, failed, failed, failed, failed, failed}, true, 30 * time.Second << 8},
	} {
		if got := retryAfter(c.earlier, c.failed); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
