package fleet

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/ultra-dev/ultra/internal/agent"
	"github.com/ultra-dev/ultra/internal/axes"
	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
	"github.com/ultra-dev/ultra/internal/surface/procs"
)

// RescueAfter is how long a taken job may go without its worker's
// heartbeat before River gives it to another worker: the worker beats on
// the job's row every Beat while its run goes on, so a live run is never
// rescued, however long it takes, and a dead worker's is within seconds
// (not River's default of an hour).
const RescueAfter = StaleAfter

// Fleet is a worker of a shared store: it takes submitted runs from the
// queue, each in a clone of its repository in Cache, runs them with
// ultra's own `ultra run` (sharing the store through Env's ULTRA_DB),
// and pushes each run's green branch to the repository's remote.
type Fleet struct {
	URL     string // the database
	Store   *store.Store
	Program string // the ultra program
	Cache   string // where clones and the runs' output go
	Env     []string
	MaxRuns int
	Worker  store.Worker
	Log     func(format string, args ...any)
	// Hard ends when the worker is told again to stop (a second signal):
	// the runs it waits for are then asked to stop at their next safe
	// point. nil: it waits for them however long they take.
	Hard context.Context

	pool    *pgxpool.Pool
	mu      sync.Mutex
	repos   map[string]*sync.Mutex
	running int
}

func (f *Fleet) logf(format string, args ...any) {
	if f.Log != nil {
		f.Log(format, args...)
	}
}

// Serve takes runs from the queue until ctx ends; then it stops taking
// new ones and waits for those going on.
func (f *Fleet) Serve(ctx context.Context) error {
	pool, err := pgxpool.New(ctx, f.URL)
	if err != nil {
		return fmt.Errorf("the queue's database: %w", err)
	}
	defer pool.Close()
	f.pool = pool
	if err := Migrate(ctx, pool); err != nil {
		return err
	}
	if err := f.installKey(ctx); err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &runWorker{f: f})
	sched := &scheduleWorker{d: f.scheduler()}
	river.AddWorker(workers, sched)
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		ID:     f.Worker.ID,
		Logger: quiet,
		Queues: map[string]river.QueueConfig{
			QueueRuns:      {MaxWorkers: max(1, f.MaxRuns)},
			QueueSchedules: {MaxWorkers: 1},
		},
		Workers:              workers,
		JobTimeout:           -1,
		RescueStuckJobsAfter: RescueAfter,
		FetchPollInterval:    250 * time.Millisecond,
		// The schedules' looks come every second: finished jobs go after
		// an hour, not River's day.
		CompletedJobRetentionPeriod: time.Hour,
		// The fleet's schedules are looked at every second by one worker:
		// River enqueues the look on the elected leader only.
		PeriodicJobs: []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(Beat),
			func() (river.JobArgs, *river.InsertOpts) { return ScheduleTick{}, nil },
			&river.PeriodicJobOpts{ID: "ultra_schedules", RunOnStart: true})},
	})
	if err != nil {
		return err
	}
	// Start's context ending is River's hard stop: each job's context
	// ends, and a job asks its run to stop at its next safe point.
	hard := f.Hard
	if hard == nil {
		hard = context.Background()
	}
	if err := client.Start(hard); err != nil {
		return err
	}
	beat := time.NewTicker(Beat)
	defer beat.Stop()
	for ctx.Err() == nil {
		f.Worker.Heartbeat = time.Now()
		if err := f.Store.BeatWorker(ctx, f.Worker); err != nil && ctx.Err() == nil {
			f.logf("heartbeat: %v", err)
		}
		select {
		case <-ctx.Done():
		case <-beat.C:
		}
	}
	if n := f.busy(); n > 0 {
		f.logf("%s", waitingFor(n))
	}
	stop, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- client.Stop(stop) }()
	w := f.Worker
	go func() {
		hardDone := hard.Done()
		for {
			select {
			case <-done:
				return
			case <-hardDone:
				if f.busy() > 0 {
					f.logf("asking the runs going on to stop at their next safe point (ultra resume RUN_ID goes on with one)")
				}
				hardDone = nil
			case <-time.After(Beat):
				w.Heartbeat = time.Now()
				_ = f.Store.BeatWorker(stop, w)
			}
		}
	}()
	err = <-done
	w.Heartbeat, w.StoppedAt = time.Now(), time.Now()
	_ = f.Store.BeatWorker(context.Background(), w)
	return err
}

