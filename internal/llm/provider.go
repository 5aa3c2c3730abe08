package llm

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/option"
)

// providerBaseURL is the API root a provider is configured with: raw
// trimmed of spaces and trailing slashes, def when raw is empty, less the
// suffix drop (when set). It must be an http:// or https:// URL.
func providerBaseURL(provider, raw, def, drop string) (string, error) {
	base := strings.TrimRight(strings.TrimSpace(raw), "/")
	if base == "" {
		base = def
	}
	if drop != "" {
		base = strings.TrimRight(strings.TrimSuffix(base, drop), "/")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: base URL %q: want an http:// or https:// URL such as %s", provider, raw, def)
	}
	return base, nil
}

// httpClientOr returns c, or the default client when c is nil.
func httpClientOr(c *http.Client) *http.Client {
	if c == nil {
		return defaultHTTPClient()
	}
	return c
}

// streaming reads a Stream setting: on unless set to false.
func streaming(s *bool) bool { return s == nil || *s }

// openAIOptions are the options an OpenAI SDK service is built from. They
// are explicit (no openai.NewClient), so ambient OPENAI_* variables (base
// URL, key, organization, headers) never leak into a request meant for
// another server.
func openAIOptions(client *http.Client, base string, maxRetries int, apiKey string, headers map[string]string) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithBaseURL(base),
		option.WithMaxRetries(maxRetries),
	}
	if apiKey != "" {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		opts = append(opts, option.WithHeader(k, headers[k]))
	}
	return opts
}

// either returns streamed when stream is set, else complete: the two ways
// a provider runs a request.
func either[F any](stream bool, streamed, complete F) F {
	if stream {
		return streamed
	}
	return complete
}

// answer is what every adapter assembles: the text and tool calls,
// forwarded to onDelta as they arrive, and what the end of the answer says.
type answer struct {
	onDelta   func(Delta)
	text      strings.Builder
	calls     []ToolCall
	usage     Usage
	haveUsage bool
	stop      string
	model     string
}

func (a *answer) addText(s string) {
	if s == "" {
		return
	}
	a.text.WriteString(s)
	a.onDelta(Delta{Kind: DeltaText, Text: s})
}

// thinking forwards a fragment of readable thinking (kept apart from the
// text by the adapter, in Response.Thinking).
func (a *answer) thinking(s string) {
	if s != "" {
		a.onDelta(Delta{Kind: DeltaThinking, Text: s})
	}
}

// addCall starts a tool call with what is known of it, and returns its
// position.
func (a *answer) addCall(c ToolCall) int {
	pos := len(a.calls)
	a.calls = append(a.calls, c)
	a.onDelta(Delta{Kind: DeltaToolCall, ToolIndex: pos, ToolID: c.ID, ToolName: c.Name, Text: c.Arguments})
	return pos
}

// response ends the answer: the usage goes to onDelta when known, and
// every call gets an id.
func (a *answer) response() *Response {
	if a.haveUsage {
		a.onDelta(Delta{Kind: DeltaUsage, Usage: a.usage})
	}
	ensureIDs(a.calls)
	return &Response{
		Text:       a.text.String(),
		ToolCalls:  a.calls,
		Usage:      a.usage,
		StopReason: a.stop,
		Model:      a.model,
	}
}

// statusText names an HTTP status when the server gave no explanation.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strings.ToLower(t)
	}
	return "HTTP " + strconv.Itoa(code)
}

// statusMessage words an HTTP error status for a person. msg is the
// server's explanation; keyProblem says the key was refused, keyVar names
// the variable that usually holds it; endpoint, when set, is the path
// requests go to under baseURL.
func statusMessage(code int, msg string, keyProblem bool, keyVar, model, baseURL, endpoint string) string {
	switch {
	case keyProblem:
		return fmt.Sprintf("%s: check the API key (%s or the configured key) and its access to model %q at %s", msg, keyVar, model, baseURL)
	case code == http.StatusNotFound:
		m := fmt.Sprintf("%s: check the model name %q and the base URL %s", msg, model, baseURL)
		if endpoint != "" {
			m += " (requests go to its " + endpoint + ")"
		}
		return m
	case code == http.StatusTooManyRequests:
		return "rate limited: " + msg
	case code >= 500:
		return "server error: " + msg
	}
	return msg
}

// connectionError is a failure on the way: connection refused or reset, a
// body cut short, an answer that is not JSON. Another try may succeed.
func connectionError(provider, baseURL string, err error) *Error {
	return &Error{Provider: provider, Message: fmt.Sprintf("request to %s failed: %v", baseURL, err), Retryable: true}
}
