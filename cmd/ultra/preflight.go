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
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/workspace"
)

// preflightTimeout bounds the check of a model server before a run: a
// closed port answers at once; this is for a host that never answers.
const preflightTimeout = 5 * time.Second

// preflight makes sure, before a run makes a branch or a worktree, that
// its model server can be reached, that a service which needs a key has
// one, and, where the server lists its models, that it serves the ones
// the run asks for. It never sends a model request (no tokens are
// spent): a service that needs a key and has none is refused without any
// network call; otherwise one GET of the server's model list. A server
// that connects but answers slowly, or has no model list, is left for the
// run to judge. When no model is named and the server serves exactly
// one, the run uses it, and says so on w.
func preflight(ctx context.Context, pc *providerChoice, p *project, w io.Writer) error {
	d := providerDefaults[pc.name]
	key := pc.apiKey()
	if why := needsKey(pc); why != "" {
		return usageErr("%s", why)
	}
	ids, err := reach(ctx, pc.name, pc.baseURL, key, p.Config.Model.Headers)
	var ue *unreachableError
	var ke *keyRefusedError
	switch {
	case err == nil:
		dec := decideServed(ids, pc.model, pc.models, pc.named)
		if dec.use != "" {
			fmt.Fprintf(w, "ultra: no model is named and %s serves only %s, so the run uses it (--model NAME to choose)\n", pc.baseURL, dec.use)
			pc.model = dec.use
		}
		if len(dec.missing) > 0 {
			return usageErr("model %s is not served by %s; it serves: %s. Pass --model NAME (or set model.name) to one it serves",
				strings.Join(dec.missing, ", "), pc.baseURL, workspace.ListSome(ids, 10))
		}
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

// served is what the preflight makes of a server's model list.
type servedDecision struct {
	use     string   // the server's only model, for a run that names none
	missing []string // models the run would ask for that the server does not serve
}

// decideServed judges the ids a server lists (nil when it has no list)
// against the model and modes a run would ask for; named says whether a
// person named the model (flag, environment, config or the run's record).
func decideServed(ids []string, model string, modes map[string]string, named bool) servedDecision {
	if len(ids) == 0 {
		return servedDecision{} // no list, or an empty one: the run judges
	}
	if !named && len(modes) == 0 && len(ids) == 1 && !serves(ids, model) {
		return servedDecision{use: ids[0]}
	}
	return servedDecision{missing: unserved(ids, wantedModels(model, modes))}
}

// wantedModels are the models a run asks for: each mode's, and the one
// model for the modes without their own.
func wantedModels(model string, modes map[string]string) []string {
	var wanted []string
	for _, m := range modes {
		wanted = append(wanted, m)
	}
	if len(modes) < 3 && model != "" {
		wanted = append(wanted, model)
	}
	return wanted
}

// unserved are the wanted models ids does not serve, sorted, once each.
func unserved(ids, wanted []string) []string {
	var out []string
	for _, m := range wanted {
		if m != "" && !serves(ids, m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// serves says whether a server listing ids answers requests for model:
// listed as it is, as Ollama's tag "model:latest", or as a dated
// snapshot of an alias (Anthropic lists "claude-sonnet-4-5-20250929" and
// serves "claude-sonnet-4-5").
func serves(ids []string, model string) bool {
	for _, id := range ids {
		if id == model || id == model+":latest" || strings.HasPrefix(id, model+"-20") {
			return true
		}
	}
	return false
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

// reach asks the server at base for its model list: the ids it lists,
// nil when it has none (an error status, an answer that is no list, or a
// slow answer once connected: the run will see), an *unreachableError
// when no connection can be made, a *keyRefusedError for HTTP 401 or 403.
func reach(ctx context.Context, provider, base, key string, headers map[string]string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, preflightTimeout)
	defer cancel()
	req, err := modelsRequest(ctx, provider, base, key, headers)
	if err != nil {
		return nil, err
	}
	connected := false
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected = true },
	}))
	resp, err := preflightClient.Do(req)
	if err != nil {
		if connected {
			return nil, nil // it answers, slowly: the run will see
		}
		return nil, &unreachableError{url: req.URL.Redacted(), reason: netReason(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, &keyRefusedError{url: req.URL.Redacted(), status: resp.StatusCode}
	}
	if err != nil || resp.StatusCode >= 300 {
		return nil, nil
	}
	ids, _ := parseModelList(body)
	return ids, nil
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
