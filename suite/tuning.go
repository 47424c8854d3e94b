package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tuningSet is the "tuning" task set: tasks the built-in policy's grammar and
// cost model may be fitted on besides the suite, for kinds of table the suite
// lacks but the held-out set has (bench/unseen must stay out of every fit).
// `mlerl suite build --set tuning --out bench/tuning` writes them; they are
// committed there, not embedded in the binary, so the default suite and its
// targets stay the ten tasks.
var tuningSet = &taskSet{
	name:  "tuning",
	files: fortuneFiles(),
	defs: []taskDef{
		{"fortune-category", loadFortunes},
	},
}

// fortuneDir is where Debian's fortunes package installs its cookie files.
const fortuneDir = "/usr/share/games/fortunes"

// fortuneCategories are the cookie files of Debian's fortunes package
// (1:1.99.1-7.3) with at least fortuneMinPerCategory fortunes; the task's
// classes. Listed rather than globbed so a new package version cannot
// change the classes unseen.
var fortuneCategories = []string{
	"art", "computers", "cookie", "definitions", "disclaimer", "drugs", "education", "ethnic", "food", "fortunes",
	"humorists", "kids", "knghtbrd", "law", "linux", "linuxcookie", "literature", "love", "men-women",
	"miscellaneous", "people", "perl", "platitudes", "politics", "riddles", "science", "songs-poems", "sports",
	"startrek", "wisdom", "work", "zippy",
}

// fortuneMinPerCategory: a category with fewer fortunes would leave the test
// split a handful of rows of it.
const fortuneMinPerCategory = 100

// fortuneRows is how many fortunes the task keeps (of about 14,800), drawn
// at random: as many rows as wordnet-supersense, so the two many-class text
// tasks are of one size, and the folder stays under 2 MB.
const fortuneRows = 8000

func fortuneFiles() []debFile {
	out := make([]debFile, len(fortuneCategories))
	for i, c := range fortuneCategories {
		out[i] = debFile{filepath.Join(fortuneDir, c), "fortunes"}
	}
	return out
}

// loadFortunes makes one row per fortune cookie of Debian's fortunes
// package: its text, its attribution (a last line "-- Author", else empty)
// and its line count; the target is the file (category) it comes from.
func loadFortunes(raw string) (*dataset, error) {
	ds := &dataset{name: "fortune-category", metric: "accuracy", idColumn: "fortune_id",
		source: fmt.Sprintf("Debian package fortunes (fortune-mod's cookie files, /usr/share/games/fortunes); %d of the fortunes of the %d files with at least %d, drawn at random",
			fortuneRows, len(fortuneCategories), fortuneMinPerCategory),
		features: []string{"text", "attribution", "n_lines"},
		target:   []string{"category"}}
	for _, c := range fortuneCategories {
		b, err := os.ReadFile(filepath.Join(raw, c))
		if err != nil {
			return nil, err
		}
		items := splitFortunes(string(b))
		if len(items) < fortuneMinPerCategory {
			return nil, fmt.Errorf("%s: %d fortunes, want at least %d", c, len(items), fortuneMinPerCategory)
		}
		for _, it := range items {
			ds.examples = append(ds.examples, example{
				features: []string{it.text, it.attribution, strconv.Itoa(it.lines)},
				target:   []string{c}, class: c,
			})
		}
		ds.classes = append(ds.classes, c)
	}
	subsample(ds, fortuneRows)
	return ds, nil
}

type fortune struct {
	text, attribution string
	lines             int
}

// splitFortunes parses a strfile(1) source: fortunes separated by lines of
// a single "%". Whitespace runs (the cookies' line breaks and indentation)
// become one space; empty fortunes are skipped.
func splitFortunes(s string) []fortune {
	var out []fortune
	for _, block := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n%\n") {
		block = strings.TrimSuffix(strings.TrimPrefix(block, "%\n"), "\n%")
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		f := fortune{lines: len(lines)}
		if last := strings.TrimSpace(lines[len(lines)-1]); len(lines) > 1 && strings.HasPrefix(last, "--") {
			f.attribution = strings.Join(strings.Fields(strings.TrimPrefix(last, "--")), " ")
			lines = lines[:len(lines)-1]
		}
		f.text = strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
		if f.text != "" {
			out = append(out, f)
		}
	}
	return out
}
