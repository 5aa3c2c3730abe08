package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ultra-dev/ultra/internal/store"
)

func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://ultra:s3cret@db.internal/ultra", "postgres://ultra:***@db.internal/ultra"},
		{"postgres://ultra@db.internal/ultra?password=s3cret&sslmode=require", "postgres://ultra@db.internal/ultra?password=***&sslmode=require"},
		{"postgres://ultra@/ultra?host=/var/run/postgresql", "postgres://ultra@/ultra?host=/var/run/postgresql"},
		{"postgres://db.internal/ultra", "postgres://db.internal/ultra"},
	} {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A store that cannot be reached is one line: the database without its
// password, what went wrong, and what to check; never pgx's attempts, one
// per line and each twice.
func TestDBErrorOneLine(t *testing.T) {
	for _, url := range []string{
		"postgres://bob:s3cret@127.0.0.1:1/fleet",
		"postgres://bob@127.0.0.1:1/fleet?password=s3cret",
	} {
		t.Setenv("ULTRA_DB", url)
		_, err := store.Open(url)
		if err == nil {
			t.Fatal("a store on port 1 opened")
		}
		got := dbError(err).Error()
		if strings.Contains(got, "\n") || strings.Contains(got, "s3cret") || strings.Count(got, "connection refused") != 1 ||
			!strings.Contains(got, "cannot reach the database postgres://bob") || !strings.Contains(got, "127.0.0.1:1/fleet") ||
			!strings.Contains(got, "check that PostgreSQL runs there") {
			t.Errorf("%s:\n%s", url, got)
		}
	}
	if other := errors.New("other"); dbError(other) != other {
		t.Error("an error that is not the database's changed")
	}
}

// What the server says is turned into what to check.
func TestDBTrouble(t *testing.T) {
	c := &pgconn.Config{Host: "db.internal", Port: 5432, User: "ultra", Database: "fleet"}
	for _, tt := range []struct {
		code, why, check string
	}{
		{"28P01", `the password of user "ultra" was refused`, "check the user and password"},
		{"3D000", `there is no database "fleet"`, "createdb --owner ultra fleet"},
		{"28000", `user "ultra" may not connect to "fleet"`, "pg_hba.conf"},
	} {
		why, check := dbTrouble(&pgconn.PgError{Code: tt.code, Message: "m"}, c)
		if !strings.Contains(why, tt.why) || !strings.Contains(check, tt.check) {
			t.Errorf("%s: %q; %q", tt.code, why, check)
		}
	}
}
