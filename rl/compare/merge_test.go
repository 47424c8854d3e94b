package compare

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mlerl/mlerl/episode"
)

// part is one bench process's result: arm on task "t" (lower is better)
// with the given seeds' best scores, run as base says.
func part(base Result, arm string, best map[uint64]float64) *Result {
	r := base
	a := Arm{Task: "t", Arm: arm, LowerIsBetter: true}
	for s := uint64(1); s <= 9; s++ {
		if b, ok := best[s]; ok {
			a.Runs = append(a.Runs, Run{Seed: s, Best: &b, Episodes: 10, Distinct: 10, Executed: 10})
		}
	}
	a.summarise(base.Budget)
	r.Arms = []Arm{a}
	r.Executed = 10 * len(a.Runs)
	return &r
}

// Arms run apart merge into one comparison whose summaries and gap are
// computed again from the runs; parts that were not run alike, or hold the
// same run twice, are refused with what differs.
func TestMerge(t *testing.T) {
	base := Result{Mode: "virtual", Budget: 4 * time.Minute, Workers: 2, Batch: 8, Seeds: 3,
		Learning: Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, Buffer: 1},
		Settings: episode.Settings{Timeout: 40 * time.Second, Threads: 1}}
	with := func(f func(r *Result)) Result { r := base; f(&r); return r }
	nl := part(base, NoLearn, map[uint64]float64{1: 0.7, 2: 0.6, 3: 0.65})
	rl := part(base, DurationAware, map[uint64]float64{1: 0.55, 2: 0.45, 3: 0.5})

	t.Run("arms side by side", func(t *testing.T) {
		m, err := Merge([]*Result{nl, rl}, []string{"nl.json", "rl.json"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Arms) != 2 || m.Arms[0].Arm != DurationAware || m.Arms[1].Arm != NoLearn {
			t.Fatalf("arms %+v, want duration-aware then no-learn", m.Arms)
		}
		if m.Executed != 60 || m.Seeds != 3 || m.Settings.Timeout != 40*time.Second {
			t.Errorf("executed %d, seeds %d, settings %+v", m.Executed, m.Seeds, m.Settings)
		}
		var out bytes.Buffer
		m.Print(&out)
		// gap 0.15, SE of the difference hypot(0.0289, 0.0289) = 0.0408: 3.7
		if !strings.Contains(out.String(), "+0.1500 (+3.7 SE)") || !strings.Contains(out.String(), "program limit 40s") {
			t.Errorf("table lacks the gap or the limit:\n%s", out.String())
		}
		if strings.Contains(out.String(), "seeds differ") {
			t.Errorf("same seeds reported as differing:\n%s", out.String())
		}
	})
	t.Run("seeds run later", func(t *testing.T) {
		more := part(with(func(r *Result) { r.Seeds = 5 }), NoLearn, map[uint64]float64{4: 0.9, 5: 0.8})
		m, err := Merge([]*Result{nl, rl, more}, []string{"a", "b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		a := m.Arms[1]
		if a.Arm != NoLearn || len(a.Runs) != 5 || a.Runs[3].Seed != 4 || a.Best.N != 5 {
			t.Fatalf("no-learn runs %+v", a)
		}
		if got := a.Best.Mean; got < 0.7299 || got > 0.7301 {
			t.Errorf("no-learn mean best %.4f, want 0.7300 over the 5 seeds", got)
		}
		var out bytes.Buffer
		m.Print(&out)
		if !strings.Contains(out.String(), "rl-duration-aware 1,2,3; no-learn 1,2,3,4,5") {
			t.Errorf("table does not say the seeds differ:\n%s", out.String())
		}
	})
	t.Run("binaries", func(t *testing.T) {
		a, b, c := *nl, *rl, *part(base, DurationAware, map[uint64]float64{5: 0.5})
		a.Binary, b.Binary, c.Binary = "99c71f3", "ec69588", "99c71f3"
		m, err := Merge([]*Result{&a, &b, &c}, []string{"a", "b", "c"})
		if err != nil || m.Binary != "99c71f3, ec69588" {
			t.Fatalf("merge: %v, binary %q, want each differing one once", err, m.Binary)
		}
	})
	t.Run("wide grid", func(t *testing.T) {
		a := part(with(func(r *Result) { r.Grid = "wide" }), NoLearn, map[uint64]float64{1: 0.7})
		b := part(with(func(r *Result) { r.Grid = "wide" }), DurationAware, map[uint64]float64{1: 0.8})
		m, err := Merge([]*Result{a, b}, []string{"a", "b"})
		if err != nil || m.Grid != "wide" {
			t.Fatalf("merge: %v, grid %q", err, m.Grid)
		}
		var out bytes.Buffer
		m.Print(&out)
		if !strings.Contains(out.String(), ", wide grid") {
			t.Errorf("table does not name the grid:\n%s", out.String())
		}
	})
	t.Run("results without recorded settings", func(t *testing.T) {
		old := part(with(func(r *Result) { r.Settings = episode.Settings{} }), NoLearn, map[uint64]float64{1: 0.7})
		m, err := Merge([]*Result{old, rl}, []string{"old", "new"})
		if err != nil || m.Settings.Timeout != 40*time.Second {
			t.Fatalf("merge with an old result: %v, settings %+v", err, m.Settings)
		}
	})
	t.Run("settings conflict names the part that recorded them", func(t *testing.T) {
		old := part(with(func(r *Result) { r.Settings = episode.Settings{} }), NoLearn, map[uint64]float64{1: 0.7})
		other := part(with(func(r *Result) { r.Settings.Timeout = time.Minute }), NoLearn, map[uint64]float64{2: 0.7})
		_, err := Merge([]*Result{old, rl, other}, []string{"old", "new", "other"})
		if err == nil || !strings.Contains(err.Error(), "new and other were not run alike: program settings (limit 40s") {
			t.Errorf("merge: %v, want new's and other's limits named", err)
		}
	})
	t.Run("no-learn's RL settings do not bind", func(t *testing.T) {
		other := part(with(func(r *Result) { r.Buffer, r.TimeCharge = 8, 0 }), NoLearn, map[uint64]float64{1: 0.7})
		m, err := Merge([]*Result{other, rl}, []string{"nl", "rl"})
		if err != nil || m.Buffer != 1 || m.TimeCharge != 0.25 {
			t.Fatalf("merge: %v; buffer %d, charge %g, want the RL part's 1 and 0.25", err, m.Buffer, m.TimeCharge)
		}
	})
	for _, tc := range []struct {
		name  string
		parts []*Result
		want  string
	}{
		{"budget", []*Result{nl, part(with(func(r *Result) { r.Budget = time.Hour }), DurationAware, map[uint64]float64{1: 0.5})}, "budget (4m0s, 1h0m0s)"},
		{"workers", []*Result{nl, part(with(func(r *Result) { r.Workers = 4 }), DurationAware, map[uint64]float64{1: 0.5})}, "workers (2, 4)"},
		{"batch", []*Result{nl, part(with(func(r *Result) { r.Batch = 16 }), DurationAware, map[uint64]float64{1: 0.5})}, "batch (8, 16)"},
		{"clock", []*Result{nl, part(with(func(r *Result) { r.Mode = "real" }), DurationAware, map[uint64]float64{1: 0.5})}, "clock"},
		{"program limit", []*Result{nl, part(with(func(r *Result) { r.Settings.Timeout = time.Minute }), DurationAware, map[uint64]float64{1: 0.5})}, "limit 40s"},
		{"grid", []*Result{nl, part(with(func(r *Result) { r.Grid = "wide" }), DurationAware, map[uint64]float64{1: 0.5})}, `grid ("standard", "wide")`},
		{"lines", []*Result{nl, part(with(func(r *Result) { r.Lines = 2 }), DurationAware, map[uint64]float64{1: 0.5})}, "lines (0, 2)"},
		{"lines after", []*Result{nl, part(with(func(r *Result) { r.LinesAfter = 5 * time.Minute }), DurationAware, map[uint64]float64{1: 0.5})}, "lines after (0s, 5m0s)"},
		{"mix", []*Result{nl, part(with(func(r *Result) { r.Mix = "adaptive" }), DurationAware, map[uint64]float64{1: 0.5})}, "mix (half, adaptive)"},
		{"threads", []*Result{nl, part(with(func(r *Result) { r.Settings.Threads = 2 }), DurationAware, map[uint64]float64{1: 0.5})}, "threads 1"},
		{"RL settings", []*Result{rl, part(with(func(r *Result) { r.Buffer = 8 }), DurationAware, map[uint64]float64{4: 0.5})}, "different buffer (1, 8)"},
		{"edit floor", []*Result{rl, part(with(func(r *Result) { r.EditFloor = 0.5 }), DurationAware, map[uint64]float64{4: 0.5})}, "different edit floor (0, 0.5)"},
		{"scratch prior", []*Result{rl, part(with(func(r *Result) { r.ScratchPrior = 0.25 }), DurationAware, map[uint64]float64{4: 0.5})}, "different scratch prior (0, 0.25)"},
		{"widen", []*Result{rl, part(with(func(r *Result) { r.WidenAfter = 64 }), DurationAware, map[uint64]float64{4: 0.5})}, "different widen after (0, 64)"},
		{"prior on repeat", []*Result{rl, part(with(func(r *Result) { r.PriorOnRepeat = true }), DurationAware, map[uint64]float64{4: 0.5})}, "different prior on repeat (false, true)"},
		{"screen", []*Result{rl, part(with(func(r *Result) { r.Screen = 8 }), DurationAware, map[uint64]float64{4: 0.5})}, "different screen (0, 8)"},
		{"screen per second", []*Result{part(with(func(r *Result) { r.Screen = 8 }), DurationAware, map[uint64]float64{4: 0.5}),
			part(with(func(r *Result) { r.Screen, r.ScreenPerSecond = 8, true }), DurationAware, map[uint64]float64{5: 0.5})}, "different screen per second (false, true)"},
		{"slower only", []*Result{rl, part(with(func(r *Result) { r.ChargeSlowerOnly = true }), DurationAware, map[uint64]float64{4: 0.5})}, "different time charge on slower programs only (false, true)"},
		{"same run twice", []*Result{nl, part(base, NoLearn, map[uint64]float64{3: 0.6})}, "t no-learn seed 3 is in both p0 and p1"},
		{"direction", []*Result{nl, func() *Result {
			r := part(base, DurationAware, map[uint64]float64{1: 0.5})
			r.Arms[0].LowerIsBetter = false
			return r
		}()}, "higher is better"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{"p0", "p1"}
			if _, err := Merge(tc.parts, names); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("merge: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := Merge(nil, nil); err == nil {
		t.Error("merge of nothing: no error")
	}
}

// Parts whose shared first programs ran at different speeds are merged with
// a caution naming the ratio; the same speed, programs in one part only, or
// results from before first programs were kept, give none.
func TestMergeCautionsOnSpeed(t *testing.T) {
	base := Result{Mode: "virtual", Budget: 4 * time.Minute, Workers: 2, Batch: 8, Seeds: 2,
		Learning: Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, Buffer: 1}}
	withFirst := func(r *Result, first map[uint64][]Timed) *Result {
		for i := range r.Arms[0].Runs {
			r.Arms[0].Runs[i].First = first[r.Arms[0].Runs[i].Seed]
		}
		return r
	}
	// Seeds 1 and 2 each drew two programs first: a, b and c, d.
	first := func(scale float64) map[uint64][]Timed {
		return map[uint64][]Timed{
			1: {{"a", 10 * scale}, {"b", 4 * scale}},
			2: {{"c", 20 * scale}, {"d", 8 * scale}},
		}
	}
	nl := func() *Result { return part(base, NoLearn, map[uint64]float64{1: 0.7, 2: 0.6}) }
	rl := func() *Result { return part(base, DurationAware, map[uint64]float64{1: 0.55, 2: 0.45}) }
	for _, c := range []struct {
		name     string
		nl, rl   *Result
		cautions int
		want     string
	}{
		{"same speed", withFirst(nl(), first(1)), withFirst(rl(), first(1.1)), 0, ""},
		{"slower machine", withFirst(nl(), first(1.7)), withFirst(rl(), first(1)), 1, "took 0.59× as long in rl.json (median of 4)"},
		{"faster machine", withFirst(nl(), first(1)), withFirst(rl(), first(0.5)), 1, "took 0.50× as long in rl.json (median of 4)"},
		{"no program in common", withFirst(nl(), first(1)), withFirst(rl(), map[uint64][]Timed{1: {{"e", 30}}}), 0, ""},
		{"results from before", nl(), withFirst(rl(), first(3)), 0, ""},
		// A first part with other programs (another arm's, say) is no
		// reference: the two that share programs are compared.
		{"reference shares programs", withFirst(nl(), first(1)), withFirst(rl(), first(2)), 1, "took 2.00× as long in rl.json (median of 4)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			other := part(base, Random, map[uint64]float64{1: 0.9})
			other.Arms[0].Runs[0].First = []Timed{{"z", 5}}
			m, err := Merge([]*Result{other, c.nl, c.rl}, []string{"random.json", "nl.json", "rl.json"})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Cautions) != c.cautions {
				t.Fatalf("cautions %q, want %d", m.Cautions, c.cautions)
			}
			var out bytes.Buffer
			m.Print(&out)
			if c.want != "" && (!strings.Contains(m.Cautions[0], c.want) || !strings.Contains(out.String(), "CAUTION: t: ")) {
				t.Errorf("caution %q (table:\n%s), want it to say %q", m.Cautions, out.String(), c.want)
			}
		})
	}
}

// One seed is named in the singular in the table's header.
func TestPrintOneSeed(t *testing.T) {
	base := Result{Mode: "virtual", Budget: 4 * time.Minute, Workers: 2, Batch: 8, Seeds: 1, Learning: Learning{Utility: "rank", Buffer: 1}}
	var out bytes.Buffer
	part(base, NoLearn, map[uint64]float64{1: 0.7}).Print(&out)
	if !strings.Contains(out.String(), ", 1 seed;") {
		t.Errorf("header of a one-seed result:\n%s", out.String())
	}
}
