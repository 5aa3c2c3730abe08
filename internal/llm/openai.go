package llm

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// openAIName is the provider name used in errors and by Name.
const openAIName = "openai"

// DefaultOpenAIBaseURL is the base URL used when OpenAIConfig.BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI-compatible Chat Completions provider.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" (the
	// default) or "http://localhost:11434/v1" for Ollama. Requests go to
	// BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as a bearer token. Empty sends no Authorization header,
	// which local servers accept. The provider never reads OPENAI_* variables
	// itself: the caller decides where the key comes from.
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// Headers are added to every request.
	Headers map[string]string
	// MaxRetries is how many times the SDK itself retries a request that
	// failed with 408, 409, 429, a 5xx status or a connection error, with
	// backoff and honouring Retry-After. 0 means no retries: the caller sees
	// a Retryable *Error and decides. Negative values are rejected.
	MaxRetries int
	// Stream selects streaming (the default, when nil) or one-shot
	// responses.
	Stream *bool
	// MaxCompletionTokens sends Request.MaxTokens as max_completion_tokens
	// instead of max_tokens; OpenAI's reasoning models (o-series, gpt-5)
	// accept only the former, while many compatible servers know only the
	// latter.
	MaxCompletionTokens bool
	// HTTPClient replaces the default HTTP client (tests, proxies).
	HTTPClient *http.Client
}

// OpenAI is a Provider that speaks the OpenAI Chat Completions API, which
// OpenAI and most compatible servers (Ollama, llama.cpp, vLLM, Groq, xAI,
// OpenRouter, ...) implement.
type OpenAI struct {
	cfg     OpenAIConfig
	baseURL string
	stream  bool
	chat    openai.ChatCompletionService
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns a provider for cfg. It does not contact the server.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want an http:// or https:// URL such as %s", cfg.BaseURL, DefaultOpenAIBaseURL)
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("openai: max retries is %d, want 0 or more", cfg.MaxRetries)
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	// The service is built from explicit options only, not openai.NewClient,
	// so ambient OPENAI_* variables (base URL, key, organization, headers)
	// never leak into a request meant for another server.
	opts := []option.RequestOption{
		option.WithHTTPClient(client),
		option.WithBaseURL(base),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	return &OpenAI{
		cfg:     cfg,
		baseURL: base,
		stream:  cfg.Stream == nil || *cfg.Stream,
		chat:    openai.NewChatCompletionService(opts...),
	}, nil
}

// defaultHTTPClient is the SDK's default: the standard transport with a
// bound on the wait for response headers (not on the streamed body).
func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{}
}

// Name returns "openai".
func (p *OpenAI) Name() string { return openAIName }

// Stream sends req and returns the assembled answer, calling onDelta (which
// may be nil) for every fragment. In non-streaming mode the whole answer
// arrives at once and onDelta sees it as one fragment per part. Failures are
// *Error values, except a cancelled or expired ctx, whose error is returned
// wrapped.
func (p *OpenAI) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	return dispatch(openAIName, req, p.cfg.Model, onDelta, p.params, func(params openai.ChatCompletionNewParams, model string, onDelta func(Delta)) (*Response, error) {
		if p.stream {
			return p.streamed(ctx, params, model, onDelta)
		}
		return p.complete(ctx, params, model, onDelta)
	})
}

// streamed runs one streaming request.
func (p *OpenAI) streamed(ctx context.Context, params openai.ChatCompletionNewParams, model string, onDelta func(Delta)) (*Response, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	var failed failedResponse
	stream := p.chat.NewStreaming(ctx, params, option.WithMiddleware(failed.capture))
	defer stream.Close()
	a := newAssembler(onDelta)
	for stream.Next() {
		a.add(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return nil, p.convertError(ctx, err, &failed, model)
	}
	return a.result()
}

// complete runs one non-streaming request.
func (p *OpenAI) complete(ctx context.Context, params openai.ChatCompletionNewParams, model string, onDelta func(Delta)) (*Response, error) {
	var failed failedResponse
	res, err := p.chat.New(ctx, params, option.WithMiddleware(failed.capture))
	if err != nil {
		return nil, p.convertError(ctx, err, &failed, model)
	}
	return fromCompletion(res, onDelta)
}
