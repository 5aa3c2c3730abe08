// Package scripted is ultra's scripted model server: an HTTP server that
// speaks the OpenAI Chat Completions wire format and answers each request
// with the next step of a script. Tests and `ultra dev fakemodel` point any
// OpenAI-compatible client at it to drive the agent through an exact
// conversation, failures included, without a real model.
//
// # Endpoints
//
//	POST /v1/chat/completions, /chat/completions
//	    Answers with the next step: server-sent events ("data: {...}"
//	    chunks ending with "data: [DONE]", plus a final usage chunk when
//	    stream_options.include_usage is set) when the request has
//	    "stream": true, else one chat.completion JSON object.
//	POST /v1/messages, /messages
//	    The same steps in the Anthropic Messages wire format (see
//	    anthropic.go), sharing the step counter and the request log.
//	GET  /v1/models, /models
//	    Lists the script's "models", or its one "model" (default "scripted").
//	GET  /_requests
//	    The request log as a JSON array (see LoggedRequest).
//	POST /_script
//	    Replaces the script with the one in the body and starts it from
//	    its first step. The request log and tool call numbering go on.
//
// # Script format
//
// A script is a JSON object; unknown fields are rejected.
//
//	{"model": "scripted",
//	 "steps": [
//	   {"text": "I'll look around."},
//	   {"tool_calls": [{"name": "read", "arguments": {"file_path": "main.go"}}]},
//	   {"tool_calls": [{"name": "read", "arguments": {"file_path": "a"}},
//	                   {"name": "glob", "arguments": {"pattern": "**/*.go"}}]},
//	   {"tool_calls": [{"name": "edit", "raw_arguments": "{not json"}]},
//	   {"status": 500, "error": "boom"},
//	   {"status": 429, "error": "slow down", "retry_after": 2},
//	   {"text": "done", "usage": {"prompt_tokens": 100, "completion_tokens": 20}},
//	   {"repeat": 3, "tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]},
//	   {"text": "cut short", "truncate": true}
//	 ],
//	 "on_exhausted": "error"}
//
// Each request takes the next step. Step fields:
//
//	text           answer text
//	tool_calls     tool calls, answered in this order; each has a "name" and
//	               either "arguments" (a JSON object, sent as its JSON text;
//	               default {}) or "raw_arguments" (a string sent verbatim,
//	               to test broken JSON). Ids are generated: call_1, call_2,
//	               ..., unique over the server's life.
//	finish_reason  overrides the finish reason ("tool_calls" when the step
//	               has tool calls, else "stop"), e.g. "length"
//	usage          {"prompt_tokens", "completion_tokens", "cached_tokens"};
//	               when absent, prompt tokens are estimated as the request
//	               body's length / 4 and completion tokens from the answer's
//	               length
//	status         an HTTP error status (400-599) to answer with instead,
//	               with an OpenAI-style error body carrying "error" as its
//	               message (default: the status text)
//	retry_after    with status: seconds, sent as the Retry-After header
//	delay_ms       wait this long before answering
//	repeat         answer this many consecutive requests with the step
//	               (0 and 1 both mean once)
//	chunk_size     streamed text and arguments are cut into pieces of this
//	               many characters; by default each is cut into about three
//	               pieces, to exercise the client's assembly
//	thinking       readable thinking, answered before the text as a signed
//	               thinking block on the Anthropic wire (streamed as
//	               thinking_delta pieces); the OpenAI wire has no such
//	               field and leaves it out
//	chunk_delay_ms wait this long between the pieces of a streamed answer
//	               (after the first), to show a stream arriving slowly
//	truncate       stop the answer half-way: a stream ends cleanly after
//	               half of its pieces, without finish_reason or [DONE]; a
//	               JSON answer ends after half of its bytes
//
// A step needs text, tool_calls, status or truncate; a step with only a
// finish_reason is an empty answer. Steps are counted from
// 0 in errors and in the log, like tool_calls entries.
//
// "lanes" (optional) are scripts of their own: [{"match": TEXT, "steps":
// [...]}]. A request whose first user message contains a lane's match
// (the first lane that does) takes that lane's next step, so that
// several conversations at once (a parallel run's workers, each told its
// goal in its first message) follow their own steps whatever the order
// their requests arrive in; other requests take the script's steps.
//
// When every step has been used, "on_exhausted" decides: "error" (the
// default) answers HTTP 500 with the message "script exhausted"; "text"
// answers the plain text "script exhausted".
//
// # Request log
//
// Every request to the chat endpoints is kept in memory (Server.Requests,
// GET /_requests) and, when the server has a log path, appended to that
// file as one JSON line (see LoggedRequest). The file is appended to, never
// truncated.
package scripted
