package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/config"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/goal"
	"github.com/ultra-dev/ultra/internal/llm"
	"github.com/ultra-dev/ultra/internal/phase"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/surface/headless"
)

// runFlags are the flags shared by run and resume.
type runFlags struct {
	output, provider, baseURL, model string
	noStream, verbose, noGateCache   bool
	quiet                            bool
	maxRetries, maxTurns             int
	maxIn, maxOut                    int64
	maxCost                          float64
	maxWall, bashTimeout, verifyTO   time.Duration
	verifyCmds                       []string
	changed                          func(name string) bool // whether a flag was given (to tell 0 from nothing)
	noWait                           bool                   // a run that needs a person ends with that status instead of waiting
	oneUnit                          bool                   // ultra next: go on for one unit, then pause
	outputFormat                     string                 // --output-format: claude -p's text, json or stream-json
	print                            bool                   // ultra run -p: print the result alone
	mcpConfig                        []string               // --mcp-config: more servers, in .mcp.json's shape and under its rules
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.changed = fl.Changed
	fl.StringVarP(&f.output, "output", "o", "human", "output format: human or jsonl")
	fl.StringVar(&f.outputFormat, "output-format", "", "print mode's output, as claude -p: text (the result alone), json (the final result object) or stream-json (one message a line: init, assistant, user, result); --output jsonl is ultra's own schema")
	fl.StringVar(&f.provider, "provider", "", "model provider: openai (any OpenAI-compatible server), anthropic or gemini [env ULTRA_PROVIDER, config model.provider]")
	fl.StringVar(&f.baseURL, "base-url", "", "provider base URL [env OPENAI_BASE_URL, config model.base_url; default: OpenAI with OPENAI_API_KEY, else Ollama at http://127.0.0.1:11434/v1]")
	fl.StringVar(&f.model, "model", "", "model name [env ULTRA_MODEL, config model.name]")
	fl.BoolVar(&f.noStream, "no-stream", false, "ask for whole answers instead of streams")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show model requests, usage and full answers in the human log")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "human log: show only warnings, errors, what waits for a person (an approval, a plan to accept) and the run's final lines; no spinner or streamed answer (--output jsonl is unchanged)")
	fl.IntVar(&f.maxRetries, "max-retries", 0, "failed verifications before escalating, at least 1 (default 10) [config run.max_retries]")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "model requests budget, at least 1 (default 200) [config run.max_turns]")
	fl.Int64Var(&f.maxIn, "max-input-tokens", 0, "input token budget, at least 1 (default 20000000) [config run.max_input_tokens]")
	fl.Int64Var(&f.maxOut, "max-output-tokens", 0, "output token budget, at least 1 (default 1000000) [config run.max_output_tokens]")
	fl.DurationVar(&f.maxWall, "max-wall", 0, "wall time budget, more than 0 (default 2h) [config run.max_wall]")
	fl.Float64Var(&f.maxCost, "max-cost", 0, "cost budget in US dollars, from the pricing table, more than 0 (default: no cost limit) [config run.max_cost]")
	fl.DurationVar(&f.bashTimeout, "bash-timeout", 0, "default timeout of a bash call, more than 0 (default 2m) [config run.bash_timeout]")
	fl.StringArrayVar(&f.verifyCmds, "verify-command", nil, "test command to verify with, instead of detection (repeatable; all must pass) [config verify.command]")
	fl.DurationVar(&f.verifyTO, "verify-timeout", 0, "timeout of each test command, more than 0 (default 10m) [config verify.timeout]")
	fl.BoolVar(&f.noWait, "no-wait", false, "when the run needs a person (a manual approval, an assisted pause), end with that status instead of waiting")
	fl.StringArrayVar(&f.mcpConfig, "mcp-config", nil, "a JSON file of more MCP servers, {\"mcpServers\": {...}} as in .mcp.json, under the same rules as the repository's .mcp.json (repeatable; an editor's servers over ultra acp come this way)")
	fl.BoolVar(&f.noGateCache, "no-gate-cache", false, "run the tests at every verification, even of a tree the repository's gate cache already has [config verify.cache = false]")
}

