package suite

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
)

// testFraction is the share of rows held out as the graded test set.
const testFraction = 0.2

// seed is mixed with each task's name, so every task gets its own fixed
// random stream and adding a task never changes another task's split.
const seed = 20250901

// Where a row goes. Most rows are placed by the seeded split; fine-food-reviews
// keeps the split its source ships.
type placement int

const (
	placeAny placement = iota
	placeTrain
	placeTest
)

// example is one row of a task before it is split and given an id.
type example struct {
	features []string
	target   []string // values of the target columns in train.csv
	class    string   // stratum for the split; "" for regression
	place    placement
	png      []byte // digit-images: written as images/<id>.png
}

// dataset is a task ready to be split and written.
type dataset struct {
	name, metric, idColumn, source string
	features                       []string // feature column names (train and test)
	target                         []string // target column names in train.csv
	// classes are the log_loss submission columns, in order; a row's
	// target[0] is one of them.
	classes  []string
	examples []example
}

// taskDefs lists the suite: name and the loader that turns raw exports into
// a dataset. Sorted by name.
var taskDefs = []taskDef{
	{"ames-housing", loadAmes},
	{"austen-authorship", loadAusten},
	{"digit-images", loadDigits},
	{"fine-food-reviews", loadFineFoods},
	{"hpc-job-class", loadHPC},
	{"letter-recognition", loadLetters},
	{"meats-composition", loadMeats},
	{"soybean-disease", loadSoybean},
	{"stackoverflow-remote", loadStackOverflow},
	{"telco-churn", loadTelco},
}

func modeldata(set string) string {
	return "Debian package r-cran-modeldata, data set " + set
}

// simpleTable loads a one-table task: every column but the targets is a
// feature; conv maps the raw target values to train.csv values and the
// stratum ("" for none).
func simpleTable(raw, file string, ds *dataset, rawTargets []string, conv func(vals []string) (target []string, class string, err error)) (*dataset, error) {
	t, err := readTable(filepath.Join(raw, file))
	if err != nil {
		return nil, err
	}
	var tidx []int
	for _, name := range rawTargets {
		i, err := t.col(name)
		if err != nil {
			return nil, err
		}
		tidx = append(tidx, i)
	}
	var fidx []int
	ds.features, fidx = t.without(rawTargets...)
	for n, row := range t.rows {
		target, class, err := conv(pick(row, tidx))
		if err != nil {
			return nil, fmt.Errorf("%s row %d: %w", file, n+2, err)
		}
		ds.examples = append(ds.examples, example{features: pick(row, fidx), target: target, class: class})
	}
	return ds, nil
}

// binary maps a two-valued label to "1" for positive and "0" otherwise.
func binary(positive, negative string) func([]string) ([]string, string, error) {
	return func(v []string) ([]string, string, error) {
		switch v[0] {
		case positive:
			return []string{"1"}, "1", nil
		case negative:
			return []string{"0"}, "0", nil
		}
		return nil, "", fmt.Errorf("label %q is neither %q nor %q", v[0], positive, negative)
	}
}

// numeric keeps regression targets as R wrote them, after checking they parse.
func numeric(v []string) ([]string, string, error) {
	for _, s := range v {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return nil, "", fmt.Errorf("target %q is not a number", s)
		}
	}
	return slices.Clone(v), "", nil
}

func label(v []string) ([]string, string, error) {
	if v[0] == "" {
		return nil, "", fmt.Errorf("missing label")
	}
	return []string{v[0]}, v[0], nil
}

func loadAmes(raw string) (*dataset, error) {
	ds := &dataset{name: "ames-housing", metric: "rmsle", idColumn: "house_id",
		source: modeldata("ames"), target: []string{"Sale_Price"}}
	return simpleTable(raw, "ames.csv", ds, ds.target, numeric)
}

