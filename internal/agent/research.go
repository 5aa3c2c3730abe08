package agent

import (
	"context"
	"encoding/json"

	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/tool"
)

var objectSchema = json.RawMessage(`{"type":"object"}`)

// taskTool starts a read-only helper with a fresh context (research mode).
func (r *runner) taskTool() tool.Tool {
	return funcTool{spec: llm.ToolSpec{Name: "task", Parameters: objectSchema, Description: "Start a read-only helper."},
		run: func(context.Context, json.RawMessage) tool.Result {
			return tool.Result{IsError: true, Output: "task is not available"}
		}}
}

// reportTool ends a research run with its report (research mode).
func (r *runner) reportTool() tool.Tool {
	return funcTool{spec: llm.ToolSpec{Name: "report", Parameters: objectSchema, Description: "End the research with its report."},
		run: func(context.Context, json.RawMessage) tool.Result {
			return tool.Result{IsError: true, Output: "report is not available"}
		}}
}
