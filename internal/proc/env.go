package proc

import (
	"os"
	"strings"
)

// secretSuffixes mark environment variables that hold credentials the
// model must never see: commands ultra runs for the model do not get them.
var secretSuffixes = []string{"_API_KEY", "_API_TOKEN", "_SECRET_KEY", "_ACCESS_KEY"}

// IsSecret reports whether the environment variable name holds a
// credential that commands run for the model must not inherit.
func IsSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range secretSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	return up == "OPENAI_KEY" || up == "ANTHROPIC_KEY" || strings.HasPrefix(up, "ULTRA_KEY")
}

// Environ is the environment for commands run on the model's behalf: the
// current one without credentials (see IsSecret), with overrides applied
// (each "KEY=value" replaces any inherited KEY).
func Environ(overrides ...string) []string {
	drop := map[string]bool{}
	for _, kv := range overrides {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] && !IsSecret(k) {
			env = append(env, kv)
		}
	}
	return append(env, overrides...)
}
