package sandbox

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// homeSecrets are where people keep credentials in their home directory:
// hidden from every sandboxed command.
var homeSecrets = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker",
	".netrc", ".git-credentials", ".config/git/credentials", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc",
	".cargo/credentials", ".cargo/credentials.toml", ".config/gh", ".config/hub", ".config/glab-cli",
	".password-store", ".local/share/keyrings", ".terraform.d/credentials.tfrc.json", ".m2/settings.xml",
	".gradle/gradle.properties", ".config/op", ".vault-token", ".bash_history", ".zsh_history",
	".python_history", ".psql_history", ".mysql_history", ".lesshst", ".viminfo",
	".pgpass", ".my.cnf", ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile",
	".config/fish", ".env", ".envrc", ".s3cfg", ".boto", ".config/rclone", ".oci", ".config/doctl", ".config/hcloud",
	".config/heroku", ".netlify", ".vercel", ".config/configstore", ".composer/auth.json", ".config/composer/auth.json",
	".gem/credentials", ".nuget/NuGet/NuGet.Config", ".ivy2/.credentials", ".sbt/credentials", ".gradle/init.d",
	// Browsers' profiles: their history, cookies and session storage
	// hold what a person opened (ultra serve's page, logged-in sites).
	".mozilla", ".config/chromium", ".config/google-chrome", ".config/google-chrome-beta", ".config/google-chrome-unstable",
	".config/BraveSoftware", ".config/microsoft-edge", ".config/vivaldi", ".config/opera", ".cache/chromium",
	".cache/google-chrome", ".cache/mozilla", "snap/chromium", "snap/firefox", ".var/app", ".local/share/recently-used.xbel",
}

// systemSecrets are the host's per-user runtime directories (agent and
// bus sockets).
var systemSecrets = []string{"/run/user", "/var/run/user", "/run/dbus", "/var/run/dbus",
	// Sockets of local services that would give the command the machine.
	"/run/docker.sock", "/var/run/docker.sock", "/run/docker", "/run/containerd", "/run/podman", "/var/run/podman",
	"/run/libvirt", "/var/run/libvirt", "/run/snapd.socket", "/run/snapd-snap.socket", "/run/systemd/private",
	"/run/systemd/journal", "/run/systemd/userdb", "/var/run/nscd", "/run/nscd", "/run/sudo",
	// PostgreSQL's sockets: with trust or peer authentication the socket
	// alone lets a process in (a fleet's shared store among them).
	"/run/postgresql", "/var/run/postgresql", "/tmp/.s.PGSQL.5432", "/tmp/.s.PGSQL.5432.lock"}

// Secrets are the host paths no sandboxed command may see: the person's
// credential files under home, the runtime sockets of their agents, and
// the socket directories of the databases ultra's environment names
// (ULTRA_DB, PGHOST).
func Secrets(home string) []string {
	out := append([]string(nil), systemSecrets...)
	out = append(out, databaseSockets(os.Getenv("ULTRA_DB"), os.Getenv("PGHOST"))...)
	if home != "" {
		for _, s := range homeSecrets {
			out = append(out, filepath.Join(home, s))
		}
	}
	return out
}

// toolHomes are programs that live under the home directory and find
// themselves through a variable whose default is under $HOME: with a
// private HOME they would not find their installation.
var toolHomes = []struct{ env, dir string }{
	{"PYENV_ROOT", ".pyenv"}, {"CARGO_HOME", ".cargo"}, {"RUSTUP_HOME", ".rustup"},
	{"NVM_DIR", ".nvm"}, {"VOLTA_HOME", ".volta"}, {"BUN_INSTALL", ".bun"},
	{"SDKMAN_DIR", ".sdkman"}, {"ASDF_DATA_DIR", ".asdf"}, {"GOPATH", "go"},
}

// ToolEnv is what a command with a private home needs to keep finding
// the host's tools and caches, read-only: the tool homes above that exist
// (unless env sets them), Go's module cache, build cache and the person's
// go env file. None of them can be written from inside: go reads the
// build cache and compiles what is missing without storing it, so tests
// can never plant a compiled package for a later verification to pick up.
// Without a host build cache, the private home's own is used.
func ToolEnv(home string, env []string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	if home != "" {
		for _, t := range toolHomes {
			if set[t.env] {
				continue
			}
			if fi, err := os.Stat(filepath.Join(home, t.dir)); err == nil && fi.IsDir() {
				out = append(out, t.env+"="+filepath.Join(home, t.dir))
			}
		}
	}
	g := goEnv()
	if !set["GOMODCACHE"] && g.modcache != "" {
		out = append(out, "GOMODCACHE="+g.modcache)
	}
	if !set["GOENV"] && g.env != "" {
		out = append(out, "GOENV="+g.env)
	}
	if !set["GOCACHE"] && g.cache != "" {
		out = append(out, "GOCACHE="+g.cache)
	}
	return out
}

var (
	goEnvOnce sync.Once
	goEnvVals struct{ modcache, env, cache, flags string }
)

// GoCache is the host's Go build cache ("" when there is none yet).
func GoCache() string { return goEnv().cache }

// GoFlags is the person's GOFLAGS, from the environment or the go env
// file.
func GoFlags() string { return goEnv().flags }

// goEnv is the host's Go module cache and go env file, asked of the go
// command once (nothing when Go is not installed).
func goEnv() struct{ modcache, env, cache, flags string } {
	goEnvOnce.Do(func() {
		path, err := exec.LookPath("go")
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, path, "env", "GOMODCACHE", "GOENV", "GOCACHE", "GOFLAGS").Output()
		if err != nil {
			return
		}
		lines := strings.Split(string(out), "\n") // one a variable, empty ones too
		if len(lines) >= 4 {
			goEnvVals.flags = strings.TrimSpace(lines[3])
			if c := strings.TrimSpace(lines[2]); c != "off" {
				if _, err := os.Stat(filepath.Join(c, "README")); err == nil {
					goEnvVals.cache = c
				}
			}
			goEnvVals.modcache = strings.TrimSpace(lines[0])
			if e := strings.TrimSpace(lines[1]); e != "off" {
				if _, err := os.Stat(e); err == nil {
					goEnvVals.env = e
				}
			}
		}
	})
	return goEnvVals
}

// databaseSockets are the socket directories a PostgreSQL URL (its host
// query parameter, or a host that is a path) and a PGHOST name.
func databaseSockets(dbURL, pgHost string) []string {
	var hosts []string
	if u, err := url.Parse(dbURL); err == nil && dbURL != "" {
		hosts = append(hosts, strings.Split(u.Query().Get("host"), ",")...)
		if h, err := url.PathUnescape(u.Host); err == nil {
			hosts = append(hosts, h)
		}
	}
	hosts = append(hosts, strings.Split(pgHost, ",")...)
	var out []string
	for _, h := range hosts {
		if h = strings.TrimSpace(h); strings.HasPrefix(h, "/") && !slices.Contains(out, filepath.Clean(h)) {
			out = append(out, filepath.Clean(h))
		}
	}
	return out
}
