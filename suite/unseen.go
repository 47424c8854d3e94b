package suite

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	files: []debFile{
		{"/usr/share/wordnet/data.noun", "wordnet-base"},
		{"/usr/share/wordnet/data.verb", "wordnet-base"},
	},
	defs: []taskDef{
		{"movie-ratings", loadMovieRatings},
		{"poll-adjustment", loadPollAdjustment},
		{"tate-artwork-year", loadTateYear},
		{"tweet-source", loadTweetSource},
		{"wordnet-supersense", loadWordNet},
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

// lexNames are WordNet's lexicographer files (lexnames(5WN)) by number: the
// supersense of every synset.
var lexNames = []string{
	"adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact", "noun.attribute",
	"noun.body", "noun.cognition", "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
	"noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon", "noun.plant", "noun.possession",
	"noun.process", "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
	"verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition", "verb.consumption",
	"verb.contact", "verb.creation", "verb.emotion", "verb.motion", "verb.perception", "verb.possession",
	"verb.social", "verb.stative", "verb.weather", "adj.ppl",
}

// wordNetRows is how many noun and verb synsets the task keeps (of 95,882),
// drawn at random: enough for every supersense to appear, under 2 MB.
const wordNetRows = 8000

var quoted = regexp.MustCompile(`"([^"]*)"`)

// loadWordNet makes one row per noun or verb synset of WordNet 3.0 (Debian
// package wordnet-base): its words, definition and example sentences, part
// of speech and relation count; the target is its lexicographer file.
// The synset offset is left out: the files are laid out by lexicographer
// file, so the offset would give the answer away.
func loadWordNet(raw string) (*dataset, error) {
	ds := &dataset{name: "wordnet-supersense", metric: "accuracy", idColumn: "synset_row",
		source:   fmt.Sprintf("Debian package wordnet-base (WordNet 3.0), files data.noun and data.verb; %d of the 95,882 noun and verb synsets, drawn at random", wordNetRows),
		features: []string{"pos", "words", "definition", "examples", "n_words", "n_relations"},
		target:   []string{"supersense"}}
	for _, file := range []string{"data.noun", "data.verb"} {
		f, err := os.Open(filepath.Join(raw, file))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			line := sc.Text()
			if strings.HasPrefix(line, "  ") { // the licence header
				continue
			}
			e, err := wordNetSynset(line)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s line %d: %w", file, n, err)
			}
			ds.examples = append(ds.examples, e)
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	subsample(ds, wordNetRows)
	return ds, nil
}

// wordNetSynset parses one line of a WordNet data file (wndb(5WN)):
// offset lex_filenum ss_type w_cnt [word lex_id]... p_cnt [pointer]... [frames] | gloss
func wordNetSynset(line string) (example, error) {
	head, gloss, ok := strings.Cut(line, " | ")
	if !ok {
		return example{}, fmt.Errorf("no gloss")
	}
	f := strings.Fields(head)
	if len(f) < 4 {
		return example{}, fmt.Errorf("short synset line")
	}
	lex, err := strconv.Atoi(f[1])
	if err != nil || lex < 0 || lex >= len(lexNames) {
		return example{}, fmt.Errorf("lexicographer file %q", f[1])
	}
	wcnt, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || len(f) < 5+2*int(wcnt) {
		return example{}, fmt.Errorf("word count %q", f[3])
	}
	var words []string
	for i := 0; i < int(wcnt); i++ {
		words = append(words, strings.ReplaceAll(f[4+2*i], "_", " "))
	}
	pcnt := f[4+2*int(wcnt)]
	if _, err := strconv.Atoi(pcnt); err != nil {
		return example{}, fmt.Errorf("pointer count %q", pcnt)
	}
	gloss = strings.TrimSpace(gloss)
	def, rest, _ := strings.Cut(gloss, "; \"")
	if rest != "" {
		rest = "\"" + rest
	}
	var ex []string
	for _, m := range quoted.FindAllStringSubmatch(rest, -1) {
		ex = append(ex, strings.TrimSpace(m[1]))
	}
	pos := map[string]string{"n": "noun", "v": "verb"}[f[2]]
	if pos == "" {
		return example{}, fmt.Errorf("part of speech %q", f[2])
	}
	label := lexNames[lex]
	pc, _ := strconv.Atoi(pcnt)
	return example{
		features: []string{pos, strings.Join(words, ", "), strings.TrimSpace(def), strings.Join(ex, " | "),
			strconv.Itoa(len(words)), strconv.Itoa(pc)},
		target: []string{label}, class: label,
	}, nil
}
