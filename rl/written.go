package rl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// Written is the set of programs a run has dispatched, per task, by a digest
// of the code. The learner marks a job whose program is already in it as a
// repeat: the run's data and limits do not change, so a cache answers it
// with the first one's execution (Result.Reused), and an update on it would
// count one execution twice. (An Env that runs it again, or a replay that
// draws its outcome afresh, gives a new sample, and the learner uses it.) The recipe policy redraws a plan it has written
// (recipe.Policy.draw), so it repeats only once its redraws run out; a
// language model repeats whenever it writes the same code.
type Written map[string]map[string]bool

// Add records code as dispatched for task and says whether it was new.
func (w Written) Add(task, code string) bool {
	d := digest(code)
	set := w[task]
	if set == nil {
		set = map[string]bool{}
		w[task] = set
	}
	if set[d] {
		return false
	}
	set[d] = true
	return true
}

// Len is the number of programs recorded for task.
func (w Written) Len(task string) int { return len(w[task]) }

// digest names a program by the first 128 bits of its SHA-256: collisions
// among a run's thousands of programs are out of reach, and the
// checkpoint stays small.
func digest(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:16])
}

// MarshalJSON writes each task's digests as a sorted list, so a checkpoint
// is the same bytes for the same state.
func (w Written) MarshalJSON() ([]byte, error) {
	out := make(map[string][]string, len(w))
	for t, set := range w {
		ds := make([]string, 0, len(set))
		for d := range set {
			ds = append(ds, d)
		}
		slices.Sort(ds)
		out[t] = ds
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (w *Written) UnmarshalJSON(b []byte) error {
	var in map[string][]string
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*w = make(Written, len(in))
	for t, ds := range in {
		set := make(map[string]bool, len(ds))
		for _, d := range ds {
			set[d] = true
		}
		(*w)[t] = set
	}
	return nil
}
