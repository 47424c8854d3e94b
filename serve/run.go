package serve

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/llm"
	"github.com/mlerl/mlerl/rl"
)

// Episode is a finished episode as the server answers it and as one line of
// episodes.jsonl: the contract's episode result plus what an external
// trainer needs.
type Episode struct {
	episode.Result
	RequestID string `json:"request_id"`
	Parent    string `json:"parent,omitempty"`
	// Problem says why a completion held no program (it then ran as a
	// program that fails at once, earning the failure reward).
	Problem string `json:"problem,omitempty"`
	// Feedback is the user message of the improve prompt the LLM policy
	// would write from this episode: the task, the program, its score,
	// duration, stages and output.
	Feedback string  `json:"feedback"`
	DoneS    float64 `json:"completed_s"` // server clock when it finished
	Status   string  `json:"status"`      // "done"
}

// record is one accepted request, one line of requests.jsonl.
type record struct {
	ID            string       `json:"id"`
	RequestID     string       `json:"request_id"`
	Task          string       `json:"task"`
	Kind          episode.Kind `json:"kind"`
	Parent        string       `json:"parent,omitempty"`
	PolicyVersion int          `json:"policy_version"`
	Code          string       `json:"code"`
	Plan          string       `json:"plan,omitempty"`
	Problem       string       `json:"problem,omitempty"`
	TimeS         float64      `json:"time_s"`
}

// episodeID is the episode id of a request id: the same after a restart, and
// safe in a URL whatever the client put in its request id.
func episodeID(requestID string) string {
	sum := sha256.Sum256([]byte(requestID))
	return "ep-" + hex.EncodeToString(sum[:10])
}

// program is what runs for a request: code as given, or the program of a
// model's whole reply, extracted as the LLM policy does.
func program(completion, code *string) (prog, plan, problem string) {
	if code != nil {
		return *code, "", ""
	}
	return llm.ProgramOf(*completion)
}

// accept returns the entry of rec.RequestID, starting the episode when the
// request is new. A retried request never starts a second run.
func (s *Server) accept(rec record) (*entry, error) {
	if rec.RequestID == "" {
		rec.RequestID = "auto-" + rand.Text()
	}
	rec.ID = episodeID(rec.RequestID)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	if e, ok := s.eps[rec.ID]; ok && (e.err == nil) {
		s.mu.Unlock()
		return e, nil
	}
	if off, ok := s.onDisk[rec.ID]; ok {
		s.mu.Unlock()
		return s.fromDisk(rec.ID, off)
	}
	if len(s.queue)+s.logging >= s.cfg.MaxQueued {
		s.mu.Unlock()
		return nil, errQueueFull
	}
	rec.TimeS = time.Since(s.start).Seconds()
	// Known at once, so a retry of the same request id meanwhile waits for
	// this episode instead of starting another.
	e := &entry{req: rec, done: make(chan struct{}), started: time.Now(), off: -1}
	s.eps[rec.ID] = e
	s.logging++
	s.mu.Unlock()
	// Logged before it can run, so requests.jsonl always holds every
	// episode of episodes.jsonl, and a restart can finish what it lacks;
	// outside the lock, so no poll waits for the disk.
	err := s.files.request(rec)
	s.mu.Lock()
	s.logging--
	switch {
	case err != nil:
		// Not accepted after all: forgotten, so a retry logs it again, and
		// a retry that found it meanwhile is told why.
		if e.err == nil {
			e.err = err
			close(e.done)
		}
		if s.eps[rec.ID] == e {
			delete(s.eps, rec.ID)
		}
		s.mu.Unlock()
		return nil, err
	case e.err != nil:
		// Close stopped it while it was written: logged, it runs when the
		// server restarts, and the client is told to retry there.
		s.mu.Unlock()
		return e, nil
	}
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	s.pump()
	return e, nil
}

// errQueueFull refuses an episode while MaxQueued wait for a slot (503,
// with Retry-After: the client tries again later).
var errQueueFull = errors.New("too many episodes waiting for a slot; retry later")

// lookup returns the entry of episode id, from memory or episodes.jsonl.
func (s *Server) lookup(id string) (*entry, bool, error) {
	s.mu.RLock()
	e, ok := s.eps[id]
	off, onDisk := s.onDisk[id]
	s.mu.RUnlock()
	switch {
	case ok:
		return e, true, nil
	case onDisk:
		e, err := s.fromDisk(id, off)
		return e, err == nil, err
	}
	return nil, false, nil
}

