package suite

import (
	"fmt"
	"slices"
)

// unseenSet is the "unseen" task set: tasks held out from tuning the built-in
// policy's grammar, of kinds the suite lacks (several free-text columns
// beside a high-cardinality categorical, id-like columns, a many-class target,
// date columns). `mlerl suite build --set unseen --out bench/unseen` writes
// them; they are committed there, not embedded in the binary.
var unseenSet = &taskSet{
	name:   "unseen",
	script: "export-unseen.R",
	rPackages: []rPackage{
		{"modeldata", "r-cran-modeldata"},
		{"dslabs", "r-cran-dslabs"},
	},
	defs: []taskDef{
		{"movie-ratings", loadMovieRatings},
		{"poll-adjustment", loadPollAdjustment},
		{"tate-artwork-year", loadTateYear},
		{"tweet-source", loadTweetSource},
	},
}

func dslabs(set string) string {
	return "Debian package r-cran-dslabs, data set " + set
}

// subsample keeps n of the examples, drawn without replacement from the
// task's own random stream (separate from the split's), in their original
// order.
func subsample(ds *dataset, n int) {
	if n >= len(ds.examples) {
		return
	}
	r := newRNG(ds.name + "/subsample")
	keep := r.perm(len(ds.examples))[:n]
	slices.Sort(keep)
	out := make([]example, 0, n)
	for _, i := range keep {
		out = append(out, ds.examples[i])
	}
	ds.examples = out
}

// movieRatingsRows bounds the task's size (the package has 100,004 ratings;
// the task folder stays under 2 MB).
const movieRatingsRows = 20000

func loadMovieRatings(raw string) (*dataset, error) {
	ds := &dataset{name: "movie-ratings", metric: "rmse", idColumn: "rating_id",
		source: dslabs("movielens") + " (MovieLens ratings; 20,000 of 100,004 drawn at random)", target: []string{"rating"}}
	if _, err := simpleTable(raw, "movielens.csv", ds, ds.target, numeric); err != nil {
		return nil, err
	}
	subsample(ds, movieRatingsRows)
	return ds, nil
}

// loadPollAdjustment predicts FiveThirtyEight's adjusted Clinton share from
// the raw poll. The other adjusted shares come from the same adjustment, so
// they are dropped, not offered as features.
func loadPollAdjustment(raw string) (*dataset, error) {
	ds := &dataset{name: "poll-adjustment", metric: "rmse", idColumn: "poll_id",
		source: dslabs("polls_us_election_2016"), target: []string{"adjpoll_clinton"}}
	drop := []string{"adjpoll_clinton", "adjpoll_trump", "adjpoll_johnson", "adjpoll_mcmullin"}
	return simpleTable(raw, "polls_us_election_2016.csv", ds, drop, func(v []string) ([]string, string, error) {
		return numeric(v[:1])
	})
}

func loadTateYear(raw string) (*dataset, error) {
	ds := &dataset{name: "tate-artwork-year", metric: "mae", idColumn: "entry_id",
		source: modeldata("tate_text"), target: []string{"year"}}
	if _, err := simpleTable(raw, "tate_text.csv", ds, ds.target, numeric); err != nil {
		return nil, err
	}
	// The package's own artwork id is kept as a feature, renamed so it cannot
	// be mistaken for the submission id.
	if i := slices.Index(ds.features, "id"); i >= 0 {
		ds.features[i] = "tate_id"
	}
	return ds, nil
}

// Tweet sources with fewer than tweetMinPerSource tweets are dropped; the
// common ones are capped at tweetMaxPerSource, so the task is many-class
// rather than three-class and stays under 2 MB.
const (
	tweetMinPerSource = 20
	tweetMaxPerSource = 1200
)

func loadTweetSource(raw string) (*dataset, error) {
	ds := &dataset{name: "tweet-source", metric: "log_loss", idColumn: "tweet_row",
		source: dslabs("trump_tweets") + fmt.Sprintf(" (sources with at least %d tweets; at most %d tweets per source, drawn at random)",
			tweetMinPerSource, tweetMaxPerSource),
		target: []string{"source"}}
	if _, err := classTable(raw, "trump_tweets.csv", ds, "source"); err != nil {
		return nil, err
	}
	byClass := map[string][]int{}
	for i, e := range ds.examples {
		byClass[e.class] = append(byClass[e.class], i)
	}
	r := newRNG(ds.name + "/subsample")
	var keep []int
	ds.classes = ds.classes[:0]
	for _, c := range sortedKeys(byClass) {
		idx := byClass[c]
		if len(idx) < tweetMinPerSource {
			continue
		}
		ds.classes = append(ds.classes, c)
		if len(idx) > tweetMaxPerSource {
			p := r.perm(len(idx))[:tweetMaxPerSource]
			sub := make([]int, len(p))
			for k, j := range p {
				sub[k] = idx[j]
			}
			idx = sub
		}
		keep = append(keep, idx...)
	}
	slices.Sort(keep)
	out := make([]example, 0, len(keep))
	for _, i := range keep {
		out = append(out, ds.examples[i])
	}
	ds.examples = out
	if len(ds.classes) < 10 {
		return nil, fmt.Errorf("only %d sources have %d or more tweets", len(ds.classes), tweetMinPerSource)
	}
	return ds, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
