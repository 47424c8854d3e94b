package rl

import "context"

// Frozen is pol without learning: it samples as pol does and its updates
// change nothing. With a buffer of one (improve prompts always improve the
// best so far) it is the prompting baseline the paper compares against
// (AIDE-like), train's --no-learn.
func Frozen(pol Policy) Policy { return frozen{pol} }

type frozen struct{ Policy }

func (f frozen) Update(ctx context.Context, _ []Sample) (UpdateStats, error) {
	return UpdateStats{NewVersion: f.Version()}, ctx.Err()
}
