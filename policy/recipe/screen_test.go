package recipe

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// observeAll files each action's result as the learner would: reward(plan),
// valid unless reward is negative.
func observeAll(p *Policy, tk *task.Task, acts []rl.Action, reward func(*Plan) float64) {
	for i, a := range acts {
		var m meta
		_ = json.Unmarshal(a.Meta, &m)
		r := reward(m.Plan)
		p.Observe(rl.Solution{Action: a, Result: episode.Result{Episode: "e" + strconv.Itoa(i), Task: tk.Name, Valid: r >= 0, Reward: r}})
	}
}

// The screen's promises: until its model has a few valid results the
// policy writes exactly what it writes without one; once it has, it runs
// the candidate the results favour far more often than the policy's own
// first draw would; only the chosen plan counts as written, so the others
// stay available; and its model survives Save and Load, but not
// ForgetResults (--init-policy).
func TestScreenPicksWhatResultsFavour(t *testing.T) {
	plain, tk := fixturePolicy(t, "tiny-churn", 5)
	screened, _ := fixturePolicy(t, "tiny-churn", 5)
	if err := screened.SetScreen(8); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []int{-1, 1, maxScreen + 1} {
		if err := screened.SetScreen(bad); err == nil {
			t.Errorf("SetScreen(%d) took a screen of that size", bad)
		}
	}
	// Not ready: the same plans as without a screen, and no screen note.
	a, b := sampleScratch(t, plain, tk, 24), sampleScratch(t, screened, tk, 24)
	for i := range a {
		if a[i].Key != b[i].Key {
			t.Fatalf("sample %d before the model is ready: %s with the screen, %s without", i, b[i].Key, a[i].Key)
		}
		if actionMeta(t, b[i]).Screen != nil || screened.EpisodeNote(b[i]) != nil {
			t.Fatalf("sample %d has a screen note before any result", i)
		}
	}
	// The results: the family the prior draws second most pays, failures
	// aside every other program is middling.
	counts := map[string]int{}
	for _, x := range a {
		counts[x.Line]++
	}
	def := Default(screened.profiles[tk.Name]).Get("model.family")
	good := ""
	for f, n := range counts {
		if f != def && (good == "" || n > counts[good] || n == counts[good] && f < good) {
			good = f
		}
	}
	if good == "" {
		t.Fatalf("24 draws of the prior took only the default family %s: the test needs another", def)
	}
	reward := func(pl *Plan) float64 {
		if pl.Get("model.family") == good {
			return 0.9
		}
		return 0.5 + 0.001*float64(len(pl.Key())%7)
	}
	observeAll(screened, tk, b, reward)
	plain.Observe(rl.Solution{Action: a[0], Result: episode.Result{Task: tk.Name, Valid: true, Reward: 1}})
	if len(plain.screens) != 0 {
		t.Error("a policy without the screen kept a model of results")
	}

	tried := len(screened.tried[tk.Name])
	a, b = sampleScratch(t, plain, tk, 64), sampleScratch(t, screened, tk, 64)
	if got := len(screened.tried[tk.Name]) - tried; got != 64 {
		t.Errorf("64 screened samples marked %d plans written, want 64 (only the chosen ones)", got)
	}
	share := func(acts []rl.Action) float64 {
		n := 0
		for _, x := range acts {
			if x.Line == good {
				n++
			}
		}
		return float64(n) / float64(len(acts))
	}
	t.Logf("share of %s (the family that paid): first draws %.2f, screened %.2f", good, share(a), share(b))
	// At most the share of pools of 8 draws that hold the family at all
	// (1 − (1 − p)⁸, a third for p = 5%), when it is always chosen.
	if share(b) < 4*share(a) {
		t.Errorf("the screen ran %s in %.2f of its samples, the policy's first draws in %.2f: want four times as often", good, share(b), share(a))
	}
	for i, x := range b {
		n := actionMeta(t, x).Screen
		if n == nil || n.Candidates < 1 || n.Candidates > 8 || n.Chosen < 0 || n.Chosen >= n.Candidates {
			t.Fatalf("screened sample %d: note %+v, want 1-8 candidates and the chosen among them", i, n)
		}
		// The episodes.jsonl line carries the same record.
		var line struct{ Screen *screenNote }
		if err := json.Unmarshal(screened.EpisodeNote(x), &line); err != nil || line.Screen == nil || *line.Screen != *n {
			t.Fatalf("screened sample %d: episode note %s (%v), want the action's %+v", i, screened.EpisodeNote(x), err, *n)
		}
	}

	dir := t.TempDir()
	if err := screened.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, _ := fixturePolicy(t, "tiny-churn", 6)
	if err := loaded.Load(dir); err != nil {
		t.Fatal(err)
	}
	if got, want := loaded.screens[tk.Name].Len(), screened.screens[tk.Name].Len(); got != want || want != 24 {
		t.Errorf("loaded model holds %d results, saved %d (want 24)", got, want)
	}
	loaded.ForgetResults()
	if len(loaded.screens) != 0 {
		t.Error("ForgetResults kept a model")
	}
	// A checkpoint without the file (a run without the screen) loads none,
	// and Save removes a stale one.
	if err := plain.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, screenFile)); !os.IsNotExist(err) {
		t.Errorf("saving a policy without results left %s (%v)", screenFile, err)
	}
	if err := screened.Load(dir); err != nil || len(screened.screens) != 0 {
		t.Errorf("loading a folder without models: %v, %d models", err, len(screened.screens))
	}
	// A damaged file is an error naming it, not a panic or an empty model.
	if err := os.WriteFile(filepath.Join(dir, screenFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := loaded.Load(dir); err == nil {
		t.Error("Load took a corrupt model file")
	}
}

// When the redraws run out and a draw repeats a plan already run, the
// screen keeps the new candidates drawn before it and runs one of them,
// even when the repeat is the better program: a repeat is answered from
// the store at once and teaches nothing. Only a walk with no new draw at
// all repeats.
func TestScreenNeverPicksARepeatOverANewPlan(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 3)
	if err := p.SetScreen(8); err != nil {
		t.Fatal(err)
	}
	prof := p.profiles[tk.Name]
	walker := func(choose map[string]string) *Walker {
		w := NewWalker(prof, nil)
		walkTo(t, w, prof, choose, "")
		return w
	}
	good, poor := walker(map[string]string{"model.family": "xgboost"}), walker(map[string]string{"model.family": "knn"})
	// xgboost programs paid, knn ones did not; the xgboost plan has run.
	for i, c := range []struct {
		w      *Walker
		reward float64
	}{{good, 0.9}, {walker(map[string]string{"model.family": "xgboost", "validation": "cv5"}), 0.88}, {poor, 0.2},
		{walker(map[string]string{"model.family": "knn", "validation": "cv5"}), 0.21}, {walker(map[string]string{"model.family": "ridge"}), 0.5}} {
		raw, err := json.Marshal(meta{Plan: c.w.Plan()})
		if err != nil {
			t.Fatal(err)
		}
		p.Observe(rl.Solution{Action: rl.Action{Meta: raw}, Result: episode.Result{Episode: "e" + strconv.Itoa(i), Task: tk.Name, Valid: true, Reward: c.reward}})
	}
	newPoor := walker(map[string]string{"model.family": "knn", "validation": "holdout"})
	for _, tc := range []struct {
		name  string
		draws []*Walker
		want  *Walker
		cands int
	}{
		{"a new plan, then a repeat of the best", []*Walker{newPoor, good}, newPoor, 1},
		{"only a repeat", []*Walker{good}, good, 1},
	} {
		seen := map[string]bool{good.Plan().Key(): true}
		next := 0
		drawOne := func(scratch map[string]bool) (*Walker, stepsAndLogps, error) {
			w := tc.draws[min(next, len(tc.draws)-1)]
			next++
			scratch[w.Plan().Key()] = true
			return w, stepsAndLogps{}, nil
		}
		w, _, note, err := p.screenDraw(tk.Name, drawOne, seen)
		if err != nil {
			t.Fatal(err)
		}
		if w.Plan().Key() != tc.want.Plan().Key() || note == nil || note.Candidates != tc.cands {
			t.Errorf("%s: ran %s (note %+v), want %s of %d candidates", tc.name, w.Plan().Get("model.family"), note, tc.want.Plan().Get("model.family"), tc.cands)
		}
	}
}

