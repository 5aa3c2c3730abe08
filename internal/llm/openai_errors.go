package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// failedResponse keeps the last HTTP error response of one call. The SDK
// reports an error status only when the body's "error" field is an object;
// servers that send {"error": "text"} or a plain-text page would otherwise
// lose their status code and message.
type failedResponse struct {
	res *http.Response
}

// capture is an SDK middleware recording error responses; it leaves the
// body readable for the SDK.
func (f *failedResponse) capture(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	f.res = nil // only the last attempt counts
	res, err := next(req)
	if err == nil && res != nil && res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		_ = res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		copied := *res
		copied.Body = io.NopCloser(bytes.NewReader(body))
		f.res = &copied
	}
	return res, err
}

// convertError turns an SDK failure into an *Error a person can act on. A
// cancelled or expired ctx is returned as such (wrapped), so callers can
// tell "stopped" from "failed".
func (p *OpenAI) convertError(ctx context.Context, err error, failed *failedResponse, model string) error {
	return openAIError(ctx, err, failed, p.baseURL, model, "/chat/completions")
}

// openAIError converts a failure of either OpenAI API (endpoint names the
// path requests go to).
func openAIError(ctx context.Context, err error, failed *failedResponse, baseURL, model, endpoint string) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", openAIName, ctxErr)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return openAIStatusError(apiErr, baseURL, model, endpoint)
	}
	if failed.res != nil {
		return openAIStatusError(&openai.Error{StatusCode: failed.res.StatusCode, Response: failed.res}, baseURL, model, endpoint)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		return &Error{Provider: openAIName, Message: "the server reported an error mid-stream: " + streamErrorMessage(streamErr), Retryable: true}
	}
	return connectionError(openAIName, baseURL, err)
}

// openAIStatusError converts an HTTP error status of either OpenAI API.
func openAIStatusError(e *openai.Error, baseURL, model, endpoint string) *Error {
	code := e.StatusCode
	msg := serverMessage(e)
	keyProblem := code == http.StatusUnauthorized || code == http.StatusForbidden
	out := &Error{Provider: openAIName, StatusCode: code, Retryable: retryableStatus(code),
		Message: statusMessage(code, msg, keyProblem, "OPENAI_API_KEY", model, baseURL, endpoint)}
	if e.Response != nil {
		out.RetryAfter = retryAfter(e.Response.Header)
	}
	return out
}

// retryableStatus reports whether a later retry of the same request may
// succeed.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return code >= 500
}

// serverMessage is the server's own explanation: error.message when the
// body had one, else the start of the body, else the status text.
func serverMessage(e *openai.Error) string {
	if m := strings.TrimSpace(e.Message); m != "" {
		return m
	}
	if e.Response != nil && e.Response.Body != nil {
		b, _ := io.ReadAll(io.LimitReader(e.Response.Body, 2048))
		if m := bodyMessage(b); m != "" {
			return m
		}
	}
	return statusText(e.StatusCode)
}

// bodyMessage digs a message out of an error body in the shapes compatible
// servers use: {"error": "..."}, {"message": "..."}, {"detail": "..."}, or
// plain text.
func bodyMessage(b []byte) string {
	var shapes struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &shapes) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(shapes.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(shapes.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case shapes.Message != "":
			return shapes.Message
		case json.Unmarshal(shapes.Detail, &s) == nil && s != "":
			return s
		case len(shapes.Detail) > 0:
			return string(shapes.Detail)
		}
	}
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// streamErrorMessage extracts the message of an error event.
func streamErrorMessage(e *ssestream.StreamError) string {
	if m := bodyMessage(e.Event.Data); m != "" {
		return m
	}
	return e.Message
}

// retryAfter reads the wait a server asked for: retry-after-ms (OpenAI),
// else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
