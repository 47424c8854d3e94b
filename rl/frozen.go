package rl

import (
	"context"
	"encoding/json"
)

// Frozen is pol without learning: it samples as pol does and its updates
// change nothing. With a buffer of one (improve prompts always improve the
// best so far) it is the prompting baseline the paper compares against
// (AIDE-like), train's --no-learn.
func Frozen(pol Policy) Policy { return frozen{pol} }

type frozen struct{ Policy }

func (f frozen) Update(ctx context.Context, _ []Sample) (UpdateStats, error) {
	return UpdateStats{NewVersion: f.Version()}, ctx.Err()
}

// EpisodeNote is pol's note when pol is a Noter (nil otherwise), so the
// baseline's episodes say how they were drawn as the learning arms' do.
func (f frozen) EpisodeNote(a Action) json.RawMessage {
	if n, ok := f.Policy.(Noter); ok {
		return n.EpisodeNote(a)
	}
	return nil
}