// SetScreenPerSecond changes what the screen's pick maximises, and only
// that: of a new plan of a family whose programs score a little higher but
// ran 60 s and one of a family that ran 0.5 s, the screen runs the slow
// family's by expected improvement and the fast one's per second, and back
// again when it is turned off.
func TestScreenPerSecondPicksTheFastFamily(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 3)
	if err := p.SetScreen(8); err != nil {
		t.Fatal(err)
	}
	prof := p.profiles[tk.Name]
	// variants are every plan of the family that differs in hyper alone.
	variants := func(family, hyper string) []*Walker {
		w := NewWalker(prof, nil)
		d, ok := walkTo(t, w, prof, map[string]string{"model.family": family}, hyper)
		if !ok || len(d.Options) < 3 {
			t.Fatalf("%s: no decision %s with 3 options or more (%+v)", family, hyper, d)
		}
		var out []*Walker
		for _, o := range d.Options {
			v := NewWalker(prof, nil)
			walkTo(t, v, prof, map[string]string{"model.family": family, hyper: o}, "")
			out = append(out, v)
		}
		return out
	}
	slow, fast := variants("xgboost", "xgb.max_depth"), variants("ridge", "ridge.alpha")
	observe := func(i int, w *Walker, reward, seconds float64) {
		raw, err := json.Marshal(meta{Plan: w.Plan()})
		if err != nil {
			t.Fatal(err)
		}
		p.Observe(rl.Solution{Action: rl.Action{Meta: raw}, Result: episode.Result{Episode: "e" + strconv.Itoa(i), Task: tk.Name, Valid: true, Reward: reward, DurationS: seconds}})
	}
	n := min(len(slow), len(fast)) - 1 // the last of each is left untried
	for i := range n {
		r := 0.5 + 0.01*float64(i)
		observe(2*i, slow[i], r+0.005, 60)
		observe(2*i+1, fast[i], r, 0.5)
	}
	newSlow, newFast := slow[len(slow)-1], fast[len(fast)-1]
	pick := func() string {
		draws := []*Walker{newSlow, newFast}
		next := 0
		drawOne := func(scratch map[string]bool) (*Walker, stepsAndLogps, error) {
			w := draws[min(next, len(draws)-1)]
			next++
			scratch[w.Plan().Key()] = true
			return w, stepsAndLogps{}, nil
		}
		w, _, note, err := p.screenDraw(tk.Name, drawOne, map[string]bool{})
		if err != nil || note == nil || note.Candidates != 2 {
			t.Fatalf("screen: %v, note %+v; want a pick of 2 candidates", err, note)
		}
		return w.Plan().Get("model.family")
	}
	for _, tc := range []struct {
		perSecond bool
		want      string
	}{{false, "xgboost"}, {true, "ridge"}, {false, "xgboost"}} {
		p.SetScreenPerSecond(tc.perSecond)
		if got := pick(); got != tc.want {
			t.Errorf("per second %v: the screen ran %s, want %s", tc.perSecond, got, tc.want)
		}
	}
}

