package proc

import (
	"os"
	"strings"
)

// secretSuffixes mark environment variables that hold credentials the
// model must never see: commands ultra runs for the model do not get them.
var secretSuffixes = []string{"_KEY", "_PAT", "APIKEY", "_AUTH", "_CREDENTIALS", "_SESSION"}

// secretParts mark credentials wherever they stand in the name.
var secretParts = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "API_KEY", "ACCESS_KEY"}

// IsSecret reports whether the environment variable name holds a
// credential that commands run for the model must not inherit:
// GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, NPM_TOKEN, *_PASSWORD, *_API_KEY,
// OPENAI_KEY, … (names that merely mention a key's place, such as
// SSH_AUTH_SOCK, are not).
func IsSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range secretSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	for _, s := range secretParts {
		if strings.Contains(up, s) {
			return true
		}
	}
	return strings.HasPrefix(up, "ULTRA_KEY") || databaseVars[up]
}

// databaseVars name a database and how to log in to it: ultra's shared
// store (ULTRA_DB, whose URL may carry a password) and libpq's.
var databaseVars = map[string]bool{"ULTRA_DB": true, "DATABASE_URL": true, "PGPASSFILE": true, "PGSERVICEFILE": true, "ULTRA_TEST_POSTGRES": true}

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
