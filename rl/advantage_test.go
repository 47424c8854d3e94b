package rl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/mlerl/mlerl/episode"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestDurationWeights(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []float64
		want []float64
	}{
		{"two", []float64{1, 3}, []float64{0.5, 1.5}},
		{"equal", []float64{2, 2, 2}, []float64{1, 1, 1}},
		{"fast and slow", []float64{1, 1, 1, 97}, []float64{0.04, 0.04, 0.04, 3.88}},
		{"all zero", []float64{0, 0}, []float64{1, 1}},
		{"negative clamps to zero", []float64{-1, 2}, []float64{0, 2}},
		{"empty", nil, []float64{}},
	} {
		got := DurationWeights(c.in)
		if len(got) != len(c.want) {
			t.Fatalf("%s: len %d, want %d", c.name, len(got), len(c.want))
		}
		sum := 0.0
		for i := range got {
			if !near(got[i], c.want[i]) {
				t.Errorf("%s: w[%d] = %v, want %v", c.name, i, got[i], c.want[i])
			}
			sum += got[i]
		}
		// The mean weight is 1, so the step size is unchanged (SPEC.md §1).
		if len(got) > 0 && c.name != "negative clamps to zero" && !near(sum/float64(len(got)), 1) {
			t.Errorf("%s: mean weight %v, want 1", c.name, sum/float64(len(got)))
		}
	}
}

func TestScaleByStdKeepsRatiosAndSigns(t *testing.T) {
	adv := []float64{2, -1, 1, 0}
	ScaleByStd(adv)
	// mean 0.5, variance (2.25+2.25+0.25+0.25)/4 = 1.25
	s := math.Sqrt(1.25)
	for i, want := range []float64{2 / s, -1 / s, 1 / s, 0} {
		if !near(adv[i], want) {
			t.Errorf("adv[%d] = %v, want %v", i, adv[i], want)
		}
	}
	same := []float64{3, 3}
	ScaleByStd(same)
	if same[0] != 3 || same[1] != 3 {
		t.Errorf("zero spread changed: %v", same)
	}
}

func TestBaseline(t *testing.T) {
	b := NewBaseline(0.5)
	if _, ok := b.Value("t", episode.Scratch); ok {
		t.Fatal("unseen state has a value")
	}
	// 1/n averaging until 1/n < alpha: first sets, second averages (step 1/2),
	// third uses alpha = 0.5.
	for _, c := range []struct{ r, want float64 }{{4, 4}, {2, 3}, {5, 4}} {
		b.Observe("t", episode.Scratch, c.r)
		if v, _ := b.Value("t", episode.Scratch); !near(v, c.want) {
			t.Errorf("after %v: V = %v, want %v", c.r, v, c.want)
		}
	}
	if _, ok := b.Value("t", episode.Improve); ok {
		t.Error("improve shares scratch's value")
	}
	if NewBaseline(0).Alpha != 0.1 || NewBaseline(2).Alpha != 0.1 {
		t.Error("bad alpha not defaulted")
	}
}

func sol(task, code string, valid bool, reward float64) *Solution {
	return &Solution{Action: Action{Code: code}, Result: episode.Result{Task: task, Valid: valid, Reward: reward}}
}

func TestBuffer(t *testing.T) {
	b := NewBuffer(2)
	if b.Add(sol("t", "bad", false, 5)) {
		t.Error("failed program kept")
	}
	for _, s := range []*Solution{sol("t", "a", true, 0.5), sol("t", "b", true, 0.7)} {
		if !b.Add(s) {
			t.Errorf("%s not kept", s.Action.Code)
		}
	}
	if b.Add(sol("t", "c", true, 0.1)) {
		t.Error("worse than the K kept, but kept")
	}
	if !b.Add(sol("t", "c", true, 0.9)) || len(b.ByTask["t"]) != 2 || b.ByTask["t"][0].Action.Code != "c" || b.ByTask["t"][1].Action.Code != "b" {
		t.Errorf("top-2 wrong: %+v", b.ByTask["t"])
	}
	if b.Add(sol("t", "c", true, 0.8)) {
		t.Error("same program, worse result, kept twice")
	}
	if b.Pick("other", 0, rand.New(rand.NewPCG(1, 2))) != nil {
		t.Error("picked from an empty task")
	}
}

// Pick takes the best kept solution half the time and a uniform one
// otherwise: with K=4 the best is drawn 1/2 + 1/8 of the time, each other
// 1/8, and none is starved.
func TestBufferPickFavoursBest(t *testing.T) {
	b := NewBuffer(4)
	for i, r := range []float64{0.2, 0.9, 0.5, 0.7} {
		b.Add(sol("t", fmt.Sprint("code", i), true, r))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 40000
	count := map[float64]int{}
	for range n {
		count[b.Pick("t", 0, rng).Result.Reward]++
	}
	for r, want := range map[float64]float64{0.9: 0.625, 0.7: 0.125, 0.5: 0.125, 0.2: 0.125} {
		// 5 standard deviations of a binomial share at n = 40000 is under 0.013.
		if got := float64(count[r]) / n; math.Abs(got-want) > 0.013 {
			t.Errorf("reward %v picked %.3f of the time, want %.3f", r, got, want)
		}
	}
}
