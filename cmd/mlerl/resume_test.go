package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// --resume continues with run.json's settings: a flag it would silently
// ignore is a usage error that names it, before anything runs; the flags it
// does take pass that check.
func TestResumeRejectsIgnoredFlags(t *testing.T) {
	dir := t.TempDir()
	b, _ := json.Marshal(runConfig{Tasks: []string{"no-such-task"}, Policy: "recipe", Budget: 1, Batch: 1, Workers: 1})
	if err := os.WriteFile(filepath.Join(dir, runConfigFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // in the one-line error
	}{
		{[]string{"--seed", "3", "--timeout", "1m"}, "cannot take --seed, --timeout"},
		{[]string{"--workers", "4"}, "cannot take --workers"},
		{[]string{"--grid", "wide"}, "cannot take --grid"},
		{[]string{"--cache", "/tmp/x", "--batch", "2"}, "cannot take --batch, --cache"},
		{[]string{"--budget", "1m"}, "no-such-task"}, // accepted: fails later, on the task
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"train", "--resume", dir}, tc.args...), &bytes.Buffer{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// A resume keeps the buffer the run started with: the one run.json records,
// or, from before it recorded one, the 8 every run then kept; its --lines
// (absent: 0, as runs before it), its --mix (absent: the fixed half) and its
// --widen (absent: off), its --lines-after (absent: 0) and its
// --prior-on-repeat (absent: off); a mix this binary does not know, a
// negative wait, lines after a stall without lines, or prior on repeat with
// a language model, is refused.
func TestResumeKeepsTheBufferLinesAndMix(t *testing.T) {
	for _, tc := range []struct {
		runJSON                       string
		wantBuf, wantLines, wantWiden int
		wantMix, refused              string
		wantRepeat                    bool
		wantScreen                    int
		wantLinesAfter                time.Duration
	}{
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1}`, wantBuf: 1},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":3}`, wantBuf: 3},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1}`, wantBuf: 8},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"lines":2}`, wantBuf: 1, wantLines: 2},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"lines":2,"lines_after_ns":300000000000}`, wantBuf: 1, wantLines: 2, wantLinesAfter: 5 * time.Minute},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"lines_after_ns":300000000000}`, wantBuf: 1, wantLinesAfter: 5 * time.Minute, refused: "--lines-after: lines after 5m0s: needs lines above 0"},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"mix":"adaptive"}`, wantBuf: 1, wantMix: "adaptive"},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"mix":"greedy"}`, wantBuf: 1, wantMix: "greedy", refused: `mix "greedy": want half or adaptive`},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"widen_after":64}`, wantBuf: 1, wantWiden: 64},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"widen_after":-2}`, wantBuf: 1, wantWiden: -2, refused: "--widen: widen after -2 episodes"},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"prior_on_repeat":true}`, wantBuf: 1, wantRepeat: true},
		{runJSON: `{"tasks":["t"],"policy":"llm","budget_ns":1,"batch":1,"buffer":1,"prior_on_repeat":true}`, wantBuf: 1, wantRepeat: true, refused: "--prior-on-repeat needs the recipe policy"},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"screen":8}`, wantBuf: 1, wantScreen: 8},
		{runJSON: `{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"buffer":1,"screen":1}`, wantBuf: 1, wantScreen: 1, refused: "--screen: screen 1"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, runConfigFile), []byte(tc.runJSON), 0o644); err != nil {
			t.Fatal(err)
		}
		rc, err := resumeConfig(dir, map[string]bool{"resume": true}, 0, &envFlags{})
		checked := rc.check()
		if err != nil || rc.Buffer != tc.wantBuf || rc.Lines != tc.wantLines || rc.Mix != tc.wantMix || rc.WidenAfter != tc.wantWiden || rc.PriorOnRepeat != tc.wantRepeat || rc.Screen != tc.wantScreen || rc.LinesAfter != tc.wantLinesAfter ||
			(tc.refused == "") != (checked == nil) || checked != nil && !strings.Contains(checked.Error(), tc.refused) {
			t.Errorf("%s: buffer %d, lines %d after %d, mix %q, prior on repeat %v (%v, check %v), want %d, %d after %d, %q, %v, refused %q",
				tc.runJSON, rc.Buffer, rc.Lines, rc.LinesAfter, rc.Mix, rc.PriorOnRepeat, err, checked, tc.wantBuf, tc.wantLines, tc.wantLinesAfter, tc.wantMix, tc.wantRepeat, tc.refused)
		}
	}
}