// fromDisk is the finished entry of episode id, read back from its line of
// episodes.jsonl at off, as it was answered when it finished.
func (s *Server) fromDisk(id string, off int64) (*entry, error) {
	ep, err := s.files.readEpisode(off)
	if err != nil {
		return nil, err
	}
	if ep.Episode != id {
		return nil, fmt.Errorf("serve: episodes.jsonl at %d holds %s, not %s", off, ep.Episode, id)
	}
	ep.Output, ep.Submission = "", nil // as answered from memory
	e := &entry{req: record{ID: id, RequestID: ep.RequestID, Task: ep.Task, Kind: ep.Kind, Parent: ep.Parent},
		done: make(chan struct{}), ep: ep, off: off}
	close(e.done)
	return e, nil
}

// retire notes that e is finished and evicts the oldest finished entries
// beyond KeepFinished; s.mu is held.
func (s *Server) retire(e *entry) {
	s.finished = append(s.finished, e.req.ID)
	for len(s.finished) > s.cfg.KeepFinished {
		id := s.finished[0]
		s.finished = s.finished[1:]
		old, ok := s.eps[id]
		if !ok || (old.ep == nil && old.err == nil) {
			continue // replaced by a retry that is still running
		}
		if old.ep != nil && old.off >= 0 {
			s.onDisk[id] = old.off
		}
		// One that could not run (or whose line could not be written) is
		// forgotten: a retry of its request id runs it again.
		delete(s.eps, id)
	}
}

// pump submits queued episodes while the executor has free slots.
func (s *Server) pump() {
	s.pumpMu.Lock()
	defer s.pumpMu.Unlock()
	for {
		slots := s.g.Slots() // outside s.mu: it takes the cache's lock
		s.mu.Lock()
		if s.closed || len(s.queue) == 0 || s.inflight >= slots {
			s.mu.Unlock()
			return
		}
		e := s.queue[0]
		s.queue = s.queue[1:]
		s.inflight++
		s.counts.dispatched++
		s.mu.Unlock()
		r := e.req
		err := s.g.Submit(s.ctx, episode.Job{ID: r.ID, Task: r.Task, Kind: r.Kind, PolicyVersion: r.PolicyVersion, Code: r.Code})
		if err != nil {
			s.mu.Lock()
			s.inflight--
			s.counts.dispatched--
			s.mu.Unlock()
			s.fail(r.ID, fmt.Errorf("submitting: %w", err))
			continue
		}
		s.mu.Lock()
		if s.kick != nil {
			// The cache answers a repeated program at once, but only to a
			// Next call that starts after it did: restart the waiting one.
			s.kick()
		}
		s.mu.Unlock()
	}
}

// collect hands every finished execution to finish, until Close. It is
// Graded.Next, except that an infrastructure error keeps the execution's id,
// so that request fails instead of waiting forever.
func (s *Server) collect() {
	defer close(s.done)
	for s.ctx.Err() == nil {
		ctx, cancel := context.WithCancel(s.ctx)
		s.mu.Lock()
		s.kick = cancel
		s.mu.Unlock()
		ex, err := s.g.Executor.Next(ctx)
		cancel()
		switch {
		case err != nil && ex.Episode == "" && ctx.Err() != nil:
			continue // kicked, or closing
		case err != nil && ex.Episode == "":
			s.log.Error("serve: executor failed; a slot may stay taken", "err", err)
			time.Sleep(100 * time.Millisecond) // do not spin on a broken executor
			continue
		}
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
		if err != nil {
			s.fail(ex.Episode, err)
		} else {
			s.finish(ex)
		}
		s.pump()
	}
}

// fail ends an episode that could not run (not a failing program: those are
// episodes with their reward). It is not logged as finished, so a retry of
// the same request id runs it again.
func (s *Server) fail(id string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.failed++
	e, ok := s.eps[id]
	if !ok || e.ep != nil || e.err != nil {
		return
	}
	e.err = fmt.Errorf("episode %s: %w", id, err)
	close(e.done)
	s.retire(e)
	s.log.Error("serve: episode could not run", "episode", id, "err", err)
}

