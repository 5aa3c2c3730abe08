package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestWebFetchTargets(t *testing.T) {
	w := WebFetch{lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "example.com":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		case "rebind.example":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")}, nil
		case "meta.example":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		}
		return nil, fmt.Errorf("no such host")
	}}
	for _, c := range []struct{ url, err string }{
		{"https://example.com/docs", ""},
		{"http://example.com:8080/x", ""},
		{"ftp://example.com/x", "only http and https"},
		{"file:///etc/passwd", "only http and https"},
		{"http://127.0.0.1:8080/", "this machine"},
		{"http://[::1]/", "this machine"},
		{"http://10.0.0.5/", "a private network"},
		{"http://192.168.1.1/", "a private network"},
		{"http://meta.example/latest", "link-local"},
		{"http://rebind.example/", "this machine"},
		{"http://[::ffff:127.0.0.1]/", "this machine"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://100.64.1.1/", "shared address space"},
		{"http://user:pw@example.com/", "no user or password"},
		{"http://nowhere.invalid/", "does not resolve"},
	} {
		_, _, err := w.target(context.Background(), c.url)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", c.url, err, c.err)
		}
	}
}

func TestHTMLText(t *testing.T) {
	got := HTMLText(`<!doctype html><html><head><title>T</title><style>p{}</style></head><body><script>alert(1)</script>
<h1>Title &amp; more</h1><p>First   para.</p><!-- note --><ul><li>one</li><li>two</li></ul></body></html>`)
	want := "Title & more\n\nFirst para.\n\none\n\ntwo"
	if got != want {
		t.Fatalf("HTMLText = %q, want %q", got, want)
	}
}

// A fetch runs curl, reads the page as text and reports a redirect
// without following it (a test server on this machine stands in for a
// public one).
func TestWebFetchRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>Hello <b>web</b></p><script>x()</script></body></html>")
	}))
	defer srv.Close()
	env := newTestEnv(t)
	w := WebFetch{anyAddress: true}
	res := w.Run(context.Background(), env, json.RawMessage(`{"url":"`+srv.URL+`/page"}`))
	if res.IsError || !strings.Contains(res.Output, "HTTP 200") || !strings.Contains(res.Output, "Hello web") || strings.Contains(res.Output, "x()") {
		t.Fatalf("%+v", res)
	}
	res = w.Run(context.Background(), env, json.RawMessage(`{"url":"`+srv.URL+`/moved"}`))
	if !strings.Contains(res.Output, "redirects to "+srv.URL+"/page") {
		t.Fatalf("%+v", res)
	}
	if res := (WebFetch{}).Run(context.Background(), env, json.RawMessage(`{"url":"`+srv.URL+`/page"}`)); !res.IsError || !strings.Contains(res.Output, "this machine") {
		t.Fatalf("a fetch of this machine: %+v", res)
	}
}

// This machine's own interface addresses reach its listeners, whatever
// their class: refused; so are the documentation ranges.
func TestWebFetchRefusesOwnAddresses(t *testing.T) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("no interface addresses to check: %v", err)
	}
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ownAddress(ip.Unmap()) != "this machine" {
				t.Errorf("%s is not refused", ip)
			}
		}
	}
	for _, a := range []string{"192.0.2.2", "198.51.100.7", "203.0.113.9", "2001:db8::1", "0.1.2.3", "192.88.99.1",
		"255.255.255.255", "::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", "100::1", "2001::1", "2002:7f00:1::1",
		"3fff::1", "5f00::1", "fec0::1", "fd00::1", "ff02::1", "::ffff:127.0.0.1"} {
		if notPublic(netip.MustParseAddr(a).Unmap()) == "" {
			t.Errorf("%s is not refused", a)
		}
	}
	for _, a := range []string{"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "192.31.196.1", "2620:4f:8000::1"} {
		if why := notPublic(netip.MustParseAddr(a)); why != "" {
			t.Errorf("%s (public) is refused as %s", a, why)
		}
	}
	if ownAddress(netip.MustParseAddr("8.8.8.8")) != "" {
		t.Error("a public address elsewhere is refused as this machine's")
	}
}

func TestCurlEnv(t *testing.T) {
	got := curlEnv([]string{"PATH=/bin", "http_proxy=http://p", "HTTPS_PROXY=x", "ALL_PROXY=y", "no_proxy=z", "CURL_HOME=/h", "SSL_CERT_FILE=/c", "CURL_CA_BUNDLE=/b", "LANG=C"})
	if strings.Join(got, " ") != "PATH=/bin SSL_CERT_FILE=/c CURL_CA_BUNDLE=/b LANG=C" {
		t.Fatalf("curlEnv kept %q", got)
	}
}
