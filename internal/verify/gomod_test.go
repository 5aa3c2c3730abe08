package verify

import (
	"slices"
	"strings"
	"testing"
)

func TestGoModSettings(t *testing.T) {
	const base = "module example.com/calc\n\ngo 1.22\n\nrequire example.com/dep v1.0.0\n"
	for _, tc := range []struct {
		name, old, new string
		changed        []string // substrings, one per change; none: unchanged
		spliced        []string // what the spliced go.mod holds
		notSpliced     []string
	}{
		{name: "the same", old: base, new: base},
		{name: "a raised go line is the code's business", old: base, new: strings.Replace(base, "go 1.22", "go 1.23", 1)},
		{name: "a new requirement", old: base, new: base + "require example.com/other v1.2.0\n"},
		{name: "a toolchain line", old: base, new: base + "toolchain go1.22.5\n"},
		{name: "a patch release counts", old: strings.Replace(base, "go 1.22", "go 1.22.3", 1), new: base,
			changed: []string{"from 1.22.3 to 1.22"}, spliced: []string{"go 1.22.3"}},
		{name: "a lowered go line", old: base, new: strings.Replace(base, "go 1.22", "go 1.21", 1) + "require example.com/other v1.2.0\n",
			changed: []string{"lowered the go line of go.mod from 1.22 to 1.21"},
			spliced: []string{"go 1.22", "example.com/other v1.2.0"}, notSpliced: []string{"go 1.21"}},
		{name: "a removed go line", old: base, new: strings.Replace(base, "go 1.22\n", "", 1),
			changed: []string{"from 1.22 to none (1.16)"}, spliced: []string{"go 1.22"}},
		{name: "a godebug added", old: base, new: base + "godebug panicnil=1\n",
			changed: []string{"changed the godebug settings of go.mod (none → panicnil=1)"}, notSpliced: []string{"godebug"}},
		{name: "a godebug block changed", old: base + "godebug (\n\tpanicnil=0\n\thttp2client=1\n)\n", new: base + "godebug (\n\tpanicnil=1\n\thttp2client=1\n)\n",
			changed: []string{"http2client=1,panicnil=0 → http2client=1,panicnil=1"}, spliced: []string{"panicnil=0", "http2client=1"}, notSpliced: []string{"panicnil=1"}},
		{name: "both", old: base, new: strings.Replace(base, "go 1.22", "go 1.20", 1) + "godebug x509sha1=1\n",
			changed: []string{"lowered", "godebug"}, spliced: []string{"go 1.22"}, notSpliced: []string{"x509sha1"}},
		{name: "a go.mod ultra cannot read is the old one", old: base, new: "module example.com/calc\nfrobnicate 1\n",
			changed: []string{"cannot read"}, spliced: []string{"go 1.22", "example.com/dep"}},
		{name: "an old go.mod ultra cannot read protects nothing", old: "module (\n", new: base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed, spliced := GoModSettings("go.mod", tc.old, tc.new)
			if len(changed) != len(tc.changed) {
				t.Fatalf("changed %q, want %d changes", changed, len(tc.changed))
			}
			for i, want := range tc.changed {
				if !strings.Contains(changed[i], want) {
					t.Errorf("change %q lacks %q", changed[i], want)
				}
			}
			if len(tc.changed) == 0 {
				if spliced != "" {
					t.Errorf("spliced %q for no change", spliced)
				}
				return
			}
			for _, want := range tc.spliced {
				if !strings.Contains(spliced, want) {
					t.Errorf("spliced go.mod lacks %q:\n%s", want, spliced)
				}
			}
			for _, bad := range tc.notSpliced {
				if strings.Contains(spliced, bad) {
					t.Errorf("spliced go.mod still has %q:\n%s", bad, spliced)
				}
			}
			if !strings.Contains(spliced, "module example.com/calc") {
				t.Errorf("spliced go.mod lost its module:\n%s", spliced)
			}
		})
	}
}

func TestGoDebugLines(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
		with      []string
		out       string
	}{
		{name: "none", src: "package main\n", out: "package main\n"},
		{name: "one", src: "//go:debug panicnil=1\npackage main\n", want: []string{"//go:debug panicnil=1"}, out: "package main\n"},
		{name: "beside a build line", src: "//go:build linux\n//go:debug default=go1.20\n\npackage main\n",
			want: []string{"//go:debug default=go1.20"}, with: []string{"//go:debug panicnil=0"},
			out: "//go:debug panicnil=0\n//go:build linux\n\npackage main\n"},
		{name: "put back", src: "package main\n", with: []string{"//go:debug x509sha1=1"}, out: "//go:debug x509sha1=1\npackage main\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := GoDebugLines(tc.src); !slices.Equal(got, tc.want) {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
			if got := WithGoDebug(tc.src, tc.with); got != tc.out {
				t.Errorf("with %q: %q, want %q", tc.with, got, tc.out)
			}
		})
	}
}
