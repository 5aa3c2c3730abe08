package llm

import (
	"math"
	"testing"
)

func TestPricing(t *testing.T) {
	if len(Prices) < 5 {
		t.Fatal("pricing table not loaded")
	}
	p, ok := PriceOf("claude-sonnet-4-5-20250929", nil)
	if !ok || p.Input != 3 {
		t.Fatalf("prefix lookup: %+v %v", p, ok)
	}
	if _, ok := PriceOf("qwen3-coder", nil); ok {
		t.Fatal("a local model has no price")
	}
	o, _ := PriceOf("gpt-5", map[string]Price{"gpt-5": {Input: 1}})
	if o.Input != 1 {
		t.Fatal("override ignored")
	}
	cases := []struct {
		u       Usage
		inCache bool
		want    float64
		p       Price
	}{
		{Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}, false, 13, Price{Input: 3, Output: 10}},
		{Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000}, true, 0.5*3 + 0.5*0.3, Price{Input: 3, CacheRead: 0.3}},
		{Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, CacheWriteTokens: 1_000_000}, false, 3 + 0.15 + 3.75, Price{Input: 3, CacheRead: 0.3, CacheWrite: 3.75}},
	}
	for _, c := range cases {
		if got := Cost(c.p, c.u, c.inCache); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Cost(%+v) = %v, want %v", c.u, got, c.want)
		}
	}
}
