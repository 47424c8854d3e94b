package serve

import (
	"bufio"
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
	requests appendFile
	episodes *os.File
	sessions *os.File
	epSize   int64    // episodes.jsonl's length: where the next line starts
	epRead   *os.File // episodes.jsonl for reading finished episodes back
}

// appendFile is a JSONL file open for appending: an *os.File (a test's
// may hold its writes up).
type appendFile interface {
	io.Writer
	Name() string
	Sync() error
	Close() error
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
	st, err := f.episodes.Stat()
	if err == nil {
		f.epSize = st.Size()
		f.epRead, err = os.Open(f.episodes.Name())
	}
	if err != nil {
		f.requests.Close()
		f.episodes.Close()
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	if f.sessions, err = openAppend(filepath.Join(dir, SessionsFile)); err != nil {
		f.requests.Close()
		f.episodes.Close()
		f.epRead.Close()
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

// restore reads what an earlier server left: each finished episode's offset
// (the episode itself stays on disk until asked for), the best reward per
// task, and the requests still without an episode, which are returned to
// run. It holds one line at a time, so a large folder does not have to fit
// in memory.
func (f *folder) restore(s *Server) ([]*entry, error) {
	err := eachLine(filepath.Join(f.dir, EpisodesFile), func(off int64, line []byte) {
		var ep struct {
			Episode, Task string
			Valid         bool
			Reward        float64
		}
		if json.Unmarshal(line, &ep) != nil || ep.Episode == "" {
			return // a torn line from a crash: that request runs again
		}
		if _, ok := s.tasks[ep.Task]; !ok {
			return // a task this server was not started with
		}
		if _, dup := s.onDisk[ep.Episode]; !dup {
			s.counts.restored++
		}
		s.onDisk[ep.Episode] = off
		if ep.Valid && (!has(s.best, ep.Task) || ep.Reward > s.best[ep.Task]) {
			s.best[ep.Task] = ep.Reward
		}
	})
	if err != nil {
		return nil, err
	}
	var pending []*entry
	err = eachLine(filepath.Join(f.dir, RequestsFile), func(_ int64, line []byte) {
		var r record
		if json.Unmarshal(line, &r) != nil || r.ID == "" {
			return
		}
		if _, ok := s.tasks[r.Task]; !ok {
			return
		}
		if _, done := s.onDisk[r.ID]; done {
			return
		}
		if e, ok := s.eps[r.ID]; ok {
			e.req = r // logged again by a retry after it could not run
			return
		}
		e := &entry{req: r, done: make(chan struct{}), off: -1}
		s.eps[r.ID] = e
		pending = append(pending, e)
	})
	if err != nil {
		return nil, err
	}
	return pending, f.restoreSessions(s)
}

// eachLine calls fn with every line of path (a missing file has none) and
// the offset it starts at.
func eachLine(path string, fn func(off int64, line []byte)) error {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 1<<16)
	var off int64
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			fn(off, line)
			off += int64(len(line))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("serve: %s: %w", path, err)
		}
	}
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
			id := episodeID(ss.stepID(ss.turn))
			if _, ok := s.onDisk[id]; !ok {
				break
			}
			ss.last = id
			ss.turn++
		}
		s.sessions[ss.id] = ss
	}
	return nil
}

func has(m map[string]float64, k string) bool { _, ok := m[k]; return ok }

func (f *folder) cacheDir() string { return filepath.Join(f.dir, "cache") }

func (f *folder) request(r record) error {
	_, err := f.append(f.requests, r)
	return err
}

func (f *folder) session(r sessionRecord) error {
	_, err := f.append(f.sessions, r)
	return err
}

// episode appends ep and syncs: a client told the result can count on a
// restarted server knowing it too. It returns the line's offset.
func (f *folder) episode(ep *Episode) (int64, error) {
	off, err := f.append(f.episodes, ep)
	if err != nil {
		return -1, err
	}
	return off, f.episodes.Sync()
}

// append writes v as one line of file and returns the offset it starts at
// (meaningful for episodes.jsonl, whose length the folder tracks).
func (f *folder) append(file appendFile, v any) (int64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return -1, fmt.Errorf("serve: encoding: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := file.Write(append(b, '\n'))
	off := f.epSize
	if file == f.episodes {
		f.epSize += int64(n)
	}
	if err != nil {
		return -1, fmt.Errorf("serve: %s: %w", file.Name(), err)
	}
	return off, nil
}

// readEpisode reads back the episode whose line starts at off.
func (f *folder) readEpisode(off int64) (*Episode, error) {
	r := bufio.NewReader(io.NewSectionReader(f.epRead, off, 1<<62))
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("serve: reading episodes.jsonl at %d: %w", off, err)
	}
	var ep Episode
	if err := json.Unmarshal(line, &ep); err != nil {
		return nil, fmt.Errorf("serve: episodes.jsonl at %d: %w", off, err)
	}
	return &ep, nil
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
	err = errors.Join(err, f.requests.Sync(), f.episodes.Sync(), f.requests.Close(), f.episodes.Close(), f.epRead.Close(), f.sessions.Close())
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// The report is for people; a run folder it cannot draw is still whole.
	if err := report.Write(f.dir); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
