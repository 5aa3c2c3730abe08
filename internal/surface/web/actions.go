package web

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/ultra-dev/ultra/internal/command"
	"github.com/ultra-dev/ultra/internal/surface/procs"
)

// maxArg is the longest task or question passed to ultra's command.
const maxArg = procs.MaxArg

// StartRun is the body of POST /api/runs.
type StartRun struct {
	// Task is what ultra run takes as its argument ("" with a brief-file flag).
	Task string `json:"task"`
	// Flags are ultra run's flags by name: "mode": "plan", "max-turns": 20,
	// "include-uncommitted": true.
	Flags map[string]any `json:"flags,omitempty"`
}

// Started says which run a request started or goes on with.
type Started struct {
	Run  string   `json:"run"`
	Argv []string `json:"argv"`
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) {
	var b StartRun
	if err := decode(r, &b); err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	flags, err := cliFlags(b.Flags, s.o.RunFlags, "run")
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(b.Task) > maxArg {
		s.fail(w, http.StatusBadRequest, fmt.Sprintf(`field "task" is %d bytes: a task is at most %d; put a longer text in a brief (flags: {"brief-file": "BRIEF.md"}, a file of the repository)`, len(b.Task), maxArg))
		return
	}
	argv := append([]string{"run", "--output", "jsonl"}, flags...)
	if strings.TrimSpace(b.Task) != "" {
		argv = append(argv, "--", b.Task)
	}
	s.start(w, r, argv)
}

// Chat is the body of POST /api/chats.
type Chat struct {
	// Session goes on with a chat session ("" starts one).
	Session  string         `json:"session,omitempty"`
	Question string         `json:"question"`
	Flags    map[string]any `json:"flags,omitempty"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var b Chat
	if err := decode(r, &b); err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(b.Question) == "" {
		s.fail(w, http.StatusBadRequest, `field "question" is empty: give the question to ask`)
		return
	}
	if len(b.Question) > maxArg {
		s.fail(w, http.StatusBadRequest, fmt.Sprintf(`field "question" is %d bytes: a question is at most %d`, len(b.Question), maxArg))
		return
	}
	flags, err := cliFlags(b.Flags, s.o.ChatFlags, "chat")
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	argv := append([]string{"chat", "--output", "jsonl"}, flags...)
	argv = append(argv, "--")
	if b.Session != "" {
		if !command.LooksLikeRun(b.Session) {
			s.fail(w, http.StatusBadRequest, `field "session" is not a session id (sessions are named like 20261124-091217-b8302f)`)
			return
		}
		argv = append(argv, b.Session)
	}
	s.start(w, r, append(argv, b.Question))
}

// start runs a command that starts a run and answers with the run once
// it is known; the command goes on in its own process.
func (s *Server) start(w http.ResponseWriter, r *http.Request, argv []string) {
	run, wait, err := s.o.Commands.Start(r.Context(), argv)
	if err == nil {
		writeJSON(w, http.StatusCreated, Started{Run: run, Argv: argv})
		return
	}
	if wait == nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	out, code := wait()
	if code == 0 {
		code = 1
	}
	writeJSON(w, statusOf(code, out), apiError{Error: strings.TrimSpace(out), Exit: code})
}

// Invocation is the body of a command's operation: its positional
// arguments and its flags by name, as /NAME ARGS --FLAG VALUE would give
// them.
type Invocation struct {
	Args  []string       `json:"args,omitempty"`
	Flags map[string]any `json:"flags,omitempty"`
}

// CommandResult is what a command's operation did.
type CommandResult struct {
	Command string   `json:"command"` // "/approve"
	Argv    []string `json:"argv"`    // the ultra command it ran
	Exit    int      `json:"exit"`
	Output  string   `json:"output,omitempty"`
	// Error is what went wrong when the command failed or refused (exit
	// not 0): its output, as every error's body has it.
	Error string `json:"error,omitempty"`
	// Run and Driving: the command goes on with the run in its own
	// process (its events are the run's stream).
	Run     string `json:"run,omitempty"`
	Driving bool   `json:"driving,omitempty"`
}

// invoke carries out command c of the table; onRun says the path names
// the run.
func (s *Server) invoke(c *command.Command, onRun bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run := ""
		if onRun {
			var ok bool
			if run, ok = s.runParam(w, r); !ok {
				return
			}
		}
		var b Invocation
		if r.ContentLength != 0 {
			if err := decode(r, &b); err != nil {
				s.fail(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		flags, err := flagValues(b.Flags)
		if err != nil {
			s.fail(w, http.StatusBadRequest, err.Error())
			return
		}
		inv, err := command.New(c.Name, b.Args, flags)
		if err != nil {
			s.fail(w, http.StatusBadRequest, err.Error())
			return
		}
		if named := inv.Run(); onRun && named != "" && !strings.HasPrefix(run, named) {
			s.fail(w, http.StatusBadRequest, "the path names run "+run+" and the invocation run "+named+": give one")
			return
		}
		argv, err := inv.CLIArgs(run)
		if err != nil {
			s.fail(w, http.StatusBadRequest, err.Error())
			return
		}
		res := CommandResult{Command: "/" + c.Name, Argv: argv}
		if c.Drives && command.PrintsEvents(argv) {
			// It may go on with the run in its own process: answer once
			// the run is known, as a run's start does.
			argv = append([]string{argv[0], "--output", "jsonl"}, argv[1:]...)
			res.Argv = argv
			id, wait, err := s.o.Commands.Start(r.Context(), argv)
			if err == nil {
				res.Run, res.Driving = id, true
				writeJSON(w, http.StatusAccepted, res)
				return
			}
			if wait == nil {
				s.fail(w, http.StatusInternalServerError, err.Error())
				return
			}
			res.Output, res.Exit = wait()
		} else {
			out, errOut, code := s.o.Commands.Read(r.Context(), argv)
			res.Output, res.Exit = strings.TrimRight(out+errOut, "\n"), code
		}
		if res.Exit != 0 {
			res.Error = strings.TrimPrefix(strings.TrimSpace(res.Output), "ultra: ")
		}
		writeJSON(w, statusOf(res.Exit, res.Output), res)
	}
}
