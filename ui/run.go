package ui

import (
	"path/filepath"
	"sync"

	"github.com/mlerl/mlerl/report"
)

// run is one followed run folder.
type run struct {
	dir  string
	name string // the folder's name, with its parent's when two runs share it

	mu       sync.Mutex
	metrics  tail[report.Metric]
	episodes tail[report.Episode]
	summary  map[string]any
	config   map[string]any
	best     *report.Best
	stamps   map[string]stamp // of the whole-file records
	version  int              // bumped at every change
}

func newRun(dir string) *run {
	r := &run{dir: dir, name: filepath.Base(filepath.Clean(dir)), stamps: map[string]stamp{}}
	r.metrics.path = filepath.Join(dir, "metrics.jsonl")
	r.episodes.path = filepath.Join(dir, "episodes.jsonl")
	return r
}

// poll reads what changed in the folder; it reports whether anything did.
func (r *run) poll() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for _, f := range []func() (bool, error){r.metrics.poll, r.episodes.poll} {
		c, err := f()
		if err != nil {
			return changed, err
		}
		changed = changed || c
	}
	if r.restamp("run.json") {
		r.config = report.ReadObject(filepath.Join(r.dir, "run.json"))
		changed = true
	}
	if r.restamp("summary.json") {
		r.summary = report.ReadObject(filepath.Join(r.dir, "summary.json"))
		changed = true
	}
	// best/ is written program first, result.json last (each by rename).
	res, sol := r.restamp(filepath.Join("best", "result.json")), r.restamp(filepath.Join("best", "solution.py"))
	if res || sol {
		r.best = report.ReadBest(r.dir)
		changed = true
	}
	if changed {
		r.version++
	}
	return changed, nil
}

// restamp says whether name changed since the last call (the caller holds mu).
func (r *run) restamp(name string) bool {
	s := stampOf(filepath.Join(r.dir, name))
	if s == r.stamps[name] {
		return false
	}
	r.stamps[name] = s
	return true
}

// snapshot is the run's records now. The slices share the tails' arrays:
// they are only appended to, so the snapshot never changes under a reader.
func (r *run) snapshot() report.Run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return report.Run{
		Name:     r.name,
		Metrics:  r.metrics.recs[:len(r.metrics.recs):len(r.metrics.recs)],
		Episodes: r.episodes.recs[:len(r.episodes.recs):len(r.episodes.recs)],
		Summary:  r.summary,
		Config:   r.config,
		Best:     r.best,
	}
}

// nameRuns gives runs that share a folder name their parent's name too, so
// the legend tells them apart (runs/a/run vs runs/b/run).
func nameRuns(runs []*run) {
	count := map[string]int{}
	for _, r := range runs {
		count[r.name]++
	}
	for _, r := range runs {
		if count[r.name] > 1 {
			abs, err := filepath.Abs(r.dir)
			if err != nil {
				abs = r.dir
			}
			r.name = filepath.Join(filepath.Base(filepath.Dir(abs)), r.name)
		}
	}
}
