package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// redactURL is a database URL without its password (in its user part or
// its password parameter).
func redactURL(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Scheme == "" {
		// Not a URL url reads: cut what lies between user: and @.
		if at := strings.LastIndexByte(u, '@'); at > 0 {
			if scheme := strings.Index(u, "://"); scheme >= 0 {
				if colon := strings.IndexByte(u[scheme+3:at], ':'); colon >= 0 {
					return u[:scheme+3+colon] + ":***" + u[at:]
				}
			}
		}
		return u
	}
	if _, ok := pu.User.Password(); ok {
		pu.User = url.UserPassword(pu.User.Username(), "***")
	}
	if q := pu.Query(); q.Has("password") {
		q.Set("password", "***")
		pu.RawQuery = strings.ReplaceAll(q.Encode(), "password=%2A%2A%2A", "password=***")
	}
	return strings.Replace(pu.String(), ":%2A%2A%2A@", ":***@", 1)
}

// dbError is err in one line when it is a failure to reach a PostgreSQL
// store (ULTRA_DB, or a worker's --db): the database, its password
// hidden, what went wrong and what to check. Any other error is
// returned as it is.
func dbError(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) || ce.Config == nil {
		return err
	}
	c := ce.Config
	db := sharedDB() // --db is in ULTRA_DB by now (fleetDB)
	if db == "" {
		db = fmt.Sprintf("postgres://%s@%s/%s", c.User, hostPort(c), c.Database)
	}
	why, check := dbTrouble(err, c)
	return fmt.Errorf("cannot reach the database %s: %s; %s", redactURL(db), why, check)
}

func hostPort(c *pgconn.Config) string {
	if strings.HasPrefix(c.Host, "/") {
		return fmt.Sprintf("%s/.s.PGSQL.%d", c.Host, c.Port)
	}
	return net.JoinHostPort(c.Host, fmt.Sprint(c.Port))
}

// dbTrouble says what went wrong connecting to the database of c, and
// what a person checks.
func dbTrouble(err error, c *pgconn.Config) (why, check string) {
	where := hostPort(c)
	var pe *pgconn.PgError
	var dns *net.DNSError
	switch {
	case errors.As(err, &pe):
		switch pe.Code {
		case "28P01":
			return fmt.Sprintf("the password of user %q was refused", c.User), "check the user and password in ULTRA_DB (or --db)"
		case "28000":
			return fmt.Sprintf("user %q may not connect to %q from here (%s)", c.User, c.Database, pe.Message),
				"the server's pg_hba.conf must let this user in from this machine, with a password"
		case "3D000":
			return fmt.Sprintf("there is no database %q", c.Database),
				fmt.Sprintf("create it (createdb --owner %s %s) or name another in the URL", c.User, c.Database)
		case "53300":
			return "the server has no connection left", "raise its max_connections, or run fewer workers"
		}
		return pe.Message, fmt.Sprintf("check the server at %s", where)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused at " + where, "check that PostgreSQL runs there and listens on that port, and that ULTRA_DB (or --db) names it"
	case errors.Is(err, syscall.ENOENT) && strings.HasPrefix(c.Host, "/"):
		return "no PostgreSQL socket at " + where, "check that PostgreSQL runs on this machine, and the URL's host= directory"
	case errors.As(err, &dns):
		return fmt.Sprintf("no such host %q", c.Host), "check the host name in ULTRA_DB (or --db)"
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
		return "no answer from " + where, "check the network and firewall between this machine and the server"
	}
	// What pgx says last is the cause; said once (it tries each address,
	// with and without TLS).
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	return last, fmt.Sprintf("check the server at %s and the URL in ULTRA_DB (or --db)", where)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// outsideRepo is err, findProject's refusal of a directory outside any
// git repository, with what the command would have done there instead of
// the general advice to run git init; any other error is returned as it
// is.
func outsideRepo(err error, what string) error {
	const not = " is not inside a git repository"
	msg := err.Error()
	i := strings.Index(msg, not)
	if i < 0 {
		return err
	}
	return usageErr("%s%s: %s", msg[:i], not, what)
}
