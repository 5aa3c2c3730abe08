package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
)

func TestVersionString(t *testing.T) {
	vcs := func(mv string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: mv}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	rev := "54632281f0e3a1b2c3d4e5f60718293a4b5c6d7e"
	for _, c := range []struct {
		set  string
		bi   *debug.BuildInfo
		want string
	}{
		{"dev", nil, "dev"},
		{"dev", vcs("(devel)"), "dev"},
		{"dev", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "true"), "dev (commit 5463228, modified)"},
		{"dev", vcs("v0.0.0-20251124090215-54632281f0e3+dirty", "vcs.revision", rev, "vcs.modified", "true"), "dev (commit 5463228, modified)"},
		{"dev", vcs("v0.3.1-0.20251124090215-54632281f0e3", "vcs.revision", rev, "vcs.modified", "false"), "dev (commit 5463228)"},
		{"dev", vcs("v0.3.0"), "v0.3.0"},
		{"dev", vcs("v0.3.0", "vcs.revision", rev), "v0.3.0 (commit 5463228)"},
		{"v1.2.0", vcs("(devel)", "vcs.revision", rev, "vcs.modified", "false"), "v1.2.0 (commit 5463228)"},
		{"", nil, "dev"},
	} {
		if got := versionString(c.set, c.bi); got != c.want {
			t.Errorf("versionString(%q, %+v) = %q, want %q", c.set, c.bi, got, c.want)
		}
	}
}

func TestPseudoVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.0.0-20251124090215-54632281f0e3":       true,
		"v0.0.0-20251124090215-54632281f0e3+dirty": true,
		"v1.2.4-0.20251124090215-54632281f0e3":     true,
		"v1.2.4-pre.0.20251124090215-54632281f0e3": true,
		"v1.2.4":       false,
		"v1.2.4-rc.1":  false,
		"(devel)":      false,
		"v2.0.0+dirty": false,
	} {
		if pseudoVersion(v) != want {
			t.Errorf("pseudoVersion(%q) = %v", v, !want)
		}
	}
}

