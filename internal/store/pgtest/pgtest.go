// Package pgtest gives tests a PostgreSQL server and fresh databases on
// it: the server ULTRA_TEST_POSTGRES names (a URL of a server where the
// tests may create databases), or else a throwaway cluster it starts
// itself, once per test binary, in a temporary directory, listening on a
// Unix socket only, with fsync off. When uid is 0 the cluster runs as
// the postgres user (postgres refuses root). A package that uses it
// stops the cluster at the end with
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// (without it the cluster dies with the test binary, its directory left
// behind). Tests skip, saying why, only when neither the variable nor the
// programs (initdb and postgres on PATH or in /usr/lib/postgresql/*/bin)
// are there.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Env is the variable that names a server to use instead of a cluster
// of pgtest's own.
const Env = "ULTRA_TEST_POSTGRES"

var (
	once    sync.Once
	server  string // the server's URL
	noneWhy string // why there is no server to skip for ("" when there is one)
	failed  error  // why the cluster did not start
	admin   *sql.DB
	running *cluster
)

// Main runs the tests, then stops the cluster pgtest started, if it
// started one, and returns m.Run's code.
func Main(m *testing.M) int {
	code := m.Run()
	if admin != nil {
		admin.Close()
	}
	if running != nil {
		if err := running.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	return code
}

// Server returns the URL of the server the tests use, starting the
// throwaway cluster on the first call; tb is skipped when there is no
// server to be had.
func Server(tb testing.TB) string {
	tb.Helper()
	once.Do(setup)
	switch {
	case noneWhy != "":
		tb.Skip(noneWhy)
	case failed != nil:
		tb.Fatalf("postgres: %v", failed)
	}
	return server
}

// URL returns the URL of a new, empty database on the server, dropped
// when tb ends.
func URL(tb testing.TB) string {
	tb.Helper()
	srv := Server(tb)
	u, err := url.Parse(srv)
	if err != nil {
		tb.Fatalf("postgres: %s: %v", Env, err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	name := "ultra_test_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		tb.Fatalf("postgres: creating a test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("postgres: dropping test database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

func setup() {
	server = os.Getenv(Env)
	if server == "" {
		bin := binDir()
		if bin == "" {
			noneWhy = "postgres: " + Env + " is not set, and initdb and postgres are neither on PATH nor in /usr/lib/postgresql/*/bin"
			return
		}
		c, err := startCluster(bin)
		if err != nil {
			failed = err
			return
		}
		running, server = c, c.url
	}
	db, err := sql.Open("pgx", server)
	if err == nil {
		db.SetMaxOpenConns(2)
		err = ping(db, 10*time.Second)
	}
	if err != nil {
		failed = fmt.Errorf("%s: %w", redacted(server), err)
		return
	}
	admin = db
}

func redacted(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "a URL that does not parse"
}

// binDir is the directory of initdb and postgres: PATH's, or the newest
// of Debian's /usr/lib/postgresql/N/bin; "" when there is none.
func binDir() string {
	if i, err := exec.LookPath("initdb"); err == nil {
		if p, err := exec.LookPath("postgres"); err == nil && filepath.Dir(i) == filepath.Dir(p) {
			return filepath.Dir(i)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d
		}
	}
	return ""
}

func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// cluster is a postgres server pgtest started.
type cluster struct {
	dir    string // data, socket and log
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
}

func startCluster(bin string) (*cluster, error) {
	// A short directory: a socket's path is limited to 107 bytes.
	base := os.TempDir()
	if len(base) > 60 {
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "ultra-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir, exited: make(chan struct{})}
	if err := c.start(bin); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) start(bin string) error {
	attr, err := c.owner()
	if err != nil {
		return err
	}
	data := filepath.Join(c.dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	initdb.Dir, initdb.SysProcAttr = c.dir, attr
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return c.launch(bin, attr)
}

// owner is how the server's processes run: as the postgres user when
// the tests run as root (which postgres refuses).
func (c *cluster) owner() (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root (which postgres refuses), and no postgres user to run it as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(c.dir, uid, gid); err != nil {
			return nil, err
		}
		attr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Reachable by the tests, whoever runs the server.
	if err := os.Chmod(c.dir, 0o755); err != nil {
		return nil, err
	}
	return attr, nil
}

// launch starts the server on the cluster's data and waits until it
// answers.
func (c *cluster) launch(bin string, attr *syscall.SysProcAttr) error {
	data := filepath.Join(c.dir, "data")
	logPath := filepath.Join(c.dir, "log")
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	c.cmd = exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-k", c.dir, "-F",
		"-c", "listen_addresses=", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	c.cmd.Dir, c.cmd.Stdout, c.cmd.Stderr = c.dir, log, log
	// The server dies with the test binary, even one that is killed
	// (fast shutdown).
	run := *attr
	run.Pdeathsig = syscall.SIGINT
	c.cmd.SysProcAttr = &run
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	exited := make(chan struct{})
	c.exited = exited
	go func() { c.cmd.Wait(); close(exited) }()
	c.url = (&url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/postgres",
		RawQuery: url.Values{"host": {c.dir}}.Encode()}).String()
	db, err := sql.Open("pgx", c.url)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := ping(db, time.Second)
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("the server stopped: %s", out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("the server does not answer after a minute: %v\n%s", err, out)
		}
	}
}

func ping(db *sql.DB, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return db.PingContext(ctx)
}

// stop shuts the server down (fast, then immediately, then killed) and
// removes its directory.
func (c *cluster) stop() error {
	var errs []error
	if c.cmd != nil && c.cmd.Process != nil {
		stopped := false
		for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL} {
			c.cmd.Process.Signal(sig)
			select {
			case <-c.exited:
				stopped = true
			case <-time.After(20 * time.Second):
			}
			if stopped {
				break
			}
		}
		if !stopped {
			errs = append(errs, fmt.Errorf("the server in %s did not stop", c.dir))
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Private is a server of the test's own, which it may stop and start
// (Restart) without disturbing the other tests' server: its URL names
// the database postgres. It is skipped, saying why, without binaries.
type Private struct {
	c   *cluster
	bin string
}

// NewPrivate starts a private server, stopped when tb ends.
func NewPrivate(tb testing.TB) *Private {
	tb.Helper()
	bin := binDir()
	if bin == "" {
		tb.Skip("postgres: initdb and postgres are neither on PATH nor in /usr/lib/postgresql/*/bin")
	}
	c, err := startCluster(bin)
	if err != nil {
		tb.Fatalf("postgres: %v", err)
	}
	tb.Cleanup(func() { c.stop() })
	return &Private{c: c, bin: bin}
}

// URL is the private server's database postgres.
func (p *Private) URL() string { return p.c.url }

// Restart stops the server (fast: its clients are cut off) and, after
// down, starts it again on the same data.
func (p *Private) Restart(tb testing.TB, down time.Duration) {
	tb.Helper()
	p.c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.c.exited:
	case <-time.After(30 * time.Second):
		tb.Fatal("postgres: the private server did not stop")
	}
	time.Sleep(down)
	attr, err := p.c.owner()
	if err == nil {
		err = p.c.launch(p.bin, attr)
	}
	if err != nil {
		tb.Fatalf("postgres: restarting: %v", err)
	}
}
