package llm

import (
	"context"
	"fmt"
	"net/http"
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
	base, err := providerBaseURL(openAIName, cfg.BaseURL, DefaultOpenAIBaseURL, "")
	if err != nil {
		return nil, err
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("openai: max retries is %d, want 0 or more", cfg.MaxRetries)
	}
	opts := openAIOptions(httpClientOr(cfg.HTTPClient), base, cfg.MaxRetries, cfg.APIKey, cfg.Headers)
	return &OpenAI{
		cfg:     cfg,
		baseURL: base,
		stream:  streaming(cfg.Stream),
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
	return dispatch(ctx, openAIName, req, p.cfg.Model, onDelta, p.params, either(p.stream, p.streamed, p.complete))
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