func (f *Fleet) busy() int { f.mu.Lock(); defer f.mu.Unlock(); return f.running }

func (f *Fleet) repoLock(url string) *sync.Mutex {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.repos == nil {
		f.repos = map[string]*sync.Mutex{}
	}
	if f.repos[url] == nil {
		f.repos[url] = &sync.Mutex{}
	}
	return f.repos[url]
}

// runWorker works the runs queue's jobs.
type runWorker struct {
	river.WorkerDefaults[RunJob]
	f *Fleet
	// failed are the jobs whose try here just failed (Work returned an
	// error), for NextRetry, which River calls right after: a job it
	// calls NextRetry for otherwise was rescued.
	mu     sync.Mutex
	failed map[int64]bool
}

// Timeout is what River's rescuer waits, after a job's last heartbeat,
// before it gives the job to another worker (River never rescues a job
// without a timeout). The job's context ends then too; Work goes on
// regardless: a run ends by its own budgets, never by the queue's clock.
func (w *runWorker) Timeout(*river.Job[RunJob]) time.Duration { return RescueAfter }

// NextRetry: a rescued run is taken again at once, a run that failed
// to start again after a growing wait (retryAfter).
func (w *runWorker) NextRetry(job *river.Job[RunJob]) time.Time {
	w.mu.Lock()
	failed := w.failed[job.ID]
	delete(w.failed, job.ID)
	w.mu.Unlock()
	return time.Now().Add(retryAfter(job.Errors, failed))
}

// rescuedError is what River's rescuer records of a job whose worker
// stopped beating (river v0.51.1, internal/maintenance/job_rescuer.go).
const rescuedError = "Stuck job rescued by JobRescuer"

// retryAfter is how long a job waits before its next try, given its
// earlier tries' errors and whether this try failed (else its worker
// stopped beating and River rescued it): nothing after a rescue (the
// run's machine died: another takes it over now); after its nth failure
// to start, 30 s times 4^(n-1) (30 s, 2 min, 8 min, 32 min), so that a
// remote or a setup that is broken for a while does not use up the
// queue's tries in a minute.
func retryAfter(earlier []rivertype.AttemptError, failed bool) time.Duration {
	if !failed {
		return 0
	}
	n := 1
	for _, e := range earlier {
		if e.Error != rescuedError {
			n++
		}
	}
	return 30 * time.Second << (2 * min(n-1, 4))
}

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunJob]) error {
	err := w.work(ctx, job)
	var snooze *river.JobSnoozeError
	if err != nil && !errors.As(err, &snooze) {
		// River asks NextRetry of a job that will be tried again, and only
		// of one: not of the last try, nor of a cancelled job.
		var cancelled *rivertype.JobCancelError
		if job.Attempt < job.MaxAttempts && !errors.As(err, &cancelled) {
			w.mu.Lock()
			if w.failed == nil {
				w.failed = map[int64]bool{}
			}
			w.failed[job.ID] = true
			w.mu.Unlock()
		}
		w.f.logf("run %s (attempt %d of %d): %v", job.Args.Run, job.Attempt, job.MaxAttempts, err)
		// A run that has not started says why, where every machine
		// reads it; the queue's last try fails it.
		last := job.Attempt >= job.MaxAttempts
		why := fmt.Sprintf("attempt %d of %d on %s: %v", job.Attempt, job.MaxAttempts, w.f.Worker.Host, err)
		if last {
			why = "the queue gave up: " + why
		}
		_ = w.f.Store.NoteQueued(context.WithoutCancel(ctx), job.Args.Run, event.OneLine(why, 500), last, time.Now())
	}
	return err
}