// A resume walks the grid the run started with (absent: the standard one, as
// runs before the wide grid); a grid this binary does not know is refused.
func TestResumeKeepsTheGrid(t *testing.T) {
	tk, err := task.Load(filepath.Join("testdata", "tiny-llm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		runJSON, want, refused string
	}{
		{`{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"grid":"wide"}`, "wide", ""},
		{`{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1}`, "", ""},
		{`{"tasks":["t"],"policy":"recipe","budget_ns":1,"batch":1,"grid":"huge"}`, "huge", `--grid: unknown grid "huge"`},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, runConfigFile), []byte(tc.runJSON), 0o644); err != nil {
			t.Fatal(err)
		}
		rc, err := resumeConfig(dir, map[string]bool{"resume": true}, 0, &envFlags{})
		if err != nil || rc.Grid != tc.want {
			t.Fatalf("%s: grid %q (%v), want %q", tc.runJSON, rc.Grid, err, tc.want)
		}
		if err := rc.check(); tc.refused == "" && err != nil || tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)) {
			t.Errorf("%s: check %v, want %q", tc.runJSON, err, tc.refused)
		}
		if tc.refused != "" {
			continue
		}
		if _, err := newPolicy(context.Background(), rc, dir, []*task.Task{tk}, false); err != nil {
			t.Errorf("%s: policy: %v", tc.runJSON, err)
		}
	}
}

// train --workers 0 --listen with no worker says so once (not every few
// seconds) and gives up after --wait-for-workers with exit 1 and a message
// saying how to add workers.
func TestWaitForWorkersGivesUp(t *testing.T) {
	var stderr bytes.Buffer
	args := []string{"train", "--task", filepath.Join("testdata", "tiny-llm"), "--out", filepath.Join(t.TempDir(), "run"),
		"--workers", "0", "--listen", "127.0.0.1:0", "--wait-for-workers", "4500ms", "--budget", "1m"}
	code := run(context.Background(), args, &bytes.Buffer{}, &stderr)
	out := stderr.String()
	if code != 1 || !strings.Contains(out, "no executors joined within --wait-for-workers 4.5s") || !strings.Contains(out, "mlerl worker --nats") {
		t.Fatalf("exit %d, stderr:\n%s", code, out)
	}
	if n := strings.Count(out, "waiting for executors"); n != 1 {
		t.Errorf("the wait was announced %d times in 4.5 s, want once:\n%s", n, out)
	}
}

