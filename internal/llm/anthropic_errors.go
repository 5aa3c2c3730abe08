package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
)

// convertError turns an SDK failure into an *Error a person can act on. A
// cancelled or expired ctx is returned as such (wrapped), so callers can
// tell "stopped" from "failed".
func (p *Anthropic) convertError(ctx context.Context, err error, model string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", anthropicName, ctxErr)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		return p.apiError(apiErr, model)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "received error while streaming: "); ok {
		return &Error{Provider: anthropicName, Message: "the server reported an error mid-stream: " + bodyMessage([]byte(msg)), Retryable: true}
	}
	return connectionError(anthropicName, p.baseURL, err)
}

// apiError converts an error status, or an error event sent mid-stream
// (which arrives with the stream's own status, 200).
func (p *Anthropic) apiError(e *anthropic.Error, model string) *Error {
	code := e.StatusCode
	kind, msg := anthropicErrorBody(e.RawJSON())
	if msg == "" {
		msg = statusText(code)
	}
	if kind == "" {
		kind = string(e.Type())
	}
	if kind != "" && !strings.Contains(msg, kind) {
		msg = kind + ": " + msg
	}
	out := &Error{Provider: anthropicName, StatusCode: code}
	if code < 400 {
		// An error event inside a successful stream.
		out.StatusCode = 0
		out.Retryable = retryableAnthropicKind(kind) || kind == ""
		out.Message = "the server reported an error mid-stream: " + msg
		return out
	}
	out.Retryable = retryableStatus(code) || retryableAnthropicKind(kind)
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		out.Message = fmt.Sprintf("%s: check the API key (ANTHROPIC_API_KEY or the configured key) and its access to model %q at %s", msg, model, p.baseURL)
	case code == http.StatusNotFound:
		out.Message = fmt.Sprintf("%s: check the model name %q and the base URL %s (requests go to its /v1/messages)", msg, model, p.baseURL)
	case code == http.StatusRequestEntityTooLarge:
		out.Message = "request too large: " + msg
	case code == http.StatusTooManyRequests:
		out.Message = "rate limited: " + msg
	case code == 529 || kind == "overloaded_error":
		out.Message = "overloaded: " + msg
	case code >= 500:
		out.Message = "server error: " + msg
	default:
		out.Message = msg
	}
	if e.Response != nil {
		out.RetryAfter = retryAfter(e.Response.Header)
	}
	return out
}

// retryableAnthropicKind reports whether an Anthropic error type is
// temporary.
func retryableAnthropicKind(kind string) bool {
	switch kind {
	case "overloaded_error", "rate_limit_error", "api_error", "timeout_error":
		return true
	}
	return false
}

// anthropicErrorBody reads {"type":"error","error":{"type":..,"message":..}},
// falling back to the shapes other servers use.
func anthropicErrorBody(raw string) (kind, message string) {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && body.Error.Message != "" {
		return body.Error.Type, body.Error.Message
	}
	return body.Error.Type, bodyMessage([]byte(raw))
}
