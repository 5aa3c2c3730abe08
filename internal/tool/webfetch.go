package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/proc"
)

// WebFetch fetches one web page and returns its text: in the run's
// sandbox (curl, as the model's commands run), one request, no redirect
// followed, only public addresses (never this machine, its network or a
// cloud's metadata service), bounded in time and size.
type WebFetch struct {
	// lookup resolves a host (nil: the system's resolver).
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// anyAddress lets a test fetch from this machine.
	anyAddress bool
}

type webFetchArgs struct {
	URL string `json:"url" required:"true"`
}

const (
	maxWebText  = 30 << 10 // text the model reads
	maxWebBytes = 5 << 20  // bytes fetched
	webTimeout  = 30 * time.Second
	// webMeta ends the page in curl's output; what follows is its status.
	webMeta = "--ultra-webfetch-8f2c9e-- "
)

func (WebFetch) Spec() llm.ToolSpec {
	return llm.ToolSpec{
		Name:        "webfetch",
		Description: "Fetch a public http(s) page as text (at most 30 KB); a redirect is reported, not followed.",
		Parameters:  schema(map[string]any{"url": prop("string", "The page's address")}, "url"),
	}
}

// ReadOnly is false: a fetch changes no file, but its address carries
// what the model puts in it to the network, so no "read-only calls"
// approval covers it.
func (WebFetch) ReadOnly() bool { return false }

func (w WebFetch) Run(ctx context.Context, env *Env, raw json.RawMessage) Result {
	var a webFetchArgs
	if res, ok := decodeArgs("webfetch", raw, &a); !ok {
		return res
	}
	u, addr, err := w.target(ctx, a.URL)
	if err != nil {
		return Result{IsError: true, Output: "webfetch refused: " + err.Error()}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	const meta = "\n" + webMeta + "%{http_code}\t%{content_type}\t%{redirect_url}"
	// -q first: no .curlrc (the sandbox's home is the model's to write)
	// re-routes the pinned address; no proxy resolves the name again.
	args := []string{"-q", "-sS", "--noproxy", "*", "--proto", "=http,https", "--max-filesize", fmt.Sprint(maxWebBytes), "--max-time", fmt.Sprint(int(webTimeout.Seconds())),
		"-A", "ultra-webfetch", "--resolve", u.Hostname() + ":" + port + ":" + addr.String(), "-w", meta, u.String()}
	opts := proc.Options{Dir: env.Root, Timeout: webTimeout + 5*time.Second, MaxCapture: maxWebBytes + 4096, Env: curlEnv(proc.Environ())}
	env.Sandbox.Apply(&opts)
	res, err := proc.Run(ctx, "curl", args, opts)
	if err != nil {
		return Result{IsError: true, Output: "webfetch could not run curl: " + err.Error()}
	}
	body, tail, found := strings.Cut(res.Output, webMeta)
	if !found || res.ExitCode != 0 {
		return Result{IsError: true, Output: fmt.Sprintf("webfetch of %s failed (curl exit %d): %s", u, res.ExitCode, clipText(strings.TrimSpace(res.Output), 500))}
	}
	f := strings.SplitN(strings.TrimRight(tail, "\n"), "\t", 3)
	for len(f) < 3 {
		f = append(f, "")
	}
	code, ctype, redirect := f[0], f[1], f[2]
	body = strings.TrimSuffix(body, "\n")
	if redirect != "" {
		return Result{Output: fmt.Sprintf("HTTP %s: %s redirects to %s (webfetch that address to follow it)", code, u, redirect)}
	}
	text := body
	if strings.Contains(ctype, "html") || strings.HasPrefix(strings.TrimSpace(strings.ToLower(body)), "<!doctype html") {
		text = HTMLText(body)
	}
	out := fmt.Sprintf("HTTP %s %s (%s)\n\n%s", code, u, ctype, clipText(text, maxWebText))
	return Result{Output: out, IsError: !strings.HasPrefix(code, "2"), Data: map[string]any{"url": u.String(), "status": code}}
}

// curlEnv is env without what routes curl elsewhere from outside its
// arguments: proxies (which would resolve the name again) and its home.
func curlEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch l := strings.ToLower(k); {
		case strings.HasSuffix(l, "_proxy"), l == "curl_home":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// target checks raw and resolves its host to one public address.
func (w WebFetch) target(ctx context.Context, raw string) (*url.URL, netip.Addr, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, netip.Addr{}, fmt.Errorf("%q is not a URL: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, netip.Addr{}, fmt.Errorf("%q: only http and https addresses are fetched", raw)
	}
	if u.Hostname() == "" || u.User != nil {
		return nil, netip.Addr{}, fmt.Errorf("%q: give a host, and no user or password", raw)
	}
	lookup := w.lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = lookup(ctx, u.Hostname()); err != nil || len(addrs) == 0 {
		return nil, netip.Addr{}, fmt.Errorf("%s does not resolve: %v", u.Hostname(), err)
	}
	for _, a := range addrs {
		if why := cmp.Or(notPublic(a.Unmap()), ownAddress(a.Unmap())); why != "" && !w.anyAddress {
			return nil, netip.Addr{}, fmt.Errorf("%s is %s (%s): webfetch reaches only public addresses, never this machine, its network, ultra's or a cloud's services", u.Hostname(), a, why)
		}
	}
	return u, addrs[0].Unmap(), nil
}

// special are the address blocks of IANA's special-purpose registries
// (IPv4 and IPv6) that are not globally reachable, or that carry
// another address inside them (a NAT64 or 6to4 prefix reaches the IPv4
// address it embeds), with what each is.
var special = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved for protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved (6to4 relays)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved for benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64, which reaches the IPv4 address inside it"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001::/23"), "reserved for protocol assignments (Teredo among them)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved for documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4, which reaches the IPv4 address inside it"},
	{netip.MustParsePrefix("3fff::/20"), "reserved for documentation"},
	{netip.MustParsePrefix("5f00::/16"), "segment routing"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// notPublic says why a is not a public address ("" when it is).
func notPublic(a netip.Addr) string {
	switch {
	case a.IsLoopback():
		return "this machine"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsPrivate():
		return "a private network"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local, where cloud metadata services answer"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.why
		}
	}
	return ""
}

// ownAddress says a is an address of one of this machine's interfaces:
// a public one reaches this machine's listeners as loopback does.
func ownAddress(a netip.Addr) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, x := range addrs {
		if n, ok := x.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == a {
				return "this machine"
			}
		}
	}
	return ""
}

var (
	htmlDrop  = regexp.MustCompile(`(?is)<(script|style|noscript|template|svg|head)\b.*?</(script|style|noscript|template|svg|head)\s*>|<!--.*?-->`)
	htmlBlock = regexp.MustCompile(`(?i)</?(p|div|br|li|ul|ol|h[1-6]|tr|table|section|article|header|footer|nav|pre|blockquote|hr)\b[^>]*>`)
	htmlTag   = regexp.MustCompile(`(?s)<[^>]*>`)
	blankRuns = regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+`)
	spaceRuns = regexp.MustCompile(`[ \t]+`)
)

// HTMLText is the readable text of an HTML page: scripts, styles and
// comments dropped, block elements as line breaks, entities decoded.
func HTMLText(s string) string {
	s = htmlDrop.ReplaceAllString(s, "")
	s = htmlBlock.ReplaceAllString(s, "\n")
	s = htmlTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = spaceRuns.ReplaceAllString(s, " ")
	s = blankRuns.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n… [%d more bytes]", len(s)-n)
}
