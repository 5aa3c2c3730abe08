package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ultra-dev/ultra/internal/store/pgtest"
)

// TestMain stops the Postgres cluster the tests started, if they did.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// backends are what every test of the store runs on.
var backends = []string{SQLite, Postgres}

// newDSN is where a fresh, empty store of backend lives: a SQLite file
// in a temporary directory, or a new Postgres database dropped when tb
// ends (tb is skipped, saying why, when no Postgres is to be had).
func newDSN(tb testing.TB, backend string) string {
	tb.Helper()
	if backend == Postgres {
		return pgtest.URL(tb)
	}
	return filepath.Join(tb.TempDir(), "state", "ultra.db")
}

// forEachBackend runs f as a subtest (or sub-benchmark) of tb for each
// backend, with the dsn of a fresh store.
func forEachBackend[T interface {
	testing.TB
	Run(string, func(T)) bool
}](tb T, f func(tb T, dsn string)) {
	tb.Helper()
	for _, b := range backends {
		tb.Run(b, func(tb T) { f(tb, newDSN(tb, b)) })
	}
}

// openAt opens the store at dsn, closed when tb ends.
func openAt(tb testing.TB, dsn string) *Store {
	tb.Helper()
	s, err := Open(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}