func (w *runWorker) work(ctx context.Context, job *river.Job[RunJob]) error {
	f := w.f
	a := job.Args
	f.mu.Lock()
	f.running++
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	// The run's last event before its row is read: a take-over that
	// started since (a run_resumed after it) is another worker's.
	start, err := f.Store.LastSeq(ctx, a.Run)
	if err != nil {
		return err
	}
	row, err := f.Store.GetRun(ctx, a.Run)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("run %s has no row in the store", a.Run))
	}
	if err != nil {
		return err
	}
	var args []string
	var claim *takeOverClaim
	asked := false
	if ask := a.Resume; ask != nil && row.Status != store.StatusQueued && agent.Resumable(row.Status) {
		// A person's ask to go on with the run, unless a rescued job of
		// it resumed it already.
		// Of workers taking asks of one run at once, one goes on with it;
		// the others look again once it has.
		c, err := f.claimTakeOver(ctx, a.Run, ask.After, job.ID)
		if err != nil {
			return err
		}
		if c != nil {
			if !c.won {
				return river.JobSnooze(StaleAfter)
			}
			claim, args, asked = c, ask.Argv(a.Run), true
		}
	}
	if args == nil && row.Status != store.StatusQueued {
		// Taken before: this is the job's rescue (the worker that had it
		// stopped beating), or the run ended and its worker died after.
		switch take, err := f.takeOver(ctx, row); {
		case err != nil:
			return err
		case !take:
			// It ended while its worker was gone (the run's process
			// outlived it): its green branch still goes to the remote.
			return f.pushEnded(ctx, a, row)
		}
		// Of the run's jobs rescuing it at once, one takes it over.
		c, err := f.claimTakeOver(ctx, a.Run, start, job.ID)
		if err != nil {
			return err
		}
		if c == nil || !c.won {
			return river.JobSnooze(StaleAfter)
		}
		claim, args = c, []string{"resume", "--output", "jsonl", "--take-over", "--rescue", a.Run}
	}
	if claim != nil {
		// A take-over that never resumed the run (its checkout, its
		// worktree's setup or its process failed; its worker died) gives
		// its place back: the job's next try, or another ask, goes on.
		defer func() {
			ctx := context.WithoutCancel(ctx)
			if resumed, _, err := sinceEvent(ctx, f.Store, a.Run, int64(claim.at)); err == nil && !resumed {
				_ = f.Store.ReleaseRecordClaim(ctx, a.Run, store.RecordTakeOver, claim.at, claim.body)
			}
		}()
	}
	dir, base, err := f.checkout(ctx, a.Repo, a.Base)
	if err != nil {
		return err // the log and the run say which run
	}
	if args == nil {
		args = []string{"run", "--output", "jsonl", "--adopt", a.Run, "--base", base}
		if a.Brief != "" {
			path := filepath.Join(f.Cache, "briefs", a.Run+".md")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(path, []byte(a.Brief), 0o600); err != nil {
				return err
			}
			args = append(args, "--brief-file", path)
		}
		args = append(args, a.Args...)
	}
	be := &procs.Processes{Store: f.Store, Program: f.Program, Dir: dir, Logs: filepath.Join(f.Cache, "logs"), Env: f.Env}
	id, wait, err := be.Start(context.WithoutCancel(ctx), args)
	if err != nil {
		if wait != nil {
			wait()
		}
		return fmt.Errorf("run %s did not start: %w", a.Run, err)
	}
	if asked {
		f.logf("run %s resumed, as a person asked (%s, base %s)", id, a.Repo, base)
	} else if args[0] == "resume" {
		f.logf("run %s taken over from a worker that stopped beating (%s, base %s)", id, a.Repo, base)
	} else {
		f.logf("run %s started (%s, base %s)", id, a.Repo, base)
	}
	ended := make(chan struct{})
	var code int
	go func() { _, code = wait(); close(ended) }()
	tick := time.NewTicker(Beat)
	defer tick.Stop()
	cancelled := false
	for done := false; !done; {
		select {
		case <-ended:
			done = true
		case <-tick.C:
			// The job's heartbeat: River rescues only a job whose worker
			// stopped beating.
			_, _ = f.pool.Exec(context.WithoutCancel(ctx), `UPDATE river_job SET attempted_at = now() WHERE id = $1 AND state = 'running'`, job.ID)
		case <-ctx.Done():
			cause := context.Cause(ctx)
			ctx = context.WithoutCancel(ctx)
			if errors.Is(cause, context.DeadlineExceeded) || cancelled {
				continue // the job's timeout: only the rescuer's clock
			}
			// The queue cancelled the job, or the worker stops for good:
			// the run stops at its next safe point.
			cancelled = true
			kind, why := store.ReqStop, "its worker stopped"
			if errors.Is(cause, river.ErrJobCancelledRemotely) {
				kind, why = store.ReqCancel, "its job was cancelled in the queue"
			}
			_, _ = f.Store.AddRequest(ctx, store.Request{Run: id, Kind: kind, Reason: why, Who: "worker " + f.Worker.ID})
		}
	}
	row, err = f.Store.GetRun(context.WithoutCancel(ctx), id)
	if err != nil {
		return err
	}
	f.logf("run %s ended %s (exit %d)", id, agent.ShownStatus(row), code)
	if err := f.push(context.WithoutCancel(ctx), dir, row); err != nil {
		f.logf("run %s: %v", id, err)
		return err
	}
	return nil
}