// --mix, --widen and --prior-on-repeat reach run.json as the run's
// settings: adaptive by name, the fixed half as absent (as runs from before
// the flag, which resume with it); the wait by its number; prior on repeat
// as true, and off as absent; its default depends on the policy.
func TestMixAndWidenFlagsInRunConfig(t *testing.T) {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	var lf learnFlags
	lf.register(fs)
	if err := fs.Parse([]string{"--widen", "64", "--prior-on-repeat", "--screen", "8", "--screen-per-second", "--screen-after", "64", "--time-charge-slower-only", "--flat-family-after", "5m"}); err != nil {
		t.Fatal(err)
	}
	var rc runConfig
	lf.apply(&rc, map[string]bool{"prior-on-repeat": true})
	if raw, err := json.Marshal(rc); err != nil || rc.Screen != 8 || !strings.Contains(string(raw), `"screen":8`) {
		t.Errorf("--screen 8: run config %d, JSON %s (%v)", rc.Screen, raw, err)
	}
	if raw, err := json.Marshal(rc); err != nil || !rc.ScreenPerSecond || !strings.Contains(string(raw), `"screen_per_second":true`) {
		t.Errorf("--screen-per-second: run config %v, JSON %s (%v)", rc.ScreenPerSecond, raw, err)
	}
	if raw, err := json.Marshal(rc); err != nil || rc.ScreenAfter != 64 || !strings.Contains(string(raw), `"screen_after":64`) {
		t.Errorf("--screen-after 64: run config %d, JSON %s (%v)", rc.ScreenAfter, raw, err)
	}
	if raw, err := json.Marshal(rc); err != nil || !rc.ChargeSlowerOnly || !strings.Contains(string(raw), `"time_charge_slower_only":true`) {
		t.Errorf("--time-charge-slower-only: run config %v, JSON %s (%v)", rc.ChargeSlowerOnly, raw, err)
	}
	if raw, err := json.Marshal(rc); err != nil || rc.FlatFamilyAfter != 5*time.Minute || !strings.Contains(string(raw), `"flat_family_after_ns":300000000000`) {
		t.Errorf("--flat-family-after 5m: run config %v, JSON %s (%v)", rc.FlatFamilyAfter, raw, err)
	}
	if raw, err := json.Marshal(rc); err != nil || rc.WidenAfter != 64 || !strings.Contains(string(raw), `"widen_after":64`) ||
		!rc.PriorOnRepeat || !strings.Contains(string(raw), `"prior_on_repeat":true`) {
		t.Errorf("--widen 64 --prior-on-repeat: run config %d %v, JSON %s (%v)", rc.WidenAfter, rc.PriorOnRepeat, raw, err)
	}
	// Without the flag, prior on repeat is on where the recipe policy
	// learns and off (absent from run.json, as runs from before it) with
	// --no-learn, with the llm policy, or when turned off by name.
	// The scratch prior likewise: DefaultScratchPrior where the recipe
	// policy learns, else 0 (absent from run.json), unless given.
	for _, tc := range []struct {
		name      string
		args      []string
		policy    string
		noLearn   bool
		want      bool
		wantShare float64
	}{
		{"recipe learning", nil, "recipe", false, true, DefaultScratchPrior},
		{"recipe --no-learn", nil, "recipe", true, false, 0},
		{"llm", nil, "llm", false, false, 0},
		{"recipe =false", []string{"--prior-on-repeat=false", "--scratch-prior", "0"}, "recipe", false, false, 0},
		{"recipe --no-learn, given", []string{"--prior-on-repeat", "--scratch-prior", "0.25"}, "recipe", true, true, 0.25},
	} {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		var lf learnFlags
		lf.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		rc := runConfig{Policy: tc.policy, NoLearn: tc.noLearn}
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		lf.apply(&rc, set)
		raw, err := json.Marshal(rc)
		if err != nil || rc.PriorOnRepeat != tc.want || strings.Contains(string(raw), "prior_on_repeat") != tc.want ||
			strings.Contains(string(raw), `"screen"`) || strings.Contains(string(raw), "screen_per_second") {
			t.Errorf("%s: prior on repeat %v, JSON %s (%v); want %v", tc.name, rc.PriorOnRepeat, raw, err, tc.want)
		}
		if rc.ScratchPrior != tc.wantShare || strings.Contains(string(raw), "scratch_prior") != (tc.wantShare != 0) {
			t.Errorf("%s: scratch prior %v, JSON %s; want %v", tc.name, rc.ScratchPrior, raw, tc.wantShare)
		}
	}
	for _, tc := range []struct{ arg, want string }{{"adaptive", "adaptive"}, {"half", ""}} {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		var lf learnFlags
		lf.register(fs)
		if err := fs.Parse([]string{"--mix", tc.arg}); err != nil {
			t.Fatal(err)
		}
		var rc runConfig
		lf.apply(&rc, nil)
		raw, err := json.Marshal(rc)
		if err != nil || rc.Mix != tc.want || (tc.want == "") == strings.Contains(string(raw), `"mix"`) {
			t.Errorf("--mix %s: run config mix %q, JSON %s (%v); want %q", tc.arg, rc.Mix, raw, err, tc.want)
		}
	}
}