func (f *runFlags) budgets(p *project) phase.Budgets {
	c := p.Config.Run
	return phase.Budgets{
		MaxRetries:      pick(f.maxRetries, c.MaxRetries),
		MaxTurns:        pick(f.maxTurns, c.MaxTurns),
		MaxInputTokens:  pick(f.maxIn, c.MaxInputTokens),
		MaxOutputTokens: pick(f.maxOut, c.MaxOutputTokens),
		MaxWall:         pick(f.maxWall, c.MaxWall.D()),
		MaxCost:         pick(f.maxCost, c.MaxCost),
	}.WithDefaults()
}

// explicitBudgets are the budgets given as flags, zero where none was.
func (f *runFlags) explicitBudgets() phase.Budgets {
	return phase.Budgets{MaxRetries: f.maxRetries, MaxTurns: f.maxTurns, MaxInputTokens: f.maxIn,
		MaxOutputTokens: f.maxOut, MaxWall: f.maxWall, MaxCost: f.maxCost}
}

// validate refuses negative budgets and timeouts, and budgets and
// timeouts given as 0: there is no "unlimited", and 0 must not quietly
// mean the default, so the refusal says what the default is. (In the
// configuration files 0, like a missing key, means the default.)
func (f *runFlags) validate() error {
	if err := f.checkFormat(); err != nil {
		return err
	}
	for _, b := range []struct {
		name string
		v    float64
		def  string
	}{
		{"max-retries", float64(f.maxRetries), "the default, 10 (1 escalates at the first failed verification)"},
		{"max-turns", float64(f.maxTurns), "the default, 200"},
		{"max-input-tokens", float64(f.maxIn), "the default, 20000000"},
		{"max-output-tokens", float64(f.maxOut), "the default, 1000000"},
		{"max-wall", float64(f.maxWall), "the default, 2h"},
		{"max-cost", f.maxCost, "no cost limit, the default"},
		{"bash-timeout", float64(f.bashTimeout), "the default, 2m"},
		{"verify-timeout", float64(f.verifyTO), "the default, 10m"},
	} {
		switch {
		case b.v < 0:
			return usageErr("--%s must not be negative", b.name)
		case b.v == 0 && f.changed != nil && f.changed(b.name):
			return usageErr("--%s 0 is refused: a budget or timeout must be more than 0 (there is no unlimited); leave the flag out for %s", b.name, b.def)
		}
	}
	return nil
}

func pick[T comparable](v ...T) T {
	var zero T
	for _, x := range v {
		if x != zero {
			return x
		}
	}
	return zero
}

// providerChoice is the resolved model configuration.
type providerChoice struct {
	name, baseURL, model string
	models               map[string]string // mode → model; nil when one model serves all
	named                bool              // the model was named, not a provider's default
	hint                 string            // said when the server cannot be reached
	provider             llm.Provider
	secrets              []string // the key and header values: never shown to the model
}

// providerDefaults are each provider's environment variables, defaults and
// model routing table (model mode → model, for the provider's own service).
var providerDefaults = map[string]struct {
	keyEnv, urlEnv       string
	defURL, defModel     string // with a key
	localURL, localModel string // without a key ("" when a key is needed)
	official             string // the provider's own service
	modes                map[string]string
}{
	"openai": {"OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1", "gpt-5", "http://127.0.0.1:11434/v1", "qwen3-coder", "https://api.openai.com/",
		map[string]string{"fast": "gpt-5-mini", "smart": "gpt-5", "deep": "gpt-5"}},
	"anthropic": {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", llm.DefaultAnthropicBaseURL, "claude-sonnet-4-5", "", "", llm.DefaultAnthropicBaseURL,
		map[string]string{"fast": "claude-haiku-4-5", "smart": "claude-sonnet-4-5", "deep": "claude-opus-4-1"}},
	"gemini": {"GEMINI_API_KEY", "GEMINI_BASE_URL", llm.DefaultGeminiBaseURL, "gemini-2.5-pro", "", "", llm.DefaultGeminiBaseURL,
		map[string]string{"fast": "gemini-2.5-flash", "smart": "gemini-2.5-pro", "deep": "gemini-2.5-pro"}},
}