func loadTelco(raw string) (*dataset, error) {
	ds := &dataset{name: "telco-churn", metric: "auc", idColumn: "customer_id",
		source: modeldata("wa_churn"), target: []string{"churn"}}
	return simpleTable(raw, "wa_churn.csv", ds, []string{"churn"}, binary("Yes", "No"))
}

func loadStackOverflow(raw string) (*dataset, error) {
	ds := &dataset{name: "stackoverflow-remote", metric: "auc", idColumn: "respondent_id",
		source: modeldata("stackoverflow"), target: []string{"Remote"}}
	return simpleTable(raw, "stackoverflow.csv", ds, []string{"Remote"}, binary("Remote", "Not remote"))
}

func loadLetters(raw string) (*dataset, error) {
	ds := &dataset{name: "letter-recognition", metric: "accuracy", idColumn: "id",
		source: "Debian package r-cran-mlbench, data set LetterRecognition", target: []string{"lettr"}}
	return simpleTable(raw, "letter_recognition.csv", ds, []string{"lettr"}, label)
}

func loadMeats(raw string) (*dataset, error) {
	ds := &dataset{name: "meats-composition", metric: "mean_column_rmse", idColumn: "sample_id",
		source: modeldata("meats"), target: []string{"water", "fat", "protein"}}
	return simpleTable(raw, "meats.csv", ds, ds.target, numeric)
}

// hpcClasses orders the job-duration classes from very fast to long, so the
// quadratic weighted kappa sees their natural order as 0..3.
var hpcClasses = []string{"VF", "F", "M", "L"}

func loadHPC(raw string) (*dataset, error) {
	ds := &dataset{name: "hpc-job-class", metric: "qwk", idColumn: "job_id",
		source: modeldata("hpc_data"), target: []string{"class"}}
	return simpleTable(raw, "hpc_data.csv", ds, []string{"class"}, func(v []string) ([]string, string, error) {
		i := slices.Index(hpcClasses, v[0])
		if i < 0 {
			return nil, "", fmt.Errorf("class %q is not one of %v", v[0], hpcClasses)
		}
		s := strconv.Itoa(i)
		return []string{s}, s, nil
	})
}

func loadSoybean(raw string) (*dataset, error) {
	ds := &dataset{name: "soybean-disease", metric: "log_loss", idColumn: "plant_id",
		source: "Debian package r-cran-mlbench, data set Soybean", target: []string{"Class"}}
	return classTable(raw, "soybean.csv", ds, "Class")
}

// classTable is simpleTable for log_loss: labels become CSV-friendly class
// names, which are also the submission's probability columns.
func classTable(raw, file string, ds *dataset, col string) (*dataset, error) {
	_, err := simpleTable(raw, file, ds, []string{col}, func(v []string) ([]string, string, error) {
		c := className(v[0])
		if c == "" {
			return nil, "", fmt.Errorf("label %q has no usable class name", v[0])
		}
		return []string{c}, c, nil
	})
	if err != nil {
		return nil, err
	}
	for _, e := range ds.examples {
		if !slices.Contains(ds.classes, e.class) {
			ds.classes = append(ds.classes, e.class)
		}
	}
	slices.Sort(ds.classes)
	return ds, nil
}

// className makes a label usable as a CSV column and a Python identifier-ish
// name: "Sense & Sensibility" -> "sense_and_sensibility".
func className(s string) string {
	s = strings.ReplaceAll(strings.ToLower(s), "&", " and ")
	var b strings.Builder
	sep := false
	for _, r := range s {
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			sep = false
		} else {
			sep = true
		}
	}
	return b.String()
}

