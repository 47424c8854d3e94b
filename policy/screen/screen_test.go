package screen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestNormalScores(t *testing.T) {
	m := New()
	// Rewards 1, 2, 2, 3 and a failure.
	m.Observe(Plan{Choices: []Choice{{Name: "id", Value: "a"}}}, true, 1, 0)
	m.Observe(Plan{Choices: []Choice{{Name: "id", Value: "b"}}}, true, 2, 0)
	m.Observe(Plan{Choices: []Choice{{Name: "id", Value: "c"}}}, true, 2, 0)
	m.Observe(Plan{Choices: []Choice{{Name: "id", Value: "d"}}}, true, 3, 0)
	m.Observe(Plan{Choices: []Choice{{Name: "id", Value: "e"}}}, false, 0, 0)
	y := m.normalScores()
	q := func(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
	want := []float64{q(0.5 / 4), q(2 / 4.0), q(2 / 4.0), q(3.5 / 4), q(0.5/4) - 1}
	for i := range want {
		if math.Abs(y[i]-want[i]) > 1e-12 {
			t.Errorf("score %d = %v, want %v (all %v)", i, y[i], want[i], y)
		}
	}
	if y[1] != 0 || y[2] != 0 {
		t.Errorf("the tied middle ranks score %v, %v, want 0 (the median)", y[1], y[2])
	}
}

func TestObserveOnceByKey(t *testing.T) {
	m := New()
	x := Plan{Choices: []Choice{{Name: "x", Value: "1"}}}
	m.Observe(x, true, 0.5, 0)
	m.Observe(x, true, 0.9, 0) // the same program again: the cache's answer
	if m.Len() != 1 {
		t.Fatalf("Len = %d after one program twice, want 1", m.Len())
	}
	if st := m.State(); st[0].Reward != 0.5 {
		t.Errorf("kept reward %v, want the first, 0.5", st[0].Reward)
	}
}

func TestSinceBest(t *testing.T) {
	type obs struct {
		id     string
		valid  bool
		reward float64
	}
	for _, tc := range []struct {
		name string
		obs  []obs
		want int
	}{
		{"nothing yet", nil, 0},
		{"only failures", []obs{{"a", false, 0}, {"b", false, 0}}, 2},
		{"the last is the best", []obs{{"a", true, 1}, {"b", true, 2}}, 0},
		{"two after the best", []obs{{"a", true, 1}, {"b", true, 3}, {"c", true, 2}, {"d", false, 9}}, 2},
		{"a tie does not move the best", []obs{{"a", true, 3}, {"b", true, 3}}, 1},
		{"a repeat is no new program", []obs{{"a", true, 3}, {"b", true, 1}, {"b", true, 1}, {"a", true, 3}}, 1},
		{"a failure's reward is not a best", []obs{{"a", true, 1}, {"b", false, 5}, {"c", true, 2}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			for _, o := range tc.obs {
				m.Observe(Plan{Choices: []Choice{{Name: "id", Value: o.id}}}, o.valid, o.reward, 1)
			}
			if got := m.SinceBest(); got != tc.want {
				t.Errorf("SinceBest = %d, want %d", got, tc.want)
			}
			r, err := Restore(m.State())
			if err != nil {
				t.Fatal(err)
			}
			if r.SinceBest() != tc.want {
				t.Errorf("restored SinceBest = %d, want %d", r.SinceBest(), tc.want)
			}
		})
	}
}

// plans of a toy grammar: family in {lin, tree}, depth in {3, 6, 9} for
// trees, scale in {yes, no}. Trees beat linear models, deeper trees are
// better, scaling does nothing.
func toyFeats(family string, depth int, scale bool) Plan {
	p := Plan{Group: family, Choices: []Choice{{Name: "family", Value: family}, {Name: "scale", Value: fmt.Sprint(scale), Paired: true}}}
	if family == "tree" {
		p.Choices = append(p.Choices, Choice{Name: "tree.depth", Value: fmt.Sprint(depth)})
	}
	return p
}

func toyReward(family string, depth int, rng *rand.Rand) float64 {
	r := 0.6 + 0.01*rng.NormFloat64()
	if family == "tree" {
		r = 0.7 + 0.02*float64(depth) + 0.01*rng.NormFloat64()
	}
	return r
}

func TestModelLearnsAndExplores(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := New()
	if i, _ := m.Pick([]Plan{toyFeats("lin", 0, true)}, Improvement); i != -1 {
		t.Fatalf("Pick on an empty model = %d, want -1 (not ready)", i)
	}
	// Depth 9 is never tried. Four runs of each plan with another seed
	// (a choice of its own, so four programs), each scored with noise.
	seeded := func(p Plan, rep int) Plan {
		p.Choices = append(p.Choices, Choice{Name: "seed", Value: fmt.Sprint(rep)})
		return p
	}
	for rep := 0; rep < 4; rep++ {
		for _, s := range []bool{true, false} {
			m.Observe(seeded(toyFeats("lin", 0, s), rep), true, toyReward("lin", 0, rng), 0)
			for _, d := range []int{3, 6} {
				m.Observe(seeded(toyFeats("tree", d, s), rep), true, toyReward("tree", d, rng), 0)
			}
		}
	}
	knnPlan := func(scale bool) Plan {
		return Plan{Group: "knn", Choices: []Choice{{Name: "family", Value: "knn"}, {Name: "scale", Value: fmt.Sprint(scale), Paired: true}}}
	}
	m.Observe(knnPlan(false), false, 0, 0)
	if !m.Ready() {
		t.Fatal("not ready after 24 valid results")
	}
	lin := m.Predict(toyFeats("lin", 0, true))
	tree3 := m.Predict(toyFeats("tree", 3, true))
	tree6 := m.Predict(toyFeats("tree", 6, true))
	tree9 := m.Predict(toyFeats("tree", 9, true))
	knn := m.Predict(knnPlan(true))
	if !(lin.Mean < tree3.Mean && tree3.Mean < tree6.Mean) {
		t.Errorf("means lin %.2f, tree depth 3 %.2f, depth 6 %.2f: want increasing", lin.Mean, tree3.Mean, tree6.Mean)
	}
	if knn.Mean >= lin.Mean {
		t.Errorf("the failed family's mean %.2f is not below the worst valid one's %.2f", knn.Mean, lin.Mean)
	}
	if tree9.SD <= tree6.SD {
		t.Errorf("untried depth 9 has SD %.3f, tried depth 6 %.3f: an untried choice must be less certain", tree9.SD, tree6.SD)
	}
	// Among edits of the best (a depth-6 tree), the untried depth beats the
	// known-worse depth 3 and a switch to the linear model.
	cands := []Plan{toyFeats("tree", 3, true), toyFeats("lin", 0, true), toyFeats("tree", 9, true)}
	i, preds := m.Pick(cands, Improvement)
	if i != 2 {
		t.Errorf("Pick = %d (%+v), want 2: the untried depth", i, preds)
	}
	for j, p := range preds {
		if p.EI < 0 || math.IsNaN(p.EI) {
			t.Errorf("candidate %d: EI %v", j, p.EI)
		}
	}
	// Equal candidates: the first (the policy's own draw) wins.
	if i, _ := m.Pick([]Plan{toyFeats("tree", 6, false), toyFeats("tree", 6, false)}, Improvement); i != 0 {
		t.Errorf("Pick of two equal candidates = %d, want 0", i)
	}
}

func TestRestoreIsTheSameModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := New()
	for i := 0; i < 30; i++ {
		fam := []string{"lin", "tree"}[i%2]
		d := 3 * (1 + i%3)
		m.Observe(toyFeats(fam, d, i%4 == 0), i%7 != 0, toyReward(fam, d, rng), 0)
	}
	r, err := Restore(m.State())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Plan{toyFeats("tree", 9, true), toyFeats("lin", 0, false)} {
		a, b := m.Predict(f), r.Predict(f)
		if *a != *b {
			t.Errorf("restored model predicts %+v for %v, the original %+v", *b, f, *a)
		}
	}
	if _, err := Restore([]Record{{Plan: Plan{Group: "lin"}}}); err == nil {
		t.Error("Restore took an observation without choices")
	}
}