// resolveProvider applies flags over the run's record over environment
// over config over defaults (resume passes the run's provider, model and
// URL as the fallbacks).
func (f *runFlags) resolveProvider(p *project, fallbackProvider, fallbackModel, fallbackURL string) (*providerChoice, error) {
	mc := p.Config.Model
	name := pick(f.provider, fallbackProvider, os.Getenv("ULTRA_PROVIDER"), mc.Provider, "openai")
	d, ok := providerDefaults[name]
	if !ok {
		return nil, usageErr("unknown provider %q (available: openai — any OpenAI-compatible Chat Completions server — anthropic and gemini)", name)
	}
	key := os.Getenv(d.keyEnv)
	if key == "" && mc.KeyCommand != "" {
		out, err := exec.Command("sh", "-c", mc.KeyCommand).Output()
		if err != nil {
			return nil, usageErr("model.key_command (%s) failed: %v", config.UserPath(), err)
		}
		key = strings.TrimSpace(string(out))
	}
	defURL, defModel := d.localURL, d.localModel
	if key != "" || defURL == "" {
		defURL, defModel = d.defURL, d.defModel
	}
	base := pick(f.baseURL, fallbackURL, os.Getenv(d.urlEnv), mc.BaseURL, defURL)
	// A repository must not be able to send the user's key to a server of
	// its choosing: a model server chosen by the project's own config gets
	// the key only when the user says so.
	fromProject := f.baseURL == "" && fallbackURL == "" && os.Getenv(d.urlEnv) == "" && p.Config.ProjectSetsModelServer
	if fromProject && key != "" && !strings.HasPrefix(base, d.official) && os.Getenv("ULTRA_TRUST_PROJECT_CONFIG") != "1" {
		return nil, usageErr("%s sets the model server to %s; ultra does not send %s to a server chosen by the repository. Pass --base-url %s (or set %s, or ULTRA_TRUST_PROJECT_CONFIG=1) to confirm",
			config.ProjectPath(p.Root), base, d.keyEnv, base, d.urlEnv)
	}
	model := pick(f.model, fallbackModel, os.Getenv("ULTRA_MODEL"), mc.Name, defModel)
	// The routing table: the provider's own (for its own service, when no
	// model is named), then the configured modes; a named model serves all.
	var models map[string]string
	if pick(f.model, fallbackModel, os.Getenv("ULTRA_MODEL"), mc.Name) == "" {
		models = map[string]string{}
		if key != "" && strings.HasPrefix(base, d.official) {
			for k, v := range d.modes {
				models[k] = v
			}
		}
		for k, v := range mc.Modes {
			models[k] = v
		}
	}
	var stream *bool
	if f.noStream || (mc.Stream != nil && !*mc.Stream) {
		no := false
		stream = &no
	}
	// ultra retries itself (with events); the SDKs do not.
	var prov llm.Provider
	var err error
	switch name {
	case "anthropic":
		prov, err = llm.NewAnthropic(llm.AnthropicConfig{BaseURL: base, APIKey: key, Model: model, Headers: mc.Headers, Stream: stream})
	case "gemini":
		prov, err = llm.NewGemini(llm.GeminiConfig{BaseURL: base, APIKey: key, Model: model, Headers: mc.Headers, Stream: stream})
	default:
		// OpenAI's own service speaks the Responses API (reasoning carried
		// across turns); every compatible server speaks Chat Completions.
		api := mc.API
		if api == "" && strings.HasPrefix(base, d.official) {
			api = "responses"
		}
		if api == "responses" {
			prov, err = llm.NewResponses(llm.ResponsesConfig{BaseURL: base, APIKey: key, Model: model, Headers: mc.Headers, Stream: stream})
		} else {
			prov, err = llm.NewOpenAI(llm.OpenAIConfig{BaseURL: base, APIKey: key, Model: model, Headers: mc.Headers, Stream: stream})
		}
	}
	if err != nil {
		return nil, usageErr("provider %s: %v", name, err)
	}
	hint := ""
	if key == "" && base == d.localURL {
		hint = fmt.Sprintf("no API key is set (%s), so ultra used a local Ollama at %s: start it (ollama serve; ollama pull %s), or set %s, or pass --base-url",
			d.keyEnv, base, model, d.keyEnv)
	} else if key == "" && d.localURL == "" {
		hint = fmt.Sprintf("%s is not set", d.keyEnv)
	}
	secrets := []string{key}
	for _, v := range mc.Headers {
		secrets = append(secrets, v)
	}
	return &providerChoice{name: name, baseURL: base, model: model, models: models, provider: prov, hint: hint, secrets: secrets,
		named: pick(f.model, fallbackModel, os.Getenv("ULTRA_MODEL"), mc.Name) != ""}, nil
}

