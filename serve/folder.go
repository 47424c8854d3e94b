package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/mlerl/mlerl/report"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
)

// File names inside the run folder (episodes.jsonl, summary.json and
// report.html are the contract's; requests.jsonl is serve's own).
const (
	RequestsFile = "requests.jsonl"
	SessionsFile = "sessions.jsonl"
	EpisodesFile = "episodes.jsonl"
	SummaryFile  = "summary.json"
)

// folder is the run folder open for appending.
type folder struct {
	dir      string
	mu       sync.Mutex // one writer per file at a time: lines never interleave
	requests *os.File
	episodes *os.File
	sessions *os.File
}

// openFolder opens dir (creating it) and restores into s what an earlier
// server wrote there: finished episodes answer their request ids again, and
// requests without an episode are returned to be run.
func openFolder(dir string, s *Server) (*folder, []*entry, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("serve: run folder: %w", err)
	}
	f := &folder{dir: dir}
	pending, err := f.restore(s)
	if err != nil {
		return nil, nil, err
	}
	if f.requests, err = openAppend(filepath.Join(dir, RequestsFile)); err != nil {
		return nil, nil, err
	}
	if f.episodes, err = openAppend(filepath.Join(dir, EpisodesFile)); err != nil {
		f.requests.Close()
		return nil, nil, err
	}
	if f.sessions, err = openAppend(filepath.Join(dir, SessionsFile)); err != nil {
		f.requests.Close()
		f.episodes.Close()
		return nil, nil, err
	}
	return f, pending, nil
}

// openAppend opens a JSONL file for appending, ending a torn last line (a
// crash mid-write) so the next record starts on a line of its own.
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err = f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			_, err = f.Write([]byte{'\n'})
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("serve: %s: %w", path, err)
	}
	return f, nil
}

func (f *folder) restore(s *Server) ([]*entry, error) {
	reqs, _, err := runfolder.ReadJSONL[record](filepath.Join(f.dir, RequestsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("serve: %w", err)
	}
	eps, _, err := runfolder.ReadJSONL[Episode](filepath.Join(f.dir, EpisodesFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("serve: %w", err)
	}
	finished := map[string]*Episode{}
	for i := range eps {
		finished[eps[i].Episode] = &eps[i]
	}
	var pending []*entry
	for _, r := range reqs {
		if _, ok := s.tasks[r.Task]; !ok {
			continue // a task this server was not started with
		}
		e := &entry{req: r, done: make(chan struct{})}
		s.eps[r.ID], s.byReq[r.RequestID] = e, e
		if ep, ok := finished[r.ID]; ok {
			e.ep = ep
			close(e.done)
			s.counts.restored++
			if ep.Valid && (!has(s.best, r.Task) || ep.Reward > s.best[r.Task]) {
				s.best[r.Task] = ep.Reward
			}
			continue
		}
		pending = append(pending, e)
	}
	return pending, f.restoreSessions(s)
}

// restoreSessions reopens the sessions of sessions.jsonl at the turn their
// finished episodes reached: a multi-turn agent carries on after a restart.
func (f *folder) restoreSessions(s *Server) error {
	recs, _, err := runfolder.ReadJSONL[sessionRecord](filepath.Join(f.dir, SessionsFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("serve: %w", err)
	}
	for _, r := range recs {
		if _, ok := s.tasks[r.Task]; !ok {
			continue
		}
		ss := &session{id: r.ID, task: r.Task, maxTurns: r.MaxTurns}
		for {
			e, ok := s.byReq[ss.stepID(ss.turn)]
			if !ok || e.ep == nil {
				break
			}
			ss.last = e.ep.Episode
			ss.turn++
		}
		s.sessions[ss.id] = ss
	}
	return nil
}

func has(m map[string]float64, k string) bool { _, ok := m[k]; return ok }

func (f *folder) cacheDir() string { return filepath.Join(f.dir, "cache") }

func (f *folder) request(r record) error { return f.append(f.requests, r) }

func (f *folder) session(r sessionRecord) error { return f.append(f.sessions, r) }

// episode appends ep and syncs: a client told the result can count on a
// restarted server knowing it too.
func (f *folder) episode(ep *Episode) error {
	if err := f.append(f.episodes, ep); err != nil {
		return err
	}
	return f.episodes.Sync()
}

func (f *folder) append(file *os.File, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("serve: encoding: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := file.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("serve: %s: %w", file.Name(), err)
	}
	return nil
}

// best writes best/<task>/ (program, submission, result).
func (f *folder) best(r record, ep *Episode) error {
	dir := filepath.Join(f.dir, "best", r.Task)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("best: %w", err)
	}
	res, err := json.MarshalIndent(ep.Result, "", "  ")
	if err != nil {
		return fmt.Errorf("best: %w", err)
	}
	for name, data := range map[string][]byte{"solution.py": []byte(r.Code), "submission.csv": ep.Submission, "result.json": append(res, '\n')} {
		if err := runfolder.WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return fmt.Errorf("best: %w", err)
		}
	}
	return nil
}

// finish writes summary.json and report.html and closes the files.
func (f *folder) finish(sum rl.Summary) error {
	b, err := json.MarshalIndent(sum, "", "  ")
	if err == nil {
		err = runfolder.WriteFileAtomic(filepath.Join(f.dir, SummaryFile), append(b, '\n'))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	err = errors.Join(err, f.requests.Sync(), f.episodes.Sync(), f.requests.Close(), f.episodes.Close(), f.sessions.Close())
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// The report is for people; a run folder it cannot draw is still whole.
	if err := report.Write(f.dir); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
