package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/config"
)

// modelsEntry is one configured provider, as `ultra models --providers`
// shows it.
type modelsEntry struct {
	Provider  string            `json:"provider"`
	BaseURL   string            `json:"base_url"`
	KeyEnv    string            `json:"key_env"`
	KeySet    bool              `json:"key_set"`
	Model     string            `json:"model"`
	Modes     map[string]string `json:"modes,omitempty"`
	Reachable bool              `json:"reachable"`
	Status    string            `json:"status"`
	Default   bool              `json:"default"`
}

// servedList is what one server serves, as `ultra models` shows it.
type servedList struct {
	Provider string   `json:"provider"`
	BaseURL  string   `json:"base_url"`
	KeyEnv   string   `json:"key_env"`
	KeySet   bool     `json:"key_set"`
	Models   []string `json:"models"` // the ids the server lists
	// Model is the model ultra run asks for in every phase; Modes, when
	// no one model is named, maps each model mode to its model.
	Model string            `json:"model,omitempty"`
	Modes map[string]string `json:"modes,omitempty"`
	// Unlisted are models ultra run would ask for that the server does
	// not list.
	Unlisted []string `json:"unlisted,omitempty"`
}

func newModelsCmd() *cobra.Command {
	var asJSON, offline, providers bool
	var f runFlags
	cmd := &cobra.Command{
		Use:   "models [--provider P] [--base-url URL]",
		Short: "List the models a model server serves, or (--providers) every provider and whether it answers",
		Long: "models asks the model server ultra run would use (or the one --provider and --base-url name)\n" +
			"for its model list and prints the ids, marking the ones ultra run asks for. A server that cannot\n" +
			"be reached is an error naming its URL (exit 1); a service that needs a key and has none, or\n" +
			"refuses it, exit 2. --providers lists every provider: its base URL, whether its key is set, its\n" +
			"models by mode and whether its server answers (--offline: without asking).",
		Example: `  ultra models
  ultra models --base-url http://127.0.0.1:11434/v1
  ultra models --provider anthropic --json
  ultra models --providers --offline`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := modelsProject(cmd)
			if err != nil {
				return err
			}
			if providers || offline {
				if f.provider != "" || f.baseURL != "" {
					return usageErr("--providers lists every provider at its configured URL; --provider and --base-url choose one server to ask")
				}
				return listProviders(cmd, p, asJSON, offline)
			}
			pc, err := f.resolveProvider(p, "", "", "")
			if err != nil {
				return err
			}
			list, err := served(cmd.Context(), pc, p)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), list)
			}
			printServed(cmd.OutOrStdout(), list)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.provider, "provider", "", "model provider: openai (any OpenAI-compatible server), anthropic or gemini [env ULTRA_PROVIDER, config model.provider]")
	fl.StringVar(&f.baseURL, "base-url", "", "the server to ask [env OPENAI_BASE_URL, config model.base_url; default: as ultra run]")
	fl.StringVar(&f.model, "model", "", "the model ultra run would ask for, to check that the server has it [env ULTRA_MODEL, config model.name]")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	fl.BoolVar(&providers, "providers", false, "list every provider: base URL, key, models by mode, whether its server answers")
	fl.BoolVar(&offline, "offline", false, "with --providers: do not contact the servers")
	return cmd
}

// modelsProject is the project's settings, or outside a repository the
// user's alone: listing a server's models needs no repository.
func modelsProject(cmd *cobra.Command) (*project, error) {
	p, err := findProject(cmd)
	if err == nil || !strings.Contains(err.Error(), "not inside a git repository") {
		return p, err
	}
	dir, _ := os.Getwd()
	if d, _ := cmd.Flags().GetString("dir"); d != "" {
		dir = d
	}
	cfg, cerr := config.Load(dir)
	if cerr != nil {
		return nil, usageErr("%v", cerr)
	}
	return &project{Root: dir, Dir: dir, Config: cfg}, nil
}

// needsKey is the refusal of a provider's own service without its key
// ("" when the server can be asked).
func needsKey(pc *providerChoice) string {
	d := providerDefaults[pc.name]
	if pc.apiKey() == "" && d.official != "" && strings.HasPrefix(pc.baseURL, d.official) {
		return fmt.Sprintf("%s at %s needs an API key and %s is not set: set it (or model.key_command in %s), or pass --base-url of a server that needs none",
			pc.name, pc.baseURL, d.keyEnv, config.UserPath())
	}
	return ""
}