func TestExpectedImprovement(t *testing.T) {
	cases := []struct{ mean, sd, best, want float64 }{
		{0, 0, 1, 0},
		{2, 0, 1, 1},
		{1, 1, 1, 1 / math.Sqrt(2*math.Pi)}, // at the best: sd·φ(0)
	}
	for _, c := range cases {
		if got := expectedImprovement(c.mean, c.sd, c.best); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("EI(%v, %v, best %v) = %v, want %v", c.mean, c.sd, c.best, got, c.want)
		}
	}
	// EI grows with the mean and with the uncertainty.
	if expectedImprovement(0, 1, 1) >= expectedImprovement(0.5, 1, 1) || expectedImprovement(0, 1, 1) >= expectedImprovement(0, 2, 1) {
		t.Error("EI does not grow with mean and sd")
	}
}

// Choices that change nothing are learnt from results that come out
// identical: a decision is neutral for a group once neutralPairs pairs of
// plans that differ in it alone scored the same and none differently. A
// plan that differs from one already run only in neutral choices is a
// repeat (its score known, no uncertainty), and Pick runs it only when every
// candidate is one.
func TestNeutralChoicesMakeRepeats(t *testing.T) {
	plan := func(family, depth, scale, loader string) Plan {
		p := Plan{Group: family, Choices: []Choice{{Name: "loader", Value: loader}, {Name: "family", Value: family},
			{Name: "scale", Value: scale, Paired: true}}}
		if family == "tree" {
			p.Choices = append(p.Choices, Choice{Name: "tree.depth", Value: depth})
		}
		return p
	}
	m := New()
	obs := func(p Plan, r float64) { m.Observe(p, true, r, 0) }
	// Trees: the depth matters, the scaling and the loader do not (three
	// pairs each with equal scores).
	for _, d := range []string{"3", "6"} {
		r := map[string]float64{"3": 0.76, "6": 0.82}[d]
		obs(plan("tree", d, "yes", "a"), r)
		obs(plan("tree", d, "no", "a"), r)
		obs(plan("tree", d, "no", "b"), r)
	}
	obs(plan("tree", "6", "yes", "b"), 0.82)
	// Linear models: one pair with equal scores, one differing on scale.
	obs(plan("lin", "", "yes", "a"), 0.6)
	obs(plan("lin", "", "yes", "b"), 0.6)
	obs(plan("lin", "", "no", "a"), 0.55)
	m.refit()
	for k, want := range map[string]bool{"tree\x00scale": true, "tree\x00loader": true, "tree\x00tree.depth": false,
		"lin\x00loader": false, "lin\x00scale": false} {
		if m.neutral[k] != want {
			t.Errorf("neutral[%q] = %v, want %v (all %v)", k, m.neutral[k], want, m.neutral)
		}
	}
	// A new key, the best's program in all but neutral choices.
	again := m.Predict(plan("tree", "6", "no", "c"))
	if !again.Repeat || again.SD != 0 || again.EI != 0 {
		t.Errorf("tree depth 6 with another loader: %+v, want a repeat of the best (SD 0, EI 0)", *again)
	}
	if !m.Repeats(plan("tree", "6", "no", "c")) || m.Repeats(plan("tree", "9", "no", "c")) {
		t.Error("Repeats does not say what Predict says")
	}
	if p := m.Predict(plan("tree", "9", "no", "c")); p.Repeat || p.SD == 0 {
		t.Errorf("an untried depth: %+v, want a new program with uncertainty", *p)
	}
	if p := m.Predict(plan("lin", "", "no", "b")); p.Repeat {
		t.Errorf("a linear model with a loader not known to be neutral for it: %+v, want new", *p)
	}
	cands := []Plan{plan("tree", "6", "no", "c"), plan("lin", "", "no", "b")}
	if i, preds := m.Pick(cands, Improvement); i != 1 {
		t.Errorf("Pick = %d (%+v), want 1: the repeat only when every candidate is one", i, preds)
	}
	if i, _ := m.Pick([]Plan{plan("tree", "6", "no", "c"), plan("tree", "3", "yes", "c")}, Improvement); i != 0 {
		t.Errorf("Pick of two repeats = %d, want 0", i)
	}
	// Evidence against neutrality ends it: a fourth tree pair differing on scale.
	obs(plan("tree", "3", "yes", "b"), 0.76)
	obs(plan("tree", "9", "yes", "a"), 0.85)
	obs(plan("tree", "9", "no", "a"), 0.86)
	m.fitted = false
	m.refit()
	if m.neutral["tree\x00scale"] || !m.neutral["tree\x00loader"] {
		t.Errorf("after a pair that differs on scale: neutral %v, want loader only", m.neutral)
	}
}

