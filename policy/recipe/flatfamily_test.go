package recipe

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/choicenet"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// familyStep is the model family's step of the walk m took, and whether
// it took one.
func familyStep(m meta) (int, bool) {
	for i, s := range m.Steps {
		if DecisionNames()[s.Decision] == "model.family" {
			return i, true
		}
	}
	return 0, false
}

// A flat-family walk is a scratch-prior walk of a stalled task: only those
// carry the mark, and only their family step loses the prior's
// preference. The others (not stalled, the option off, the learnt share of
// scratch walks, improve walks) keep the hint at every step.
func TestFlatFamilyOnlyOnStalledScratchPriorWalks(t *testing.T) {
	for _, c := range []struct {
		name             string
		on, stalled      bool
		scratchPrior     float64
		wantFlat, anyOff bool // every scratch-prior walk flat; some scratch walks not
	}{
		{"on, stalled, all prior", true, true, 1, true, false},
		{"on, stalled, half prior", true, true, 0.5, true, true},
		{"on, not stalled", true, false, 1, false, true},
		{"off, stalled", false, true, 1, false, true},
	} {
		p, tk := fixturePolicy(t, "tiny-reviews", 4)
		if err := p.SetScratchPrior(c.scratchPrior); err != nil {
			t.Fatal(err)
		}
		p.SetFlatFamily(c.on)
		prompts := scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk, Stalled: c.stalled}, 200)
		parent := withChoices(t, p.profiles[tk.Name], map[string]string{"model.family": "ridge"})
		improve := improvePrompts(t, tk, parent, 40)
		for i := range improve {
			improve[i].Stalled = c.stalled
		}
		acts, err := p.Sample(context.Background(), append(prompts, improve...))
		if err != nil {
			t.Fatal(err)
		}
		flat, off := 0, 0
		for i, a := range acts {
			m := actionMeta(t, a)
			fi, ok := familyStep(m)
			switch {
			case !ok && a.Kind == episode.Scratch:
				t.Fatalf("%s: scratch walk %d took no model family step", c.name, i)
			case !ok && m.FlatFamily:
				t.Fatalf("%s: improve walk %d is flat", c.name, i)
			case !ok: // an improve walk that kept the parent's family
			case m.FlatFamily && (!m.ScratchPrior || a.Kind != episode.Scratch || i >= 200):
				t.Fatalf("%s: walk %d (%s, scratch prior %v) is flat", c.name, i, a.Kind, m.ScratchPrior)
			case m.FlatFamily:
				flat++
				if m.Steps[fi].Hint != 0 {
					t.Fatalf("%s: flat walk %d keeps the family hint %d", c.name, i, m.Steps[fi].Hint)
				}
			default:
				if i < 200 {
					off++
				}
				if m.ScratchPrior && c.wantFlat {
					t.Fatalf("%s: scratch-prior walk %d is not flat", c.name, i)
				}
				if i < 200 && m.Steps[fi].Hint == 0 {
					t.Fatalf("%s: scratch walk %d is not flat but has no family hint", c.name, i)
				}
			}
		}
		if c.wantFlat && flat == 0 || !c.wantFlat && flat > 0 || c.anyOff != (off > 0) {
			t.Errorf("%s: %d flat scratch walks, %d others", c.name, flat, off)
		}
	}
}

