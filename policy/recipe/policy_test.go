package recipe

import (
	"context"
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
