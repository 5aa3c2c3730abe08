package check

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds the response body ultra keeps.
const maxBody = 1 << 20

// http starts the server, waits for its port, sends the request and
// asserts on the response.
func (s *sup) http(ctx context.Context) {
	c := s.in.Check
	method := c.Method
	if method == "" {
		method = http.MethodGet
	}
	path := c.Path
	if path == "" {
		path = "/"
	}
	var tr strings.Builder // the transcript
	server, host, ok := s.startServer(ctx, c.Start, c.Port, &tr)
	s.render = append(s.render, func() {
		if server != nil {
			fmt.Fprintf(&tr, "\n--- server output (stdout %d bytes, stderr %d bytes; %s)\n%s%s",
				server.stdout.Len(), server.stderr.Len(), orRunning(server.status()),
				withNewline(server.stdout.String()), withNewline(server.stderr.String()))
		}
		s.rep.Artifacts = append(s.rep.Artifacts, artifact{Name: "http.txt", Data: []byte(tr.String())})
	})
	if !ok {
		return
	}
	var body io.Reader
	if c.Body != "" {
		body = strings.NewReader(c.Body)
	}
	target := "http://" + net.JoinHostPort(host, strconv.Itoa(c.Port)) + path
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		s.block(fmt.Sprintf("building the request %s %s", method, path), err.Error())
		return
	}
	for _, k := range sortedKeys(c.Headers) {
		if strings.EqualFold(k, "Host") {
			req.Host = c.Headers[k]
			continue
		}
		req.Header.Set(k, c.Headers[k])
	}
	shownHost := req.Host
	if shownHost == "" {
		shownHost = req.URL.Host
	}
	fmt.Fprintf(&tr, "\n>>> request\n%s %s HTTP/1.1\nHost: %s\n", method, path, shownHost)
	writeHeaders(&tr, req.Header)
	fmt.Fprintf(&tr, "\n%s", withNewline(c.Body))

	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	began := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			s.timedOut(fmt.Sprintf("waiting for the answer to %s %s", method, path), "")
			return
		}
		fmt.Fprintf(&tr, "\n<<< no response: %v\n", err)
		s.rep.Observed = fmt.Sprintf("http %s %s → no response", method, path)
		s.rep.Assertions = append(s.rep.Assertions, assertion{Name: "response", Want: "an HTTP response", Got: excerpt(err.Error(), 120)})
		return
	}
	raw, readErr := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	resp.Body.Close()
	truncated := len(raw) > maxBody
	if truncated {
		raw = raw[:maxBody]
	}
	fmt.Fprintf(&tr, "\n<<< response after %s\n%s %s\n", time.Since(began).Round(time.Millisecond), resp.Proto, resp.Status)
	writeHeaders(&tr, resp.Header)
	fmt.Fprintf(&tr, "\n%s", withNewline(string(raw)))
	if truncated {
		fmt.Fprintf(&tr, "… [body cut at %d bytes]\n", maxBody)
	}
	if readErr != nil {
		fmt.Fprintf(&tr, "… [reading the body failed: %v]\n", readErr)
	}
	s.rep.Observed = fmt.Sprintf("http %s %s → %s", method, path, resp.Status)
	if c.ExpectStatus != 0 {
		s.rep.Assertions = append(s.rep.Assertions, equal("expect_status", strconv.Itoa(c.ExpectStatus), strconv.Itoa(resp.StatusCode)))
	}
	if c.ExpectBody != "" {
		s.rep.Assertions = append(s.rep.Assertions, matches("expect_body", c.ExpectBody, string(raw)))
	}
	for _, k := range sortedKeys(c.ExpectJSON) {
		name := "expect_json " + k
		v, err := jsonPath(raw, k)
		if err != nil {
			s.rep.Assertions = append(s.rep.Assertions, assertion{Name: name, Want: strconv.Quote(c.ExpectJSON[k]), Got: err.Error()})
			continue
		}
		s.rep.Assertions = append(s.rep.Assertions, matches(name, c.ExpectJSON[k], v))
	}
}

// startServer starts the program under test and waits until its port
// takes connections on a loopback address, which it returns. When that
// does not happen the check is blocked (the port was taken before, the
// time ran out) or fails (the server ended first), and ok is false.
func (s *sup) startServer(ctx context.Context, script string, port int, tr *strings.Builder) (p *program, host string, ok bool) {
	if h := accepting(port); h != "" {
		s.block(fmt.Sprintf("port %d already takes connections (on %s) before the server started: something else holds it, so ultra would not be talking to the program under test", port, h), "")
		return nil, "", false
	}
	p, err := s.start("server", script)
	if err != nil {
		s.block("the server did not start", err.Error())
		return nil, "", false
	}
	s.ports = append(s.ports, port)
	s.rep.Started[len(s.rep.Started)-1] += fmt.Sprintf(", port %d", port)
	fmt.Fprintf(tr, "$ %s -c %s   (server, pgid %d)\n", s.shell, strconv.Quote(script), p.pid)
	began := time.Now()
	for {
		if h := accepting(port); h != "" {
			fmt.Fprintf(tr, "port %d takes connections on %s after %s\n", port, h, time.Since(began).Round(time.Millisecond))
			return p, h, true
		}
		if p.done() {
			fmt.Fprintf(tr, "the server ended (%s) before port %d took connections\n", p.status(), port)
			s.rep.Observed = fmt.Sprintf("server ended (%s) before listening on port %d", p.status(), port)
			s.rep.Assertions = append(s.rep.Assertions, assertion{
				Name: "listening", Want: fmt.Sprintf("port %d takes connections", port),
				Got: fmt.Sprintf("the server ended (%s) first: %s", p.status(), p.outputTail(200)),
			})
			return p, "", false
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(tr, "port %d took no connections within the timeout\n", port)
			s.timedOut(fmt.Sprintf("waiting for port %d to take connections (the server still runs)", port), "its output: "+excerpt(p.outputTail(300), 200))
			return p, "", false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func writeHeaders(w io.Writer, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(w, "%s: %s\n", k, v)
		}
	}
}

func orRunning(status string) string {
	if status == "" {
		return "still running"
	}
	return status
}
