// Package serve is the environment for external language-model trainers
// (verl, OpenRLHF, TRL, SkyRL): an HTTP/JSON server that takes a model's
// reply (or a program), runs it as one episode through an episode.Executor
// (local slots or the job queue, so `mlerl worker` machines add capacity),
// grades it with the run's reward and answers with the episode result of
// CONTRACT.md §3 plus the feedback an improve prompt would show. Every
// request and result is kept in a run folder, and a restarted server answers
// requests it already finished from there. Usage: docs/serve.md.
package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/llm"
)

// Config configures a Server.
type Config struct {
	// Executor runs the programs. The server puts an episode.Cache in front
	// of it (an identical program on the same task runs once) and grades
	// with episode.Graded; it drives the executor from its own goroutines.
	Executor episode.Executor
	// Tasks are the tasks served.
	Tasks []*episode.Prepared
	// Reward is the run's (zero: episode.DefaultReward).
	Reward episode.Reward
	// Settings are every job's: time and memory limits, instrumentation.
	Settings episode.Settings
	// Dir is the run folder: requests.jsonl, episodes.jsonl, best/,
	// summary.json and report.html (at Close), cache/.
	Dir string
	// Token, when set, is the bearer token every request must carry.
	Token string
	// DefaultWait is how long POST /v1/episodes waits for the result when
	// the request gives no wait_s [30s]; MaxWait caps any wait_s [10m].
	DefaultWait, MaxWait time.Duration
	// MaxTurns is a session's number of steps when POST /v1/sessions gives none [3].
	MaxTurns int
	// KeepFinished is how many finished episodes stay in memory [4096];
	// older ones are answered from episodes.jsonl (the server keeps only
	// their offset), so a long-running server's memory does not grow with
	// every episode it ever ran.
	KeepFinished int
	// MaxQueued is how many accepted episodes may wait for a slot [10000];
	// beyond it a new episode is refused with 503 and Retry-After, which the
	// client retries, instead of the queue growing without bound.
	MaxQueued int
	// Stats, when set, adds the executor's own counts to summary.json.
	Stats func() (redelivered int, extra map[string]any)
	Log   *slog.Logger
}

// Server is the environment. Handler serves it; Close ends it.
type Server struct {
	cfg   Config
	g     *episode.Graded
	cache *episode.Cache
	tasks map[string]*served
	names []string
	start time.Time
	log   *slog.Logger
	ctx   context.Context
	stop  context.CancelFunc
	done  chan struct{} // closed when the collector has stopped
	files *folder

	pumpMu sync.Mutex // one goroutine submits at a time, in arrival order

	// mu guards what follows. Polls and status only read, under RLock, so
	// they never queue behind one another; no one holds it across disk I/O
	// or a response write.
	mu sync.RWMutex
	// eps holds the episodes queued, running or finished lately; finished
	// lists the finished ones in order, the oldest evicted first into
	// onDisk: episode id -> offset of its line in episodes.jsonl. An
	// episode id is its request id's hash, so both find the same entry.
	eps       map[string]*entry
	finished  []string
	onDisk    map[string]int64
	queue     []*entry // accepted, not yet submitted: waiting for a slot
	logging   int      // accepted, being written to requests.jsonl before they queue
	inflight  int      // submitted, not yet back from the executor
	kick      context.CancelFunc
	sessions  map[string]*session
	counts    counts
	best      map[string]float64 // task -> best score, in the metric's direction
	isolation string
	closed    bool
}

type counts struct {
	dispatched, completed, reused, failed, restored int
}

// served is one task with its prompts.
type served struct {
	prep   *episode.Prepared
	info   *llm.TaskInfo
	system string
	prompt string // the scratch prompt's user message
}

// entry is one episode the server knows: queued, running or done.
type entry struct {
	req     record
	done    chan struct{} // closed when ep or err is set
	ep      *Episode
	err     error
	started time.Time
	off     int64 // the episode's offset in episodes.jsonl; -1 when not written
}

// New opens (or reopens) the run folder and starts driving the executor.
func New(cfg Config) (*Server, error) {
	if cfg.Executor == nil || len(cfg.Tasks) == 0 || cfg.Dir == "" {
		return nil, errors.New("serve: an executor, at least one task and a run folder are required")
	}
	if cfg.DefaultWait <= 0 {
		cfg.DefaultWait = 30 * time.Second
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 10 * time.Minute
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 3
	}
	if cfg.KeepFinished <= 0 {
		cfg.KeepFinished = 4096
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = 10000
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.Reward == (episode.Reward{}) {
		cfg.Reward = episode.DefaultReward()
	}
	s := &Server{
		cfg: cfg, tasks: map[string]*served{}, start: time.Now(), log: cfg.Log, done: make(chan struct{}),
		eps: map[string]*entry{}, onDisk: map[string]int64{}, sessions: map[string]*session{}, best: map[string]float64{},
	}
	for _, p := range cfg.Tasks {
		t, err := newServed(p, cfg.Settings.Timeout)
		if err != nil {
			return nil, err
		}
		s.tasks[p.Task.Name] = t
		s.names = append(s.names, p.Task.Name)
	}
	files, pending, err := openFolder(cfg.Dir, s)
	if err != nil {
		return nil, err
	}
	s.files = files
	store, err := episode.NewStore(files.cacheDir())
	if err != nil {
		files.requests.Close()
		files.episodes.Close()
		files.sessions.Close()
		files.epRead.Close()
		return nil, err
	}
	s.cache = episode.NewCache(cfg.Executor, store)
	s.g = episode.NewGraded(s.cache, cfg.Tasks, cfg.Reward, cfg.Settings)
	s.ctx, s.stop = context.WithCancel(context.Background())
	go s.collect()
	go s.repump()
	// Requests accepted before a restart but never finished run now, so a
	// client still polling their id gets its answer.
	s.mu.Lock()
	s.queue = append(s.queue, pending...)
	s.mu.Unlock()
	s.pump()
	return s, nil
}

func newServed(p *episode.Prepared, timeout time.Duration) (*served, error) {
	info, err := llm.PromptInfo(p.Task, timeout)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	msgs, err := llm.Messages(info, scratchPrompt(p), llm.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("serve: task %s: %w", p.Task.Name, err)
	}
	return &served{prep: p, info: info, system: msgs[0].Content, prompt: msgs[1].Content}, nil
}

// repump submits queued episodes once a second: the job queue's slots grow
// when a worker joins, which no request or completion announces.
func (s *Server) repump() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.pump()
		}
	}
}

// authorized says whether header carries the server's bearer token.
func (s *Server) authorized(header string) bool {
	if s.cfg.Token == "" {
		return true
	}
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.cfg.Token)) == 1
}

// Close stops taking work, abandons what is still queued or running, and
// writes summary.json and report.html.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	<-s.done
	s.cache.Close() // the loop that drove it has ended
	s.mu.Lock()
	lost := s.inflight + len(s.queue) + s.logging
	for _, e := range s.eps {
		if e.ep == nil && e.err == nil {
			e.err = errStopped
			close(e.done)
		}
	}
	s.mu.Unlock()
	return s.files.finish(s.summary(lost))
}
