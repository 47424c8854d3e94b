// Package replay is an Env that serves recorded episodes on a virtual clock.
//
// A table maps a plan key to one or more recorded outcomes (duration, stages,
// validity, score, reward). Submit starts a job at virtual now; it completes at
// now + its recorded duration; Next pops the earliest completion and moves the
// clock there. Nothing waits on the wall clock, so thousands of simulated
// workers run a long training budget in seconds, and a run is a deterministic
// function of its seed and the learner's actions.
//
// The key of a job is the plan its program says it implements: a first line
// "# plan: KEY", which every program the recipe policy renders starts with
// (KEY is the recipe plan's Key). Programs without that line are keyed by
// "sha256:" and the hex SHA-256 of their code, which is how a table recorded
// from real executions of arbitrary programs is keyed.
//
// Tables are recorded from real executions by a Recorder (`mlerl bench
// record-replay`): each program runs through the real episode runner —
// instrumentation, sandbox, grader, reward — and each execution becomes one
// Row. Builtin serves the tables compiled in: hpc-job-class (the default of
// `mlerl bench duration-ablation`) and letter-recognition, recorded that way,
// and synthetic (task synthetic-churn), made up for unit tests: fast weak
// plans, slow strong ones and failures at every stage.
package replay

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mlerl/mlerl/episode"
)

// Row is one recorded episode outcome, one line of a table file.
type Row struct {
	Key       string   `json:"key"`
	Task      string   `json:"task,omitempty"`
	DurationS float64  `json:"duration_s"`
	Stages    []string `json:"stages"`
	Valid     bool     `json:"valid"`
	Score     *float64 `json:"score"`
	Reward    float64  `json:"reward"`
	ExitCode  int      `json:"exit_code"`
	TimedOut  bool     `json:"timed_out,omitempty"`
	Error     string   `json:"error,omitempty"`
	// Code is the recorded program; when Key is empty the row is keyed by its hash.
	Code string `json:"code,omitempty"`
	// Note says what the plan is, for people reading the table.
	Note string `json:"note,omitempty"`
	// Isolation and Instrumentation say how a recorded execution ran
	// (episode.Result's fields of the same names); a replay ignores them.
	Isolation       string `json:"isolation,omitempty"`
	Instrumentation string `json:"instrumentation,omitempty"`
}

// Table is a set of recorded outcomes by key, in file order.
type Table struct {
	rows map[string][]Row
	keys []string // first-seen order
	task string   // the first row's task
}

//go:embed testdata/synthetic.jsonl
var synthetic string

//go:embed testdata/hpc-job-class.jsonl
var hpcJobClass string

//go:embed testdata/letter-recognition.jsonl
var letterRecognition string

// DefaultTable is the name of the built-in table recorded from real
// executions, the one `mlerl bench duration-ablation` runs on by default.
const DefaultTable = "hpc-job-class"

// builtins are the tables compiled into the binary, by name.
var builtins = map[string]*string{
	"synthetic":          &synthetic,
	"hpc-job-class":      &hpcJobClass,
	"letter-recognition": &letterRecognition,
}

