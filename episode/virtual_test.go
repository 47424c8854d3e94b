package episode

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// sleepy writes the perfect submission after sleeping s seconds.
func sleepy(s float64) string {
	return fmt.Sprintf("import time\ntime.sleep(%g)\n%s", s, nonceProgram)
}

// Virtual orders completions by submit time + measured duration, whatever
// order the real runs finished in; a repeat within the run completes with
// its original, and a second run on the same store runs nothing.
func TestVirtualClock(t *testing.T) {
	p := tiny(t)
	pool := realPool(t, p, 2, Settings{Timeout: time.Minute})
	run := func(ctx context.Context, job Job) (Execution, error) {
		return pool.runner.Execute(ctx, p.Task.PublicDir(), job)
	}
	store := mustStore(t, "")
	ctx := context.Background()
	for round := range 2 {
		v, err := NewVirtual(3, run, store)
		if err != nil {
			t.Fatal(err)
		}
		g := NewGraded(v, []*Prepared{p}, Reward{}, Settings{Instrument: "none"})
		for _, j := range []Job{{ID: "slow", Code: sleepy(1.5)}, {ID: "fast", Code: sleepy(0)}, {ID: "again", Code: sleepy(1.5)}} {
			j.Task = p.Task.Name
			if err := g.Submit(ctx, j); err != nil {
				t.Fatal(err)
			}
		}
		var order []string
		var res []Result
		for range 3 {
			r, err := g.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			order = append(order, r.Episode)
			res = append(res, r)
		}
		if fmt.Sprint(order) != "[fast slow again]" {
			t.Errorf("round %d: completion order %v, want fast, slow, again", round, order)
		}
		slow, again := res[1], res[2]
		if !again.Reused || again.ReusedFrom != "slow" || again.DurationS != slow.DurationS || slow.Reused {
			t.Errorf("round %d: repeat %+v of %+v", round, again, slow)
		}
		if got, want := v.Now(), time.Duration(slow.DurationS*float64(time.Second)); got != want || slow.DurationS < 1.5 {
			t.Errorf("round %d: clock %v, want the slow job's measured %v", round, got, want)
		}
		st := v.Stats()
		want := VirtualStats{Executed: 2, Reused: 1}
		if round == 1 {
			want = VirtualStats{Stored: 2, Reused: 1}
		}
		if st != want {
			t.Errorf("round %d: stats %+v, want %+v", round, st, want)
		}
	}
}