// run.json's learning settings reach the learner, and a run.json from
// before a setting existed resumes as that run started: absent utility is
// the reward, absent credit absolute; --no-learn improves the best so far.
func TestRunConfigReachesTheLearner(t *testing.T) {
	def := rl.DefaultConfig()
	for _, tc := range []struct {
		name string
		rc   runConfig
		want func(c *rl.Config)
	}{
		{"every setting", runConfig{Batch: 4, Budget: time.Minute, DurationAware: true, Seed: 7,
			Utility: rl.UtilityRank, ImproveCredit: rl.ImproveGain, TimeCharge: 0.5, ChargeSlowerOnly: true, Elite: 0.3,
			DecisionCredit: true, Buffer: 3, Lines: 2, Mix: rl.MixAdaptive, WidenAfter: 16},
			func(c *rl.Config) {
				c.Batch, c.Budget, c.DurationAware, c.Seed = 4, time.Minute, true, 7
				c.Utility, c.ImproveCredit, c.TimeCharge, c.ChargeSlowerOnly, c.Elite = rl.UtilityRank, rl.ImproveGain, 0.5, true, 0.3
				c.DecisionCredit, c.BufferSize, c.Lines, c.AdaptiveMix, c.WidenAfter = true, 3, 2, true, 16
			}},
		{"a run.json from before", runConfig{Batch: 8, Budget: time.Hour, Buffer: 8},
			func(c *rl.Config) {
				c.Batch, c.Budget, c.DurationAware, c.Seed = 8, time.Hour, false, 0
				c.Utility, c.ImproveCredit, c.TimeCharge, c.BufferSize = rl.UtilityReward, rl.ImproveAbsolute, 0, 8
			}},
		{"no-learn", runConfig{Batch: 8, Budget: time.Hour, Buffer: 8, NoLearn: true, Utility: rl.UtilityRank, ImproveCredit: rl.ImproveAbsolute},
			func(c *rl.Config) {
				c.Batch, c.Budget, c.DurationAware, c.Seed = 8, time.Hour, false, 0
				c.Utility, c.ImproveCredit, c.TimeCharge, c.BufferSize = rl.UtilityRank, rl.ImproveAbsolute, 0, 1
			}},
	} {
		want := def
		tc.want(&want)
		if got := tc.rc.learner(); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("%s: learner config\n %+v\nwant\n %+v", tc.name, got, want)
		}
	}
}

// train --no-learn --flat-family-after D draws the learning policy's
// scratch-prior share of a stalled task's scratch programs flat, as the
// bench's no-learn-flat arm; without the flag it draws none.
func TestNoLearnDrawsFlatFamilies(t *testing.T) {
	tk, err := task.Load(filepath.Join("testdata", "tiny-llm"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	prompts := make([]rl.Prompt, n)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: tk, Stalled: true}
	}
	for _, after := range []time.Duration{0, 5 * time.Minute} {
		rc := runConfig{Tasks: []string{"tiny-llm"}, Policy: "recipe", NoLearn: true, Budget: time.Minute, Batch: 1, Buffer: 1, Timeout: time.Minute, FlatFamilyAfter: after}
		if err := rc.check(); err != nil {
			t.Fatalf("--no-learn --flat-family-after %v: %v", after, err)
		}
		pol, err := newPolicy(context.Background(), rc, t.TempDir(), []*task.Task{tk}, true)
		if err != nil {
			t.Fatal(err)
		}
		acts, err := pol.Sample(context.Background(), prompts)
		if err != nil {
			t.Fatal(err)
		}
		flat := 0
		for _, a := range acts {
			if strings.Contains(string(a.Meta), `"flat_family":true`) {
				flat++
			}
		}
		want := n * DefaultScratchPrior
		if sd := math.Sqrt(n * DefaultScratchPrior * (1 - DefaultScratchPrior)); after == 0 && flat != 0 || after > 0 && math.Abs(float64(flat)-want) > 4*sd {
			t.Errorf("--flat-family-after %v: %d of %d stalled scratch programs flat, want none without it, about %.0f with it", after, flat, n, want)
		}
	}
}
