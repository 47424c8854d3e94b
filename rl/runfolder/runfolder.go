// Package runfolder writes a training run's folder (CONTRACT.md §3) as an
// rl.Sink, and reopens it to resume.
//
//	DIR/episodes.jsonl    one episode per line (appended, fsynced each update)
//	DIR/metrics.jsonl     one update per line
//	DIR/best/             solution.py, submission.csv, result.json (best/<task>/ when several tasks)
//	DIR/checkpoint/       state.json + policy-<version>/ (the policy's own Save)
//	DIR/summary.json      at the end
//
// Crash safety: every file that is replaced (best/*, state.json, summary.json)
// is written to a temporary file, fsynced and renamed over the old one. The
// JSONL files are only appended to; each checkpoint records their length, and
// a resume cuts them back to it, so lines written after the last checkpoint —
// which the resumed run will write again — are not kept twice. A torn last
// line (a crash in the middle of an append) is dropped with a warning.
package runfolder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mlerl/mlerl/rl"
)

// File names inside the run folder.
const (
	EpisodesFile = "episodes.jsonl"
	MetricsFile  = "metrics.jsonl"
	SummaryFile  = "summary.json"
	BestDir      = "best"
	CheckDir     = "checkpoint"
	stateFile    = "state.json"
	// prevStateFile is the checkpoint before the last, kept (with its policy)
	// so that a resume can fall back on it when the last one is damaged.
	prevStateFile = "state.prev.json"
)

// Options configure a Folder.
type Options struct {
	// Tasks of the run: with more than one, best/ has a folder per task.
	Tasks []string
	Log   *slog.Logger
}

// Folder is a run folder open for writing. It implements rl.Sink.
type Folder struct {
	dir      string
	opts     Options
	log      *slog.Logger
	episodes *os.File
	metrics  *os.File
}

var _ rl.Sink = (*Folder)(nil)

// Create starts a new run in dir. It refuses a folder that already holds a
// run's records: resuming is explicit (Resume), overwriting never happens.
func Create(dir string, opts Options) (*Folder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	for _, name := range []string{EpisodesFile, MetricsFile, filepath.Join(CheckDir, stateFile)} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Size() > 0 {
			return nil, fmt.Errorf("run folder %s already holds a run (%s); resume it or choose another folder", dir, name)
		}
	}
	return open(dir, opts)
}

