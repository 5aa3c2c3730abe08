package verify

import "testing"

// CodeLoads says whether the project's code loads a support file: the
// gate fails a run whose code starts loading what only the tests did.
func TestSupportCodeLoads(t *testing.T) {
	helper := "package testutil\n\nimport \"testing\"\n\nvar Quiet bool\n\nfunc Eq(t testing.TB, got, want int) {\n\tif got != want && !Quiet {\n\t\tt.Fatal(got)\n\t}\n}\n"
	test := "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/internal/testutil\"\n)\n\nfunc TestAdd(t *testing.T) { testutil.Eq(t, Add(2, 3), 5) }\n"
	for _, tc := range []struct {
		name string
		code string
		want bool
	}{
		{"only the tests load the helper", "package calc\n\nfunc Add(a, b int) int { return a - b }\n", false},
		{"the code loads it too", "package calc\n\nimport \"example.com/calc/internal/testutil\"\n\nfunc init() { testutil.Quiet = true }\n\nfunc Add(a, b int) int { return a - b }\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{
				"go.mod":                        []byte("module example.com/calc\n\ngo 1.21\n"),
				"calc/calc.go":                  []byte(tc.code),
				"calc/calc_test.go":             []byte(test),
				"internal/testutil/testutil.go": []byte(helper),
			}
			var paths []string
			for p := range files {
				paths = append(paths, p)
			}
			var got *SupportFile
			for _, f := range ClassifySupport(SupportInput{Paths: paths, Files: files, Commands: []string{"go test ./..."}}) {
				if f.Path == "internal/testutil/testutil.go" {
					got = &f
				}
			}
			if got == nil || got.Role != RoleSupport || got.CodeLoads != tc.want {
				t.Fatalf("testutil: %+v, want support with CodeLoads %v", got, tc.want)
			}
		})
	}
}
