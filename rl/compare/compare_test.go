package compare

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/runfolder"
	"github.com/mlerl/mlerl/sandbox"
	"github.com/mlerl/mlerl/task"
)

// Every arm runs on a real task through the real sandbox and grader; the
// table has every arm; and the same comparison again on the same store runs
// no program at all — a run is a function of its seed and the store, which
// is what makes many seeds cheap.
func TestCompareArmsAndReplayFromStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real programs for a minute or two")
	}
	tk, prep := tinyChurn(t)
	sb, err := sandbox.New(context.Background(), sandbox.Config{})
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	runner := &episode.Runner{Sandbox: sb}
	store, err := episode.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Tasks: []*episode.Prepared{prep}, Seeds: 1, Budget: 15 * time.Second, Workers: 2, Batch: 4,
		Settings: episode.Settings{Timeout: time.Minute, Instrument: "ast", Threads: max(1, runtime.NumCPU()/2)},
		Run: func(ctx context.Context, job episode.Job) (episode.Execution, error) {
			return runner.Execute(ctx, tk.PublicDir(), job)
		},
		Store: store,
	}
	first, err := Compare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Arms) != len(Arms()) || first.Executed == 0 {
		t.Fatalf("%d arms, %d executed", len(first.Arms), first.Executed)
	}
	for _, a := range first.Arms {
		if len(a.Runs) != 1 || a.Episodes.Mean < 1 || a.FailureRate.Mean < 0 || a.FailureRate.Mean > 1 || a.Distinct.Mean > a.Episodes.Mean {
			t.Errorf("%s: %+v", a.Arm, a)
		}
	}
	cfg.RunsDir, cfg.Parallel = t.TempDir(), 3 // side by side, a run is still a function of its seed and the store
	again, err := Compare(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range again.Arms {
		eps, _, err := runfolder.ReadJSONL[rl.EpisodeRecord](filepath.Join(cfg.RunsDir, a.Task, a.Arm+"-seed1", "episodes.jsonl"))
		done, failed, cancelled := 0, 0, 0
		var late []float64
		for _, e := range eps {
			if e.Valid && e.Kind == episode.Scratch && e.DoneS >= 0.75*cfg.Budget.Seconds() {
				late = append(late, *e.Score)
			}
			switch {
			case e.Cancelled:
				cancelled++
			case !e.Valid:
				failed++
				done++
			default:
				done++
			}
		}
		if err != nil || done != a.Runs[0].Episodes || failed != a.Runs[0].Failures {
			t.Errorf("%s: kept %d completed episodes, %d failed, %d cancelled (%v); want %d and %d", a.Arm, done, failed, cancelled, err,
				a.Runs[0].Episodes, a.Runs[0].Failures)
		}
		sort.Float64s(late)
		switch got := a.Runs[0].LateScratch; {
		case len(late) == 0 && got != nil, len(late) > 0 && (got == nil || *got < late[0] || *got > late[len(late)-1]):
			t.Errorf("%s: late scratch median %v from scores %v", a.Arm, got, late)
		}
	}
	if again.Executed != 0 {
		t.Errorf("the same comparison on the same store ran %d programs again", again.Executed)
	}
	for i, a := range again.Arms {
		for s, r := range a.Runs {
			f := first.Arms[i].Runs[s]
			if r.Episodes != f.Episodes || (r.Best == nil) != (f.Best == nil) || (r.Best != nil && *r.Best != *f.Best) {
				t.Errorf("%s seed %d: %+v, then %+v", a.Arm, r.Seed, f, r)
			}
		}
	}
	var out bytes.Buffer
	again.Print(&out)
	for _, arm := range Arms() {
		if !strings.Contains(out.String(), arm) {
			t.Errorf("table lacks %s:\n%s", arm, out.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median %v = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// A run that fails stops the comparison: the runs not yet started are not
// started (they would fail the same way), and the error names the run.
func TestCompareStopsAfterAFailedRun(t *testing.T) {
	_, prep := tinyChurn(t)
	store, err := episode.NewStore("")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Compare(context.Background(), Config{
		Tasks: []*episode.Prepared{prep}, Seeds: 2, Budget: time.Minute, Workers: 2, Batch: 4, Parallel: 1,
		Settings: episode.Settings{Timeout: time.Minute, Instrument: "ast", Threads: 1},
		Run: func(context.Context, episode.Job) (episode.Execution, error) {
			return episode.Execution{}, errors.New("the executor is gone")
		},
		Store: store,
	})
	if err == nil || strings.Count(err.Error(), "the executor is gone") != 1 || !strings.Contains(err.Error(), "seed 1") {
		t.Fatalf("error %v: want the first run's failure, once", err)
	}
	runs := 0
	for _, a := range res.Arms {
		runs += len(a.Runs)
	}
	if runs != 0 {
		t.Errorf("%d runs recorded after every run failed", runs)
	}
}

// tinyChurn is the recipe package's tiny-churn fixture, loaded and prepared.
func tinyChurn(t *testing.T) (*task.Task, *episode.Prepared) {
	t.Helper()
	tk, err := task.Load(filepath.Join("..", "..", "policy", "recipe", "testdata", "tiny-churn"))
	if err != nil {
		t.Fatal(err)
	}
	prep, err := episode.Prepare(tk)
	if err != nil {
		t.Fatal(err)
	}
	return tk, prep
}

// A long comparison says how far each run is while it goes, not only when a
// run ends: every ProgressEvery, one line per run still going, with its
// virtual time and episodes. The executor here answers each program at once
// with a failed 5-second run, slowly enough in real time for a few ticks.
func TestCompareReportsRunsInProgress(t *testing.T) {
	_, prep := tinyChurn(t)
	store, err := episode.NewStore("")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer // Compare writes it under its lock and not after it returns
	_, err = Compare(context.Background(), Config{
		Tasks: []*episode.Prepared{prep}, Arms: []string{NoLearn}, Seeds: 2, Budget: 2 * time.Minute, Workers: 2, Batch: 4, Parallel: 2,
		Settings: episode.Settings{Timeout: time.Minute, Instrument: "ast", Threads: 1},
		Run: func(ctx context.Context, job episode.Job) (episode.Execution, error) {
			time.Sleep(20 * time.Millisecond)
			return episode.Execution{Episode: job.ID, Task: job.Task, ExitCode: 1, DurationS: 5, Settings: job.Settings}, nil
		},
		Store: store, Progress: &out, ProgressEvery: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	going := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "  … tiny-churn no-learn seed ") && (strings.Contains(l, "of 2m0s virtual") || strings.Contains(l, "before its first update")) {
			going++
		}
	}
	if going < 2 {
		t.Errorf("%d progress lines for runs going, want several:\n%s", going, out.String())
	}
	if !strings.Contains(out.String(), "episodes, best none") {
		t.Errorf("no progress line reports episodes after an update:\n%s", out.String())
	}
	if strings.Count(out.String(), "tiny-churn no-learn seed") < 2+going {
		t.Errorf("the finished runs' lines are missing:\n%s", out.String())
	}
}

// The table's rows put every figure under its header, the late scratch
// median and the updates included, and give an RL arm's gap to no-learn
// in standard errors of the difference, signed so that positive is better.
func TestPrintColumns(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	res := Result{Mode: "test", Arms: []Arm{
		{Task: "t", Arm: NoLearn, LowerIsBetter: true, Runs: []Run{
			{Seed: 1, Best: f(0.70), Episodes: 20, Distinct: 20, Failures: 2, Updates: 2, LateScratch: f(0.90)},
			{Seed: 2, Best: f(0.60), Episodes: 30, Distinct: 28, Failures: 3, Updates: 3, LateScratch: f(0.80)},
		}},
		{Task: "t", Arm: DurationAware, LowerIsBetter: true, Runs: []Run{
			{Seed: 1, Best: f(0.55), Episodes: 22, Distinct: 22, Updates: 2},
			{Seed: 2, Best: f(0.45), Episodes: 24, Distinct: 24, Updates: 3},
		}},
	}}
	for i := range res.Arms {
		res.Arms[i].summarise()
	}
	var out bytes.Buffer
	res.Print(&out)
	lines := strings.Split(out.String(), "\n")
	var header string
	rows := map[string]string{}
	for _, l := range lines {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "arm":
			header = l
		case len(f) > 0 && (f[0] == NoLearn || f[0] == DurationAware):
			rows[f[0]] = l
		}
	}
	if header == "" || len(rows) != 2 {
		t.Fatalf("no header or rows:\n%s", out.String())
	}
	col := func(line, s string) int { return len([]rune(line[:strings.Index(line, s)])) }
	cases := []struct{ arm, column, want string }{
		{NoLearn, "best score", "0.6500 ± 0.0500"},
		{NoLearn, "episodes", "25 ± 5"},
		{NoLearn, "failed", "10.0%"},
		{NoLearn, "updates", "2.5 ± 0.5"},
		{NoLearn, "late scratch median", "0.8500 ± 0.0500"},
		{DurationAware, "late scratch median", "- "},
		{DurationAware, "vs no-learn", "+0.1500 (+2.1 SE)"},
	}
	for _, c := range cases {
		row := rows[c.arm]
		if !strings.Contains(row, c.want) {
			t.Errorf("%s row lacks %q:\n%s", c.arm, c.want, out.String())
			continue
		}
		if got, want := col(row, c.want), col(header, c.column); got != want {
			t.Errorf("%s: %q at column %d, its header %q at %d:\n%s", c.arm, c.want, got, c.column, want, out.String())
		}
	}
}

// cancelOn is a progress writer that cancels when a line it was told to
// wait for is written (Compare writes Progress under its own lock).
type cancelOn struct {
	bytes.Buffer
	line   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.line) {
		c.cancel()
	}
	return c.Buffer.Write(p)
}

// A comparison stopped part way (Ctrl-C an hour in) still returns the runs
// that finished, says it is incomplete and why, and the table says so too.
func TestCompareKeepsFinishedRunsWhenStopped(t *testing.T) {
	_, prep := tinyChurn(t)
	store, err := episode.NewStore("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOn{line: "tiny-churn no-learn seed 1: best", cancel: cancel}
	res, err := Compare(ctx, Config{
		Tasks: []*episode.Prepared{prep}, Arms: []string{NoLearn}, Seeds: 3, Budget: time.Minute, Workers: 2, Batch: 4, Parallel: 1,
		Settings: episode.Settings{Timeout: time.Minute, Instrument: "ast", Threads: 1},
		Run: func(ctx context.Context, job episode.Job) (episode.Execution, error) {
			return episode.Execution{Episode: job.ID, Task: job.Task, ExitCode: 1, DurationS: 5, Settings: job.Settings}, nil
		},
		Store: store, Progress: out,
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the cancellation", err)
	}
	if res == nil || len(res.Arms) != 1 || len(res.Arms[0].Runs) != 1 || res.Arms[0].Runs[0].Seed != 1 || res.Arms[0].Episodes.N != 1 {
		t.Fatalf("result %+v, want seed 1's run alone", res)
	}
	if !strings.Contains(res.Incomplete, "1 of 3 runs finished") {
		t.Errorf("incomplete %q", res.Incomplete)
	}
	var table bytes.Buffer
	res.Print(&table)
	if !strings.HasPrefix(table.String(), "INCOMPLETE: 1 of 3 runs finished") {
		t.Errorf("table does not start by saying it is incomplete:\n%s", table.String())
	}
}

// The time left is judged from the recent pace, not the run's start (which
// replays a store at no cost), and only once there is a minute to judge by.
func TestTimeLeftFromRecentPace(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	now := t0
	w := &watched{Memory: &rl.Memory{}, now: func() time.Time { return now }}
	update := func(real time.Duration, virt float64) {
		now = t0.Add(real)
		if err := w.Metrics(rl.Metrics{TimeS: virt, Episodes: 1}); err != nil {
			t.Fatal(err)
		}
	}
	budget := 20 * time.Minute
	update(0, 10)
	if s := w.String(budget); strings.Contains(s, "left") {
		t.Errorf("one update: %q, want no estimate", s)
	}
	update(30*time.Second, 240) // the store's replay: 4 virtual minutes in 30 s
	if s := w.String(budget); strings.Contains(s, "left") {
		t.Errorf("half a minute in: %q, want no estimate yet", s)
	}
	// Then 5 real minutes per virtual minute, for 30 real minutes.
	for m := 1; m <= 30; m++ {
		update(30*time.Second+time.Duration(m)*time.Minute, 240+float64(m)*12)
	}
	// 600 of 1200 virtual seconds: 10 virtual minutes left at 5 real each.
	if s := w.String(budget); !strings.Contains(s, "10m0s of 20m0s virtual") || !strings.HasSuffix(s, "about 50m0s left") {
		t.Errorf("progress %q, want 50m left at the recent pace", s)
	}
	now = now.Add(20 * time.Minute) // no update since
	if got, _ := w.left(budget); got != 30*time.Minute {
		t.Errorf("20 minutes after the last update: %v left, want 30m", got)
	}
}