// sinks builds the surfaces of a headless run. The human log is live on
// a terminal (unless --quiet): the answer streams in and a spinner line
// says what the run does; it ends itself with the run_finished event.
// Anything else (a pipe, a file) gets one plain line per event, without
// escape sequences. NO_COLOR turns the colours off, not the live part.
func (f *runFlags) sinks(w io.Writer) ([]event.Sink, error) {
	switch f.output {
	case "jsonl":
		return []event.Sink{event.NewJSONL(w)}, nil
	case "human", "":
		if f.quiet && f.verbose {
			return nil, usageErr("--quiet and --verbose contradict each other: give one")
		}
		file, _ := w.(*os.File)
		tty := file != nil && term.IsTerminal(int(file.Fd()))
		l := headless.New(w, tty && os.Getenv("NO_COLOR") == "")
		l.Verbose, l.Quiet = f.verbose, f.quiet
		if tty && !f.quiet {
			l.EnableLive(headless.LiveOptions{Width: terminalWidth(file)})
		}
		return []event.Sink{l}, nil
	}
	return nil, usageErr("unknown --output %q (human or jsonl)", f.output)
}

// terminalWidth reports the columns of the terminal on file, 0 when it
// cannot tell.
func terminalWidth(file *os.File) func() int {
	return func() int {
		w, _, err := term.GetSize(int(file.Fd()))
		if err != nil {
			return 0
		}
		return w
	}
}

func (f *runFlags) options(p *project, pc *providerChoice, sinks []event.Sink) agent.Options {
	vc := p.Config.Verify
	cmds := f.verifyCmds
	if len(cmds) == 0 {
		cmds = vc.Command
	}
	retries := 0 // llm.DefaultRetries
	if mr := p.Config.Model.MaxRetries; mr != nil {
		retries = *mr
		if retries == 0 {
			retries = -1 // none
		}
	}
	pricing := map[string]llm.Price{}
	for m, pr := range p.Config.Pricing {
		pricing[m] = llm.Price{Input: pr.Input, Output: pr.Output, CacheRead: pr.CacheRead, CacheWrite: pr.CacheWrite}
	}
	return agent.Options{
		Pricing: pricing, ProviderHint: pc.hint, ContextWindow: p.Config.Model.ContextWindow, ThinkingBudget: p.Config.Model.ThinkingBudget,
		ModelRetries: retries,
		Provider:     pc.provider, ProviderName: pc.name, Model: pc.model, BaseURL: pc.baseURL, Models: pc.models,
		StateRoot: p.StateRoot, VerifyCommands: cmds, DeclaredCode: vc.Code, DeclaredSupport: vc.TestSupport,
		VerifyTimeout:   pick(f.verifyTO, vc.Timeout.D()),
		BashTimeout:     pick(f.bashTimeout, p.Config.Run.BashTimeout.D()),
		Sinks:           sinks,
		Git:             p.gitSettings(),
		Ultra:           ultraProgram(),
		Secrets:         pc.secrets,
		GateUnixSockets: p.Config.Verify.UnixSockets,
		NoGateCache:     f.noGateCache || p.Config.Verify.CacheOff(),
		NoTestsAhead:    p.Config.Verify.AheadOff(),
		GoalFailure:     p.Config.Goals.OnFailure,
		NoCleanup:       p.Config.Goals.CleanupOff(),
		Snapshots:       sharedDB() != "",
		NoWait:          f.noWait,
		OneUnit:         f.oneUnit,
	}
}

