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
		if err := pl.Validate(p); err != nil {
			t.Errorf("line %d (%s, %s): %v", i+1, m.Task, m.Plan, err)
		}
	}
}
