package llm

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicName is the provider name used in errors and by Name.
const anthropicName = "anthropic"

// DefaultAnthropicBaseURL is the base URL used when AnthropicConfig.BaseURL
// is empty.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// DefaultAnthropicMaxTokens is the answer length limit sent when neither
// the request nor the configuration sets one (the Messages API requires
// max_tokens).
const DefaultAnthropicMaxTokens = 8192

// AnthropicConfig configures an Anthropic Messages provider.
type AnthropicConfig struct {
	// BaseURL is the API root, e.g. "https://api.anthropic.com" (the
	// default). Requests go to BaseURL + "/v1/messages"; a trailing "/v1"
	// is accepted and dropped, so an OpenAI-style base URL of the same
	// server works too.
	BaseURL string
	// APIKey is sent as x-api-key. Empty sends none (gateways that
	// authenticate otherwise). The provider never reads ANTHROPIC_*
	// variables itself: the caller decides where the key comes from.
	APIKey string
	// Model is used when Request.Model is empty.
	Model string
	// Headers are added to every request.
	Headers map[string]string
	// MaxRetries is how many times the SDK itself retries a request that
	// failed with 408, 409, 429, a 5xx status or a connection error, with
	// backoff and honouring Retry-After. 0 means no retries: the caller
	// sees a Retryable *Error and decides. Negative values are rejected.
	MaxRetries int
	// MaxTokens is sent as max_tokens when Request.MaxTokens is 0; 0 means
	// DefaultAnthropicMaxTokens.
	MaxTokens int
	// Stream selects streaming (the default, when nil) or one-shot
	// responses.
	Stream *bool
	// HTTPClient replaces the default HTTP client (tests, proxies).
	HTTPClient *http.Client
}

// Anthropic is a Provider that speaks the Anthropic Messages API.
type Anthropic struct {
	cfg       AnthropicConfig
	baseURL   string
	stream    bool
	maxTokens int
	messages  anthropic.MessageService
}

var _ Provider = (*Anthropic)(nil)

// NewAnthropic returns a provider for cfg. It does not contact the server.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	base, err := providerBaseURL(anthropicName, cfg.BaseURL, DefaultAnthropicBaseURL, "/v1")
	if err != nil {
		return nil, err
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("anthropic: max retries is %d, want 0 or more", cfg.MaxRetries)
	}
	if cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: max tokens is %d, want 0 (the default, %d) or more", cfg.MaxTokens, DefaultAnthropicMaxTokens)
	}
	// The service is built from explicit options only, not
	// anthropic.NewClient, so ambient ANTHROPIC_* variables (base URL, key,
	// token) never leak into a request meant for another server.
	opts := []option.RequestOption{
		option.WithHTTPClient(httpClientOr(cfg.HTTPClient)),
		option.WithBaseURL(base + "/"),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Headers)) {
		opts = append(opts, option.WithHeader(k, cfg.Headers[k]))
	}
	maxTokens := cfg.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultAnthropicMaxTokens
	}
	return &Anthropic{
		cfg:       cfg,
		baseURL:   base,
		stream:    streaming(cfg.Stream),
		maxTokens: maxTokens,
		messages:  anthropic.NewMessageService(opts...),
	}, nil
}

// Name returns "anthropic".
func (p *Anthropic) Name() string { return anthropicName }

// Stream sends req and returns the assembled answer, calling onDelta (which
// may be nil) for every fragment. In non-streaming mode the whole answer
// arrives at once and onDelta sees it as one fragment per part. Failures
// are *Error values, except a cancelled or expired ctx, whose error is
// returned wrapped. StopReason is Anthropic's stop_reason as sent
// ("end_turn", "tool_use", "max_tokens", ...). Usage.InputTokens is
// input_tokens as reported, which excludes the cached tokens counted in
// CacheReadTokens and CacheWriteTokens.
func (p *Anthropic) Stream(ctx context.Context, req Request, onDelta func(Delta)) (*Response, error) {
	return dispatch(ctx, anthropicName, req, p.cfg.Model, onDelta, p.params, either(p.stream, p.streamed, p.complete))
}

// streamed runs one streaming request.
func (p *Anthropic) streamed(ctx context.Context, params anthropic.MessageNewParams, model string, onDelta func(Delta)) (*Response, error) {
	stream := p.messages.NewStreaming(ctx, params)
	defer stream.Close()
	a := newAnthropicAssembler(onDelta)
	for stream.Next() {
		a.add(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return nil, p.convertError(ctx, err, model)
	}
	return a.result()
}

// complete runs one non-streaming request.
func (p *Anthropic) complete(ctx context.Context, params anthropic.MessageNewParams, model string, onDelta func(Delta)) (*Response, error) {
	// An explicit timeout stops the SDK refusing long non-streaming
	// requests (large max_tokens) before sending them.
	res, err := p.messages.New(ctx, params, option.WithRequestTimeout(time.Hour))
	if err != nil {
		return nil, p.convertError(ctx, err, model)
	}
	return fromAnthropicMessage(res, onDelta)
}