// ultraProgram is this program, for the gate's Go test binaries to run
// through (agent.Options.Ultra); "" when it cannot be found.
func ultraProgram() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe
}

func newRunCmd() *cobra.Command { return newStartCmd(false) }

// newPlanCmd is ultra plan: a run that proposes its goals and criteria
// and stops at the acceptance point (ultra approve RUN goes on).
func newPlanCmd() *cobra.Command { return newStartCmd(true) }

// readBrief reads a brief file and refuses one whose definition of done
// is undecided, before anything is made.
func readBrief(path string) (goal.Brief, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return goal.Brief{}, "", usageErr("--brief-file: %v", err)
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return goal.Brief{}, "", usageErr("--brief-file %s is not text (a brief is markdown)", path)
	}
	text := strings.TrimSpace(string(b))
	brief := goal.ParseBrief(text)
	if und := brief.Undecided(); len(und) > 0 {
		return brief, "", usageErr("the brief %s leaves its definition of done undecided; decide these first:\n  - %s", path, strings.Join(und, "\n  - "))
	}
	return brief, text, nil
}

// startFlags are the flags of ultra run and ultra plan (and of the runs
// a schedule makes).
type startFlags struct {
	f                                           runFlags
	a                                           axes.Axes
	base, briefFile, skill                      string
	includeUncommitted, allowTestChanges, refac bool
	dispatch                                    string // --dispatch: the schedule's dispatch a worker starts the run for
	adopt                                       string // --adopt: the queued run (submitted to a fleet) a worker starts
	parallel                                    int    // --parallel: workers for the accepted goals
}

// task is the run's task and brief text from the arguments or the brief
// file.
func (s *startFlags) task(args []string) (task, briefText string, err error) {
	task = strings.TrimSpace(strings.Join(args, " "))
	if s.briefFile != "" {
		if task != "" {
			return "", "", usageErr("give the task as arguments or the brief with --brief-file, not both")
		}
		brief, text, err := readBrief(s.briefFile)
		if err != nil {
			return "", "", err
		}
		task, briefText = firstLine(brief.Title, text), text
	}
	if task == "" && s.skill == "" {
		return "", "", usageErr("the task is empty: give it as arguments, or a brief with --brief-file")
	}
	return task, briefText, nil
}

// axes are the run's axes, checked.
func (s *startFlags) axes(planOnly bool) (axes.Axes, error) {
	a := s.a
	if planOnly {
		a.Mode = phase.Plan
	}
	a, err := a.Normalize()
	if err != nil {
		return a, usageErr("%v", err)
	}
	if a.Mode == phase.Review {
		return a, usageErr("a review inspects a diff: use ultra review [RUN | --base A --head B]")
	}
	return a, nil
}

