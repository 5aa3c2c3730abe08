package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
)

// preflightTimeout bounds the check of a model server before a run: a
// closed port answers at once; this is for a host that never answers.
const preflightTimeout = 5 * time.Second

// preflight makes sure, before a run makes a branch or a worktree, that
// its model server can be reached and that a service which needs a key
// has one. It never sends a model request (no tokens are spent): a
// service that needs a key and has none is refused without any network
// call; otherwise one GET of the server's model list, which only has to
// connect. A server that connects but answers slowly or with an error
// other than a refused key is left for the run to judge.
func preflight(ctx context.Context, pc *providerChoice, p *project) error {
	d := providerDefaults[pc.name]
	key := pc.apiKey()
	if why := needsKey(pc); why != "" {
		return usageErr("%s", why)
	}
	err := reach(ctx, pc.name, pc.baseURL, key, p.Config.Model.Headers)
	var ue *unreachableError
	var ke *keyRefusedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ke):
		what := "refuses the key in " + d.keyEnv
		if key == "" {
			what = "wants a key and " + d.keyEnv + " is not set"
		}
		return usageErr("the model server at %s %s (HTTP %d to %s): set %s to a key it accepts, or pass --base-url", pc.baseURL, what, ke.status, ke.url, d.keyEnv)
	case errors.As(err, &ue):
		what := "start it, or pass --base-url URL of a server that answers (ultra models --base-url URL lists what a server serves)"
		if pc.hint != "" {
			what = pc.hint
		}
		return &exitError{code: agent.ExitError, err: fmt.Errorf("cannot reach the model server at %s (%s), so no run was started: %s",
			pc.baseURL, ue.reason, what)}
	}
	return err
}

// apiKey is the provider's key ("" when none is set): resolveProvider puts
// it first among the secrets.
func (pc *providerChoice) apiKey() string {
	if len(pc.secrets) > 0 {
		return pc.secrets[0]
	}
	return ""
}

// unreachableError: no connection could be made to the server.
type unreachableError struct {
	url, reason string
}

func (e *unreachableError) Error() string { return "no answer from " + e.url + ": " + e.reason }

// keyRefusedError: the server answered 401 or 403 to its model list.
type keyRefusedError struct {
	url    string
	status int
}

func (e *keyRefusedError) Error() string {
	return fmt.Sprintf("%s refuses the key (HTTP %d)", e.url, e.status)
}

// modelsURL is where provider's API lists the models of the server at
// base (the same roots the providers' requests use).
func modelsURL(provider, base string) string {
	b := strings.TrimSuffix(base, "/")
	switch provider {
	case "anthropic":
		return strings.TrimSuffix(b, "/v1") + "/v1/models?limit=1000"
	case "gemini":
		for _, v := range []string{"/v1beta", "/v1alpha", "/v1"} {
			if strings.HasSuffix(b, v) {
				return b + "/models?pageSize=1000"
			}
		}
		return b + "/v1beta/models?pageSize=1000"
	}
	return b + "/models"
}

// modelsRequest is a GET of the model list with the key in the header
// the provider's API expects, and the configured headers.
func modelsRequest(ctx context.Context, provider, base, key string, headers map[string]string) (*http.Request, error) {
	u := modelsURL(provider, base)
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return nil, usageErr("the model server URL %q is not an http(s) URL", base)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, usageErr("the model server URL %q: %v", base, err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if key != "" {
		switch provider {
		case "anthropic":
			req.Header.Set("x-api-key", key)
		case "gemini":
			req.Header.Set("x-goog-api-key", key)
		default:
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	if provider == "anthropic" {
		req.Header.Set("anthropic-version", "2023-06-01")
	}
	return req, nil
}

// preflightClient follows the environment's proxy settings, as the
// providers' clients do, and keeps no connection.
var preflightClient = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}}

// reach checks that the server at base can be connected to: nil once a
// connection is made (whatever it then answers, unless it refuses the
// key), an *unreachableError when none can be, a *keyRefusedError for
// HTTP 401 or 403.
func reach(ctx context.Context, provider, base, key string, headers map[string]string) error {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	req, err := modelsRequest(ctx, provider, base, key, headers)
	if err != nil {
		return err
	}
	connected := false
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected = true },
	}))
	resp, err := preflightClient.Do(req)
	if err != nil {
		if connected {
			return nil // it answers, slowly: the run will see
		}
		return &unreachableError{url: req.URL.Redacted(), reason: netReason(err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return &keyRefusedError{url: req.URL.Redacted(), status: resp.StatusCode}
	}
	return nil
}

// netReason says briefly why a connection failed.
func netReason(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no connection within %s", preflightTimeout)
	case errors.As(err, &dns):
		return "cannot resolve " + dns.Name
	case errors.As(err, &op) && op.Err != nil:
		s := op.Err.Error()
		if i := strings.LastIndex(s, ": "); i >= 0 {
			s = s[i+2:]
		}
		return s
	}
	return shortErr(err)
}

// servedModels lists the ids of the models the server at base serves.
func servedModels(ctx context.Context, provider, base, key string, headers map[string]string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := modelsRequest(ctx, provider, base, key, headers)
	if err != nil {
		return nil, err
	}
	resp, err := preflightClient.Do(req)
	if err != nil {
		return nil, &unreachableError{url: req.URL.Redacted(), reason: netReason(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the model list from %s: %v", req.URL.Redacted(), err)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, &keyRefusedError{url: req.URL.Redacted(), status: resp.StatusCode}
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s answered HTTP %d: %s", req.URL.Redacted(), resp.StatusCode, clip(string(body), 200))
	}
	ids, err := parseModelList(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", req.URL.Redacted(), err)
	}
	return ids, nil
}

// parseModelList reads the ids of a model list in the OpenAI and
// Anthropic shape ({"data": [{"id": …}]}), Ollama's native one
// ({"models": [{"name": …}]}) or Gemini's ({"models": [{"name":
// "models/…"}]}).
func parseModelList(body []byte) ([]string, error) {
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("the answer is not a model list: %v", err)
	}
	if v.Data == nil && v.Models == nil {
		return nil, errors.New(`the answer is not a model list (no "data" or "models")`)
	}
	ids := []string{}
	for _, m := range v.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	for _, m := range v.Models {
		id := strings.TrimPrefix(pick(m.Name, m.Model), "models/")
		if id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
