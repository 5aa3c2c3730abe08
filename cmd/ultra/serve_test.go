package main

import (
	"strings"
	"testing"
)

func TestCheckListen(t *testing.T) {
	cases := []struct {
		f    serveFlags
		want string // "" when allowed
	}{
		{serveFlags{addr: "127.0.0.1:7433"}, ""},
		{serveFlags{addr: "localhost:0"}, ""},
		{serveFlags{addr: "[::1]:7433"}, ""},
		{serveFlags{addr: "127.3.4.5:80"}, ""},
		{serveFlags{addr: "0.0.0.0:7433"}, "reachable from other machines"},
		{serveFlags{addr: ":7433"}, "reachable from other machines"},
		{serveFlags{addr: "192.168.1.4:7433", insecure: true}, "unless --listen"},
		{serveFlags{addr: "0.0.0.0:7433", listen: true}, "needs TLS"},
		{serveFlags{addr: "0.0.0.0:7433", listen: true, insecure: true}, ""},
		{serveFlags{addr: "0.0.0.0:7433", listen: true, cert: "c.pem", key: "k.pem"}, ""},
		{serveFlags{addr: "127.0.0.1:7433", cert: "c.pem"}, "go together"},
		{serveFlags{addr: "7433"}, "give HOST:PORT"},
	}
	for _, c := range cases {
		err := checkListen(c.f)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.f, err, c.want)
		}
	}
}
