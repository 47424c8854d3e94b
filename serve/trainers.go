package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mlerl/mlerl/episode"
)

// session is a multi-turn agent's episode chain on one task: turn 0 writes
// a program from scratch, each later turn improves the previous one, seeing
// its feedback. It ends after maxTurns steps, valid or not: a valid program
// can still be improved, and a fixed length keeps the trainer's batches even.
// Sessions are kept in sessions.jsonl and their steps' episodes in the run
// folder, so a restarted server carries them on.
type session struct {
	id, task string
	maxTurns int

	mu   sync.Mutex // one step at a time
	turn int        // steps answered
	last string     // episode id of the last step
}

// sessionRecord is one line of sessions.jsonl.
type sessionRecord struct {
	ID       string  `json:"id"`
	Task     string  `json:"task"`
	MaxTurns int     `json:"max_turns"`
	TimeS    float64 `json:"time_s"`
}

// stepID is the request id of a turn's episode.
func (ss *session) stepID(turn int) string { return ss.id + "/" + strconv.Itoa(turn) }

func (s *Server) handleNewSession(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Task     string `json:"task"`
		MaxTurns int    `json:"max_turns"`
	}
	if err := decode(r, &q, true); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	t, ok := s.tasks[q.Task]
	if !ok {
		writeError(w, http.StatusBadRequest, "unknown task %q (GET /v1/tasks lists them)", q.Task)
		return
	}
	if q.MaxTurns < 0 {
		writeError(w, http.StatusBadRequest, "max_turns must not be negative")
		return
	}
	if q.MaxTurns == 0 {
		q.MaxTurns = s.cfg.MaxTurns
	}
	ss := &session{id: "s-" + strings.ToLower(rand.Text()[:16]), task: q.Task, maxTurns: q.MaxTurns}
	err := s.files.session(sessionRecord{ID: ss.id, Task: ss.task, MaxTurns: ss.maxTurns, TimeS: time.Since(s.start).Seconds()})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": ss.id, "observation": t.prompt, "system": t.system, "max_turns": ss.maxTurns})
}

// stepView is the answer of a step, gym-style.
type stepView struct {
	Observation string   `json:"observation"`
	Reward      float64  `json:"reward"`
	Done        bool     `json:"done"`
	Info        *Episode `json:"info"`
}

// handleStep runs the action as one episode and waits for it (no wait_s: a
// step is one synchronous call; raise the client's timeout above the
// program time limit). A step retried after a lost answer gets the same
// episode: its request id is the session's and the turn's.
func (s *Server) handleStep(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	ss, ok := s.sessions[r.PathValue("id")]
	s.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, "unknown session %q", r.PathValue("id"))
		return
	}
	var q struct {
		Action string `json:"action"`
	}
	if err := decode(r, &q, true); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.turn >= ss.maxTurns {
		writeError(w, http.StatusBadRequest, "session %s is done after %d turns", ss.id, ss.maxTurns)
		return
	}
	rec := record{RequestID: ss.stepID(ss.turn), Task: ss.task, Kind: episode.Scratch}
	if ss.turn > 0 {
		rec.Kind, rec.Parent = episode.Improve, ss.last
	}
	rec.Code, rec.Plan, rec.Problem = program(&q.Action, nil)
	e, err := s.accept(rec)
	if err != nil {
		refuse(w, err)
		return
	}
	ep, done, err := wait(r.Context(), e, s.cfg.MaxWait+s.cfg.Settings.Timeout)
	switch {
	case !done:
		writeError(w, http.StatusGatewayTimeout, "episode %s not finished; retry the step to wait again", e.req.ID)
		return
	case err != nil:
		writeError(w, errStatus(err), "%v", err)
		return
	}
	ss.turn++
	ss.last = ep.Episode
	writeJSON(w, http.StatusOK, stepView{Observation: ep.Feedback, Reward: ep.Reward, Done: ss.turn >= ss.maxTurns, Info: ep})
}

// rewardRequest is OpenRLHF's remote reward model request
// (--remote_rm_url): query[i] is prompt + response, labels[i] the task.
type rewardRequest struct {
	Query   []string `json:"query"`
	Prompts []string `json:"prompts"`
	Labels  []string `json:"labels"`
}

// handleGetReward scores a batch, each sample an episode, and waits for all.
// A sample's request id is derived from its task and text, so OpenRLHF
// retrying the batch runs nothing twice.
func (s *Server) handleGetReward(w http.ResponseWriter, r *http.Request) {
	var q rewardRequest
	if err := decode(r, &q, false); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	if len(q.Labels) != len(q.Query) || (len(q.Prompts) != 0 && len(q.Prompts) != len(q.Query)) {
		writeError(w, http.StatusBadRequest, "query (%d), prompts (%d) and labels (%d) must have the same length (labels are task names)", len(q.Query), len(q.Prompts), len(q.Labels))
		return
	}
	entries := make([]*entry, len(q.Query))
	for i, text := range q.Query {
		prompt := ""
		if len(q.Prompts) > 0 {
			prompt = q.Prompts[i]
		}
		reply := responseOf(text, prompt)
		sum := sha256.Sum256([]byte(q.Labels[i] + "\x00" + text))
		rec, err := s.record(episodeRequest{RequestID: "openrlhf-" + hex.EncodeToString(sum[:12]), Task: q.Labels[i], Completion: &reply})
		if err != nil {
			writeError(w, http.StatusBadRequest, "sample %d: %v", i, err)
			return
		}
		if entries[i], err = s.accept(rec); err != nil {
			refuse(w, err)
			return
		}
	}
	out := struct {
		Rewards   []float64            `json:"rewards"`
		Scores    []float64            `json:"scores"`
		ExtraLogs map[string][]float64 `json:"extra_logs"`
	}{ExtraLogs: map[string][]float64{}}
	for i, e := range entries {
		ep, done, err := wait(r.Context(), e, s.cfg.MaxWait+s.cfg.Settings.Timeout)
		switch {
		case !done:
			writeError(w, http.StatusGatewayTimeout, "sample %d (episode %s) not finished; retry the batch to wait again", i, e.req.ID)
			return
		case err != nil:
			writeError(w, errStatus(err), "sample %d: %v", i, err)
			return
		}
		out.Rewards = append(out.Rewards, ep.Reward)
		out.Scores = append(out.Scores, ep.Reward)
		out.ExtraLogs["duration_s"] = append(out.ExtraLogs["duration_s"], ep.DurationS)
		out.ExtraLogs["stages"] = append(out.ExtraLogs["stages"], float64(len(ep.Stages)))
		out.ExtraLogs["valid"] = append(out.ExtraLogs["valid"], b2f(ep.Valid))
	}
	writeJSON(w, http.StatusOK, out)
}

// responseOf is the model's reply inside query: what follows the prompt.
// OpenRLHF sends the prompt and the response decoded together; when the
// prompt is not found verbatim (a chat template) the whole text is the reply,
// and the first code block is still the model's: prompts show none before
// "# Your answer" in a scratch prompt.
func responseOf(query, prompt string) string {
	if prompt != "" {
		if i := strings.LastIndex(query, prompt); i >= 0 {
			return query[i+len(prompt):]
		}
	}
	if i := strings.LastIndex(query, "# Your answer"); i >= 0 {
		// Skip the heading and the instruction line, which names ```python
		// inline; an improve prompt's earlier blocks are the old program.
		rest := query[i:]
		for range 2 {
			if j := strings.IndexByte(rest, '\n'); j >= 0 {
				rest = rest[j+1:]
			}
		}
		return rest
	}
	return query
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
