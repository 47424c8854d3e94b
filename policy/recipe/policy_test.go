package recipe

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/policy/choicenet"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// A net whose shape does not fit the grammar (as a checkpoint of another
// grammar would load) is refused with an error naming the decision, not
// turned into a plan.
func TestSampleRefusesMismatchedNet(t *testing.T) {
	tk, err := task.Load(filepath.Join("testdata", "tiny-churn"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy([]*task.Task{tk}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Sample(context.Background(), []rl.Prompt{{Kind: episode.Scratch, Task: tk}}); err != nil {
		t.Fatalf("the policy's own net: %v", err)
	}
	narrow, err := choicenet.New(choicenet.DefaultConfig(NumFeatures, len(DecisionNames), 2))
	if err != nil {
		t.Fatal(err)
	}
	p.net = narrow
	_, err = p.Sample(context.Background(), []rl.Prompt{{Kind: episode.Scratch, Task: tk}})
	if err == nil || !strings.Contains(err.Error(), "the network cannot decide") {
		t.Fatalf("err %v, want the network's refusal", err)
	}
}

// A fresh policy leans to Default's choices (the hint prior) without being
// stuck on them.
func TestFreshPolicyLeansToDefault(t *testing.T) {
	tk, err := task.Load(filepath.Join("testdata", "tiny-churn"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy([]*task.Task{tk}, 3)
	if err != nil {
		t.Fatal(err)
	}
	def := Default(p.profiles[tk.Name])
	prompts := make([]rl.Prompt, 300)
	for i := range prompts {
		prompts[i] = rl.Prompt{Kind: episode.Scratch, Task: tk}
	}
	acts, err := p.Sample(context.Background(), prompts)
	if err != nil {
		t.Fatal(err)
	}
	same := map[string]int{}
	whole := 0
	for _, a := range acts {
		var m meta
		if err := json.Unmarshal(a.Meta, &m); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"read.loader", "model.family"} {
			if m.Plan.Get(d) == def.Get(d) {
				same[d]++
			}
		}
		if m.Plan.Key() == def.Key() {
			whole++
		}
		for _, s := range m.Steps {
			if s.Hint == 0 {
				t.Fatalf("scratch step without a hint: %+v", s)
			}
		}
	}
	t.Logf("of %d plans: default loader %d, default model %d, the whole default plan %d", len(acts), same["read.loader"], same["model.family"], whole)
	// Uniform sampling would give about 1/4 for the loader and 1/12 for the
	// family; the prior makes Default's value the most likely one.
	for d, least := range map[string]int{"read.loader": len(acts) / 2, "model.family": len(acts) / 4} {
		if n := same[d]; n < least || n == len(acts) {
			t.Errorf("%s: %d of %d plans take Default's value; want at least %d, not all", d, n, len(acts), least)
		}
	}
}
