package store

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Backends a store can live in (Store.Backend).
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// isPostgresURL: dsn names a Postgres database (postgres:// or
// postgresql://, with ?host=/socket/dir for a Unix socket); anything
// else is a SQLite file.
func isPostgresURL(dsn string) bool {
	scheme, _, ok := strings.Cut(dsn, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// redact is dsn as an error may show it: a Postgres URL without its
// password.
func redact(dsn string) string {
	if !isPostgresURL(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "a postgres URL that does not parse"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// rebind rewrites the ? placeholders of a query as Postgres's $1, $2, …
// in order. A ? inside a string literal ('…', E'…'), a quoted identifier
// ("…"), a dollar-quoted string ($$…$$, $tag$…$tag$) or a comment (--,
// /* */, nested) is left alone. Queries are written once, in the ? form
// SQLite reads; on Postgres write jsonb_exists() and its kin instead of
// the ?, ?| and ?& operators, which would be taken for placeholders.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); {
		j := skipQuoted(q, i)
		if j > i {
			b.WriteString(q[i:j])
			i = j
			continue
		}
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		} else {
			b.WriteByte(q[i])
		}
		i++
	}
	return b.String()
}

// skipQuoted returns the end of the literal, quoted identifier or
// comment that starts at q[i], or i when none does. An unterminated one
// runs to the end of q.
func skipQuoted(q string, i int) int {
	identBefore := i > 0 && isIdentByte(q[i-1])
	switch c := q[i]; {
	case c == '\'' && i > 0 && (q[i-1] == 'E' || q[i-1] == 'e') && !(i > 1 && isIdentByte(q[i-2])):
		// E'…': backslash escapes; '' is a quote too.
		for j := i + 1; j < len(q); j++ {
			switch q[j] {
			case '\\':
				j++
			case '\'':
				return j + 1
			}
		}
		return len(q)
	case c == '\'' || c == '"':
		// A doubled quote inside reads as the literal's end and the
		// next one's start: the same bytes are skipped.
		if k := strings.IndexByte(q[i+1:], c); k >= 0 {
			return i + 1 + k + 1
		}
		return len(q)
	case c == '-' && strings.HasPrefix(q[i:], "--"):
		if k := strings.IndexByte(q[i:], '\n'); k >= 0 {
			return i + k + 1
		}
		return len(q)
	case c == '/' && strings.HasPrefix(q[i:], "/*"):
		depth := 0
		for j := i; j+1 < len(q); j++ {
			switch q[j : j+2] {
			case "/*":
				depth++
				j++
			case "*/":
				depth--
				j++
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(q)
	case c == '$' && !identBefore:
		// $tag$…$tag$, the tag an identifier or empty; $1 is no tag.
		k := i + 1
		for k < len(q) && q[k] != '$' && isIdentByte(q[k]) && !(k == i+1 && q[k] >= '0' && q[k] <= '9') {
			k++
		}
		if k >= len(q) || q[k] != '$' {
			return i
		}
		tag := q[i : k+1]
		if e := strings.Index(q[k+1:], tag); e >= 0 {
			return k + 1 + e + len(tag)
		}
		return len(q)
	}
	return i
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// querier is what a database and a transaction have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn is a database or a transaction that takes queries in the ? form
// on either backend.
type conn struct {
	q  querier
	pg bool
}

// bind is a query and its arguments for the backend: on Postgres the
// query rebound, and text arguments made what Postgres's text holds,
// valid UTF-8 without NUL (a command's output, kept as a run's partial
// output, can have either): each bad byte becomes U+FFFD. SQLite keeps
// text as it is given.
func (c conn) bind(query string, args []any) (string, []any) {
	if !c.pg {
		return query, args
	}
	copied := false
	for i, a := range args {
		if s, ok := a.(string); ok && !pgText(s) {
			if !copied { // the caller's slice stays as it was
				args, copied = append([]any(nil), args...), true
			}
			args[i] = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
		}
	}
	return rebind(query), args
}

// pgText: s is text Postgres keeps as it is.
func pgText(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}

func (c conn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	query, args = c.bind(query, args)
	return c.q.ExecContext(ctx, query, args...)
}

func (c conn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	query, args = c.bind(query, args)
	return c.q.QueryContext(ctx, query, args...)
}

func (c conn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	query, args = c.bind(query, args)
	return c.q.QueryRowContext(ctx, query, args...)
}

// tx is a transaction that takes queries in the ? form.
type tx struct {
	conn
	tx *sql.Tx
}

func (t tx) Commit() error   { return t.tx.Commit() }
func (t tx) Rollback() error { return t.tx.Rollback() }

// begin starts a transaction (on SQLite an immediate one: it takes the
// write lock at once).
func (s *Store) begin(ctx context.Context) (tx, error) {
	t, err := s.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return tx{}, err
	}
	return tx{conn: conn{q: t, pg: s.db.pg}, tx: t}, nil
}

// isBusy: err is a conflict with another process that a second try
// may get past (SQLite's lock; a Postgres serialization failure or
// deadlock).
func isBusy(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "40P01"
	}
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}
