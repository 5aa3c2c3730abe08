package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxOutput bounds the text of one call's result the model reads.
const MaxOutput = 30000

// Result is one call's result as the model reads it.
type Result struct {
	Text      string
	IsError   bool
	Malformed bool
	// Images are the result's images and audio: the model reads a line
	// for each (type and size), not their bytes.
	Images []Blob
}

// Blob is binary content of a result.
type Blob struct {
	MIME string
	Data []byte
}

func errResult(msg string) Result { return Result{IsError: true, Text: msg} }

// convert turns a server's answer into text: its text content, what its
// images, audio and resources are, its structured content when no text
// says it, bounded to MaxOutput.
func convert(res *sdk.CallToolResult) Result {
	out := Result{IsError: res.IsError}
	var parts []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, x.Text)
		case *sdk.ImageContent:
			out.Images = append(out.Images, Blob{MIME: x.MIMEType, Data: x.Data})
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *sdk.AudioContent:
			out.Images = append(out.Images, Blob{MIME: x.MIMEType, Data: x.Data})
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", x.MIMEType, len(x.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", x.URI, firstNonEmpty(x.Description, x.Name)))
		case *sdk.EmbeddedResource:
			if r := x.Resource; r != nil {
				if r.Text != "" {
					parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
				} else {
					parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, len(r.Blob)))
				}
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out.Text = bound(strings.Join(parts, "\n"))
	if out.Text == "" {
		out.Text = "(no output)"
	}
	return out
}

// bound keeps the head and the tail of a long text.
func bound(s string) string {
	if len(s) <= MaxOutput {
		return s
	}
	head, tail := s[:MaxOutput*2/3], s[len(s)-MaxOutput/3:]
	return fmt.Sprintf("%s\n… [%d bytes of the result left out] …\n%s", head, len(s)-len(head)-len(tail), tail)
}