// served asks pc's server for its models.
func served(ctx context.Context, pc *providerChoice, p *project) (*servedList, error) {
	d := providerDefaults[pc.name]
	if why := needsKey(pc); why != "" {
		return nil, usageErr("%s", why)
	}
	ids, err := servedModels(ctx, pc.name, pc.baseURL, pc.apiKey(), p.Config.Model.Headers)
	var ue *unreachableError
	var ke *keyRefusedError
	switch {
	case errors.As(err, &ue):
		msg := fmt.Sprintf("cannot reach the model server at %s (%s)", pc.baseURL, ue.reason)
		if pc.hint != "" {
			msg += ": " + pc.hint
		}
		return nil, &exitError{code: agent.ExitError, err: errors.New(msg)}
	case errors.As(err, &ke):
		return nil, usageErr("the model server at %s refuses the key in %s (HTTP %d to %s)", pc.baseURL, d.keyEnv, ke.status, ke.url)
	case err != nil:
		return nil, &exitError{code: agent.ExitError, err: fmt.Errorf("the model server at %s: %v", pc.baseURL, err)}
	}
	sort.Strings(ids)
	list := &servedList{Provider: pc.name, BaseURL: pc.baseURL, KeyEnv: d.keyEnv, KeySet: pc.apiKey() != "", Models: ids}
	list.Modes = pc.models
	model := pc.model
	dec := decideServed(ids, model, pc.models, pc.named)
	if dec.use != "" {
		model = dec.use // as ultra run would: the server's only model
	}
	if len(pc.models) < 3 {
		list.Model = model // the modes without a model use it
	}
	list.Unlisted = dec.missing
	return list, nil
}

func printServed(w io.Writer, l *servedList) {
	key := "not set"
	if l.KeySet {
		key = "set"
	}
	fmt.Fprintf(w, "%s at %s (key %s %s) serves %d model(s):\n", l.Provider, l.BaseURL, l.KeyEnv, key, len(l.Models))
	width := 0
	for _, id := range l.Models {
		width = max(width, len(id))
	}
	for _, id := range l.Models {
		var uses []string
		for _, mode := range []string{"fast", "smart", "deep"} {
			if l.Modes[mode] == id {
				uses = append(uses, mode)
			}
		}
		note := ""
		switch {
		case len(uses) > 0:
			note = "ultra run uses it in model mode " + strings.Join(uses, ", ")
		case id == l.Model:
			note = "ultra run uses it"
		}
		if note == "" {
			fmt.Fprintf(w, "  %s\n", id)
			continue
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, id, note)
	}
	for _, m := range l.Unlisted {
		fmt.Fprintf(w, "ultra run would ask for %s, which this server does not list: pass --model NAME (or set model.name)\n", m)
	}
}

// listProviders is `ultra models --providers`.
func listProviders(cmd *cobra.Command, p *project, asJSON, offline bool) error {
	var f runFlags
	def, _ := f.resolveProvider(p, "", "", "")
	names := make([]string, 0, len(providerDefaults))
	for n := range providerDefaults {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []modelsEntry
	for _, name := range names {
		pf := runFlags{provider: name}
		pc, err := pf.resolveProvider(p, "", "", "")
		d := providerDefaults[name]
		e := modelsEntry{Provider: name, KeyEnv: d.keyEnv, KeySet: os.Getenv(d.keyEnv) != ""}
		if err != nil {
			e.Status = err.Error()
			out = append(out, e)
			continue
		}
		e.BaseURL, e.Model, e.Modes = pc.baseURL, pc.model, pc.models
		e.Default = def != nil && def.name == name
		switch {
		case offline:
			e.Status = "not checked"
		case needsKey(pc) != "":
			e.Status = "no key: set " + d.keyEnv
		default:
			// The configured headers go to the provider runs use without
			// --provider (as its preflight sends them), not to every server.
			var headers map[string]string
			if e.Default {
				headers = p.Config.Model.Headers
			}
			e.Reachable, e.Status = probe(cmd.Context(), name, pc.baseURL, pc.apiKey(), headers)
		}
		out = append(out, e)
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), out)
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tBASE URL\tKEY\tMODELS (fast / smart / deep)\tSTATUS")
	for _, e := range out {
		key := "not set"
		if e.KeySet {
			key = "set"
		}
		models := e.Model
		if len(e.Modes) > 0 {
			models = fmt.Sprintf("%s / %s / %s", orDash(e.Modes["fast"]), orDash(e.Modes["smart"]), orDash(e.Modes["deep"]))
		}
		name := e.Provider
		if e.Default {
			name += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s (%s)\t%s\t%s\n", name, orDash(e.BaseURL), key, e.KeyEnv, models, e.Status)
	}
	fmt.Fprintln(tw, "* the provider ultra run uses without --provider")
	return tw.Flush()
}

// probe asks a provider's model list, with the key in the header its API
// expects and the given extra headers, and says whether the server
// answered.
func probe(ctx context.Context, provider, base, key string, headers map[string]string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := modelsRequest(ctx, provider, base, key, headers)
	if err != nil {
		return false, err.Error()
	}
	resp, err := preflightClient.Do(req)
	if err != nil {
		return false, "no answer: " + netReason(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return false, fmt.Sprintf("answers, but refuses the key (HTTP %d)", resp.StatusCode)
	}
	if resp.StatusCode >= 400 {
		return true, fmt.Sprintf("answers (HTTP %d to %s)", resp.StatusCode, req.URL.Redacted())
	}
	return true, "ok"
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s) > 80 {
		return s[i+2:]
	}
	return s
}