// SetScreenAfter's promises: it needs a screen and a count of 0 or more;
// while the task's search has gone fewer than n new programs without a new
// best the walks are exactly the unscreened policy's (and the model still
// learns); from n on they are screened; a new best holds the screen back
// again, and a saved model resumes at the same count.
func TestScreenAfterWaitsForAStall(t *testing.T) {
	const after = 10
	plain, tk := fixturePolicy(t, "tiny-churn", 5)
	gated, _ := fixturePolicy(t, "tiny-churn", 5)
	if err := gated.SetScreenAfter(after); err == nil {
		t.Error("SetScreenAfter took a count with no screen to hold back")
	}
	if err := gated.SetScreen(8); err != nil {
		t.Fatal(err)
	}
	if err := gated.SetScreenAfter(-1); err == nil {
		t.Error("SetScreenAfter took -1")
	}
	if err := gated.SetScreenAfter(after); err != nil {
		t.Fatal(err)
	}
	screened := func(acts []rl.Action) int {
		n := 0
		for _, a := range acts {
			if actionMeta(t, a).Screen != nil {
				n++
			}
		}
		return n
	}
	same := func(when string, a, b []rl.Action) {
		t.Helper()
		for i := range a {
			if a[i].Key != b[i].Key {
				t.Fatalf("%s, sample %d: %s held back, %s without a screen", when, i, b[i].Key, a[i].Key)
			}
		}
		if n := screened(b); n != 0 {
			t.Fatalf("%s: %d of %d samples screened, want none", when, n, len(b))
		}
	}
	// Rising rewards: every result is a new best, the model is ready (24
	// valid results) and the stall is 0.
	rising := 0.0
	better := func(*Plan) float64 { rising += 0.01; return 0.5 + rising }
	worse := func(*Plan) float64 { return 0.1 }
	a, b := sampleScratch(t, plain, tk, 24), sampleScratch(t, gated, tk, 24)
	same("before any result", a, b)
	observeAll(gated, tk, b, better)
	if got := gated.screens[tk.Name].SinceBest(); got != 0 {
		t.Fatalf("after rising results SinceBest = %d, want 0", got)
	}
	// after − 1 programs without a new best: still the policy's own draws.
	a, b = sampleScratch(t, plain, tk, after-1), sampleScratch(t, gated, tk, after-1)
	same("a stall of fewer programs than the wait", a, b)
	observeAll(gated, tk, b, worse)
	if got := gated.screens[tk.Name].SinceBest(); got != after-1 {
		t.Fatalf("SinceBest = %d after %d programs without a new best", got, after-1)
	}
	b = sampleScratch(t, gated, tk, 1)
	if screened(b) != 0 {
		t.Fatal("screened before the stall reached the wait")
	}
	observeAll(gated, tk, b, worse) // the stall is the wait now
	b = sampleScratch(t, gated, tk, 6)
	if n := screened(b); n != 6 {
		t.Fatalf("a stall of %d programs: %d of 6 samples screened, want all", after, n)
	}
	// A restored model is at the same count: the next walk is screened too.
	dir := t.TempDir()
	if err := gated.Save(dir); err != nil {
		t.Fatal(err)
	}
	loaded, _ := fixturePolicy(t, "tiny-churn", 6)
	if err := errors.Join(loaded.SetScreen(8), loaded.SetScreenAfter(after), loaded.Load(dir)); err != nil {
		t.Fatal(err)
	}
	if n := screened(sampleScratch(t, loaded, tk, 2)); n != 2 {
		t.Errorf("after a resume %d of 2 samples screened, want both", n)
	}
	// A new best ends the stall: held back again.
	observeAll(gated, tk, b[:1], func(*Plan) float64 { return 5 })
	if n := screened(sampleScratch(t, gated, tk, 4)); n != 0 {
		t.Errorf("after a new best %d of 4 samples screened, want none", n)
	}
}