func open(dir string, opts Options) (*Folder, error) {
	f := &Folder{dir: dir, opts: opts, log: opts.Log}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if f.episodes, err = os.OpenFile(filepath.Join(dir, EpisodesFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, fmt.Errorf("run folder: %w", err)
	}
	if f.metrics, err = os.OpenFile(filepath.Join(dir, MetricsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		f.episodes.Close()
		return nil, fmt.Errorf("run folder: %w", err)
	}
	return f, nil
}

type state struct {
	Checkpoint *rl.Checkpoint `json:"checkpoint"`
	PolicyDir  string         `json:"policy_dir"`
}

// Resume reopens dir at its last checkpoint: it loads the policy into pol,
// cuts the JSONL files back to their length at the checkpoint and returns the
// checkpoint for rl.Config.Resume.
//
// A damaged last checkpoint (state.json truncated or corrupt, or a policy
// that does not load) is reported and the one before it is used, when the
// folder has it; with neither usable the error names both.
func Resume(dir string, pol rl.Policy, opts Options) (*Folder, *rl.Checkpoint, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := loadState(dir, stateFile, pol)
	if err != nil {
		prev, perr := loadState(dir, prevStateFile, pol)
		if perr != nil {
			if errors.Is(err, os.ErrNotExist) && errors.Is(perr, os.ErrNotExist) {
				return nil, nil, fmt.Errorf("resume %s: no checkpoint (%s)", dir, filepath.Join(CheckDir, stateFile))
			}
			return nil, nil, fmt.Errorf("resume %s: %v; the checkpoint before it: %v", dir, err, perr)
		}
		log.Warn("the last checkpoint is damaged; resuming from the one before it", "err", err, "update", prev.Checkpoint.Counters.Updates)
		st = prev
	}
	for _, name := range []string{EpisodesFile, MetricsFile} {
		if err := cutBack(filepath.Join(dir, name), st.Checkpoint.Files[name], log); err != nil {
			return nil, nil, fmt.Errorf("resume %s: %w", dir, err)
		}
	}
	f, err := open(dir, opts)
	if err != nil {
		return nil, nil, err
	}
	return f, st.Checkpoint, nil
}

// LoadPolicy loads the policy of dir's last checkpoint (the one before it if
// the last is damaged) into pol, and touches nothing else in the folder: a
// new run can start from what another run learnt (train --init-policy).
func LoadPolicy(dir string, pol rl.Policy) error {
	if _, err := loadState(dir, stateFile, pol); err != nil {
		if _, perr := loadState(dir, prevStateFile, pol); perr != nil {
			if errors.Is(err, os.ErrNotExist) && errors.Is(perr, os.ErrNotExist) {
				return fmt.Errorf("policy of run %s: no checkpoint (%s)", dir, filepath.Join(CheckDir, stateFile))
			}
			return fmt.Errorf("policy of run %s: %v; the checkpoint before it: %v", dir, err, perr)
		}
	}
	return nil
}

// loadState reads checkpoint file name and loads the policy it names into
// pol; any damage is an error naming the file, never a panic.
func loadState(dir, name string, pol rl.Policy) (st state, err error) {
	path := filepath.Join(dir, CheckDir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s is corrupt: %v", path, err)
	}
	if st.Checkpoint == nil || st.PolicyDir == "" || strings.ContainsAny(st.PolicyDir, `/\`) {
		return st, fmt.Errorf("%s is incomplete: no checkpoint or policy folder", path)
	}
	defer func() {
		if r := recover(); r != nil { // a policy whose decoder panics on garbage
			err = fmt.Errorf("%s: policy %s: %v", path, st.PolicyDir, r)
		}
	}()
	if err := pol.Load(filepath.Join(dir, CheckDir, st.PolicyDir)); err != nil {
		return st, fmt.Errorf("%s: policy: %w", path, err)
	}
	return st, nil
}

// cutBack truncates a JSONL file to size n (its length at the checkpoint) and
// then to its last complete line.
func cutBack(path string, n int64, log *slog.Logger) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Size() < n {
		log.Warn("file shorter than at the checkpoint; keeping what is there", "file", path, "size", st.Size(), "checkpoint", n)
		n = st.Size()
	}
	if st.Size() > n {
		log.Info("dropping records written after the checkpoint; the resumed run writes them again",
			"file", filepath.Base(path), "bytes", st.Size()-n)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	keep, torn, err := completeLines(io.NewSectionReader(f, 0, n))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if torn {
		log.Warn("dropping a torn last line", "file", filepath.Base(path), "bytes", n-keep)
	}
	if err := f.Truncate(keep); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Sync()
}

// completeLines is the length of r up to and including its last newline, and
// whether bytes followed it.
func completeLines(r io.Reader) (int64, bool, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, false, err
	}
	i := bytes.LastIndexByte(b, '\n')
	return int64(i + 1), i+1 < len(b), nil
}

// ReadJSONL decodes every complete line of a JSONL file into T. A torn last
// line (no newline, or not valid JSON) is skipped and reported by torn; a bad
// line elsewhere is an error.
func ReadJSONL[T any](path string) (out []T, torn bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			if i == len(lines)-1 {
				return out, true, nil
			}
			return out, false, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		if i == len(lines)-1 { // complete JSON but no newline: the writer died before it
			torn = true
		}
		out = append(out, v)
	}
	return out, torn, nil
}

func appendJSONL[T any](f *os.File, recs ...T) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode ends each record with '\n'
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	_, err := f.Write(buf.Bytes())
	return err
}

// Episodes appends episode lines.
func (f *Folder) Episodes(recs []rl.EpisodeRecord) error {
	if err := appendJSONL(f.episodes, recs...); err != nil {
		return f.fail(EpisodesFile, err)
	}
	return nil
}

// Metrics appends one metrics line and fsyncs both JSONL files: the records
// of an update are durable before its checkpoint is written.
func (f *Folder) Metrics(m rl.Metrics) error {
	if err := appendJSONL(f.metrics, m); err != nil {
		return f.fail(MetricsFile, err)
	}
	return f.sync()
}

func (f *Folder) sync() error {
	if err := f.episodes.Sync(); err != nil {
		return f.fail(EpisodesFile, err)
	}
	if err := f.metrics.Sync(); err != nil {
		return f.fail(MetricsFile, err)
	}
	return nil
}

// fail names the run folder in a write error: on a full disk, the one line
// the user sees says which folder and file, and that the last checkpoint stands.
func (f *Folder) fail(what string, err error) error {
	return fmt.Errorf("run folder %s: writing %s: %w (the last checkpoint is intact: fix this and resume with mlerl train --resume %s)", f.dir, what, err, f.dir)
}

// Best replaces the best solution's files.
func (f *Folder) Best(b rl.Best) error {
	dir := filepath.Join(f.dir, BestDir)
	if len(f.opts.Tasks) > 1 {
		dir = filepath.Join(dir, b.Task)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("best: %w", err)
	}
	res, err := json.MarshalIndent(b.Result, "", "  ")
	if err != nil {
		return fmt.Errorf("best: %w", err)
	}
	for name, data := range map[string][]byte{"solution.py": []byte(b.Code), "submission.csv": b.Submission, "result.json": append(res, '\n')} {
		if err := WriteFileAtomic(filepath.Join(dir, name), data); err != nil {
			return f.fail(filepath.Join(BestDir, name), err)
		}
	}
	return nil
}

// Checkpoint saves the policy into a fresh policy-<version>/ folder, then
// state.json (naming that folder and the JSONL lengths) by rename, then
// removes older policy folders. A crash at any point leaves the previous
// state.json and the policy it names intact.
func (f *Folder) Checkpoint(ck *rl.Checkpoint, pol rl.Policy) error {
	if err := f.sync(); err != nil {
		return err
	}
	ck.Files = map[string]int64{}
	for name, file := range map[string]*os.File{EpisodesFile: f.episodes, MetricsFile: f.metrics} {
		st, err := file.Stat()
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		ck.Files[name] = st.Size()
	}
	cdir := filepath.Join(f.dir, CheckDir)
	pdir := "policy-" + strconv.Itoa(pol.Version())
	if err := os.RemoveAll(filepath.Join(cdir, pdir)); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := pol.Save(filepath.Join(cdir, pdir)); err != nil {
		return f.fail("checkpoint policy", err)
	}
	b, err := json.Marshal(state{Checkpoint: ck, PolicyDir: pdir})
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// The last good checkpoint is copied to the previous one, then the new
	// one replaces it, both by atomic rename: state.json, once written, is
	// never absent for a reader or a kill (renaming it away left a window).
	keep := map[string]bool{pdir: true}
	cur := filepath.Join(cdir, stateFile)
	if old, err := os.ReadFile(cur); err == nil {
		var st state
		if json.Unmarshal(old, &st) == nil && st.PolicyDir != "" && st.PolicyDir != pdir {
			if err := WriteFileAtomic(filepath.Join(cdir, prevStateFile), old); err != nil {
				return f.fail("checkpoint", err)
			}
			keep[st.PolicyDir] = true
		}
	}
	if err := WriteFileAtomic(cur, b); err != nil {
		return f.fail("checkpoint", err)
	}
	if prev, err := os.ReadFile(filepath.Join(cdir, prevStateFile)); err == nil {
		var st state
		if json.Unmarshal(prev, &st) == nil {
			keep[st.PolicyDir] = true
		}
	}
	old, _ := filepath.Glob(filepath.Join(cdir, "policy-*"))
	for _, o := range old {
		if !keep[filepath.Base(o)] {
			os.RemoveAll(o) // an old policy left behind wastes space, nothing more
		}
	}
	return nil
}

// Summary writes summary.json.
func (f *Folder) Summary(s rl.Summary) error {
	if err := f.sync(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("summary: %w", err)
	}
	if err := WriteFileAtomic(filepath.Join(f.dir, SummaryFile), append(b, '\n')); err != nil {
		return f.fail(SummaryFile, err)
	}
	return nil
}

// Close closes the JSONL files.
func (f *Folder) Close() error {
	return errors.Join(f.episodes.Close(), f.metrics.Close())
}

// Dir is the run folder.
func (f *Folder) Dir() string { return f.dir }

// WriteFileAtomic writes data to path through a fsynced temporary file in the
// same folder and a rename, so readers see the old file or the new one.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp makes it 0600; these are for people to read
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
