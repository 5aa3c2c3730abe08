package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ultra-dev/ultra/internal/event"
	"github.com/ultra-dev/ultra/internal/store"
)

// page is how many events a stream reads from the store at a time: all a
// client ever holds in memory, however far behind it is.
const page = 256

// hub watches the store for new events while someone streams them: one
// cheap query every poll for the place of the latest event, and a wake-up
// for every stream when it moves. Streams read the events themselves,
// from the store, each from its own place: a slow client falls behind
// without slowing the run or anyone else, holds one page at most, and
// never loses an event, since the store keeps them all.
type hub struct {
	events Events
	poll   time.Duration

	mu      sync.Mutex
	last    int64         // the place of the latest event seen
	changed chan struct{} // closed (and replaced) when last moves
	clients int
	stop    context.CancelFunc
}

func newHub(ev Events, poll time.Duration) *hub {
	return &hub{events: ev, poll: poll, changed: make(chan struct{})}
}

// join counts a stream in; the first one starts the watch. It returns
// the channel closed at the next change, and the leave to call when done.
func (h *hub) join() (leave func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.clients++
	if h.clients == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		go h.watch(ctx)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.clients--
			if h.clients == 0 {
				h.stop()
			}
		})
	}
}

// next is the channel closed when an event is stored after the ones the
// hub has seen so far.
func (h *hub) next() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *hub) watch(ctx context.Context) {
	t := time.NewTicker(h.poll)
	defer t.Stop()
	for {
		row, err := h.events.LastRow(ctx)
		if err == nil {
			h.mu.Lock()
			if row != h.last {
				h.last = row
				close(h.changed)
				h.changed = make(chan struct{})
			}
			h.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// streamEvent is one event as a stream sends it: the JSON line of
// ultra run --output jsonl, numbered by id.
func streamEvent(run string, e store.StoredEvent) event.Event {
	return event.Event{Seq: e.Seq, Time: e.Time, Run: run, Type: event.Type(e.Type), Phase: e.Phase, Data: e.Data}
}

// after is where a stream resumes: the Last-Event-ID a reconnecting
// client sends, or ?after=N, or 0 (from the start).
func after(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	where := "the Last-Event-ID header"
	if v == "" {
		v, where = r.URL.Query().Get("after"), "the after parameter"
	}
	if v == "" {
		return 0, nil
	}
	if v == "latest" && where == "the after parameter" {
		return latest, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s is %q: give the id of the last event received (a whole number, 0 or more), or latest", where, v)
	}
	return n, nil
}

// latest is ?after=latest: only the events stored from now on.
const latest = -1

// fetch reads the events after place from, and says each one's id.
type fetch func(ctx context.Context, from int64) ([]event.Event, []int64, error)

// stream sends Server-Sent Events: every event after the client's place,
// then each new one as it is stored, with a comment line as heartbeat.
// A client that cannot take a write within the server's write timeout is
// dropped (it reconnects with Last-Event-ID and loses nothing).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, get fetch, end func(context.Context) (int64, error)) {
	from, err := after(r)
	if err != nil {
		s.fail(w, http.StatusBadRequest, err.Error())
		return
	}
	announce := from == latest
	if announce {
		if from, err = end(r.Context()); err != nil {
			s.fail(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	leave := s.hub.join()
	defer leave()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.o.WriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// The retry line tells a browser's EventSource how soon to reconnect;
	// with ?after=latest an event without data says where the stream
	// starts, the id to resume after should it drop before any event.
	hello := "retry: 1000\n\n"
	if announce {
		hello = fmt.Sprintf("retry: 1000\nid: %d\n\n", from)
	}
	if !send([]byte(hello)) {
		return
	}
	beat := time.NewTicker(s.o.Heartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for {
		// Take the wake-up channel before reading, so that an event
		// stored between the read and the wait still wakes the stream.
		changed := s.hub.next()
		evs, ids, err := get(ctx, from)
		if err != nil {
			if ctx.Err() == nil {
				send([]byte(": " + strings.ReplaceAll(err.Error(), "\n", " ") + "\n\n"))
			}
			return
		}
		var b strings.Builder
		for i, e := range evs {
			j, err := json.Marshal(e)
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "id: %d\ndata: %s\n\n", ids[i], j)
			from = ids[i]
		}
		if b.Len() > 0 && !send([]byte(b.String())) {
			return
		}
		if len(evs) == page {
			continue // more to send at once
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-beat.C:
			if !send([]byte(": ping\n\n")) {
				return
			}
		}
	}
}

// allEvents is the stream of every run's events, numbered by their place
// in the store.
func (s *Server) allEvents(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, func(ctx context.Context, from int64) ([]event.Event, []int64, error) {
		stored, err := s.o.Events.EventsSince(ctx, from, page)
		if err != nil {
			return nil, nil, err
		}
		evs := make([]event.Event, len(stored))
		ids := make([]int64, len(stored))
		for i, e := range stored {
			evs[i], ids[i] = streamEvent(e.Run, e), e.Row
		}
		return evs, ids, nil
	}, s.o.Events.LastRow)
}

// runEvents is one run's stream, numbered by the events' seq (as in
// ultra run --output jsonl).
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	id, ok := s.runParam(w, r)
	if !ok {
		return
	}
	s.stream(w, r, func(ctx context.Context, from int64) ([]event.Event, []int64, error) {
		stored, err := s.o.Events.EventsAfter(ctx, id, from, page)
		if err != nil {
			return nil, nil, err
		}
		evs := make([]event.Event, len(stored))
		ids := make([]int64, len(stored))
		for i, e := range stored {
			evs[i], ids[i] = streamEvent(id, e), e.Seq
		}
		return evs, ids, nil
	}, func(ctx context.Context) (int64, error) { return s.o.Events.LastSeq(ctx, id) })
}