// BuiltinNames lists the built-in tables' names, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Builtin returns a built-in table: "synthetic", or "hpc-job-class" or
// "letter-recognition", recorded by `mlerl bench record-replay` from real
// sandboxed executions of recipe plans on the suite task of that name
// (testdata/NAME.jsonl; its header says how and when).
func Builtin(name string) (*Table, error) {
	src, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("replay: no built-in table %q (have %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	t, err := ReadTable(strings.NewReader(*src))
	if err != nil {
		return nil, fmt.Errorf("replay: built-in table %s: %w", name, err)
	}
	return t, nil
}

// Task is the task named by the table's first row that names one ("" if none).
func (t *Table) Task() string { return t.task }

// ErrNoRows is ReadTable's error for a table without a row (empty, or only comments).
var ErrNoRows = errors.New("replay table: no rows")

// ReadTable parses a JSONL table. Blank lines and lines starting with "//"
// are skipped; anything else that is not a valid row is an error naming the line.
func ReadTable(r io.Reader) (*Table, error) {
	t := &Table{rows: map[string][]Row{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 || bytes.HasPrefix(b, []byte("//")) {
			continue
		}
		var row Row
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("replay table line %d: %w", line, err)
		}
		if row.Key == "" && row.Code != "" {
			row.Key = KeyOf(row.Code)
		}
		switch {
		case row.Key == "":
			return nil, fmt.Errorf("replay table line %d: no key and no code", line)
		case row.DurationS < 0 || math.IsNaN(row.DurationS) || math.IsInf(row.DurationS, 0):
			return nil, fmt.Errorf("replay table line %d: duration_s %v", line, row.DurationS)
		case row.Valid && row.Score == nil:
			return nil, fmt.Errorf("replay table line %d: valid without a score", line)
		}
		if t.task == "" {
			t.task = row.Task
		}
		if _, ok := t.rows[row.Key]; !ok {
			t.keys = append(t.keys, row.Key)
		}
		t.rows[row.Key] = append(t.rows[row.Key], row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("replay table: %w", err)
	}
	if len(t.keys) == 0 {
		return nil, ErrNoRows
	}
	return t, nil
}

// LoadTable reads a table file.
func LoadTable(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay table: %w", err)
	}
	defer f.Close()
	t, err := ReadTable(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Keys lists the table's plan keys in first-seen order.
func (t *Table) Keys() []string { return append([]string(nil), t.keys...) }

// Rows returns the recorded outcomes of a key.
func (t *Table) Rows(key string) []Row { return t.rows[key] }

// Mean is the average duration, score over valid rows, and valid fraction of a
// key: what a policy that always chose it would get.
func (t *Table) Mean(key string) (durationS, score, validFrac float64) {
	rows := t.rows[key]
	var nValid int
	for _, r := range rows {
		durationS += r.DurationS
		if r.Valid {
			nValid++
			score += *r.Score
		}
	}
	if len(rows) > 0 {
		durationS /= float64(len(rows))
		validFrac = float64(nValid) / float64(len(rows))
	}
	if nValid > 0 {
		score /= float64(nValid)
	}
	return durationS, score, validFrac
}

// KeyOf is the key of a program: its "# plan: KEY" first line, or the hash of its code.
func KeyOf(code string) string {
	first, _, _ := strings.Cut(code, "\n")
	if k, ok := strings.CutPrefix(strings.TrimSpace(first), "# plan:"); ok && strings.TrimSpace(k) != "" {
		return strings.TrimSpace(k)
	}
	sum := sha256.Sum256([]byte(code))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Fallback says what an unseen key does.
type Fallback int

const (
	// FallbackFail: the program fails at once after FailDuration with no
	// stage reached (reward −10, error "replay: plan not in table"). Honest:
	// the table knows nothing about it.
	FallbackFail Fallback = iota
	// FallbackHash: the program behaves like a table key chosen by its hash —
	// deterministic, for policies whose space is larger than any table.
	FallbackHash
)

// Config configures an Env.
type Config struct {
	Workers int
	Seed    uint64
	// SampleCost is the modelled learner time to write one action and
	// UpdateCost the time of one policy update; both advance the virtual
	// clock (default 0: the learner is free).
	SampleCost time.Duration
	UpdateCost time.Duration
	Fallback   Fallback
	// FailDuration is how long an unseen plan takes to fail (default 1 s).
	FailDuration time.Duration
	// Isolation is reported in each result (default "replay").
	Isolation string
}

// Env is the replay Env. It is not safe for concurrent use; the learner drives
// it from one goroutine.
type Env struct {
	cfg     Config
	table   *Table
	now     time.Duration
	seq     uint64
	running jobHeap
	busy    time.Duration // slot-time of completed jobs
	missed  int
}

// New returns a replay Env over table.
func New(table *Table, cfg Config) (*Env, error) {
	if table == nil || len(table.keys) == 0 {
		return nil, errors.New("replay: empty table")
	}
	if cfg.Workers < 1 {
		return nil, fmt.Errorf("replay: %d workers", cfg.Workers)
	}
	if cfg.FailDuration <= 0 {
		cfg.FailDuration = time.Second
	}
	if cfg.Isolation == "" {
		cfg.Isolation = "replay"
	}
	return &Env{cfg: cfg, table: table}, nil
}

type running struct {
	at, start time.Duration
	seq       uint64
	res       episode.Result
}

type jobHeap []running

func (h jobHeap) Len() int { return len(h) }
func (h jobHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq // ties: first submitted completes first
}
func (h jobHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobHeap) Push(x any)   { *h = append(*h, x.(running)) }
func (h *jobHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Slots is the number of simulated workers.
func (e *Env) Slots() int { return e.cfg.Workers }

// Now is the virtual clock.
func (e *Env) Now() time.Duration { return e.now }

// InFlight is the number of jobs running.
func (e *Env) InFlight() int { return len(e.running) }

// Unseen counts jobs whose key was not in the table.
func (e *Env) Unseen() int { return e.missed }

// Submit starts job at the virtual now.
func (e *Env) Submit(ctx context.Context, job episode.Job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(e.running) >= e.cfg.Workers {
		return fmt.Errorf("replay: job %s submitted with all %d workers busy", job.ID, e.cfg.Workers)
	}
	row := e.lookup(job)
	d := time.Duration(row.DurationS * float64(time.Second))
	res := episode.Result{
		Episode: job.ID, Task: job.Task, Kind: job.Kind, PolicyVersion: job.PolicyVersion,
		ExitCode: row.ExitCode, TimedOut: row.TimedOut, DurationS: row.DurationS,
		Stages: append([]string{}, row.Stages...), Valid: row.Valid, Reward: row.Reward,
		Error: row.Error, Isolation: e.cfg.Isolation, Instrumentation: "replay",
	}
	if row.Score != nil {
		s := *row.Score
		res.Score = &s
	}
	e.seq++
	heap.Push(&e.running, running{at: e.now + d, start: e.now, seq: e.seq, res: res})
	return nil
}

// lookup picks the recorded outcome for a job. A key with several recorded
// outcomes (real runs vary) yields one chosen by a hash of the seed and the
// job id, so a job always gets the same outcome, independent of submit order.
func (e *Env) lookup(job episode.Job) Row {
	key := KeyOf(job.Code)
	rows := e.table.rows[key]
	if len(rows) == 0 {
		e.missed++
		if e.cfg.Fallback == FallbackHash {
			rows = e.table.rows[e.table.keys[hash64(0, key)%uint64(len(e.table.keys))]]
		} else {
			return Row{Key: key, DurationS: e.cfg.FailDuration.Seconds(), Stages: []string{},
				Reward: -10, ExitCode: 1, Error: "replay: plan not in table"}
		}
	}
	return rows[hash64(e.cfg.Seed, job.ID)%uint64(len(rows))]
}

func hash64(seed uint64, s string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(s))
	return h.Sum64()
}

// ErrIdle is returned by Next when no job is running: waiting would be forever.
var ErrIdle = errors.New("replay: no job running")

// Next pops the earliest completion and advances the clock to it (never back:
// a job that finished while the learner was computing is returned at once).
func (e *Env) Next(ctx context.Context) (episode.Result, error) {
	if err := ctx.Err(); err != nil {
		return episode.Result{}, err
	}
	if len(e.running) == 0 {
		return episode.Result{}, ErrIdle
	}
	r := heap.Pop(&e.running).(running)
	if r.at > e.now {
		e.now = r.at
	}
	e.busy += r.at - r.start
	return r.res, nil
}

// Sampled charges the modelled cost of writing n actions.
func (e *Env) Sampled(n int) { e.now += time.Duration(n) * e.cfg.SampleCost }

// Updated charges the modelled cost of one update.
func (e *Env) Updated(int) { e.now += e.cfg.UpdateCost }

// Utilisation is busy slot-time over available slot-time (Workers × Now), with
// jobs still running counted up to now. A slot whose job finished while the
// learner was busy, or that no job was given, counts as idle.
func (e *Env) Utilisation() float64 {
	if e.now <= 0 {
		return 0
	}
	busy := e.busy
	for _, r := range e.running {
		end := min(r.at, e.now)
		if end > r.start {
			busy += end - r.start
		}
	}
	return float64(busy) / (float64(e.cfg.Workers) * float64(e.now))
}

// PlanCode is the program text a policy emits to be keyed as plan key by
// this Env; the rest of the program is irrelevant to a replay.
func PlanCode(key, body string) string { return "# plan: " + key + "\n" + body }

// SortedKeys lists keys sorted by mean duration, for tables and reports.
func (t *Table) SortedKeys() []string {
	keys := t.Keys()
	sort.SliceStable(keys, func(i, j int) bool {
		a, _, _ := t.Mean(keys[i])
		b, _, _ := t.Mean(keys[j])
		return a < b
	})
	return keys
}