// checkout is the worker's clone of repo (made on first use, fetched on
// every use) and the local branch of base there, at the remote's tip.
func (f *Fleet) checkout(ctx context.Context, repo, base string) (string, string, error) {
	l := f.repoLock(repo)
	l.Lock()
	defer l.Unlock()
	sum := sha256.Sum256([]byte(repo))
	dir := filepath.Join(f.Cache, "repos", hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return "", "", err
		}
		if out, err := gitIn(ctx, "", "clone", "--quiet", repo, dir); err != nil {
			return "", "", fmt.Errorf("cloning %s: %s", repo, out)
		}
	}
	if out, err := gitIn(ctx, dir, "fetch", "--quiet", "--prune", "origin"); err != nil {
		return "", "", fmt.Errorf("fetching %s: %s", repo, out)
	}
	if base == "" {
		head, err := gitIn(ctx, dir, "symbolic-ref", "--short", "refs/remotes/origin/HEAD")
		if err != nil {
			return "", "", fmt.Errorf("%s names no default branch: give --base", repo)
		}
		base = strings.TrimPrefix(head, "origin/")
	}
	// The clone's checkout is the base's tip, detached: the run reads the
	// base's own .ultra/config and hooks, never an older clone's; the
	// base branch follows the remote's.
	if out, err := gitIn(ctx, dir, "checkout", "--quiet", "--force", "--detach", "refs/remotes/origin/"+base); err != nil {
		return "", "", fmt.Errorf("%s has no branch %s: %s", repo, base, out)
	}
	if out, err := gitIn(ctx, dir, "branch", "--force", "--no-track", base, "refs/remotes/origin/"+base); err != nil {
		return "", "", fmt.Errorf("%s has no branch %s: %s", repo, base, out)
	}
	return dir, base, nil
}

// push pushes a run's branch to the remote when its tip is the last
// commit ultra made, on a green tree: never a protected branch (only
// ultra/<run>), never a tree that has not gone green.
func (f *Fleet) push(ctx context.Context, dir string, row *store.Run) error {
	branch, green := row.Workspace.Branch, row.TaskRow.Checkpoint
	if branch == "" || green == "" {
		return nil
	}
	if branch != "ultra/"+row.ID {
		return fmt.Errorf("not pushing %s: a run's branch is ultra/%s", branch, row.ID)
	}
	tip, err := gitIn(ctx, dir, "rev-parse", "--verify", "refs/heads/"+branch)
	if err != nil {
		return fmt.Errorf("not pushing %s: %s", branch, tip)
	}
	if tip != green {
		return fmt.Errorf("not pushing %s: its tip %s is not the last green commit %s", branch, tip, green)
	}
	if out, err := gitIn(ctx, dir, "push", "--quiet", "origin", "refs/heads/"+branch+":refs/heads/"+branch); err != nil {
		return fmt.Errorf("pushing %s: %s", branch, out)
	}
	f.logf("run %s: pushed %s at %s", row.ID, branch, tip[:min(12, len(tip))])
	return nil
}

