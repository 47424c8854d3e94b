package choicenet

import (
	"bytes"
	"encoding/gob"
	"math/rand/v2"
	"strings"
	"testing"
)

// trainedNet returns a net after a few updates (so Adam state and version are
// non-trivial) and a batch for its next update.
func trainedNet(t *testing.T) (*Net, []Example) {
	n := mustNew(t, DefaultConfig(3, 4, 5))
	rng := rand.New(rand.NewPCG(17, 18))
	batchFor := func() []Example {
		var batch []Example
		for i := range 16 {
			ctx, _ := randomPlan(n, rng, 0, i%2 == 0)
			var steps []Step
			var lps []float64
			for d := range 4 {
				k := 2 + d%4
				c, lp := n.Choose(ctx, steps, d, k, 0.7, rng)
				steps = append(steps, Step{Decision: d, NumOptions: k, Chosen: c})
				lps = append(lps, lp)
			}
			batch = append(batch, Example{Ctx: ctx, Steps: steps, OldLogProbs: lps, Advantage: rng.NormFloat64(), Temperature: 0.7})
		}
		return batch
	}
	for range 3 {
		if _, err := n.Update(t.Context(), batchFor()); err != nil {
			t.Fatal(err)
		}
	}
	return n, batchFor()
}

func TestSaveLoadRoundTrip(t *testing.T) {
	n, next := trainedNet(t)
	var buf bytes.Buffer
	if err := n.Save(&buf); err != nil {
		t.Fatal(err)
	}
	var m Net // Load works on a zero Net: the config comes from the file.
	if err := m.Load(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if m.Version() != n.Version() || m.Config() != n.Config() || m.adamT != n.adamT {
		t.Fatalf("restored version %d config %+v adamT %d; want %d %+v %d", m.Version(), m.Config(), m.adamT, n.Version(), n.Config(), n.adamT)
	}
	for i, ex := range next {
		a, b := n.LogProbs(ex.Ctx, ex.Steps, 0.7), m.LogProbs(ex.Ctx, ex.Steps, 0.7)
		for s := range a {
			if a[s] != b[s] {
				t.Fatalf("example %d step %d: log-prob %v after round trip, %v before", i, s, b[s], a[s])
			}
		}
	}
	sn, err := n.Update(t.Context(), next)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := m.Update(t.Context(), next)
	if err != nil {
		t.Fatal(err)
	}
	if sn != sm {
		t.Errorf("next update stats differ: original %+v, restored %+v", sn, sm)
	}
	for i := range numParams {
		for j := range n.params[i] {
			if n.params[i][j] != m.params[i][j] || n.adamM[i][j] != m.adamM[i][j] || n.adamV[i][j] != m.adamV[i][j] {
				t.Fatalf("%s[%d] differs after the next update", paramNames[i], j)
			}
		}
	}
}

func TestLoadRejectsBadInput(t *testing.T) {
	n, _ := trainedNet(t)
	var buf bytes.Buffer
	if err := n.Save(&buf); err != nil {
		t.Fatal(err)
	}
	saved := buf.Bytes()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "header"},
		{"foreign file", []byte("PK\x03\x04 this is a zip file, not a net"), "not a saved choicenet"},
		{"truncated", saved[:len(saved)/2], "load"},
		{"header only", []byte(saveMagic), "load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustNew(t, tinyConfig())
			before := m.LogProbs(Context{Features: []float64{1, 2}}, []Step{{Decision: 0, NumOptions: 3, Chosen: 1}}, 1)[0]
			err := m.Load(bytes.NewReader(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want one mentioning %q", err, tt.want)
			}
			if after := m.LogProbs(Context{Features: []float64{1, 2}}, []Step{{Decision: 0, NumOptions: 3, Chosen: 1}}, 1)[0]; after != before || m.Config() != mustNew(t, tinyConfig()).Config() {
				t.Errorf("failed Load changed the net")
			}
		})
	}
}

func TestLoadRejectsWrongShapes(t *testing.T) {
	n := mustNew(t, tinyConfig())
	tests := []struct {
		name   string
		mutate func(*snapshot)
		want   string
	}{
		{"short weight tensor", func(s *snapshot) { s.Params[pW2] = s.Params[pW2][:4] }, "w2 has 4 values"},
		{"missing Adam tensors", func(s *snapshot) { s.AdamV = s.AdamV[:3] }, "3 adam v tensors"},
		{"invalid config", func(s *snapshot) { s.Config.MaxOptions = 0 }, "MaxOptions"},
		{"negative version", func(s *snapshot) { s.Version = -1 }, "negative version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot{Config: n.cfg, Version: 2, AdamT: 5}
			for i := range numParams {
				s.Params = append(s.Params, append([]float64(nil), n.params[i]...))
				s.AdamM = append(s.AdamM, append([]float64(nil), n.adamM[i]...))
				s.AdamV = append(s.AdamV, append([]float64(nil), n.adamV[i]...))
			}
			tt.mutate(&s)
			var buf bytes.Buffer
			buf.WriteString(saveMagic)
			if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
				t.Fatal(err)
			}
			m := mustNew(t, tinyConfig())
			if err := m.Load(&buf); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load error = %v, want one mentioning %q", err, tt.want)
			}
			if m.Version() != 0 {
				t.Errorf("failed Load changed the version to %d", m.Version())
			}
		})
	}
}
