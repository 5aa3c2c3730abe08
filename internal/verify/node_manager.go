package verify

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// npmPlaceholder is in the test script npm init writes:
// echo "Error: no test specified" && exit 1
const npmPlaceholder = "no test specified"

// lockfiles maps lockfiles to the package manager that runs the tests,
// in order of precedence. npm's own lockfiles are at the end.
var lockfiles = []struct{ file, manager string }{
	{"pnpm-lock.yaml", "pnpm"},
	{"yarn.lock", "yarn"},
	{"bun.lock", "bun"},
	{"bun.lockb", "bun"},
	{"package-lock.json", "npm"},
	{"npm-shrinkwrap.json", "npm"},
}

// testScript is how each package manager runs scripts.test, and how it
// passes arguments on to it.
var testScript = map[string]struct{ run, sep string }{
	"npm":  {"npm test", " -- "},
	"pnpm": {"pnpm test", " "},
	"yarn": {"yarn test", " "},
	"bun":  {"bun run test", " "},
}

// nodeManager is the package manager chosen to run scripts.test.
type nodeManager struct {
	name string // npm, pnpm, yarn or bun: the one that runs the script
	run  string // the command running scripts.test
	sep  string // between run and the arguments for the script
	// ok: the manager is installed (false: nothing usable was found and
	// run is the wanted manager's, which will report itself missing).
	ok  bool
	why string // for the reason: "yarn, yarn.lock", or the fallback
}

// chooseManager picks the package manager that runs scripts.test: the one
// the lockfile (else the packageManager field, else npm) names when it is
// installed; else corepack's copy of it when corepack has that version in
// its cache; else npm, which runs any package.json script.
func chooseManager(dir, field string) (nodeManager, error) {
	want, from := "", ""
	for _, l := range lockfiles {
		ok, err := isFile(filepath.Join(dir, l.file))
		if err != nil {
			return nodeManager{}, err
		}
		if ok {
			want, from = l.manager, l.file
			break
		}
	}
	fieldName, _, _ := strings.Cut(field, "@")
	if want == "" {
		// No lockfile: the packageManager field ("pnpm@9.1.0") may say.
		if _, known := testScript[fieldName]; known {
			want, from = fieldName, "packageManager field"
		}
	}
	if want == "" {
		want, from = "npm", "no lockfile"
	}
	ts := testScript[want]
	if installed(want) {
		return nodeManager{name: want, run: ts.run, sep: ts.sep, ok: true, why: want + ", " + from}, nil
	}
	names := from + " names " + want
	if from == "no lockfile" {
		names = "no lockfile: " + want
	}
	missing := names + ", which is not installed"
	if want == "yarn" || want == "pnpm" {
		if version, home := corepackReady(want, field); version != "" {
			return nodeManager{
				name: want, ok: true, sep: ts.sep,
				run: "COREPACK_ENABLE_NETWORK=0 COREPACK_HOME=" + shq(home) + " corepack " + ts.run,
				why: fmt.Sprintf("%s: corepack runs %s %s from its cache", missing, want, version),
			}, nil
		}
	}
	if want != "npm" && installed("npm") {
		return nodeManager{name: "npm", run: "npm test", sep: " -- ", ok: true, why: missing + ": npm runs the script"}, nil
	}
	if want != "npm" {
		missing += ", nor is npm"
	}
	return nodeManager{name: want, run: ts.run, sep: ts.sep, why: missing}, nil
}

// corepackReady returns the version of package manager pm corepack would
// run without the network, and corepack's home, or "" when it would need
// the network. Corepack downloads a manager it does not have, which fails
// offline (the gate runs the tests without network, and with a private
// HOME, hence COREPACK_HOME in the command): it is used only when the
// version it would pick — the packageManager field's exact version, else
// the one its lastKnownGood.json names — is already in its cache. Nothing
// is run to find out: corepack would start the project's own yarn (a
// yarnPath in .yarnrc.yml) outside the sandbox.
func corepackReady(pm, field string) (version, home string) {
	if !installed("corepack") {
		return "", ""
	}
	home = os.Getenv("COREPACK_HOME")
	if home == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", ""
			}
			cache = filepath.Join(h, ".cache")
		}
		home = filepath.Join(cache, "node", "corepack")
	}
	if !filepath.IsAbs(home) {
		return "", ""
	}
	name, ver, _ := strings.Cut(field, "@")
	switch {
	case name != "" && name != pm:
		return "", "" // corepack refuses to run another manager than the field's
	case ver != "":
		ver, _, _ = strings.Cut(ver, "+") // the hash
	default:
		data, ok, _ := readSmall(filepath.Join(home, "lastKnownGood.json"))
		var lkg map[string]any
		if !ok || json.Unmarshal([]byte(data), &lkg) != nil {
			return "", ""
		}
		ver, _ = lkg[pm].(string)
	}
	if !exactVersionRE.MatchString(ver) {
		return "", ""
	}
	if ok, _ := isFile(filepath.Join(home, "v1", pm, ver, ".corepack")); !ok {
		return "", ""
	}
	return ver, home
}

var exactVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?$`)