func newStartCmd(planOnly bool) *cobra.Command {
	sf := &startFlags{a: axes.Default}
	f := &sf.f
	cmd := &cobra.Command{
		Use:   "run [flags] TASK | --brief-file BRIEF.md",
		Short: "Run a task or a brief to a verified finish with nobody watching",
		Example: `  ultra run "make the failing test in pkg/calc pass"
  ultra run --brief-file BRIEF.md
  ultra run --output jsonl --base-url http://127.0.0.1:11434/v1 --model qwen3-coder "fix the parser"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			task, briefText, err := sf.task(args)
			if err != nil {
				return err
			}
			a, err := sf.axes(planOnly)
			if err != nil {
				return err
			}
			claim, err := parseDispatch(sf.dispatch)
			if err != nil {
				return err
			}
			if err := checkParallel(sf.parallel, a); err != nil {
				return err
			}
			p, st, err := openProject(cmd)
			if err != nil {
				return err
			}
			defer st.Close()
			if claim != nil {
				// Before anything is made for it: the dispatch is still
				// this worker's (creating the run takes it for good).
				if err := st.CheckDispatch(cmd.Context(), *claim); err != nil {
					return err
				}
			}
			spec := agent.Spec{Task: task, Repo: p.Root, Workdir: p.Root, Cwd: p.Dir, Axes: a, Budgets: f.budgets(p), AllowTestChanges: sf.allowTestChanges, Refactor: sf.refac,
				Brief: briefText, BriefFile: inRepo(p.Root, sf.briefFile), PlanOnly: planOnly, Dispatch: claim, Adopt: sf.adopt, Parallel: sf.parallel}
			if sf.skill != "" {
				all, _ := p.skills()
				if err := invokeSkill(all, sf.skill, a.Permission, &spec); err != nil {
					return err
				}
			}
			out, err := launch(cmd, f, p, st, cmd.OutOrStdout(), spec, func(o *agent.Options, spec *agent.Spec) error {
				if !phase.Worktree(a.Mode) {
					return nil
				}
				var err error
				if spec.RepairFirst, err = dispatchCheck(cmd, p, st); err != nil {
					return err
				}
				dir, err := p.worktreeDir()
				if err != nil {
					return usageErr("%v", err)
				}
				spec.Worktree = &agent.WorktreeSpec{Dir: dir, Base: sf.base, IncludeUncommitted: sf.includeUncommitted,
					Setup: p.Config.Workspace.Setup, SetupTimeout: o.VerifyTimeout}
				return nil
			})
			if out == nil && err != nil {
				return err
			}
			return finished(out, err)
		},
	}
	if planOnly {
		cmd.Use = "plan [flags] TASK | --brief-file BRIEF.md"
		cmd.Short = "Plan only: propose goals and success criteria, then stop for a person to accept them (ultra approve RUN)"
		cmd.Example = `  ultra plan --brief-file BRIEF.md
  ultra goals RUN            # read the proposal
  ultra approve RUN          # accept it: the run goes on to build`
	}
	sf.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&sf.dispatch, "dispatch", "", "the schedule's dispatch a worker starts this run for (set by ultra worker)")
	fl.StringVar(&sf.adopt, "adopt", "", "the queued run, submitted to a fleet, that this run takes over (set by ultra worker --db)")
	_ = fl.MarkHidden("dispatch")
	_ = fl.MarkHidden("adopt")
	return cmd
}

// register adds the flags of a run: those of every run, the print mode
// and the run's own.
func (sf *startFlags) register(cmd *cobra.Command) {
	f, a := &sf.f, &sf.a
	f.register(cmd)
	fl := cmd.Flags()
	fl.BoolVarP(&f.print, "print", "p", false, "print mode, as claude -p: stdout gets the result alone (with --output-format json or stream-json, Claude Code's JSON shapes); the log goes to stderr with -v")
	fl.StringVar(&sf.briefFile, "brief-file", "", "a brief (markdown) with the goals, constraints and definition of done; written to .ultra/runs/<run-id>/brief.md")
	fl.StringVar(&a.Mode, "mode", a.Mode, "work mode: "+strings.Join(axes.Values[axes.Mode], ", "))
	fl.StringVar(&a.Control, "control", a.Control, "run control: "+strings.Join(axes.Values[axes.Control], ", ")+" (non-autonomous runs wait for a person to approve the plan)")
	fl.StringVar(&a.Permission, "permission-profile", a.Permission, "permission profile: "+strings.Join(axes.Values[axes.Permission], ", "))
	fl.StringVar(&sf.base, "base", "", "branch to cut the run's branch from (default: the checkout's current branch)")
	fl.BoolVar(&sf.refac, "refactor", false, "the task asks for no change of behaviour: the planner may propose refactor goals, whose criteria that run the program pass before the change and must keep passing, and whose criteria that read its text (docs, comments) must change (without it every goal needs a criterion that fails on the base tree and runs something)")
	fl.BoolVar(&sf.allowTestChanges, "allow-test-changes", false, "the task is to change the project's tests: changed, deleted or renamed tests and test support need no waiver at the gate (the original tests must still pass against the new code, and the decision records the permission)")
	fl.StringVar(&sf.skill, "skill", "", "run with a skill (ultra skills list): its instructions lead the task, and its allowed-tools narrow the run's tools")
	fl.BoolVar(&sf.includeUncommitted, "include-uncommitted", false, "start the run from the checkout's uncommitted changes (snapshotted into the run's first commit; the checkout is not touched)")
	fl.StringVar(&a.ModelMode, "model-mode", a.ModelMode, "model mode: "+strings.Join(axes.Values[axes.ModelMode], ", "))
	fl.IntVar(&sf.parallel, "parallel", 0, "work the accepted goals with up to N workers at once, each in its own worktree and branch, landing each goal on the run's branch when its merged tree passes (docs/parallel.md)")
}

