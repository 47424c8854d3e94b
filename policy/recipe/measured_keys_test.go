package recipe

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestMeasuredKeysValidate checks every plan recorded in testdata/measured.jsonl
// is still a plan of the grammar on its suite task, so the table stays replayable.
func TestMeasuredKeysValidate(t *testing.T) {
	raw, err := os.ReadFile("testdata/measured.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*Profile{}
	for _, d := range suiteTasks() {
		p := mustProfile(t, d)
		profiles[p.Name] = p
	}
	if len(profiles) == 0 {
		t.Skip("no suite/tasks in this checkout")
	}
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var m measured
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		p, ok := profiles[m.Task]
		if !ok {
			continue
		}
		pl, err := ParseKey(m.Key)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if why := retired(p, pl); why != "" {
			t.Logf("line %d (%s): retired: %s", i+1, m.Task, why)
			continue
		}
		if err := pl.Validate(p); err != nil {
			t.Errorf("line %d (%s, %s): %v", i+1, m.Task, m.Plan, err)
		}
	}
}

// retired says why a plan measured before a grammar change can no longer be
// walked on p, "" when it should be: the profile found an id where it saw a
// categorical column (fine-food-reviews' product, one value per row and none
// shared with test), or the plan used only numeric columns of a table with
// none (it failed with no features, and the option is masked now), or
// several targets given unwrapped to a family that fits one (it failed).
func retired(p *Profile, pl *Plan) string {
	switch {
	case pl.Get("features.categorical") != "" && !p.HasCategorical():
		return "no categorical column of few levels in the profile now"
	case pl.Get("features.columns") == "numeric_only" && !columnsAllowed(p, "numeric_only"):
		return "numeric_only on a table without numeric columns is masked"
	case pl.Get("model.multioutput") == "native" && singleTarget[pl.Get("model.family")]:
		return "several targets natively to a one-target family failed, and is masked"
	}
	return ""
}
