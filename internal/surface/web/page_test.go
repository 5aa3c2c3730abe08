package web

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// The page keeps to the server's Content-Security-Policy and needs no
// network: index.html loads only files the binary holds, each served
// without the token and with its type; no file has an inline script or
// style, sets a style from script, writes markup from strings, or names
// another origin.
func TestPageFiles(t *testing.T) {
	ts := newServer(t, newStore(t), &fakeCommands{}, Options{})
	code, index := do(t, ts, "GET", "/", "", false)
	if code != 200 || !strings.Contains(index, `<main id="main"`) {
		t.Fatalf("GET /: %d\n%s", code, index)
	}
	refs := regexp.MustCompile(`(?:src|href)="(/[^"#]*)"`).FindAllStringSubmatch(index, -1)
	types := map[string]string{".js": "text/javascript", ".css": "text/css"}
	seen := map[string]bool{}
	for _, m := range refs {
		if m[1] == "/" {
			continue
		}
		seen[m[1]] = true
		req := ts.URL + m[1]
		resp, err := ts.Client().Get(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ext := m[1][strings.LastIndex(m[1], "."):]
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), types[ext]) {
			t.Errorf("GET %s: %d %s", m[1], resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if !seen["/app.js"] || !seen["/app.css"] {
		t.Errorf("index.html loads %v", seen)
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(index, -1) {
		if !strings.Contains(tag, ` src="/`) {
			t.Errorf("index.html has a script of its own: %s", tag)
		}
	}
	forbidden := []struct{ what, re string }{
		{"an inline script", `<script(?:\s[^>]*)?>\s*[^<\s]`},
		{"a style element", `<style`},
		{"a style attribute", `\sstyle\s*=`},
		{"an inline handler", `\son[a-z]+\s*=\s*"`},
		{"a style set from script", `\.style\.|setAttribute\(\s*["']style|\.cssText`},
		{"markup written from a string", `innerHTML|outerHTML|insertAdjacentHTML|document\.write`},
		{"another origin", `(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`},
		{"eval", `\beval\(|new Function\(`},
	}
	err := fs.WalkDir(pageFiles, "page", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := pageFiles.ReadFile(path)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(path, "page/")
		if strings.HasSuffix(name, ".js") && !seen["/"+name] {
			t.Errorf("%s is not loaded by index.html", name)
		}
		src := string(b)
		for _, f := range forbidden {
			if f.what == "a style set from script" || f.what == "markup written from a string" || f.what == "eval" {
				if !strings.HasSuffix(name, ".js") {
					continue
				}
			} else if strings.HasSuffix(name, ".js") && f.what != "another origin" {
				continue
			}
			if loc := regexp.MustCompile(f.re).FindStringIndex(src); loc != nil {
				line := strings.Count(src[:loc[0]], "\n") + 1
				t.Errorf("%s:%d has %s: %q", name, line, f.what, src[loc[0]:min(loc[1]+20, len(src))])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
