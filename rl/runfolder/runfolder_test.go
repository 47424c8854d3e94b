package runfolder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/rl/replay"
	"github.com/mlerl/mlerl/rl/tabular"
	"github.com/mlerl/mlerl/task"
)

var tasks = []*task.Task{{Name: "synthetic-churn"}}

func setup(t *testing.T) (*replay.Table, rl.Config) {
	t.Helper()
	tb, err := replay.LoadTable("../replay/testdata/synthetic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cfg := rl.DefaultConfig()
	cfg.RunID, cfg.Batch, cfg.Budget, cfg.Seed = "r", 8, 20*time.Minute, 5
	return tb, cfg
}

func newPolicy(t *testing.T, tb *replay.Table) *tabular.Policy {
	p, err := tabular.New(tb.Keys(), tabular.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newEnv(t *testing.T, tb *replay.Table) *replay.Env {
	env, err := replay.New(tb, replay.Config{Workers: 16, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// crashAfter cancels the run right after its n-th checkpoint is written.
type crashAfter struct {
	*Folder
	n      int
	cancel context.CancelFunc
	last   *rl.Checkpoint
}

func (c *crashAfter) Checkpoint(ck *rl.Checkpoint, pol rl.Policy) error {
	if err := c.Folder.Checkpoint(ck, pol); err != nil {
		return err
	}
	c.last = ck
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return nil
}

// A run killed after its 5th update, with junk appended after the checkpoint
// (a record the dead process wrote, then a torn line), resumes from the
// checkpoint: no episode twice, counters continued, jobs in flight at the
// crash re-dispatched and counted once.
func TestCrashAndResume(t *testing.T) {
	tb, cfg := setup(t)
	dir := t.TempDir()
	crashed := crashRun(t, tb, cfg, dir)
	sum := resumeRun(t, tb, cfg, dir, crashed)
	checkResumedEpisodes(t, dir, sum, crashed)
	checkResumedMetrics(t, dir, sum, crashed)
	checkResumedFiles(t, dir, sum)
}

// crashRun runs into dir until its 5th update's checkpoint, then cancels,
// and appends junk to episodes.jsonl as a dying process would. It returns
// the last checkpoint.
func crashRun(t *testing.T, tb *replay.Table, cfg rl.Config, dir string) *rl.Checkpoint {
	t.Helper()
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sink := &crashAfter{Folder: f, n: 5, cancel: cancel}
	_, err = rl.Run(ctx, cfg, newEnv(t, tb), newPolicy(t, tb), tasks, sink)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	f.Close()
	crashed := sink.last
	if crashed.Counters.Updates != 5 || len(crashed.InFlight) == 0 {
		t.Fatalf("checkpoint at crash: updates %d, in flight %d", crashed.Counters.Updates, len(crashed.InFlight))
	}
	ep, _ := os.OpenFile(filepath.Join(dir, EpisodesFile), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(ep, `{"episode":"r-999999","task":"synthetic-churn"}`+"\n"+`{"episode":"r-1000000","ta`)
	ep.Close()
	return crashed
}

// resumeRun checks that the crashed run in dir resumes from its checkpoint
// (dropping the junk with a notice), runs it to the end and returns its
// summary.
func resumeRun(t *testing.T, tb *replay.Table, cfg rl.Config, dir string, crashed *rl.Checkpoint) rl.Summary {
	t.Helper()
	if _, err := Create(dir, Options{}); err == nil {
		t.Fatal("Create over an existing run succeeded")
	}
	var logBuf bytes.Buffer
	pol := newPolicy(t, tb)
	f2, ck, err := Resume(dir, pol, Options{Log: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if ck.NextJob != crashed.NextJob || ck.Counters != crashed.Counters || pol.Version() != crashed.PolicyVersion || ck.Elapsed != crashed.Elapsed {
		t.Fatalf("checkpoint did not round-trip: %+v vs %+v", ck, crashed)
	}
	if len(ck.Ranks["synthetic-churn"]) == 0 || !reflect.DeepEqual(ck.Ranks, crashed.Ranks) {
		t.Fatalf("ranked rewards did not round-trip: %v vs %v", ck.Ranks, crashed.Ranks)
	}
	if !strings.Contains(logBuf.String(), "after the checkpoint") {
		t.Errorf("no notice of dropped records: %q", logBuf.String())
	}
	cfg.Resume = ck
	sum, err := rl.Run(context.Background(), cfg, newEnv(t, tb), pol, tasks, f2)
	if err != nil {
		t.Fatal(err)
	}
	f2.Close()
	return sum
}

// checkResumedEpisodes checks episodes.jsonl after the resume: no episode
// twice, ids within those dispatched, counts matching the summary, and every
// job in flight at the crash recorded.
func checkResumedEpisodes(t *testing.T, dir string, sum rl.Summary, crashed *rl.Checkpoint) {
	t.Helper()
	eps, torn, err := ReadJSONL[rl.EpisodeRecord](filepath.Join(dir, EpisodesFile))
	if err != nil || torn {
		t.Fatalf("episodes.jsonl: torn %v, %v", torn, err)
	}
	seen := map[string]bool{}
	cancelled := 0
	for _, e := range eps {
		if e.Cancelled {
			cancelled++
		}
		if seen[e.Episode] {
			t.Errorf("episode %s recorded twice", e.Episode)
		}
		seen[e.Episode] = true
		n, _ := strconv.ParseInt(strings.TrimPrefix(e.Episode, "r-"), 10, 64)
		if !strings.HasPrefix(e.Episode, "r-") || n >= int64(sum.Dispatched) {
			t.Errorf("episode id %s outside r-0..r-%d", e.Episode, sum.Dispatched-1)
		}
	}
	if len(eps)-cancelled != sum.Completed || cancelled != sum.AbandonedAtStop {
		t.Errorf("%d episode lines, %d of them cancelled; %d completed, %d abandoned", len(eps), cancelled, sum.Completed, sum.AbandonedAtStop)
	}
	if sum.Redelivered != len(crashed.InFlight) || sum.Dispatched != sum.Completed+sum.AbandonedAtStop {
		t.Errorf("summary %+v; %d were in flight at the crash", sum, len(crashed.InFlight))
	}
	for _, j := range crashed.InFlight {
		// Jobs in flight at the crash either completed after the resume or
		// were still in flight at the end (a cancelled line).
		if !seen[j.ID] {
			t.Errorf("job %s in flight at the crash has no episode line", j.ID)
		}
	}
}

// checkResumedMetrics checks metrics.jsonl has one line per update, in
// order, past the crash, with the clock continued.
func checkResumedMetrics(t *testing.T, dir string, sum rl.Summary, crashed *rl.Checkpoint) {
	t.Helper()
	ms, _, err := ReadJSONL[rl.Metrics](filepath.Join(dir, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Update != i+1 {
			t.Fatalf("metrics line %d is update %d", i+1, m.Update)
		}
	}
	if len(ms) != sum.Updates || sum.Updates <= crashed.Counters.Updates {
		t.Errorf("%d metrics lines, %d updates", len(ms), sum.Updates)
	}
	if ms[len(ms)-1].TimeS <= ms[4].TimeS || ms[5].TimeS < ms[4].TimeS {
		t.Errorf("clock did not continue: %v then %v", ms[4].TimeS, ms[5].TimeS)
	}

}

// checkResumedFiles checks summary.json, best/ and the checkpoint folder
// after the resumed run.
func checkResumedFiles(t *testing.T, dir string, sum rl.Summary) {
	t.Helper()
	var onDisk rl.Summary
	b, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err := json.Unmarshal(b, &onDisk); err != nil || onDisk.Completed != sum.Completed || onDisk.Isolation != "replay" {
		t.Errorf("summary.json %s: %v", b, err)
	}
	var best episode.Result
	b, _ = os.ReadFile(filepath.Join(dir, BestDir, "result.json"))
	if err := json.Unmarshal(b, &best); err != nil || best.Score == nil || *best.Score != *sum.BestScore {
		t.Errorf("best/result.json %s vs best score %v: %v", b, sum.BestScore, err)
	}
	code, _ := os.ReadFile(filepath.Join(dir, BestDir, "solution.py"))
	if !strings.HasPrefix(string(code), "# plan: ") {
		t.Errorf("best/solution.py: %q", code)
	}
	// The last checkpoint's policy and the one before it, nothing older.
	if ents, _ := filepath.Glob(filepath.Join(dir, CheckDir, "policy-*")); len(ents) != 2 {
		t.Errorf("policy folders left in checkpoint/: %v", ents)
	}
}

func TestReadJSONLTornLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, body string
		n          int
		torn, bad  bool
	}{
		{"clean", "{\"update\":1}\n{\"update\":2}\n", 2, false, false},
		{"torn", "{\"update\":1}\n{\"upd", 1, true, false},
		{"no newline", "{\"update\":1}\n{\"update\":2}", 2, true, false},
		{"bad middle", "{\"update\":1}\nxx\n{\"update\":2}\n", 1, false, true},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte(c.body), 0o644)
		got, torn, err := ReadJSONL[rl.Metrics](p)
		if len(got) != c.n || torn != c.torn || (err != nil) != c.bad {
			t.Errorf("%s: %d records, torn %v, err %v", c.name, len(got), torn, err)
		}
	}
}

func TestCutBackDropsTornLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\n{\"a\":"), 0o644)
	var logBuf bytes.Buffer
	if err := cutBack(p, 13, slog.New(slog.NewTextHandler(&logBuf, nil))); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "{\"a\":1}\n" || !strings.Contains(logBuf.String(), "torn") {
		t.Errorf("after cut: %q, log %q", b, logBuf.String())
	}
}