// Under the prior the family decision prefers Default's family; a flat
// walk gives every family it does not avoid the same probability, and an
// avoided one AvoidLogit less, so the draw of a family the prior seldom
// takes is as likely as any. The step's own record reproduces the
// distribution, so its PPO ratio is the behaviour's.
func TestFlatFamilyDrawsFamiliesEvenly(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-churn", 6)
	const n = 600
	acts := stalledScratch(t, p, tk, 1, true, n)
	counts := map[string]int{}
	var opts []string
	for i, a := range acts {
		m := actionMeta(t, a)
		fi, _ := familyStep(m)
		s := m.Steps[fi]
		probs, err := p.net.StepProbs(contextOf(p, tk), m.Steps[:fi], s, m.Temperature)
		if err != nil {
			t.Fatal(err)
		}
		even := 1.0
		for o, q := range probs {
			want := 1.0
			if slices.Contains(s.Avoid, o) {
				want = math.Exp(-AvoidLogit / m.Temperature)
			}
			if o == 0 {
				even = q / want
			} else if math.Abs(q/want-even) > 1e-9 {
				t.Fatalf("walk %d: family probabilities %v (avoided %v), not even", i, probs, s.Avoid)
			}
		}
		if len(s.Avoid) == 0 {
			opts = familyOptionsAt(t, p.profiles[tk.Name], m, fi)
			counts[opts[s.Chosen]]++
		}
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	if total < n/2 || len(opts) < 4 {
		t.Fatalf("%d walks without an avoided family, over %d families: too few to judge", total, len(opts))
	}
	share := 1 / float64(len(opts))
	sd := math.Sqrt(share * (1 - share) / float64(total))
	for _, o := range opts {
		if got := float64(counts[o]) / float64(total); math.Abs(got-share) > 4*sd {
			t.Errorf("family %s drawn %.3f of %d flat walks, want %.3f ± %.3f", o, got, total, share, 4*sd)
		}
	}
}

// stalledScratch is n scratch walks p writes for tk, stalled, with the
// scratch prior at share and flat-family draws on or off.
func stalledScratch(t *testing.T, p *Policy, tk *task.Task, share float64, flat bool, n int) []rl.Action {
	t.Helper()
	if err := p.SetScratchPrior(share); err != nil {
		t.Fatal(err)
	}
	p.SetFlatFamily(flat)
	acts, err := p.Sample(context.Background(), scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk, Stalled: true}, n))
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// contextOf is the net's context for a scratch walk on tk.
func contextOf(p *Policy, tk *task.Task) choicenet.Context {
	return choicenet.Context{Features: p.profiles[tk.Name].Features()}
}

