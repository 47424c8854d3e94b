package rl

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/sandbox"
	"github.com/mlerl/mlerl/task"
)

// A policy that writes the same two programs over and over gets each
// executed once: the rest are reused, recorded as episodes like any other,
// handed to the policy with their results, and counted in the summary.
func TestIdenticalProgramsRunOnce(t *testing.T) {
	tk, err := task.Load(filepath.Join("..", "episode", "testdata", "tiny-auc"))
	if err != nil {
		t.Fatal(err)
	}
	prep, err := episode.Prepare(tk)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(context.Background(), sandbox.Config{})
	if err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	pool, err := episode.NewPool(&episode.Runner{Sandbox: sb}, map[string]string{tk.Name: tk.PublicDir()}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store, err := episode.NewStore("")
	if err != nil {
		t.Fatal(err)
	}
	cache := episode.NewCache(pool, store)
	env := episode.NewGraded(cache, []*episode.Prepared{prep}, episode.Reward{}, episode.Settings{Timeout: time.Minute})
	pol := &scripted{plans: []string{"a", "b"}}
	cfg := testConfig()
	cfg.Batch, cfg.MaxEpisodes = 2, 6
	mem := &Memory{}
	sum, err := Run(context.Background(), cfg, env, pol, []*task.Task{tk}, mem)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Completed != 6 || sum.Reused != 4 {
		t.Errorf("summary: %d completed, %d reused; want 6 and 4", sum.Completed, sum.Reused)
	}
	if st := cache.Stats(); st.Executed != 2 || st.Reused != 4 {
		t.Errorf("cache: %+v, want 2 executed and 4 reused", st)
	}
	reused := 0
	for _, r := range mem.EpisodeRecs {
		if r.Reused {
			reused++
		}
	}
	if len(mem.EpisodeRecs) != 6 || reused != 4 {
		t.Errorf("episodes.jsonl: %d records, %d reused", len(mem.EpisodeRecs), reused)
	}
	for _, batch := range pol.updates {
		for _, s := range batch {
			if s.Result.Episode == "" || s.Result.Reward != s.Reward || s.Result.Task != tk.Name {
				t.Errorf("sample without its result: %+v", s.Result)
			}
		}
	}
}
