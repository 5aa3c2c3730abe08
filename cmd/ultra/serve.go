package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/surface/procs"
	"github.com/ultra-dev/ultra/internal/surface/web"
)

// defaultAddr is where ultra serve listens unless told otherwise.
const defaultAddr = "127.0.0.1:7433"

type serveFlags struct {
	addr             string
	listen, insecure bool
	cert, key        string
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the web page of this repository's runs (127.0.0.1 only, unless --listen)",
		Long: "ultra serve offers this repository's runs over HTTP: a JSON API with the same commands as the command line\n" +
			"(OpenAPI at /openapi.json), every event as Server-Sent Events that resume where a dropped connection left off,\n" +
			"and a web page to watch, approve and steer runs. It prints one line: the page's address with the token.\n\n" +
			"Every API request needs the installation's token as the header Authorization: Bearer TOKEN. The token lives in\n" +
			"ultra's per-user state (which no sandbox shows), so a model's commands cannot use the API even when they can reach it.",
		Example: `  ultra serve
  ultra serve --addr 127.0.0.1:0
  ultra serve --listen --addr 0.0.0.0:7433 --tls-cert cert.pem --tls-key key.pem`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", defaultAddr, "the address to listen on, HOST:PORT (port 0: any free one)")
	fl.BoolVar(&f.listen, "listen", false, "allow an address other than loopback (needs --tls-cert and --tls-key, or --insecure)")
	fl.StringVar(&f.cert, "tls-cert", "", "serve HTTPS with this certificate (PEM)")
	fl.StringVar(&f.key, "tls-key", "", "the certificate's private key (PEM)")
	fl.BoolVar(&f.insecure, "insecure", false, "with --listen: serve plain HTTP on a non-loopback address (the token crosses the network in clear)")
	return cmd
}

// checkListen refuses an address others can reach unless the person
// chose it with --listen, and says how its traffic is protected.
func checkListen(f serveFlags) error {
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return usageErr("--addr %q: %v (give HOST:PORT, such as %s)", f.addr, err, defaultAddr)
	}
	if (f.cert == "") != (f.key == "") {
		return usageErr("--tls-cert and --tls-key go together")
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if loopback {
		return nil
	}
	if !f.listen {
		return usageErr("--addr %s is reachable from other machines: ultra serve listens on loopback only, unless --listen is given (with --tls-cert and --tls-key, or --insecure)", f.addr)
	}
	if f.cert == "" && !f.insecure {
		return usageErr("--listen on %s needs TLS (--tls-cert and --tls-key), or --insecure to send the token in clear", f.addr)
	}
	return nil
}

// flagKinds are a command's flags, each with whether it takes a value.
func flagKinds(cmd *cobra.Command) map[string]bool {
	out := map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) { out[f.Name] = f.Value.Type() != "bool" })
	delete(out, "help")
	return out
}

func serve(cmd *cobra.Command, f serveFlags) error {
	if err := checkListen(f); err != nil {
		return err
	}
	p, st, err := openProject(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	prog := ultraProgram()
	if prog == "" {
		return fmt.Errorf("cannot find the ultra program to run commands with")
	}
	dir, err := config.StateDir()
	if err != nil {
		return err
	}
	token, err := web.Token(filepath.Join(dir, "serve.token"))
	if err != nil {
		return err
	}
	rememberRepo(p.Root)
	logs := filepath.Join(p.StateRoot, "web")
	pruneLogs(logs, 24*time.Hour)
	be := &procs.Processes{Store: st, Program: prog, Dir: p.Dir, Logs: logs, Env: append(os.Environ(), "ULTRA_SURFACE=web")}
	s := web.New(web.Options{
		Events: be, Commands: be, Token: token,
		RunFlags: flagKinds(newRunCmd()), ChatFlags: flagKinds(newChatCmd()),
		Project: filepath.Base(p.Root), Version: version, EvidenceRoot: filepath.Join(p.StateRoot, "evidence"),
		Heartbeat: envDuration("ULTRA_SERVE_HEARTBEAT"),
	})
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("ultra serve: %w", err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	scheme := "http"
	if f.cert != "" {
		scheme = "https"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s://%s/?token=%s\n", scheme, ln.Addr(), token)
	done := make(chan error, 1)
	go func() {
		if f.cert != "" {
			done <- srv.ServeTLS(ln, f.cert, f.key)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return fmt.Errorf("ultra serve: %w", err)
	case <-ctx.Done():
	}
	// The streams end with the base context; the runs go on in their own
	// processes.
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// envDuration reads a duration from the environment (0 when unset or
// unreadable): test hooks for timings people do not set.
func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name))
	return d
}
