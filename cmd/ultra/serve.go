package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/net/netutil"

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
	noWorker         bool
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the web page of this repository's runs (127.0.0.1 only, unless --listen)",
		Long: "ultra serve offers this repository's runs over HTTP: a JSON API with the same commands as the command line\n" +
			"(OpenAPI at /openapi.json), every event as Server-Sent Events that resume where a dropped connection left off,\n" +
			"and a web page to watch, approve and steer runs. It prints one line: the page's address with a one-time code\n" +
			"(the page trades it for a session token; a browser's history keeps only a spent code). It also dispatches\n" +
			"the repository's schedules, as ultra worker does (--no-worker: not).\n\n" +
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
	fl.BoolVar(&f.noWorker, "no-worker", false, "do not dispatch the repository's schedules (ultra serve runs a worker, as ultra worker, unless told not to)")
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
	tokenFile := filepath.Join(dir, "serve.token")
	token, err := web.Token(tokenFile)
	if err != nil {
		return err
	}
	rememberRepo(p.Root)
	logs := filepath.Join(p.StateRoot, "web")
	// Never through a link the repository commits in ultra's state.
	if err := realDirs(p.Root, logs); err != nil {
		return err
	}
	pruneLogs(logs, 24*time.Hour)
	be := &procs.Processes{Store: st, Program: prog, Dir: p.Dir, Logs: logs, Env: append(os.Environ(), "ULTRA_SURFACE=web")}
	s := web.New(web.Options{
		Events: be, Commands: be, Token: token, TokenFile: tokenFile,
		RunFlags: flagKinds(newRunCmd()), ChatFlags: flagKinds(newChatCmd()),
		Project: filepath.Base(p.Root), Root: p.Root, Version: version, EvidenceRoot: filepath.Join(p.StateRoot, "evidence"),
		Heartbeat: envDuration("ULTRA_SERVE_HEARTBEAT"),
	})
	if f.cert != "" {
		// A certificate that does not load is found before anything is
		// printed or served.
		if _, err := tls.LoadX509KeyPair(f.cert, f.key); err != nil {
			return usageErr("--tls-cert %s, --tls-key %s: %v", f.cert, f.key, err)
		}
	}
	lns, err := listen(f.addr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	// On loopback, only the loopback names of the port are served.
	if hosts := loopbackHosts(lns); hosts != nil {
		s.SetHosts(hosts)
	}
	// A client that sends nothing, or holds an idle connection, is let
	// go; and there are only so many connections at once, whoever opens
	// them (the streams included).
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context { return base }}
	scheme := "http"
	if f.cert != "" {
		scheme = "https"
	}
	// The address carries a one-time code, not the token: a browser keeps
	// every address it opens, and the code is spent once the page has it.
	fmt.Fprintf(cmd.OutOrStdout(), "%s://%s/?code=%s\n", scheme, shown(lns[0].Addr()), s.NewCode())
	// Go's log of a client's failed TLS handshake is not the person's news.
	srv.ErrorLog = log.New(io.Discard, "", 0)
	done := make(chan error, len(lns))
	for _, ln := range lns {
		ln := netutil.LimitListener(ln, maxConns)
		go func() {
			if f.cert != "" {
				done <- srv.ServeTLS(ln, f.cert, f.key)
			} else {
				done <- srv.Serve(ln)
			}
		}()
	}
	if !f.noWorker {
		// The schedules are dispatched here too, logged to the errors:
		// the one line on the output is the page's address.
		d, err := newDispatcher(p, st, 1, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		wdone := make(chan struct{})
		go func() { d.Serve(ctx); close(wdone) }()
		// The worker records that it stopped before the store closes.
		defer func() { stop(); <-wdone }()
	}
	select {
	case err := <-done:
		return err
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

// loopbackHosts are the Host headers of a loopback server's port (nil
// for a server others reach).
func loopbackHosts(lns []net.Listener) []string {
	var out []string
	for _, ln := range lns {
		a, ok := ln.Addr().(*net.TCPAddr)
		if !ok || !a.IP.IsLoopback() {
			return nil
		}
		p := strconv.Itoa(a.Port)
		out = append(out, ln.Addr().String(), "localhost:"+p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// shown is the address to print: a server on every interface is named by
// the machine's name (what another machine would use), not 0.0.0.0 or [::].
func shown(a net.Addr) string {
	t, ok := a.(*net.TCPAddr)
	if !ok || !t.IP.IsUnspecified() {
		return a.String()
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		name = "localhost"
	}
	return net.JoinHostPort(name, strconv.Itoa(t.Port))
}

// maxConns is how many connections ultra serve holds at once.
const maxConns = 256

// listen opens the address; for a loopback address of IPv4 it takes the
// same port on IPv6's loopback too (and the other way round), where a
// client that resolves "localhost" may go first: nothing else, a model's
// program included, may listen there in the server's place.
func listen(addr string) ([]net.Listener, error) {
	host, port, _ := net.SplitHostPort(addr)
	twin := map[string]string{"127.0.0.1": "::1", "::1": "127.0.0.1", "localhost": ""}
	other, paired := twin[host]
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", addr)
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s is taken (another ultra serve?): give another port with --addr, or --addr %s:0 for any free one", addr, host)
		}
		if err != nil {
			return nil, err
		}
		if !paired || other == "" {
			return []net.Listener{ln}, nil
		}
		_, got, _ := net.SplitHostPort(ln.Addr().String())
		ln2, err := net.Listen("tcp", net.JoinHostPort(other, got))
		if err == nil {
			return []net.Listener{ln, ln2}, nil
		}
		var se *os.SyscallError
		if errors.As(err, &se) && (errors.Is(se.Err, syscall.EADDRNOTAVAIL) || errors.Is(se.Err, syscall.EAFNOSUPPORT)) {
			return []net.Listener{ln}, nil // no IPv6 (or IPv4) loopback here
		}
		ln.Close()
		if port == "0" && attempt < 5 {
			continue // any free port: try another
		}
		return nil, fmt.Errorf("%s is free but %s is taken by another program, where a browser may go instead: stop it, or give another port with --addr",
			ln.Addr(), net.JoinHostPort(other, got))
	}
}

// envDuration reads a duration from the environment (0 when unset or
// unreadable): test hooks for timings people do not set.
func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name))
	return d
}