func TestVersionFlagHasNoShortForm(t *testing.T) {
	root := newRoot()
	settleFlags(root)
	if f := root.Flags().Lookup("version"); f == nil || f.Shorthand != "" {
		t.Fatalf("--version: %+v", f)
	}
	run, _, err := root.Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	if f := run.Flags().ShorthandLookup("v"); f == nil || f.Name != "verbose" {
		t.Fatalf("run -v: %+v", f)
	}
	// No other command gives -v another meaning.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().ShorthandLookup("v"); f != nil && f.Name != "verbose" {
			t.Errorf("%s: -v is --%s", c.CommandPath(), f.Name)
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

func TestModelsURL(t *testing.T) {
	for _, c := range []struct{ provider, base, want string }{
		{"openai", "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/models"},
		{"openai", "https://api.openai.com/v1/", "https://api.openai.com/v1/models"},
		{"anthropic", "https://api.anthropic.com", "https://api.anthropic.com/v1/models?limit=1000"},
		{"anthropic", "http://gw/v1", "http://gw/v1/models?limit=1000"},
		{"gemini", "https://generativelanguage.googleapis.com", "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000"},
		{"gemini", "http://gw/v1", "http://gw/v1/models?pageSize=1000"},
	} {
		if got := modelsURL(c.provider, c.base); got != c.want {
			t.Errorf("modelsURL(%s, %s) = %s, want %s", c.provider, c.base, got, c.want)
		}
	}
}

func TestParseModelList(t *testing.T) {
	for body, want := range map[string]string{
		`{"object":"list","data":[{"id":"gpt-5"},{"id":"gpt-5-mini"}]}`:                    "gpt-5,gpt-5-mini",
		`{"data":[{"id":"claude-sonnet-4-5","type":"model"}],"has_more":false}`:            "claude-sonnet-4-5",
		`{"models":[{"name":"models/gemini-2.5-pro"},{"name":"models/gemini-2.5-flash"}]}`: "gemini-2.5-pro,gemini-2.5-flash",
		`{"models":[{"name":"qwen3-coder:latest","model":"qwen3-coder:latest"}]}`:          "qwen3-coder:latest",
		`{"data":[]}`: "",
	} {
		ids, err := parseModelList([]byte(body))
		if err != nil || strings.Join(ids, ",") != want {
			t.Errorf("%s: %v %v, want %s", body, ids, err, want)
		}
	}
	for _, bad := range []string{`<html>`, `{"error":"nope"}`} {
		if _, err := parseModelList([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestReach(t *testing.T) {
	ctx := context.Background()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	var ue *unreachableError
	if _, err := reach(ctx, "openai", closed, "", nil); !errors.As(err, &ue) || !strings.Contains(ue.reason, "refused") {
		t.Errorf("closed port: %v", err)
	}
	var gotKey, gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey, gotHeader = r.Header.Get("Authorization"), r.Header.Get("X-Team")
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") == "Bearer bad" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"data":[{"id":"m"}]}`))
	}))
	defer srv.Close()
	if ids, err := reach(ctx, "openai", srv.URL+"/v1", "good", map[string]string{"X-Team": "t"}); err != nil || gotKey != "Bearer good" || gotHeader != "t" || !slices.Equal(ids, []string{"m"}) {
		t.Errorf("answering server: %v %v (key %q, header %q)", ids, err, gotKey, gotHeader)
	}
	var ke *keyRefusedError
	if _, err := reach(ctx, "openai", srv.URL+"/v1", "bad", nil); !errors.As(err, &ke) || ke.status != 401 {
		t.Errorf("refused key: %v", err)
	}
	// A server without a model list still answers: the run judges it.
	if ids, err := reach(ctx, "openai", srv.URL+"/other", "", nil); err != nil || ids != nil {
		t.Errorf("404 on the model list: %v %v", ids, err)
	}
	if _, err := reach(ctx, "openai", "ftp://x", "", nil); err == nil {
		t.Error("a URL that is not http(s) passed")
	}
}

func TestDecideServed(t *testing.T) {
	for _, c := range []struct {
		name    string
		ids     []string
		model   string
		modes   map[string]string
		named   bool
		use     string
		missing []string
	}{
		{name: "no model list", ids: nil, model: "x", named: true},
		{name: "an empty list", ids: []string{}, model: "x", named: true},
		{name: "served", ids: []string{"a", "x"}, model: "x", named: true},
		{name: "named and not served", ids: []string{"a", "b"}, model: "x", named: true, missing: []string{"x"}},
		{name: "named, the server's only model is another", ids: []string{"a"}, model: "x", named: true, missing: []string{"x"}},
		{name: "none named: the only model is used", ids: []string{"a"}, model: "qwen3-coder", use: "a"},
		{name: "none named, the only model is the default", ids: []string{"qwen3-coder:latest"}, model: "qwen3-coder"},
		{name: "none named, several served", ids: []string{"a", "b"}, model: "qwen3-coder", missing: []string{"qwen3-coder"}},
		{name: "ollama's tag", ids: []string{"qwen3-coder:latest"}, model: "qwen3-coder", named: true},
		{name: "a dated snapshot of an alias", ids: []string{"claude-sonnet-4-5-20250929"}, model: "claude-sonnet-4-5", named: true},
		{name: "modes: each checked, once", ids: []string{"a"}, modes: map[string]string{"fast": "f", "smart": "s", "deep": "s"}, model: "a", missing: []string{"f", "s"}},
		{name: "modes: the rest use the model", ids: []string{"f"}, modes: map[string]string{"fast": "f"}, model: "m", named: true, missing: []string{"m"}},
		{name: "modes configured: no substitution", ids: []string{"a"}, modes: map[string]string{"fast": "a"}, model: "d", missing: []string{"d"}},
	} {
		got := decideServed(c.ids, c.model, c.modes, c.named)
		if got.use != c.use || !slices.Equal(got.missing, c.missing) {
			t.Errorf("%s: use %q missing %v, want %q %v", c.name, got.use, got.missing, c.use, c.missing)
		}
	}
}

func TestPreflightNeedsKeyWithoutNetwork(t *testing.T) {
	p := &project{}
	// The official service without a key: refused before any connection
	// (the URL here could not be reached anyway).
	pc := &providerChoice{name: "anthropic", baseURL: "https://api.anthropic.com", secrets: []string{""}}
	err := preflight(context.Background(), pc, p, io.Discard)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != agent.ExitUsage || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY is not set") {
		t.Fatalf("anthropic without a key: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	pc = &providerChoice{name: "openai", baseURL: closed, secrets: []string{""}}
	err = preflight(context.Background(), pc, p, io.Discard)
	if !errors.As(err, &ee) || ee.code != agent.ExitError || !strings.Contains(err.Error(), "cannot reach the model server at "+closed) {
		t.Fatalf("closed port: %v", err)
	}
}

func TestZeroBudgetFlagsRefused(t *testing.T) {
	for _, args := range [][]string{{"--max-turns", "0"}, {"--max-retries", "0"}, {"--max-cost", "0"}, {"--max-wall", "0s"},
		{"--max-input-tokens", "0"}, {"--max-output-tokens", "0"}, {"--bash-timeout", "0"}, {"--verify-timeout", "0"}} {
		var f runFlags
		cmd := &cobra.Command{Use: "x"}
		f.register(cmd)
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		err := f.validate()
		if err == nil || !strings.Contains(err.Error(), args[0]+" 0 is refused") || !strings.Contains(err.Error(), "leave the flag out for") {
			t.Errorf("%v: %v", args, err)
		}
	}
	var f runFlags
	cmd := &cobra.Command{Use: "x"}
	f.register(cmd)
	cmd.Flags().Parse([]string{"--max-turns", "5"})
	if err := f.validate(); err != nil {
		t.Errorf("--max-turns 5: %v", err)
	}
	cmd.Flags().Parse([]string{"--max-turns", "-1"})
	if err := f.validate(); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("--max-turns -1: %v", err)
	}
}

func TestRequireRunID(t *testing.T) {
	for _, id := range []string{"", " ", "\t"} {
		var ee *exitError
		if err := requireRunID(id); !errors.As(err, &ee) || ee.code != agent.ExitUsage {
			t.Errorf("%q: %v", id, err)
		}
	}
	if err := requireRunID("2025"); err != nil {
		t.Error(err)
	}
}

// doctor and `ultra models --providers` ask the configured server with the
// headers a run sends, so they agree with the run's preflight.
func TestProbeSendsConfiguredHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Team") != "core" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Write([]byte(`{"data":[{"id":"m"}]}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	if ok, status := probe(ctx, "openai", srv.URL+"/v1", "", nil); ok || !strings.Contains(status, "refuses") {
		t.Fatalf("without the header: %v %s", ok, status)
	}
	t.Setenv("ULTRA_PROVIDER", "")
	t.Setenv("OPENAI_API_KEY", "")
	p := &project{Root: t.TempDir()}
	p.Config.Model.Provider, p.Config.Model.BaseURL, p.Config.Model.Name = "openai", srv.URL+"/v1", "m"
	p.Config.Model.Headers = map[string]string{"X-Team": "core"}
	prov := doctorProvider(p)
	if prov == nil {
		t.Fatal("no provider")
	}
	if ok, status := prov.Probe(ctx); !ok || status != "ok" {
		t.Fatalf("doctor's probe: %v %s", ok, status)
	}
	cmd := &cobra.Command{}
	var out strings.Builder
	cmd.SetOut(&out)
	cmd.SetContext(ctx)
	if err := listProviders(cmd, p, true, false); err != nil {
		t.Fatal(err)
	}
	var entries []modelsEntry
	if err := json.Unmarshal([]byte(out.String()), &entries); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Provider == "openai" && (!e.Default || !e.Reachable || e.Status != "ok") {
			t.Errorf("ultra models --providers: %+v", e)
		}
	}
}
