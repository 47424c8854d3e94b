package choicenet

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
)

// saveMagic opens every saved net, so Load can refuse foreign files early and
// the format can change under a new magic.
const saveMagic = "mlerl-choicenet-v1\n"

// snapshot is the saved state. gob writes float64 bits exactly, so a round
// trip restores weights and Adam state bit for bit.
type snapshot struct {
	Config  Config
	Version int
	AdamT   int
	Params  [][]float64
	AdamM   [][]float64
	AdamV   [][]float64
}

// Save writes the configuration, weights, Adam state and version.
func (n *Net) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if _, err := io.WriteString(bw, saveMagic); err != nil {
		return fmt.Errorf("choicenet: save: %w", err)
	}
	s := snapshot{Config: n.cfg, Version: n.version, AdamT: n.adamT}
	for i := range numParams {
		s.Params = append(s.Params, n.params[i])
		s.AdamM = append(s.AdamM, n.adamM[i])
		s.AdamV = append(s.AdamV, n.adamV[i])
	}
	if err := gob.NewEncoder(bw).Encode(&s); err != nil {
		return fmt.Errorf("choicenet: save: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("choicenet: save: %w", err)
	}
	return nil
}

// Load replaces the whole net — configuration included — with a saved one.
// It works on a zero Net too. On error the net is unchanged.
func (n *Net) Load(r io.Reader) error {
	br := bufio.NewReader(r)
	magic := make([]byte, len(saveMagic))
	if _, err := io.ReadFull(br, magic); err != nil {
		return fmt.Errorf("choicenet: load: reading header: %w", err)
	}
	if string(magic) != saveMagic {
		return fmt.Errorf("choicenet: load: not a saved choicenet (header %q)", magic)
	}
	var s snapshot
	if err := gob.NewDecoder(br).Decode(&s); err != nil {
		return fmt.Errorf("choicenet: load: %w", err)
	}
	if err := s.Config.validate(); err != nil {
		return fmt.Errorf("choicenet: load: saved config: %w", err)
	}
	if s.Version < 0 || s.AdamT < 0 {
		return fmt.Errorf("choicenet: load: negative version %d or Adam step %d", s.Version, s.AdamT)
	}
	for name, ts := range map[string][][]float64{"params": s.Params, "adam m": s.AdamM, "adam v": s.AdamV} {
		if len(ts) != numParams {
			return fmt.Errorf("choicenet: load: %d %s tensors, want %d", len(ts), name, numParams)
		}
		for i, t := range ts {
			if want := prod(s.Config.paramShape(i)); len(t) != want {
				return fmt.Errorf("choicenet: load: %s %s has %d values, want %d", name, paramNames[i], len(t), want)
			}
			if !allFinite(t) {
				return fmt.Errorf("choicenet: load: %s %s has non-finite values", name, paramNames[i])
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cfg, n.version, n.adamT = s.Config, s.Version, s.AdamT
	for i := range numParams {
		n.params[i], n.adamM[i], n.adamV[i] = s.Params[i], s.AdamM[i], s.AdamV[i]
	}
	n.trainer = nil // the graph bakes in Clip and the coefficients
	return nil
}
