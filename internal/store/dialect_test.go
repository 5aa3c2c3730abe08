package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE id=?`, `SELECT a FROM t WHERE id=$1`},
		{`INSERT INTO t (a,b,c) VALUES (?,?,?)`, `INSERT INTO t (a,b,c) VALUES ($1,$2,$3)`},
		{`WHERE r.id = ? OR r.id LIKE ? ESCAPE '\' ORDER BY r.id LIMIT ?`,
			`WHERE r.id = $1 OR r.id LIKE $2 ESCAPE '\' ORDER BY r.id LIMIT $3`},
		// Literals, quoted identifiers, comments keep their ?.
		{`SELECT '?', ?`, `SELECT '?', $1`},
		{`SELECT 'it''s ?', ?`, `SELECT 'it''s ?', $1`},
		{`SELECT '', ?, ''''`, `SELECT '', $1, ''''`},
		{`SELECT "a?b" FROM t WHERE x=?`, `SELECT "a?b" FROM t WHERE x=$1`},
		{`SELECT "a""?" , ?`, `SELECT "a""?" , $1`},
		{`SELECT E'\'?', ?`, `SELECT E'\'?', $1`},
		{`SELECT e'\\', ?, '?'`, `SELECT e'\\', $1, '?'`},
		{`SELECT TYPE'?', ?`, `SELECT TYPE'?', $1`}, // not an E string: the ' closes it
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{"SELECT 1 -- ?", "SELECT 1 -- ?"},
		{`SELECT /* ? /* ? */ ? */ ?`, `SELECT /* ? /* ? */ ? */ $1`},
		{`SELECT 5-?, 6/?`, `SELECT 5-$1, 6/$2`},
		{`SELECT $$?$$, ?`, `SELECT $$?$$, $1`},
		{`SELECT $f$ it's ? $$ $f$, ?`, `SELECT $f$ it's ? $$ $f$, $1`},
		{`SELECT a$b, ?`, `SELECT a$b, $1`},
		{`SELECT $1 || '?', ?`, `SELECT $1 || '?', $1`}, // $1 is no tag (and mixing the forms is wrong)
		// JSON paths, as the queries write them.
		{`SELECT COALESCE(json_extract(r.workspace, '$.branch'), '') WHERE id=?`,
			`SELECT COALESCE(json_extract(r.workspace, '$.branch'), '') WHERE id=$1`},
		// Unterminated: the rest is the literal.
		{`SELECT ?, 'x?`, `SELECT $1, 'x?`},
		{`SELECT ?, /* ?`, `SELECT $1, /* ?`},
		{`SELECT ?, $x$ ?`, `SELECT $1, $x$ ?`},
		{`SELECT ?, "?`, `SELECT $1, "?`},
		{`?`, `$1`},
		{`??`, `$1$2`},
		{`SELECT ? é ?`, `SELECT $1 é $2`},
	} {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	var twelve string
	for range 12 {
		twelve += "?,"
	}
	if got := rebind(twelve); got != "$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12," {
		t.Errorf("twelve: %s", got)
	}
}

func TestIsPostgresURL(t *testing.T) {
	for in, want := range map[string]bool{
		"postgres://u:p@h/db":                  true,
		"postgresql://h/db?sslmode=disable":    true,
		"POSTGRES://h/db":                      true,
		"postgres:///ultra?host=/run/postgres": true,
		"/home/me/.ultra/state/ultra.db":       false,
		"ultra.db":                             false,
		"postgres.db":                          false,
		"file:postgres://x":                    false,
		"":                                     false,
	} {
		if got := isPostgresURL(in); got != want {
			t.Errorf("isPostgresURL(%q) = %v", in, got)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://ultra:secret@db.example/ultra":          "postgres://ultra:xxxxx@db.example/ultra",
		"postgres:///ultra?host=%2Frun&password=secret":     "postgres:///ultra?host=%2Frun&password=xxxxx",
		"postgres://ultra@h/ultra":                          "postgres://ultra@h/ultra",
		"/r/.ultra/state/ultra.db":                          "/r/.ultra/state/ultra.db",
		"postgres://ultra:p@h:port/ultra":                   "a postgres URL that does not parse",
		"postgresql://a:b@[::1]:5432/ultra?sslmode=require": "postgresql://a:xxxxx@[::1]:5432/ultra?sslmode=require",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsBusy(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{errors.New("database is locked (5) (SQLITE_BUSY)"), true},
		{errors.New("no such table: runs"), false},
		{&pgconn.PgError{Code: "40001"}, true},
		{&pgconn.PgError{Code: "40P01"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
	} {
		if got := isBusy(c.err); got != c.want {
			t.Errorf("isBusy(%v) = %v", c.err, got)
		}
	}
}

// On Postgres, text arguments become valid UTF-8 without NUL; the
// caller's arguments and other types are left as they are.
func TestBindText(t *testing.T) {
	args := []any{"ok", "a\x00b", "c\xff\xfed", 7, []byte("\x00")}
	q, got := conn{pg: true}.bind(`SELECT ?,?,?,?,?`, args)
	if q != `SELECT $1,$2,$3,$4,$5` || fmt.Sprint(got) != fmt.Sprint([]any{"ok", "a\uFFFDb", "c\uFFFDd", 7, []byte("\x00")}) {
		t.Fatalf("%s %q", q, got)
	}
	if args[1] != "a\x00b" {
		t.Fatal("the caller's arguments changed")
	}
	if q, got := (conn{}).bind(`SELECT ?`, args[1:2]); q != `SELECT ?` || got[0] != "a\x00b" {
		t.Fatalf("sqlite: %s %q", q, got)
	}
}
