// Package ui is `mlerl ui`: a small web app, served by the binary, that
// follows run folders as they grow and shows the views of package report
// live — progress, the best program, the charts (several runs overlaid on one
// time axis), what the built-in policy learned, and the episodes.
//
// Serving stays cheap so it never slows a run: one goroutine polls the
// folders once a second and reads only the bytes appended since (no second
// copy of the data on disk, and one parse in memory however many tabs are
// open); pages learn of changes by server-sent events and fetch HTML
// fragments rendered once per change.
package ui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mlerl/mlerl/report"
	"github.com/mlerl/mlerl/task"
)

//go:embed static
var static embed.FS

// Options configure a Server.
type Options struct {
	// Poll is how often the folders are checked for new records (default 1 s).
	Poll time.Duration
	// LoadTask loads a task named in run.json, for the policy view; nil
	// leaves that view out.
	LoadTask func(name string) (*task.Task, error)
}

// Server follows run folders and serves their views.
type Server struct {
	runs []*run
	opts Options

	mu      sync.Mutex
	version int           // sum of the runs' versions: the page's one clock
	changed chan struct{} // closed and replaced at every change
	views   struct {      // the charts, rendered once per version
		version int
		html    string
	}
	policies map[int]*policyView
}

// New follows dirs. Folders need not exist yet: `train --ui` starts the
// server before the run writes anything.
func New(dirs []string, opts Options) *Server {
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	s := &Server{opts: opts, changed: make(chan struct{}), policies: map[int]*policyView{}}
	s.views.version = -1
	for _, d := range dirs {
		s.runs = append(s.runs, newRun(d))
	}
	nameRuns(s.runs)
	s.poll()
	return s
}

// Follow polls the folders until ctx ends.
func (s *Server) Follow(ctx context.Context) {
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.poll()
		}
	}
}

func (s *Server) poll() {
	any := false
	for _, r := range s.runs {
		// A read error (a folder removed, say) is retried at the next poll;
		// the page keeps what it has.
		if c, _ := r.poll(); c {
			any = true
		}
	}
	if !any {
		return
	}
	s.mu.Lock()
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// clock returns the version and a channel closed at the next change.
func (s *Server) clock() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, s.changed
}

// Handler serves the page, its assets, the fragments and the event stream.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	sub, _ := fs.Sub(static, "static")
	mux.Handle("GET /", http.FileServerFS(sub))
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		fmt.Fprint(w, report.CSS)
	})
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("GET /api/state", s.state)
	mux.HandleFunc("GET /api/views", s.viewsHTML)
	mux.HandleFunc("GET /api/run", s.withRun(func(w http.ResponseWriter, r *http.Request, i int, rr report.Run) {
		fmt.Fprint(w, report.Facts(rr), "<h2>Best program</h2>\n", report.BestProgram(rr))
	}))
	mux.HandleFunc("GET /api/rows", s.withRun(func(w http.ResponseWriter, r *http.Request, i int, rr report.Run) {
		from, _ := strconv.Atoi(r.URL.Query().Get("from"))
		w.Header().Set("X-Total", strconv.Itoa(len(rr.Episodes)))
		fmt.Fprint(w, report.EpisodeRows(rr, from, false))
	}))
	mux.HandleFunc("GET /api/episode", s.withRun(func(w http.ResponseWriter, r *http.Request, i int, rr report.Run) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		fmt.Fprint(w, report.EpisodeDetail(rr, n))
	}))
	mux.HandleFunc("GET /api/policy", s.withRun(func(w http.ResponseWriter, r *http.Request, i int, rr report.Run) {
		fmt.Fprint(w, s.policy(i, rr))
	}))
	return mux
}

// withRun resolves ?run=I and hands h that run's records as HTML.
func (s *Server) withRun(h func(http.ResponseWriter, *http.Request, int, report.Run)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		i, err := strconv.Atoi(r.URL.Query().Get("run"))
		if err != nil || i < 0 || i >= len(s.runs) {
			http.Error(w, "no such run", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		h(w, r, i, s.runs[i].snapshot())
	}
}

func (s *Server) snapshots() []report.Run {
	out := make([]report.Run, len(s.runs))
	for i, r := range s.runs {
		out[i] = r.snapshot()
	}
	return out
}

// runState is what the page's header shows of a run.
type runState struct {
	Name     string          `json:"name"`
	Label    string          `json:"label"`
	Progress report.Progress `json:"progress"`
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	v, _ := s.clock()
	out := struct {
		Version int        `json:"version"`
		Runs    []runState `json:"runs"`
	}{Version: v}
	for _, rr := range s.snapshots() {
		out.Runs = append(out.Runs, runState{rr.Name, report.Label(rr), report.ProgressOf(rr)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out) // a client gone mid-write needs no answer
}

// viewsHTML is the four charts over every run, rendered once per change
// however many pages ask.
func (s *Server) viewsHTML(w http.ResponseWriter, r *http.Request) {
	v, _ := s.clock()
	s.mu.Lock()
	if s.views.version != v {
		s.mu.Unlock()
		page := report.Charts(s.snapshots())
		s.mu.Lock()
		s.views.version, s.views.html = v, page
	}
	page := s.views.html
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, page)
}

// events tells the page that the records changed (server-sent events); the
// page then fetches the fragments it shows.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		v, next := s.clock()
		if _, err := fmt.Fprintf(w, "event: update\ndata: %d\n\n", v); err != nil {
			return
		}
		fl.Flush()
		// Every 15 s the same version again keeps proxies from closing an
		// idle stream; the page ignores a version it has.
		select {
		case <-r.Context().Done():
			return
		case <-next:
		case <-keep.C:
		}
	}
}

// Start listens on addr and serves until ctx ends, following the folders
// meanwhile. It returns the page's address at once (a port taken is an error
// now, not later) and a channel that delivers the server's end.
func (s *Server) Start(ctx context.Context, addr string) (url string, done <-chan error, err error) {
	ln, err := listen(addr)
	if err != nil {
		return "", nil, err
	}
	// Requests live in ctx, so open event streams end with it.
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go s.Follow(ctx)
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut) // the end of ctx is the reason; nothing to add
	}()
	ch := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		if err != nil {
			err = fmt.Errorf("ui: %w", err)
		}
		ch <- err
	}()
	return "http://" + ln.Addr().String() + "/", ch, nil
}
