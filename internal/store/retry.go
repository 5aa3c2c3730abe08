package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// RetryFor is how long a write the run cannot do without (a step, an
// event) is tried again while a shared store is away (PostgreSQL
// restarting, its network gone): the run waits instead of failing.
var RetryFor = 2 * time.Minute

// retrying runs op, and on PostgreSQL runs it again while it fails for
// the database's being away, for up to RetryFor. op must be whole: a
// transaction begun and committed inside it.
func (s *Store) retrying(ctx context.Context, op func(again bool) error) error {
	err := op(false)
	if !s.db.pg {
		return err
	}
	deadline := time.Now().Add(RetryFor)
	wait := 100 * time.Millisecond
	for err != nil && away(err) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
		err = op(true)
	}
	return err
}

// away reports an error that says the database is not there now (its
// server restarting or shutting down, the connection refused or cut),
// rather than that the request was wrong.
func away(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exceptions; 57P01-57P03: the server shuts
		// down, crashed, or does not take connections yet.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "connection refused") || strings.Contains(msg, "unexpected EOF")
}

// duplicate reports a unique key's violation.
func duplicate(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
