package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
)

// maxBody bounds a request body: a batch of get_reward queries with long
// prompts fits; a runaway client does not fill the memory.
const maxBody = 64 << 20

// Handler is the HTTP API (docs/serve.md).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/tasks", s.handleTasks)
	mux.HandleFunc("POST /v1/episodes", s.handlePostEpisode)
	mux.HandleFunc("GET /v1/episodes/{id}", s.handleGetEpisode)
	mux.HandleFunc("POST /v1/weights", s.handleWeights)
	mux.HandleFunc("POST /v1/sessions", s.handleNewSession)
	mux.HandleFunc("POST /v1/sessions/{id}/step", s.handleStep)
	mux.HandleFunc("POST /get_reward", s.handleGetReward)
	mux.HandleFunc("GET /v1/status", s.handleStatus)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: %s %s (see docs/serve.md)", r.Method, r.URL.Path)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mlerl"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer $MLERL_SERVE_TOKEN)")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client has gone; nothing to tell it
}

func writeError(w http.ResponseWriter, status int, format string, a ...any) {
	writeJSON(w, status, map[string]string{"error": fmt.Sprintf(format, a...)})
}

// decode reads the body into v; unknown fields are refused on the /v1 API,
// where a misspelt field would otherwise be silently dropped.
func decode(r *http.Request, v any, strict bool) error {
	dec := json.NewDecoder(r.Body)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("malformed JSON body: empty")
		}
		return fmt.Errorf("malformed JSON body: %w", err)
	}
	return nil
}

// taskView is one entry of GET /v1/tasks.
type taskView struct {
	Name          string `json:"name"`
	Metric        string `json:"metric"`
	LowerIsBetter bool   `json:"lower_is_better"`
	// Prompt is the scratch prompt's user message, System its system
	// message: what the LLM policy sends for a program from scratch.
	Prompt string `json:"prompt"`
	System string `json:"system"`
}

func (s *Server) handleTasks(w http.ResponseWriter, r *http.Request) {
	out := make([]taskView, 0, len(s.names))
	for _, n := range s.names {
		t := s.tasks[n]
		out = append(out, taskView{Name: n, Metric: t.prep.Task.Metric, LowerIsBetter: t.prep.Task.LowerIsBetter(), Prompt: t.prompt, System: t.system})
	}
	writeJSON(w, http.StatusOK, out)
}

// episodeRequest is the body of POST /v1/episodes.
type episodeRequest struct {
	RequestID     string   `json:"request_id"`
	Task          string   `json:"task"`
	Kind          string   `json:"kind"`
	Completion    *string  `json:"completion"`
	Code          *string  `json:"code"`
	Parent        string   `json:"parent"`
	PolicyVersion int      `json:"policy_version"`
	WaitS         *float64 `json:"wait_s"`
}

// record checks the request and turns it into what is logged and run.
func (s *Server) record(q episodeRequest) (record, error) {
	if _, ok := s.tasks[q.Task]; !ok {
		return record{}, fmt.Errorf("unknown task %q (GET /v1/tasks lists them)", q.Task)
	}
	kind := episode.Kind(q.Kind)
	switch kind {
	case "":
		kind = episode.Scratch
	case episode.Scratch, episode.Improve:
	default:
		return record{}, fmt.Errorf("kind %q: want scratch or improve", q.Kind)
	}
	if (q.Completion == nil) == (q.Code == nil) {
		return record{}, errors.New("give exactly one of completion (a model's whole reply) and code (a program)")
	}
	prog, plan, problem := program(q.Completion, q.Code)
	return record{RequestID: q.RequestID, Task: q.Task, Kind: kind, Parent: q.Parent,
		PolicyVersion: q.PolicyVersion, Code: prog, Plan: plan, Problem: problem}, nil
}

// waitFor is how long to wait given wait_s (nil: the default), capped.
func (s *Server) waitFor(waitS *float64) (time.Duration, error) {
	if waitS == nil {
		return s.cfg.DefaultWait, nil
	}
	if math.IsNaN(*waitS) || *waitS < 0 {
		return 0, fmt.Errorf("wait_s %v must not be negative", *waitS)
	}
	return min(time.Duration(*waitS*float64(time.Second)), s.cfg.MaxWait), nil
}

func (s *Server) handlePostEpisode(w http.ResponseWriter, r *http.Request) {
	var q episodeRequest
	if err := decode(r, &q, true); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	d, err := s.waitFor(q.WaitS)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	rec, err := s.record(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	e, err := s.accept(rec)
	if err != nil {
		refuse(w, err)
		return
	}
	s.answer(w, r, e, d)
}

func (s *Server) handleGetEpisode(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	e, ok, err := s.lookup(id)
	switch {
	case err != nil:
		writeError(w, http.StatusInternalServerError, "episode %s: %v", id, err)
		return
	case !ok:
		writeError(w, http.StatusNotFound, "unknown episode id %q", id)
		return
	}
	var waitS *float64
	if v := r.URL.Query().Get("wait_s"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "wait_s %q is not a number", v)
			return
		}
		waitS = &f
	}
	d, err := s.waitFor(waitS)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.answer(w, r, e, d)
}

// pendingView is the 202 answer: poll GET /v1/episodes/{id}.
type pendingView struct {
	ID        string `json:"id"`
	RequestID string `json:"request_id"`
	Status    string `json:"status"`
}

// answer waits up to d for e: 200 with the episode, 202 with its id, or 500
// when it could not run.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, e *entry, d time.Duration) {
	ep, done, err := wait(r.Context(), e, d)
	switch {
	case !done:
		w.Header().Set("Location", "/v1/episodes/"+e.req.ID)
		writeJSON(w, http.StatusAccepted, pendingView{ID: e.req.ID, RequestID: e.req.RequestID, Status: "running"})
	case err != nil:
		writeJSON(w, errStatus(err), map[string]string{"error": err.Error(), "id": e.req.ID, "request_id": e.req.RequestID})
	default:
		writeJSON(w, http.StatusOK, ep)
	}
}

// refuse answers a request whose episode could not be accepted: 503, with
// Retry-After when the queue is full.
func refuse(w http.ResponseWriter, err error) {
	if errors.Is(err, errQueueFull) {
		w.Header().Set("Retry-After", "5")
	}
	writeError(w, http.StatusServiceUnavailable, "%v", err)
}

// errStatus is the HTTP status of an episode that could not run: 503 when
// the server is stopping (the client retries), else 500.
func errStatus(err error) int {
	if errors.Is(err, errStopped) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (s *Server) handleWeights(w http.ResponseWriter, r *http.Request) {
	var q struct {
		DurationsS []float64 `json:"durations_s"`
	}
	if err := decode(r, &q, true); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if q.DurationsS == nil {
		writeError(w, http.StatusBadRequest, "durations_s is required")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]float64{"weights": rl.DurationWeights(q.DurationsS)})
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	// A snapshot under the lock, written after it: a slow client or the
	// cache's own lock must not hold up every other request.
	slots := s.g.Slots()
	s.mu.RLock()
	st := map[string]any{
		"slots": slots, "running": s.inflight, "queued": len(s.queue),
		"dispatched": s.counts.dispatched, "completed": s.counts.completed, "restored": s.counts.restored,
		"uptime_s": time.Since(s.start).Seconds(), "tasks": s.names,
	}
	s.mu.RUnlock()
	writeJSON(w, http.StatusOK, st)
}
