package replay

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/episode"
)

// fakeRun stands for the episode runner: "good" programs are valid with score
// 0.8 after 2 s, others fail after 0.5 s having reached one stage.
func fakeRun(calls *[]string) func(context.Context, episode.Job) (episode.Result, error) {
	return func(_ context.Context, job episode.Job) (episode.Result, error) {
		*calls = append(*calls, KeyOf(job.Code)+"#"+job.ID)
		if strings.Contains(job.Code, "good") {
			s := 0.8
			return episode.Result{Episode: job.ID, Task: "tiny", DurationS: 2, Stages: []string{"imported packages"},
				Valid: true, Score: &s, Reward: s, Isolation: "fake", Instrumentation: "ast"}, nil
		}
		return episode.Result{Episode: job.ID, Task: "tiny", DurationS: 0.5, Stages: []string{"imported packages"},
			Reward: -9.9, ExitCode: 1, Error: "KeyError: 'x'"}, nil
	}
}

func TestRecorderWritesAndContinues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "table.jsonl")
	progs := []Program{
		{Note: "good one", Code: PlanCode("a=1", "good\n")},
		{Note: "bad one", Code: PlanCode("a=2", "bad\n")},
	}
	// First recording: 2 programs x 1 repeat.
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("// header\n")
	var calls []string
	var progress bytes.Buffer
	rec := &Recorder{Run: fakeRun(&calls), Out: f, Sync: f.Sync, Progress: &progress}
	sum, err := rec.Record(context.Background(), progs, 1)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Executed != 2 || sum.Valid != 1 || sum.Skipped != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(progress.String(), "[1/2] good one (repeat 1): 2.0s, 1 stages, reward 0.8, score 0.8000") ||
		!strings.Contains(progress.String(), "failed: KeyError: 'x'") {
		t.Errorf("progress:\n%s", progress.String())
	}
	// Continue with 3 repeats: only repeats 2 and 3 run, in repeat-major order.
	done, task, err := Recorded(path)
	if err != nil || task != "tiny" || done["a=1"] != 1 || done["a=2"] != 1 {
		t.Fatalf("Recorded: %v %q %v", done, task, err)
	}
	f, err = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls = nil
	rec = &Recorder{Run: fakeRun(&calls), Out: f, Done: done}
	sum, err = rec.Record(context.Background(), progs, 3)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Executed != 4 || sum.Skipped != 2 {
		t.Fatalf("summary %+v", sum)
	}
	want := "a=1#record-1-2 a=2#record-2-2 a=1#record-1-3 a=2#record-2-3"
	if got := strings.Join(calls, " "); got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	tb, err := LoadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := tb.Keys(); len(got) != 2 || len(tb.Rows("a=1")) != 3 || len(tb.Rows("a=2")) != 3 {
		t.Fatalf("table keys %v, rows %d/%d", got, len(tb.Rows("a=1")), len(tb.Rows("a=2")))
	}
	good, bad := tb.Rows("a=1")[0], tb.Rows("a=2")[0]
	if !good.Valid || *good.Score != 0.8 || good.Reward != 0.8 || good.DurationS != 2 || good.Note != "good one" ||
		good.Task != "tiny" || good.Isolation != "fake" || good.Instrumentation != "ast" {
		t.Errorf("good row %+v", good)
	}
	if bad.Valid || bad.Score != nil || bad.Reward != -9.9 || bad.ExitCode != 1 || bad.Error != "KeyError: 'x'" ||
		len(bad.Stages) != 1 || bad.Note != "bad one" {
		t.Errorf("bad row %+v", bad)
	}
	d, s, v := tb.Mean("a=1")
	if d != 2 || math.Abs(s-0.8) > 1e-12 || v != 1 {
		t.Errorf("mean of a=1: %v %v %v", d, s, v)
	}
}

func TestRecorderStopsOnInfrastructureError(t *testing.T) {
	var buf bytes.Buffer
	n := 0
	rec := &Recorder{Out: &buf, Run: func(_ context.Context, job episode.Job) (episode.Result, error) {
		n++
		if n == 2 {
			return episode.Result{}, errors.New("sandbox: cannot start")
		}
		return episode.Result{Task: "tiny", DurationS: 1, Reward: -10}, nil
	}}
	progs := []Program{{Note: "x", Code: PlanCode("x", "")}, {Note: "y", Code: PlanCode("y", "")}}
	sum, err := rec.Record(context.Background(), progs, 1)
	if err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("err %v", err)
	}
	if sum.Executed != 1 || strings.Count(buf.String(), "\n") != 1 {
		t.Fatalf("want exactly the first row written, got %d: %s", sum.Executed, buf.String())
	}
	if sum.Elapsed <= 0 {
		t.Errorf("a recording cut short reports elapsed %v", sum.Elapsed)
	}
}

func TestRecorderRefusesDuplicateKeys(t *testing.T) {
	rec := &Recorder{Out: &bytes.Buffer{}, Run: fakeRun(new([]string))}
	progs := []Program{{Note: "x", Code: PlanCode("x", "a")}, {Note: "x again", Code: PlanCode("x", "b")}}
	if _, err := rec.Record(context.Background(), progs, 1); err == nil {
		t.Fatal("two programs with one key: want an error")
	}
}

func TestRecordedMissingOrHeaderOnly(t *testing.T) {
	dir := t.TempDir()
	done, task, err := Recorded(filepath.Join(dir, "none.jsonl"))
	if err != nil || len(done) != 0 || task != "" {
		t.Fatalf("missing file: %v %q %v", done, task, err)
	}
	p := filepath.Join(dir, "header.jsonl")
	os.WriteFile(p, []byte("// only a header\n"), 0o644)
	if done, _, err := Recorded(p); err != nil || len(done) != 0 {
		t.Fatalf("header-only file: %v %v", done, err)
	}
	os.WriteFile(p, []byte("not json\n"), 0o644)
	if _, _, err := Recorded(p); err == nil {
		t.Fatal("broken file: want an error")
	}
}