// familyOptionsAt are the options of walk m's step fi (the model family),
// replayed on a walker.
func familyOptionsAt(t *testing.T, prof *Profile, m meta, fi int) []string {
	t.Helper()
	w := NewWalker(prof, nil)
	w.flat = m.FlatFamily
	for i, s := range m.Steps {
		d, ok := w.Next()
		if !ok {
			t.Fatalf("replayed walk ended at step %d", i)
		}
		if i == fi {
			return d.Options
		}
		if err := w.Choose(s.Chosen); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no family step")
	return nil
}

// On a text table of thousands of rows the prior avoids the tree ensembles
// outright (slowOnText); a flat walk leaves them to the cost model, which
// lets through the plans it expects to finish in half the time limit. So
// flat walks draw trees where the prior all but never does, and no family
// that would fail here (familyBreaks) loses its avoidance.
func TestFlatFamilyLeavesSpeedToTheCostModel(t *testing.T) {
	dir := filepath.Join("../../suite/tasks", "fine-food-reviews")
	if _, err := os.Stat(filepath.Join(dir, "task.yaml")); err != nil {
		t.Skip("suite task fine-food-reviews not in this checkout")
	}
	tk, err := task.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	trees := func(flat bool) (int, int) {
		p, err := NewPolicy([]*task.Task{tk}, 2)
		if err != nil {
			t.Fatal(err)
		}
		p.SetTimeLimit(40 * time.Second)
		acts := stalledScratch(t, p, tk, 1, flat, 300)
		n, slowPredicted := 0, 0
		prof := p.profiles[tk.Name]
		for _, a := range acts {
			m := actionMeta(t, a)
			c := m.Plan.choiceMap()
			fam := c["model.family"]
			if slowOnText[fam] {
				n++
				if predictSeconds(prof, c) > 40 {
					slowPredicted++
				}
			}
			fi, _ := familyStep(m)
			opts := familyOptionsAt(t, prof, m, fi)
			for o, name := range opts {
				if familyBreaks(prof, c, name) && !slices.Contains(m.Steps[fi].Avoid, o) {
					t.Fatalf("flat %v: family %s would fail here and was not avoided", flat, name)
				}
			}
		}
		return n, slowPredicted
	}
	prior, _ := trees(false)
	flat, slow := trees(true)
	t.Logf("tree ensembles in 300 scratch walks: %d under the prior, %d flat (%d of them predicted over 40 s)", prior, flat, slow)
	if prior > 15 || flat < 3*max(prior, 10) {
		t.Errorf("tree ensembles in 300 scratch walks: %d under the prior, %d flat; want the prior's few and several times as many flat", prior, flat)
	}
	if slow > flat/5 {
		t.Errorf("%d of %d flat tree plans are predicted to overrun the 40 s limit", slow, flat)
	}
}

// A run's episodes.jsonl tells the scratch prior's walks, and the flat
// ones among them, from the learnt policy's: the note says which, and a
// walk of the policy's own, unscreened, has none.
func TestEpisodeNoteMarksPriorWalks(t *testing.T) {
	p, tk := fixturePolicy(t, "tiny-reviews", 8)
	acts := stalledScratch(t, p, tk, 0.5, true, 60)
	seen := map[string]int{}
	for i, a := range acts {
		m, note := actionMeta(t, a), p.EpisodeNote(a)
		want := ""
		if m.ScratchPrior {
			want = `{"scratch_prior":true,"flat_family":true}`
		}
		if string(note) != want {
			t.Fatalf("walk %d (scratch prior %v): note %s, want %q", i, m.ScratchPrior, note, want)
		}
		seen[want]++
	}
	if len(seen) != 2 {
		t.Errorf("60 walks at a scratch prior of 0.5 gave notes %v, want both kinds", seen)
	}
}

// The prompting baseline's policy has no scratch prior; SetFlatFamilyShare
// gives it the RL arms' flat walks at the share set. Until a task stalls it
// draws plan for plan what it draws without the share (so a bench arm with
// it replays the plain baseline's runs from the store that far); once
// stalled, that share of its scratch walks, within four standard
// deviations, are flat and wholly the prior's, and no improve walk is. With
// a scratch prior the share adds nothing.
func TestFlatFamilyShareForABaselineWithoutScratchPrior(t *testing.T) {
	sample := func(p *Policy, prompts []rl.Prompt) []rl.Action {
		t.Helper()
		acts, err := p.Sample(context.Background(), prompts)
		if err != nil {
			t.Fatal(err)
		}
		return acts
	}
	plain, tk := fixturePolicy(t, "tiny-reviews", 9)
	shared, _ := fixturePolicy(t, "tiny-reviews", 9)
	if err := shared.SetFlatFamilyShare(0.5); err != nil {
		t.Fatal(err)
	}
	parent := withChoices(t, plain.profiles[tk.Name], map[string]string{"model.family": "ridge"})
	calm := append(scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk}, 60), improvePrompts(t, tk, parent, 20)...)
	a, b := sample(plain, calm), sample(shared, calm)
	for i := range a {
		if ka, kb := actionMeta(t, a[i]).Plan.Key(), actionMeta(t, b[i]).Plan.Key(); ka != kb || actionMeta(t, b[i]).FlatFamily {
			t.Fatalf("walk %d before any stall: %s with the share, %s without", i, kb, ka)
		}
	}

	const n = 400
	stalled := scratchPrompts(rl.Prompt{Kind: episode.Scratch, Task: tk, Stalled: true}, n)
	improve := improvePrompts(t, tk, parent, 40)
	for i := range improve {
		improve[i].Stalled = true
	}
	flat := 0
	for i, act := range sample(shared, append(stalled, improve...)) {
		m := actionMeta(t, act)
		switch {
		case m.FlatFamily && i >= n:
			t.Fatalf("improve walk %d is flat", i)
		case m.FlatFamily && !m.ScratchPrior:
			t.Fatalf("flat walk %d is not marked as the prior's", i)
		case m.FlatFamily:
			flat++
			if fi, ok := familyStep(m); !ok || m.Steps[fi].Hint != 0 || m.Steps[fi].Floor != 1 {
				t.Fatalf("flat walk %d: family step %+v, want no hint at floor 1", i, m.Steps[fi])
			}
		case m.ScratchPrior:
			t.Fatalf("walk %d is the prior's but not flat", i)
		}
	}
	if sd := math.Sqrt(n * 0.25); math.Abs(float64(flat)-n*0.5) > 4*sd {
		t.Errorf("%d of %d stalled scratch walks flat, want about %d", flat, n, n/2)
	}

	withPrior, _ := fixturePolicy(t, "tiny-reviews", 9)
	if err := withPrior.SetFlatFamilyShare(1); err != nil {
		t.Fatal(err)
	}
	for i, act := range stalledScratch(t, withPrior, tk, 0.5, false, 100) {
		if actionMeta(t, act).FlatFamily {
			t.Fatalf("walk %d is flat: with a scratch prior (and SetFlatFamily off) the share should add none", i)
		}
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if err := plain.SetFlatFamilyShare(bad); err == nil {
			t.Errorf("SetFlatFamilyShare(%v) accepted", bad)
		}
	}
}