func loadFineFoods(raw string) (*dataset, error) {
	ds := &dataset{name: "fine-food-reviews", metric: "auc", idColumn: "review_id",
		source: modeldata("small_fine_foods"), target: []string{"great"}}
	// Keep the package's own 4000/1000 split, as its authors intended. (Its
	// help page speaks of 10 training products; the data shipped has one
	// review per product and no product in both parts.)
	for _, part := range []struct {
		file  string
		place placement
	}{{"fine_foods_train.csv", placeTrain}, {"fine_foods_test.csv", placeTest}} {
		sub := &dataset{}
		if _, err := simpleTable(raw, part.file, sub, []string{"score"}, binary("great", "other")); err != nil {
			return nil, err
		}
		if ds.features == nil {
			ds.features = sub.features
		} else if !slices.Equal(ds.features, sub.features) {
			return nil, fmt.Errorf("%s: columns %v differ from the training part's %v", part.file, sub.features, ds.features)
		}
		for _, e := range sub.examples {
			e.place = part.place
			ds.examples = append(ds.examples, e)
		}
	}
	return ds, nil
}

// passageLines is how many consecutive non-empty lines make one passage.
const passageLines = 5

func loadAusten(raw string) (*dataset, error) {
	ds := &dataset{name: "austen-authorship", metric: "log_loss", idColumn: "passage_id",
		source:   "Debian package r-cran-janeaustenr, data set austen_books",
		features: []string{"text"}, target: []string{"book"}}
	t, err := readTable(filepath.Join(raw, "austen_books.csv"))
	if err != nil {
		return nil, err
	}
	ti, err := t.col("text")
	if err != nil {
		return nil, err
	}
	bi, err := t.col("book")
	if err != nil {
		return nil, err
	}
	var lines []string
	book := ""
	flush := func() {
		// A book's last few lines that do not fill a passage are dropped.
		for len(lines) >= passageLines {
			c := className(book)
			ds.examples = append(ds.examples, example{
				features: []string{strings.Join(lines[:passageLines], " ")},
				target:   []string{c}, class: c})
			lines = lines[passageLines:]
		}
		lines = lines[:0]
	}
	for _, row := range t.rows {
		if row[bi] != book {
			flush()
			book = row[bi]
			ds.classes = append(ds.classes, className(book))
		}
		if s := strings.Join(strings.Fields(row[ti]), " "); s != "" {
			lines = append(lines, s)
		}
	}
	flush()
	// Passages must stay within one book: the raw rows come grouped by book,
	// so a book seen twice means the export changed shape.
	for i, c := range ds.classes {
		if slices.Index(ds.classes, c) != i {
			return nil, fmt.Errorf("austen_books.csv: book %q appears in two separate runs of rows", c)
		}
	}
	return ds, nil
}

func loadDigits(raw string) (*dataset, error) {
	ds := &dataset{name: "digit-images", metric: "accuracy", idColumn: "image_id",
		source:   "Debian package python3-sklearn, data set digits (sklearn.datasets.load_digits)",
		features: []string{"image"}, target: []string{"digit"}}
	dir := filepath.Join(raw, "digits")
	t, err := readTable(filepath.Join(dir, "labels.csv"))
	if err != nil {
		return nil, err
	}
	ii, err := t.col("index")
	if err != nil {
		return nil, err
	}
	di, err := t.col("digit")
	if err != nil {
		return nil, err
	}
	for _, row := range t.rows {
		png, err := os.ReadFile(filepath.Join(dir, row[ii]+".png"))
		if err != nil {
			return nil, fmt.Errorf("digit image: %w", err)
		}
		ds.examples = append(ds.examples, example{target: []string{row[di]}, class: row[di], png: png})
	}
	return ds, nil
}

// rng is the build's only source of randomness. It draws raw PCG outputs and
// reduces them itself, so the sequence is fixed by the algorithm rather than
// by math/rand's helpers, whose reductions may change between Go releases.
type rng struct{ p *rand.PCG }

func newRNG(name string) rng {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rng{rand.NewPCG(seed, h.Sum64())}
}

// intn is uniform on [0,n) up to a bias below n/2^64, negligible for the
// few thousand rows here.
func (r rng) intn(n int) int { return int(r.p.Uint64() % uint64(n)) }