// By PerSecond the model also learns how long programs of each choice run
// and picks by expected improvement per predicted second: of two untried
// variants of equal promise, the one of a family that ran 1 s beats the one
// of a family that ran 40 s; by Improvement the choice
// is by expected improvement alone. A saved state keeps the durations.
func TestPerSecondPrefersTheFastCandidate(t *testing.T) {
	plan := func(family, v string) Plan {
		return Plan{Group: family, Choices: []Choice{{Name: "family", Value: family}, {Name: family + ".v", Value: v}}}
	}
	m := New()
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		r := 0.5 + 0.01*float64(i)
		m.Observe(plan("fast", v), true, r, 1)
		m.Observe(plan("slow", v), true, r+0.005, 40)
	}
	// The slow family scores a little better, so its untried variant has the
	// larger expected improvement.
	cands := []Plan{plan("fast", "z"), plan("slow", "z")}
	i, preds := m.Pick(cands, Improvement)
	if i != 1 || !(preds[1].EI > preds[0].EI) {
		t.Fatalf("by expected improvement: Pick = %d, predictions %+v; want 1, the better family", i, preds)
	}
	if f, s := preds[0].Seconds, preds[1].Seconds; !(f > 0.5 && f < 2 && s > 20 && s < 80) {
		t.Errorf("predicted seconds fast %.2f, slow %.2f; want about 1 and 40", f, s)
	}
	if i, preds := m.Pick(cands, PerSecond); i != 0 {
		t.Errorf("per second: Pick = %d, predictions %+v; want 0, the fast family", i, preds)
	}
	back, err := Restore(m.State())
	if err != nil {
		t.Fatal(err)
	}
	if p := back.Predict(plan("slow", "z")); p == nil || math.Abs(p.Seconds-preds[1].Seconds) > 1e-9*preds[1].Seconds {
		t.Errorf("restored model predicts %+v for the slow family, want %.3f s as before", p, preds[1].Seconds)
	}
	// Unknown durations (a state saved before they were kept) predict the
	// mean of the known ones, not 1 s.
	u := New()
	for i, v := range []string{"a", "b", "c", "d"} {
		u.Observe(plan("fast", v), true, float64(i), 0)
	}
	u.Observe(plan("slow", "a"), true, 0.5, 8)
	if p := u.Predict(plan("fast", "z")); p == nil || math.Abs(p.Seconds-8) > 1 {
		t.Errorf("with one known duration of 8 s, an untried fast plan is predicted %+v, want about 8 s", p)
	}
}