func gitIn(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// takeOverClaim is a job's place in its run's take-over claims.
type takeOverClaim struct {
	won  bool
	at   int
	body []byte
}

// claimTakeOver claims run for job as it stands (at its last event),
// unless it resumed after its event after (nil: another worker's
// take-over went on with it): not won when another job claimed it there
// first. What the claim is decided on is one read of the run's events.
func (f *Fleet) claimTakeOver(ctx context.Context, run string, after int64, job int64) (*takeOverClaim, error) {
	resumed, last, err := sinceEvent(ctx, f.Store, run, after)
	if err != nil || resumed {
		return nil, err
	}
	// The job's own claim, of a try before (its worker died): still its.
	body := []byte(fmt.Sprintf("job %d (worker %s)", job, f.Worker.ID))
	won, err := f.Store.ClaimOnce(ctx, run, store.RecordTakeOver, last, body, time.Now())
	if err != nil || won {
		return &takeOverClaim{won: won, at: last, body: body}, err
	}
	recs, err := f.Store.Records(ctx, run, store.RecordTakeOver)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if r.N != last {
			continue
		}
		holder, ok := claimant(r.Body)
		if ok && holder == job {
			return &takeOverClaim{won: true, at: last, body: r.Body}, nil
		}
		// A claim whose job will never try again (cancelled, replaced by
		// a person's newer ask, discarded) holds nothing: it is freed, and
		// this job claims again.
		if ok && f.jobFinished(ctx, holder) {
			if err := f.Store.ReleaseRecordClaim(ctx, run, store.RecordTakeOver, last, r.Body); err != nil {
				return nil, err
			}
			won, err := f.Store.ClaimOnce(ctx, run, store.RecordTakeOver, last, body, time.Now())
			return &takeOverClaim{won: won, at: last, body: body}, err
		}
	}
	return &takeOverClaim{at: last}, nil
}

// claimant is the job a take-over claim's body ("job N (worker W)")
// names.
func claimant(body []byte) (int64, bool) {
	var id int64
	_, err := fmt.Sscanf(string(body), "job %d ", &id)
	return id, err == nil
}

// jobFinished reports whether job is finished in River's table (it will
// never try again), or gone from it.
func (f *Fleet) jobFinished(ctx context.Context, id int64) bool {
	if f.pool == nil {
		return false
	}
	var state string
	switch err := f.pool.QueryRow(ctx, `SELECT state FROM river_job WHERE id=$1`, id).Scan(&state); {
	case errors.Is(err, pgx.ErrNoRows):
		return true
	case err != nil:
		return false
	}
	return state == "cancelled" || state == "discarded" || state == "completed"
}

// sinceEvent reads run's events after its event after: whether it
// resumed since (a run_resumed among them), and its last event's seq
// (after when none came since).
func sinceEvent(ctx context.Context, st *store.Store, run string, after int64) (resumed bool, last int, err error) {
	evs, err := st.EventsAfter(ctx, run, after, 0)
	if err != nil {
		return false, 0, err
	}
	last = int(after)
	for _, e := range evs {
		resumed = resumed || e.Type == string(event.RunResumed)
		last = max(last, int(e.Seq))
	}
	return resumed, last, nil
}

// takeOver decides about a job whose run a worker already took: true
// when the run's machine stopped mid-run (the run says running, but its
// heartbeat is older than StaleAfter, or it was interrupted) and this
// worker goes on with it; false when the run ended; an error (River
// tries again later) while its process still beats somewhere.
func (f *Fleet) takeOver(ctx context.Context, row *store.Run) (bool, error) {
	switch row.Status {
	case agent.StatusInterrupted:
		return true, nil
	case agent.StatusRunning:
	default:
		return false, nil
	}
	rt, err := f.Store.RuntimeOf(ctx, row.ID)
	if err == nil && time.Since(rt.Heartbeat) < StaleAfter {
		return false, river.JobSnooze(StaleAfter)
	}
	return true, nil
}