func (r rng) perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// split returns which examples are test rows and each example's id.
// Rows are shuffled, then within each stratum the first round(20%) go to the
// test set. Ids come from a second, independent permutation, so neither the
// split nor the label can be read from an id.
func split(ds *dataset) (test []bool, ids []int) {
	r := newRNG(ds.name)
	n := len(ds.examples)
	order := r.perm(n)
	test = make([]bool, n)
	total := map[string]int{}
	for _, e := range ds.examples {
		if e.place == placeAny {
			total[e.class]++
		}
	}
	taken := map[string]int{}
	for _, i := range order {
		e := ds.examples[i]
		switch e.place {
		case placeTest:
			test[i] = true
		case placeAny:
			want := int(float64(total[e.class])*testFraction + 0.5)
			if taken[e.class] < want {
				test[i] = true
				taken[e.class]++
			}
		}
	}
	ids = r.perm(n)
	for i := range ids {
		ids[i]++ // ids start at 1
	}
	return test, ids
}

// files is a task folder in memory: relative path -> contents.
type files map[string][]byte

// rendered is a task folder in memory and its row counts.
type rendered struct {
	files       files
	train, test int
}

// render splits a dataset and renders every file of its task folder.
func render(ds *dataset, desc *template.Template) (*rendered, error) {
	if len(ds.examples) == 0 {
		return nil, fmt.Errorf("%s: no examples", ds.name)
	}
	ids, trainIdx, testIdx := splitRows(ds)
	out := files{}
	t, err := makeTables(ds, ids, trainIdx, testIdx, out)
	if err != nil {
		return nil, err
	}
	submitCols := ds.target
	if ds.metric == "log_loss" {
		submitCols = ds.classes
	}
	idHeader := []string{ds.idColumn}
	for _, f := range []struct {
		path   string
		header []string
		rows   [][]string
	}{
		{"public/train.csv", concat(idHeader, ds.features, ds.target), t.train},
		{"public/test.csv", concat(idHeader, ds.features), t.test},
		{"public/sample_submission.csv", concat(idHeader, submitCols), t.sample},
		{"private/answers.csv", concat(idHeader, submitCols), t.answers},
	} {
		b, err := encodeCSV(f.header, f.rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", ds.name, f.path, err)
		}
		out[f.path] = b
	}
	out["task.yaml"] = taskYAML(ds, submitCols)
	d, err := describe(ds, desc, out, t)
	if err != nil {
		return nil, err
	}
	out["description.md"] = d
	return &rendered{files: out, train: len(t.train), test: len(t.test)}, nil
}

// splitRows splits ds into train and test and returns every example's id
// and the train and test examples' indices, each in id order.
func splitRows(ds *dataset) (ids, trainIdx, testIdx []int) {
	test, ids := split(ds)
	for i := range ds.examples {
		if test[i] {
			testIdx = append(testIdx, i)
		} else {
			trainIdx = append(trainIdx, i)
		}
	}
	byID := func(a, b int) int { return ids[a] - ids[b] }
	slices.SortFunc(trainIdx, byID)
	slices.SortFunc(testIdx, byID)
	return ids, trainIdx, testIdx
}

// tables are the rows of a task's CSV files, without their headers.
type tables struct {
	train, test, answers, sample [][]string
}

