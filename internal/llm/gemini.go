package llm

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// geminiName is the provider name used in errors and by Name.
const geminiName = "gemini"

// DefaultGeminiBaseURL is the base URL used when GeminiConfig.BaseURL is
// empty.
const DefaultGeminiBaseURL = "https://generativelanguage.googleapis.com"

// geminiAPIVersion is the API version used when the base URL names none.
const geminiAPIVersion = "v1beta"

// GeminiConfig configures a Google Gemini API provider.
type GeminiConfig struct {
	// BaseURL is the API root, e.g. "https://generativelanguage.googleapis.com"
	// (the default). Requests go to BaseURL + "/v1beta/models/MODEL:..."; a
	// base URL ending in an API version ("/v1beta", "/v1", "/v1alpha") uses
	// that version instead.
	BaseURL string
	// APIKey is sent as x-goog-api-key. Empty sends none (gateways that
	// authenticate through Headers). The provider never reads GEMINI_* or
	// GOOGLE_* variables itself: the caller decides where the key comes from.
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// Headers are added to every request.
	Headers map[string]string
	// MaxTokens is sent as maxOutputTokens when Request.MaxTokens is 0; 0
	// leaves the limit to the server.
	MaxTokens int
	// Stream selects streaming (the default, when nil) or one-shot
	// responses.
	Stream *bool
	// HTTPClient replaces the default HTTP client (tests, proxies). It is
	// not modified: the provider wraps a copy.
	HTTPClient *http.Client
}

// Gemini is a Provider that speaks the Google Gemini API
// (generateContent and streamGenerateContent) through the official SDK.
type Gemini struct {
	cfg     GeminiConfig
	baseURL string
	stream  bool
	models  *genai.Models

	// signatures keeps the thought signatures Gemini attached to the
	// function calls it made, by call id: Gemini 3 models reject a
	// conversation whose function calls come back without them.
	mu         sync.Mutex
	signatures map[string][]byte
}

var _ Provider = (*Gemini)(nil)

// NewGemini returns a provider for cfg. It does not contact the server.
func NewGemini(cfg GeminiConfig) (*Gemini, error) {
	base, err := providerBaseURL(geminiName, cfg.BaseURL, DefaultGeminiBaseURL, "")
	if err != nil {
		return nil, err
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("gemini: max tokens is %d, want 0 or more", cfg.MaxTokens)
	}
	root, version := splitGeminiVersion(base)

	client := httpClientOr(cfg.HTTPClient)
	wrapped := *client
	wrapped.Transport = &geminiTransport{base: client.Transport, stripKey: cfg.APIKey == ""}

	headers := http.Header{}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		headers.Set(k, cfg.Headers[k])
	}
	// The SDK requires a key for the Gemini API backend and, without one,
	// takes GEMINI_API_KEY or GOOGLE_API_KEY from the environment. An
	// explicit placeholder keeps the environment out; the transport then
	// removes it from the wire.
	key := cfg.APIKey
	if key == "" {
		key = "unset"
	}
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     key,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: &wrapped,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    root + "/",
			APIVersion: version,
			Headers:    headers,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini: %v", err)
	}
	return &Gemini{
		cfg:        cfg,
		baseURL:    base,
		stream:     streaming(cfg.Stream),
		models:     c.Models,
		signatures: map[string][]byte{},
	}, nil
}

// splitGeminiVersion separates a trailing API version from a base URL.
func splitGeminiVersion(base string) (root, version string) {
	i := strings.LastIndex(base, "/")
	last := base[i+1:]
	if i > len("https://") && strings.HasPrefix(last, "v1") && !strings.ContainsAny(last, ".:") {
		return base[:i], last
	}
	return base, geminiAPIVersion
}

// Name returns "gemini".
func (p *Gemini) Name() string { return geminiName }

// Stream sends req and returns the assembled answer, calling onDelta (which
// may be nil) for every fragment. In non-streaming mode the whole answer
// arrives at once and onDelta sees it as one fragment per part. Failures
// are *Error values, except a cancelled or expired ctx, whose error is
// returned wrapped.
//
// StopReason is "stop" (finish reason STOP without function calls),
// "tool_calls" (STOP with function calls), "length" (MAX_TOKENS), or
// Gemini's finish reason in lower case ("safety", "recitation",
// "malformed_function_call", ...). Usage.InputTokens is promptTokenCount
// less the cached tokens counted in CacheReadTokens; OutputTokens counts
// the answer and the model's thoughts, which are billed as output.
func (p *Gemini) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	return dispatch(ctx, geminiName, req, p.cfg.Model, onDelta, p.params, p.generate)
}

// generate runs one request, streaming or not.
func (p *Gemini) generate(ctx context.Context, params geminiParams, model string, onDelta func(Delta)) (*Response, error) {
	rec := &geminiFailure{}
	ctx = context.WithValue(ctx, geminiFailureKey{}, rec)
	a := newGeminiAssembler(onDelta)
	var answers iter.Seq2[*genai.GenerateContentResponse, error]
	if p.stream {
		answers = p.models.GenerateContentStream(ctx, model, params.contents, params.config)
	} else {
		answers = func(yield func(*genai.GenerateContentResponse, error) bool) {
			yield(p.models.GenerateContent(ctx, model, params.contents, params.config))
		}
	}
	for res, err := range answers {
		if err != nil {
			return nil, p.convertError(ctx, err, rec, model)
		}
		a.add(res)
	}
	resp, err := a.result(model)
	if err != nil {
		return nil, err
	}
	p.remember(a.signatures)
	return resp, nil
}

// remember keeps the thought signatures of an answer's function calls.
func (p *Gemini) remember(sigs map[string][]byte) {
	if len(sigs) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.signatures) > 4096 {
		clear(p.signatures)
	}
	maps.Copy(p.signatures, sigs)
}

// signature returns the thought signature kept for a call id.
func (p *Gemini) signature(id string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.signatures[id]
}

// geminiFailure records the last HTTP error response of one call: the SDK
// keeps neither its status (when the body lacks error.code) nor its
// headers (Retry-After).
type geminiFailure struct {
	mu     sync.Mutex
	status int
	header http.Header
}

type geminiFailureKey struct{}

// geminiTransport removes the placeholder API key when none is configured
// and records error responses for the call in the request's context.
type geminiTransport struct {
	base     http.RoundTripper
	stripKey bool
}

func (t *geminiTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.stripKey && req.Header.Get("x-goog-api-key") != "" {
		req = req.Clone(req.Context())
		req.Header.Del("x-goog-api-key")
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	res, err := base.RoundTrip(req)
	if rec, ok := req.Context().Value(geminiFailureKey{}).(*geminiFailure); ok && err == nil && res != nil && res.StatusCode >= 400 {
		rec.mu.Lock()
		rec.status, rec.header = res.StatusCode, res.Header.Clone()
		rec.mu.Unlock()
	}
	return res, err
}