// State is where the fleet's runs on this machine keep ultra's per-user
// state (XDG_STATE_HOME for the runs it starts): their worktrees, and the
// fleet's key, apart from the person's own.
func (f *Fleet) State() string { return filepath.Join(f.Cache, "state") }

// installKey puts the fleet's key (made once, kept in the shared store)
// where the runs this worker starts sign and check gate decisions and
// ledgers with it: a run one machine began, another can go on with.
func (f *Fleet) installKey(ctx context.Context) error {
	key, err := f.Store.Secret(ctx, store.SecretGateKey, func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
	if err != nil {
		return err
	}
	path := filepath.Join(f.State(), "ultra", "gate.key")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, key) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// QueueSchedules is the River queue of the fleet's looks at its schedules.
const QueueSchedules = "schedules"

// ScheduleTick is one look at the fleet's schedules (a periodic job the
// leader enqueues every Beat).
type ScheduleTick struct{}

// Kind is the job's kind in River's table.
func (ScheduleTick) Kind() string { return "ultra_schedule_tick" }

// InsertOpts: the schedules' queue, one try (the next look comes a Beat
// later).
func (ScheduleTick) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueSchedules, MaxAttempts: 1}
}

type scheduleWorker struct {
	river.WorkerDefaults[ScheduleTick]
	d *Dispatcher
}

func (w *scheduleWorker) Work(ctx context.Context, _ *river.Job[ScheduleTick]) error {
	if err := w.d.Tick(ctx); err != nil {
		w.d.logf("schedules: %v", err)
	}
	return nil
}

// scheduler is the dispatcher of the fleet's schedules: each due time
// becomes a submitted run (its row, queued, takes the dispatch in the
// transaction that queues its job), which any worker then takes.
func (f *Fleet) scheduler() *Dispatcher {
	return &Dispatcher{
		Store:   f.Store,
		Worker:  f.Worker,
		MaxRuns: 1 << 20, // submitting is cheap: the queue's workers bound the runs
		Log:     f.Log,
		Start: func(ctx context.Context, sc *store.Schedule, claim store.DispatchClaim) (string, func() (string, int), error) {
			if sc.Repo == "" {
				return "", nil, fmt.Errorf("schedule %s names no repository (a repository's own schedule: ultra worker in it dispatches it)", sc.ID)
			}
			now := time.Now()
			row := &store.Run{ID: agent.NewRunID(now), Task: sc.Task, Repo: sc.Repo, Phase: "planning", Axes: axes.Default,
				State: json.RawMessage(`{}`), CreatedAt: now, UpdatedAt: now, Dispatch: &claim}
			job := RunJob{Run: row.ID, Repo: sc.Repo, Base: sc.Base, Args: sc.Args}
			if err := Submit(ctx, f.Store, row, job); err != nil {
				return "", nil, err
			}
			return row.ID, func() (string, int) { return "", 0 }, nil
		},
	}
}

// pushEnded pushes the branch of a run that ended on a machine whose
// worker died first, from that machine's clone when it is this one;
// another machine has neither its commits nor its worktree, and says so.
func (f *Fleet) pushEnded(ctx context.Context, a RunJob, row *store.Run) error {
	if row.Workspace.Branch == "" || row.TaskRow.Checkpoint == "" {
		return nil
	}
	dir, _, err := f.checkout(ctx, a.Repo, a.Base)
	if err != nil {
		return err
	}
	if _, err := gitIn(ctx, dir, "rev-parse", "--verify", "--quiet", row.TaskRow.Checkpoint+"^{commit}"); err != nil {
		f.logf("run %s ended on another machine, whose worker stopped before pushing ultra/%s: push it from there", row.ID, row.ID)
		return nil
	}
	return f.push(ctx, dir, row)
}