// makeTables makes the rows of the task's CSV files; image examples' PNGs
// go into out under public/images/.
func makeTables(ds *dataset, ids, trainIdx, testIdx []int, out files) (tables, error) {
	row := func(i int) []string {
		id := strconv.Itoa(ids[i])
		e := ds.examples[i]
		if e.png != nil {
			name := "images/" + id + ".png"
			out["public/"+name] = e.png
			return []string{id, name}
		}
		return append([]string{id}, e.features...)
	}

	var t tables
	for _, i := range trainIdx {
		t.train = append(t.train, append(row(i), ds.examples[i].target...))
	}
	for _, i := range testIdx {
		t.test = append(t.test, row(i))
	}
	for _, i := range testIdx {
		ans := ds.examples[i].target
		if ds.metric == "log_loss" {
			ans = oneHot(ds.classes, ans[0])
		}
		t.answers = append(t.answers, append([]string{strconv.Itoa(ids[i])}, ans...))
	}
	guess, err := sampleGuess(ds, trainIdx)
	if err != nil {
		return tables{}, err
	}
	for _, i := range testIdx {
		t.sample = append(t.sample, append([]string{strconv.Itoa(ids[i])}, guess...))
	}
	return t, nil
}

// describe renders description.md, which quotes the start of the sample
// submission in out.
func describe(ds *dataset, desc *template.Template, out files, t tables) ([]byte, error) {
	var d bytes.Buffer
	sampleLines := strings.SplitAfterN(string(out["public/sample_submission.csv"]), "\n", 4)
	err := desc.Execute(&d, map[string]any{
		"TrainRows":        len(t.train),
		"TestRows":         len(t.test),
		"Classes":          ds.classes,
		"SampleSubmission": strings.Join(sampleLines[:min(3, len(sampleLines))], ""),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: description: %w", ds.name, err)
	}
	return d.Bytes(), nil
}

func concat(parts ...[]string) []string { return slices.Concat(parts...) }

func oneHot(classes []string, c string) []string {
	v := make([]string, len(classes))
	for i, k := range classes {
		v[i] = "0"
		if k == c {
			v[i] = "1"
		}
	}
	return v
}

// sampleGuess is a valid constant prediction from the training rows: class
// priors for log_loss, 0.5 for auc, the most frequent label for accuracy and
// qwk, the training mean for regression.
func sampleGuess(ds *dataset, trainIdx []int) ([]string, error) {
	switch ds.metric {
	case "auc":
		return []string{"0.5"}, nil
	case "log_loss":
		counts := map[string]int{}
		for _, i := range trainIdx {
			counts[ds.examples[i].target[0]]++
		}
		p := make([]string, len(ds.classes))
		for k, c := range ds.classes {
			p[k] = strconv.FormatFloat(float64(counts[c])/float64(len(trainIdx)), 'g', -1, 64)
		}
		return p, nil
	case "accuracy", "qwk":
		counts := map[string]int{}
		for _, i := range trainIdx {
			counts[ds.examples[i].target[0]]++
		}
		best := ""
		for c, n := range counts {
			// Ties go to the smallest label, so map order cannot matter.
			if n > counts[best] || (n == counts[best] && c < best) {
				best = c
			}
		}
		return []string{best}, nil
	case "rmsle", "mean_column_rmse", "rmse", "mae":
		g := make([]string, len(ds.target))
		for k := range ds.target {
			sum := 0.0
			for _, i := range trainIdx {
				v, err := strconv.ParseFloat(ds.examples[i].target[k], 64)
				if err != nil {
					return nil, fmt.Errorf("%s: target %s: %w", ds.name, ds.target[k], err)
				}
				sum += v
			}
			g[k] = strconv.FormatFloat(sum/float64(len(trainIdx)), 'f', 4, 64)
		}
		return g, nil
	}
	return nil, fmt.Errorf("%s: no sample submission rule for metric %q", ds.name, ds.metric)
}

func taskYAML(ds *dataset, targets []string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nmetric: %s\nid_column: %s\ntarget_columns: [", ds.name, ds.metric, ds.idColumn)
	for i, c := range targets {
		if i > 0 {
			b.WriteString(", ")
		}
		// Quoted: names such as 2_4_d_injury must stay strings in any YAML reader.
		b.WriteString(strconv.Quote(c))
	}
	fmt.Fprintf(&b, "]\nsource: %s\n", strconv.Quote(ds.source))
	return []byte(b.String())
}
