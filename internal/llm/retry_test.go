package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

type flaky struct {
	errs  []error
	calls int
}

func (f *flaky) Name() string { return "flaky" }
func (f *flaky) Stream(context.Context, Request, func(Delta)) (*Response, error) {
	f.calls++
	if f.calls <= len(f.errs) {
		return nil, f.errs[f.calls-1]
	}
	return &Response{Text: "ok"}, nil
}

func TestRetrying(t *testing.T) {
	rate := &Error{Provider: "x", StatusCode: 429, Retryable: true, RetryAfter: 3 * time.Second}
	boom := &Error{Provider: "x", StatusCode: 500, Retryable: true}
	auth := &Error{Provider: "x", StatusCode: 401}
	cases := []struct {
		name    string
		errs    []error
		retries int
		calls   int
		ok      bool
		waits   []time.Duration
	}{
		{"recovers after 429 and 500", []error{rate, boom}, 4, 3, true, []time.Duration{3 * time.Second, 2 * time.Second}},
		{"gives up", []error{boom, boom, boom}, 2, 3, false, nil},
		{"401 is not retried", []error{auth}, 4, 1, false, nil},
		{"plain errors are not retried", []error{errors.New("x")}, 4, 1, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &flaky{errs: c.errs}
			var waits []time.Duration
			var seen []int
			p := Retrying(f, RetryPolicy{Retries: c.retries, Base: time.Second,
				OnRetry: func(a int, _ error, _ time.Duration) { seen = append(seen, a) },
				Sleep:   func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
			resp, err := p.Stream(context.Background(), Request{}, nil)
			if (err == nil) != c.ok || f.calls != c.calls || len(seen) != c.calls-1 {
				t.Fatalf("err %v, calls %d, retries seen %v", err, f.calls, seen)
			}
			if c.ok && resp.Text != "ok" {
				t.Fatal(resp)
			}
			if c.waits != nil {
				if waits[0] != c.waits[0] {
					t.Fatalf("retry-after not honoured: %v", waits)
				}
				// second wait: base·2 with ±25% jitter
				if waits[1] < 1500*time.Millisecond || waits[1] > 2500*time.Millisecond {
					t.Fatalf("backoff %v", waits[1])
				}
			}
		})
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &flaky{errs: []error{&Error{Retryable: true}, &Error{Retryable: true}}}
	p := Retrying(f, RetryPolicy{Retries: 5, Base: time.Hour})
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := p.Stream(ctx, Request{}, nil); !errors.Is(err, context.Canceled) || f.calls != 1 {
		t.Fatalf("err %v calls %d", err, f.calls)
	}
}

func TestBackoff(t *testing.T) {
	cases := []struct {
		attempt int
		after   time.Duration
		j       float64
		want    time.Duration
	}{
		{0, 0, 0.5, time.Second},
		{1, 0, 0.5, 2 * time.Second},
		{3, 0, 0, 6 * time.Second},
		{10, 0, 0.5, 30 * time.Second},
		{0, 90 * time.Second, 0.5, 30 * time.Second},
		{0, 5 * time.Second, 0.9, 5 * time.Second},
	}
	for _, c := range cases {
		if got := Backoff(time.Second, 30*time.Second, c.attempt, c.after, c.j); got != c.want {
			t.Errorf("Backoff(%d, %v, %v) = %v, want %v", c.attempt, c.after, c.j, got, c.want)
		}
	}
}
