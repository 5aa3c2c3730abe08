package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/surface/streamjson"
)

// structured says --output-format asks for Claude Code's JSON shapes.
func (f *runFlags) structured() bool {
	return f.outputFormat == string(streamjson.JSON) || f.outputFormat == string(streamjson.Stream)
}

// checkFormat refuses an unknown --output-format, and one that would
// share stdout with --output jsonl.
func (f *runFlags) checkFormat() error {
	if f.outputFormat != "" && !slices.Contains(streamjson.Formats, f.outputFormat) {
		return usageErr("unknown --output-format %q (%s, as claude -p takes them)", f.outputFormat, strings.Join(streamjson.Formats, ", "))
	}
	if f.structured() && f.output == "jsonl" {
		return usageErr("--output jsonl and --output-format %s both write stdout: give one", f.outputFormat)
	}
	return nil
}

// printRenderer is the sink of Claude Code's print mode, and the writer
// the human log goes to beside it (stderr with -v, else nowhere): nil
// when the run prints ultra's own output. A run given -p without a
// format (and without --output jsonl, which keeps its stream) prints
// its result's text alone, as claude -p does.
func (f *runFlags) printRenderer(cmd *cobra.Command, p *project, out io.Writer) (event.Sink, io.Writer) {
	format := streamjson.Format(f.outputFormat)
	if !f.structured() && (!f.print || f.output == "jsonl") {
		return nil, out
	}
	if format == "" {
		format = streamjson.Text
	}
	log := io.Discard
	if f.verbose {
		log = cmd.ErrOrStderr()
	}
	if printing == nil {
		printing = streamjson.New(cmd.OutOrStdout(), streamjson.Options{Format: format, Cwd: p.Dir})
	}
	return printing, log
}

// printing is this process's print-mode renderer, once a run or chat
// made one: when the command fails before the run's events wrote a
// result, run writes one (Renderer.Fail).
var printing *streamjson.Renderer

// streamInput checks --input-format: true for stream-json, which takes
// the questions from stdin only and answers in stream-json.
func (c *chatFlags) streamInput(question string) (bool, error) {
	switch c.inputFormat {
	case "", "text":
		return false, nil
	case "stream-json":
	default:
		return false, usageErr("unknown --input-format %q (text or stream-json)", c.inputFormat)
	}
	if c.outputFormat != string(streamjson.Stream) {
		return false, usageErr("--input-format stream-json needs --output-format stream-json")
	}
	if question != "" {
		return false, usageErr("--input-format stream-json reads the questions from stdin: give none as arguments")
	}
	return true, nil
}

// userMessage is one line of stream-json input, as claude -p reads it.
type userMessage struct {
	Type    string `json:"type"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// readUserMessages asks each user message on in, one by one, in order;
// a line that is not one is an error naming it.
func readUserMessages(in io.Reader, ask func(string) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n, asked := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		q, err := parseUserMessage([]byte(line))
		if err != nil {
			return usageErr("--input-format stream-json: stdin line %d: %v", n, err)
		}
		if err := ask(q); err != nil {
			return err
		}
		asked++
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	if asked == 0 {
		return usageErr("--input-format stream-json: stdin held no user message")
	}
	return nil
}

// parseUserMessage is the text of a user message line: its content as a
// string, or the text blocks of its content.
func parseUserMessage(line []byte) (string, error) {
	var m userMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return "", fmt.Errorf("not JSON (%v)", err)
	}
	if m.Type != "user" || m.Message.Role != "user" {
		return "", fmt.Errorf(`not a user message (want {"type":"user","message":{"role":"user","content":…}}, got type %q role %q)`, m.Type, m.Message.Role)
	}
	var s string
	if json.Unmarshal(m.Message.Content, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "", fmt.Errorf("the message's content is empty")
		}
		return s, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Message.Content, &blocks); err != nil {
		return "", fmt.Errorf("the message's content is neither a string nor a list of content blocks")
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("the message has no text block")
	}
	return strings.Join(parts, "\n\n"), nil
}
