package rl

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/task"
)

// virtualTiny is the tiny-auc task on the virtual executor over an
// in-memory store, the stack bench rl-vs-prompting runs on: a program's
// execution is its plan's (the "# plan: " line scripted writes), 1 s for
// "fast" and 3 s for anything else, each writing the sample submission, so
// no sandbox is needed. A repeat within the run is answered with the first
// execution, as the cache answers it in train.
func virtualTiny(t *testing.T) (*episode.Virtual, Env, *task.Task) {
	t.Helper()
	tk, err := task.Load(filepath.Join("..", "episode", "testdata", "tiny-auc"))
	if err != nil {
		t.Fatal(err)
	}
	prep, err := episode.Prepare(tk)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := os.ReadFile(filepath.Join(tk.PublicDir(), "sample_submission.csv"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := episode.NewStore("")
	if err != nil {
		t.Fatal(err)
	}
	run := func(_ context.Context, job episode.Job) (episode.Execution, error) {
		d := 3.0
		if strings.HasPrefix(job.Code, "# plan: fast\n") {
			d = 1
		}
		return episode.Execution{DurationS: d, Stages: []string{}, Wrote: true, Submission: sub}, nil
	}
	v, err := episode.NewVirtual(2, run, store)
	if err != nil {
		t.Fatal(err)
	}
	return v, clockedEnv{episode.NewGraded(v, []*episode.Prepared{prep}, episode.Reward{}, episode.Settings{Instrument: "none"}), v}, tk
}

// clockedEnv makes the graded virtual executor the learner's clock.
type clockedEnv struct {
	*episode.Graded
	v *episode.Virtual
}

func (c clockedEnv) Sampled(n int) { c.v.Sampled(n) }
func (c clockedEnv) Updated(n int) { c.v.Updated(n) }

// A policy that writes the same two programs over and over: after the first
// of each, every episode is a repeat. Repeats are recorded at once, marked,
// counted, and kept out of the update, the rank table, the critic and the
// buffer; the update that comes uses the two first executions only.
func TestRepeatsStayOutOfUpdates(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes, cfg.BufferSize = 2, 8, 2
	pol := &scripted{plans: []string{"fast", "slow"}, same: true}
	mem := &Memory{}
	v, env, tk := virtualTiny(t)
	sum, err := Run(context.Background(), cfg, env, pol, []*task.Task{tk}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Completed != 8 || sum.Repeats != 6 || sum.Updates != 1 || sum.Unused != 0 {
		t.Errorf("summary: %d completed, %d repeats, %d updates, %d unused; want 8, 6, 1, 0",
			sum.Completed, sum.Repeats, sum.Updates, sum.Unused)
	}
	if len(pol.updates) != 1 || len(pol.updates[0]) != 2 {
		t.Fatalf("policy updates %d (first of %d samples), want one on the two first executions", len(pol.updates), len(pol.updates[0]))
	}
	seen := map[string]bool{}
	for _, s := range pol.updates[0] {
		seen[s.Action.Plan] = true
	}
	if !seen["fast"] || !seen["slow"] {
		t.Errorf("update on %v, want fast and slow", seen)
	}
	repeats := 0
	for _, r := range mem.EpisodeRecs {
		if !r.Repeat {
			continue
		}
		repeats++
		if r.Update != 0 || r.Advantage != nil {
			t.Errorf("repeat %s used by update %d, advantage %v", r.Episode, r.Update, r.Advantage)
		}
	}
	if len(mem.EpisodeRecs) != 8 || repeats != 6 {
		t.Errorf("%d episode records, %d repeats; want 8 and 6", len(mem.EpisodeRecs), repeats)
	}
	if st := v.Stats(); st.Executed != 2 || st.Reused != 6 {
		t.Errorf("virtual executor %+v, want 2 executed and 6 reused", st)
	}
	ck := mem.LastCK
	if n := len(ck.Buffer); n != 2 {
		t.Errorf("buffer holds %d solutions, want the 2 executions", n)
	}
	if n := len(ck.Ranks[tk.Name]); n != 2 {
		t.Errorf("rank table holds %d results, want 2", n)
	}
	if ck.Counters.Repeats != 6 || ck.Written.Len(tk.Name) != 2 {
		t.Errorf("checkpoint: %d repeats, %d programs written; want 6 and 2", ck.Counters.Repeats, ck.Written.Len(tk.Name))
	}

	// A resume knows what the run wrote: the same programs are repeats.
	l := resumedOn(t, cfg, ck, env, tk)
	for _, plan := range []string{"fast", "slow"} {
		if l.written.Add(tk.Name, pol.code(plan)) {
			t.Errorf("after a resume %s is new again", plan)
		}
	}
	if !l.written.Add(tk.Name, pol.code("other")) {
		t.Error("a program never written is a repeat after the resume")
	}
}

// A checkpoint from before Written still names the programs in its buffer
// and in flight: a resume from it counts them as written.
func TestRepeatsFromOldCheckpoint(t *testing.T) {
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes, cfg.BufferSize = 2, 2, 2
	pol := &scripted{plans: []string{"fast", "slow"}, same: true}
	mem := &Memory{}
	_, env, tk := virtualTiny(t)
	if _, err := Run(context.Background(), cfg, env, pol, []*task.Task{tk}, mem); err != nil {
		t.Fatal(err)
	}
	ck := *mem.LastCK
	ck.Written = nil
	l := resumedOn(t, cfg, &ck, env, tk)
	if n := l.written.Len(tk.Name); n != 2 {
		t.Errorf("%d programs written after resuming an old checkpoint, want the buffer's 2", n)
	}
}

// resumedOn is resumed on env and tk.
func resumedOn(t *testing.T, cfg Config, ck *Checkpoint, env Env, tk *task.Task) *learner {
	t.Helper()
	raw, err := json.Marshal(ck)
	if err != nil {
		t.Fatal(err)
	}
	var back Checkpoint
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	cfg.Resume = &back
	l, err := newLearner(cfg, env, &scripted{version: back.PolicyVersion}, []*task.Task{tk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