// checkParallel refuses --parallel where it cannot hold: fewer than two
// workers, a mode that builds nothing, or assisted control (whose pause
// after each unit would stop every worker in turn).
func checkParallel(n int, a axes.Axes) error {
	switch {
	case n == 0:
		return nil
	case n < 2 || n > 32:
		return usageErr("--parallel %d: give 2 to 32 workers (without the flag, one worker works the goals in turn)", n)
	case !phase.Worktree(a.Mode):
		return usageErr("--parallel works the goals of a build or repair run; a %s run builds nothing", a.Mode)
	case a.Control == "assisted":
		return usageErr("--parallel does not go with assisted control, which pauses after each unit; use autonomous or manual control")
	}
	return nil
}

// firstLine is title, or else the first non-empty line of text.
func firstLine(title, text string) string {
	if t := strings.TrimSpace(title); t != "" {
		return t
	}
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(l, "# ")); l != "" {
			return l
		}
	}
	return ""
}

// finished turns an outcome into the process's exit.
func finished(out *agent.Outcome, err error) error {
	if err != nil {
		return &exitError{code: agent.ExitError, err: err}
	}
	if out.Status == agent.StatusInterrupted {
		// The log has said "interrupted"; say how to go on.
		return &exitError{code: out.ExitCode, err: fmt.Errorf("continue run %s with: ultra resume %s", out.RunID, out.RunID)}
	}
	if out.Status == agent.StatusEscalated {
		// A person decides: say how.
		return &exitError{code: out.ExitCode, err: fmt.Errorf("run %s escalated: %s\na person decides: ultra status %s shows why, ultra diff %s the work; ultra resume %s \"GUIDANCE\" goes on, ultra cancel %s ends it",
			out.RunID, out.Reason, out.RunID, out.RunID, out.RunID, out.RunID)}
	}
	if out.ExitCode != 0 {
		return &exitError{code: out.ExitCode, err: fmt.Errorf("run %s %s: %s", out.RunID, out.Status, out.Reason)}
	}
	return nil
}

// inRepo is path (a file given on the command line) relative to the
// repository at root, in git's form; "" when it lies outside or is "".
func inRepo(root, path string) string {
	if path == "" {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// parseDispatch reads --dispatch SCHEDULE,DUE,WORKER (DUE in RFC 3339);
// nil without one.
func parseDispatch(v string) (*store.DispatchClaim, error) {
	if v == "" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	if len(parts) != 3 || parts[0] == "" || parts[2] == "" {
		return nil, usageErr("--dispatch %q: SCHEDULE,DUE,WORKER", v)
	}
	due, err := time.Parse(time.RFC3339, parts[1])
	if err != nil {
		return nil, usageErr("--dispatch %q: the due time is not RFC 3339", v)
	}
	return &store.DispatchClaim{Schedule: parts[0], Due: due, Worker: parts[2]}, nil
}

// dispatchArg is --dispatch's value for a claim.
func dispatchArg(c store.DispatchClaim) string {
	return c.Schedule + "," + c.Due.UTC().Format(time.RFC3339) + "," + c.Worker
}