// finish grades ex, logs the episode and answers everyone waiting for it.
func (s *Server) finish(ex episode.Execution) {
	s.mu.Lock()
	e, ok := s.eps[ex.Episode]
	ok = ok && e.ep == nil
	s.mu.Unlock()
	t, known := s.tasks[ex.Task]
	if !ok || !known {
		s.log.Warn("serve: execution for no waiting episode, dropped", "episode", ex.Episode)
		return
	}
	res := episode.Grade(t.prep, ex, s.cfg.Reward)
	ep := &Episode{
		Result: res, RequestID: e.req.RequestID, Parent: e.req.Parent, Problem: e.req.Problem,
		DoneS: time.Since(s.start).Seconds(), Status: "done",
	}
	ep.Feedback = s.feedback(t, e.req, res)
	off, err := s.files.episode(ep)
	if err != nil {
		s.log.Error("serve: writing the run folder", "err", err)
	}
	s.noteBest(t, e.req, ep)
	ep.Output, ep.Submission = "", nil // in the feedback and best/; not kept twice in memory
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.completed++
	if res.Reused {
		s.counts.reused++
	}
	s.isolation = res.Isolation
	if e.ep == nil && e.err == nil {
		e.ep, e.off = ep, off
		e.req.Code = "" // in requests.jsonl and the feedback
		close(e.done)
		s.retire(e)
	}
}

// feedback is the improve prompt's user message for res.
func (s *Server) feedback(t *served, r record, res episode.Result) string {
	pr := rl.Prompt{Kind: episode.Improve, Task: t.prep.Task, Parent: &rl.Solution{
		Action: rl.Action{Kind: r.Kind, Plan: r.Plan, Code: r.Code}, Result: res,
	}}
	msgs, err := llm.Messages(t.info, pr, llm.DefaultLimits())
	if err != nil {
		s.log.Error("serve: rendering feedback", "episode", r.ID, "err", err)
		return ""
	}
	return msgs[1].Content
}

// noteBest keeps the task's best valid program in best/<task>/.
func (s *Server) noteBest(t *served, r record, ep *Episode) {
	if !ep.Valid || ep.Score == nil {
		return
	}
	s.mu.Lock()
	old, seen := s.best[r.Task]
	better := !seen || ep.Reward > old
	if better {
		s.best[r.Task] = ep.Reward
	}
	s.mu.Unlock()
	if better {
		if err := s.files.best(r, ep); err != nil {
			s.log.Error("serve: writing best/", "err", err)
		}
	}
}

// errStopped fails the episodes still waiting when the server stops; the
// client is told 503 and retries, and a server restarted on the same folder
// runs them.
var errStopped = errors.New("the server stopped before the episode finished; retry against the restarted server")

// wait returns e's episode once done (done true), or nothing after d or when
// ctx ends; err says why a done episode could not run.
func wait(ctx context.Context, e *entry, d time.Duration) (ep *Episode, done bool, err error) {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-e.done:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	select {
	case <-e.done:
		return e.ep, true, e.err
	default:
		return nil, false, nil
	}
}

// summary is summary.json: train's counts where they mean the same.
func (s *Server) summary(lost int) rl.Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := rl.Summary{
		Dispatched: s.counts.dispatched, Completed: s.counts.completed, AbandonedAtStop: lost,
		Reused: s.counts.reused, Isolation: s.isolation, ElapsedS: time.Since(s.start).Seconds(),
		Stopped: "shutdown", BestScores: map[string]float64{},
		Extra: map[string]any{"failed_to_run": s.counts.failed, "restored": s.counts.restored,
			"sessions": len(s.sessions), "cache": s.cache.Stats(), "tasks": strings.Join(s.names, ",")},
	}
	for task, r := range s.best {
		score := r
		if s.tasks[task].prep.Task.LowerIsBetter() {
			score = -r
		}
		sum.BestScores[task] = score
		if task == s.names[0] {
			sum.BestScore = &score
		}
	}
	if s.cfg.Stats != nil {
		red, extra := s.cfg.Stats()
		sum.Redelivered = red
		for k, v := range extra {
			sum.Extra[k] = v
		}
	}
	return sum
}

func scratchPrompt(p *episode.Prepared) rl.Prompt {
	return rl.Prompt{Kind: episode.Scratch, Task: p.Task}
}
