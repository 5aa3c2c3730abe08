package llm

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input" toml:"input"`
	Output     float64 `json:"output" toml:"output"`
	CacheRead  float64 `json:"cache_read" toml:"cache_read"`
	CacheWrite float64 `json:"cache_write" toml:"cache_write"`
}

//go:embed pricing.json
var pricingJSON []byte

// Prices is the built-in pricing table, by model name.
var Prices = mustPrices(pricingJSON)

func mustPrices(b []byte) map[string]Price {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		panic(fmt.Sprintf("pricing.json: %v", err))
	}
	out := map[string]Price{}
	for k, v := range raw {
		if strings.HasPrefix(k, "_") {
			continue
		}
		var p Price
		if err := json.Unmarshal(v, &p); err != nil {
			panic(fmt.Sprintf("pricing.json: %s: %v", k, err))
		}
		out[k] = p
	}
	return out
}

// PriceOf finds a model's price: an override first, then the table, by
// exact name, then by the longest listed name the model starts with
// ("claude-sonnet-4-5-20250929" → "claude-sonnet-4-5"). ok is false for an
// unknown model, which costs nothing (a local server).
func PriceOf(model string, overrides map[string]Price) (Price, bool) {
	for _, table := range []map[string]Price{overrides, Prices} {
		if p, ok := table[model]; ok {
			return p, true
		}
		best := ""
		for name := range table {
			if strings.HasPrefix(model, name) && len(name) > len(best) {
				best = name
			}
		}
		if best != "" {
			return table[best], true
		}
	}
	return Price{}, false
}

// Cost is what usage cost at price p. inputHasCache says the provider
// counts cached tokens inside InputTokens (OpenAI does; Anthropic and
// Gemini report them apart).
func Cost(p Price, u Usage, inputHasCache bool) float64 {
	in := u.InputTokens
	if inputHasCache {
		in -= u.CacheReadTokens + u.CacheWriteTokens
		in = max(in, 0)
	}
	return (float64(in)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}
