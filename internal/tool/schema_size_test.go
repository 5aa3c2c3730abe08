package tool

import (
	"encoding/json"
	"testing"
)

// Every request to the model carries the tool schemas, so their size is
// kept to a budget. Sizes are of the JSON of each spec (name, description,
// parameters): 4752 bytes in all before the descriptions were shortened
// (grep 1354), 3687 after (grep 897).
func TestToolSchemaBudget(t *testing.T) {
	const (
		budget  = 3750 // all built-in tools
		perTool = 950  // any one of them
	)
	total := 0
	for _, tl := range Builtins() {
		b, err := json.Marshal(tl.Spec())
		if err != nil {
			t.Fatal(err)
		}
		if tl.Spec().Name != "webfetch" {
			// offered only in chat and research, where write and edit
			// are not: the budget is of the phases that build
			total += len(b)
		}
		if len(b) > perTool {
			t.Errorf("the %s tool's schema is %d bytes, over the budget of %d", tl.Spec().Name, len(b), perTool)
		}
	}
	if total > budget {
		t.Errorf("the built-in tools' schemas are %d bytes, over the budget of %d", total, budget)
	}
}
