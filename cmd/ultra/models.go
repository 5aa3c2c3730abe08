package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// modelsEntry is one configured provider, as `ultra models` shows it.
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

func newModelsCmd() *cobra.Command {
	var asJSON, offline bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the model providers, their models by mode, and whether they answer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := findProject(cmd)
			if err != nil {
				return err
			}
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
				case !e.KeySet && d.localURL == "":
					e.Status = "no key: set " + d.keyEnv
				default:
					e.Reachable, e.Status = probe(cmd.Context(), name, pc.baseURL, os.Getenv(d.keyEnv))
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
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&offline, "offline", false, "do not contact the servers")
	return cmd
}

// probe asks a provider's model list, with the key in the header its API
// expects, and says whether the server answered.
func probe(ctx context.Context, provider, base, key string) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	url := strings.TrimSuffix(base, "/") + "/models"
	switch provider {
	case "anthropic":
		url = strings.TrimSuffix(strings.TrimSuffix(base, "/"), "/v1") + "/v1/models"
	case "gemini":
		url = strings.TrimSuffix(base, "/") + "/v1beta/models"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	if key != "" {
		switch provider {
		case "anthropic":
			req.Header.Set("x-api-key", key)
			req.Header.Set("anthropic-version", "2023-06-01")
		case "gemini":
			req.Header.Set("x-goog-api-key", key)
		default:
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, "no answer: " + shortErr(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return false, fmt.Sprintf("answers, but refuses the key (HTTP %d)", resp.StatusCode)
	}
	if resp.StatusCode >= 400 {
		return true, fmt.Sprintf("answers (HTTP %d to %s)", resp.StatusCode, url)
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
