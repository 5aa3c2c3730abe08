package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"
)

// convertError turns an SDK failure into an *Error a person can act on. A
// cancelled or expired ctx is returned as such (wrapped), so callers can
// tell "stopped" from "failed".
func (p *Gemini) convertError(ctx context.Context, err error, rec *geminiFailure, model string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", geminiName, ctxErr)
	}
	rec.mu.Lock()
	status, header := rec.status, rec.header
	rec.mu.Unlock()
	var apiErr genai.APIError
	var apiErrPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiErrPtr) && apiErrPtr != nil:
		apiErr = *apiErrPtr
	default:
		if status >= 400 {
			return p.apiError(genai.APIError{Code: status, Message: err.Error()}, status, header, model)
		}
		return connectionError(geminiName, p.baseURL, err)
	}
	if status < 400 && apiErr.Code == 0 {
		// An error event inside a 200 stream.
		return &Error{Provider: geminiName, Message: "the server reported an error mid-stream: " + geminiMessage(apiErr, 0), Retryable: true}
	}
	return p.apiError(apiErr, status, header, model)
}

// apiError converts an HTTP error status. status and header are those the
// transport saw (0 and nil when it saw none).
func (p *Gemini) apiError(e genai.APIError, status int, header http.Header, model string) *Error {
	code := status
	if code < 400 {
		code = e.Code
	}
	msg := geminiMessage(e, code)
	keyProblem := code == http.StatusUnauthorized || code == http.StatusForbidden ||
		(code == http.StatusBadRequest && (strings.Contains(msg, "API key") || strings.Contains(geminiReason(e), "API_KEY")))
	out := &Error{Provider: geminiName, StatusCode: code, Retryable: retryableStatus(code),
		Message: statusMessage(code, msg, keyProblem, "GEMINI_API_KEY", model, p.baseURL, "")}
	if header != nil {
		out.RetryAfter = retryAfter(header)
	}
	if out.RetryAfter == 0 {
		out.RetryAfter = geminiRetryDelay(e)
	}
	return out
}

// geminiMessage is the server's own explanation, else the status text.
func geminiMessage(e genai.APIError, code int) string {
	if m := strings.TrimSpace(e.Message); m != "" {
		if strings.HasPrefix(m, "{") || strings.HasPrefix(m, "<") {
			if bm := bodyMessage([]byte(m)); bm != "" {
				return bm
			}
		}
		return m
	}
	if e.Status != "" {
		return e.Status
	}
	return statusText(code)
}

// geminiReason is the reason of the error's ErrorInfo detail, if any.
func geminiReason(e genai.APIError) string {
	for _, d := range e.Details {
		if r, ok := d["reason"].(string); ok {
			return r
		}
	}
	return ""
}

// geminiRetryDelay reads the wait a RetryInfo detail asks for ("37s").
func geminiRetryDelay(e genai.APIError) time.Duration {
	for _, d := range e.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if dur, err := time.ParseDuration(s); err == nil && dur > 0 {
				return dur
			}
		}
	}
	return 0
}
