package llm

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how a failed request is retried: errors that retrying
// can fix (rate limits, overload, server errors, dropped connections,
// streams cut short) wait with exponential backoff and jitter, or as long
// as the server asked (Retry-After); anything else fails at once.
type RetryPolicy struct {
	Retries int           // retries after the first attempt (0: none)
	Base    time.Duration // first backoff (default 1s)
	Max     time.Duration // longest wait (default 60s)
	// OnRetry, when set, is told about every retry before its wait.
	OnRetry func(attempt int, err error, wait time.Duration)
	// Sleep waits; tests replace it. It returns ctx's error if cancelled.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetries is how many times a request is retried by default.
const DefaultRetries = 4

// Retrying wraps p with retries under policy.
func Retrying(p Provider, policy RetryPolicy) Provider {
	if policy.Base <= 0 {
		policy.Base = time.Second
	}
	if policy.Max <= 0 {
		policy.Max = time.Minute
	}
	if policy.Sleep == nil {
		policy.Sleep = sleepCtx
	}
	return &retrying{p: p, policy: policy}
}

type retrying struct {
	p      Provider
	policy RetryPolicy
}

func (r *retrying) Name() string { return r.p.Name() }

func (r *retrying) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := r.p.Stream(ctx, req, onDelta)
		if err == nil || ctx.Err() != nil || attempt >= r.policy.Retries {
			return resp, err
		}
		var le *Error
		if !errors.As(err, &le) || !le.Retryable {
			return resp, err
		}
		wait := Backoff(r.policy.Base, r.policy.Max, attempt, le.RetryAfter, rand.Float64())
		if r.policy.OnRetry != nil {
			r.policy.OnRetry(attempt+1, err, wait)
		}
		if err := r.policy.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// Backoff is the wait before retry attempt+1: what the server asked for
// when it said (capped at max), else base·2^attempt with ±25% jitter
// (j in [0,1)), capped at max.
func Backoff(base, max time.Duration, attempt int, retryAfter time.Duration, j float64) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, max)
	}
	d := base << min(attempt, 20)
	if d <= 0 || d > max {
		d = max
	}
	return time.Duration(float64(d) * (0.75 + 0.5*j))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
