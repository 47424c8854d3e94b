package grade

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pythonWithSklearn returns Debian's python3 if it has pandas, scikit-learn
// and scipy, or skips the test.
func pythonWithSklearn(t testing.TB) string {
	t.Helper()
	const py = "/usr/bin/python3"
	out, err := exec.Command(py, "-c", "import pandas, sklearn, scipy; print(sklearn.__version__)").CombinedOutput()
	if err != nil {
		t.Skipf("%s lacks pandas/scikit-learn/scipy, cannot run the reference grader: %v: %s", py, err, out)
	}
	return py
}

// csvFile builds CSV text with the options real submissions come with.
type csvFile struct {
	crlf, bom, noFinalNewline bool
	lines                     []string
}

func (c *csvFile) add(fields ...string) {
	for i, f := range fields {
		if strings.ContainsAny(f, ",\"\n\r") {
			fields[i] = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
	}
	c.lines = append(c.lines, strings.Join(fields, ","))
}

func (c *csvFile) String() string {
	nl := "\n"
	if c.crlf {
		nl = "\r\n"
	}
	s := strings.Join(c.lines, nl)
	if !c.noFinalNewline {
		s += nl
	}
	if c.bom {
		s = "\ufeff" + s
	}
	return s
}

// parityCase is one generated grading problem.
type parityCase struct {
	name       string
	spec       Spec
	answers    string
	submission string
}

// fmtNum writes a float the ways Python programs do.
func fmtNum(rng *rand.Rand, v float64) string {
	switch rng.IntN(4) {
	case 0:
		return strconv.FormatFloat(v, 'f', 6, 64)
	case 1:
		return strconv.FormatFloat(v, 'e', 8, 64)
	default:
		return strconv.FormatFloat(v, 'g', -1, 64) // Python repr
	}
}

var vocab = []string{"good", "Good", "GOOD", "bad", "movie", "the", "The", "a", "plot", "twist", "was",
	"great!", "great", "Straße", "ΟΔΟΣ", "οδος", "İstanbul", "café", "CAFÉ", "don't", "it's", "so", "much", "fun"}

func genText(rng *rand.Rand, words int) string {
	seps := []string{" ", " ", " ", "  ", "\t", " \n", "\u00a0", "\u3000"}
	var b strings.Builder
	if rng.IntN(5) == 0 {
		b.WriteString(" ")
	}
	for i := 0; i < words; i++ {
		if i > 0 {
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		b.WriteString(vocab[rng.IntN(len(vocab))])
	}
	if rng.IntN(5) == 0 {
		b.WriteString(", ok")
	}
	return b.String()
}

// genCase makes answers and a shuffled submission for metric with n rows.
// The helpers draw from rng in a fixed order, so a seed always gives the same
// case.
func genCase(metric string, n int, seed uint64) parityCase {
	rng := rand.New(rand.NewPCG(seed, uint64(len(metric))))
	k, targets := genTargets(rng, metric)
	spec := Spec{Metric: metric, IDColumn: "id", TargetColumns: targets}
	ids := genIDs(rng, n)
	g := newRowGen(rng, metric, k)
	truth := make([][]string, n)
	pred := make([][]string, n)
	for i := 0; i < n; i++ {
		truth[i], pred[i] = g.row(i)
	}
	ans, sub := genFiles(rng, targets, ids, truth, pred)
	return parityCase{
		name:       fmt.Sprintf("%s/n=%d/seed=%d", metric, n, seed),
		spec:       spec,
		answers:    ans,
		submission: sub,
	}
}

// genTargets picks the number of target columns for metric and names them.
func genTargets(rng *rand.Rand, metric string) (int, []string) {
	k := 1
	switch metric {
	case "mean_column_auc", "mean_column_rmse", "mean_column_rmsle":
		k = 2 + rng.IntN(3)
	case "log_loss":
		k = 2 + rng.IntN(9)
	}
	targets := make([]string, k)
	for t := range targets {
		targets[t] = fmt.Sprintf("target_%d", t)
	}
	if k == 1 {
		targets[0] = "y"
	}
	return k, targets
}

// genIDs makes n distinct ids in one of three styles: numbers, hex words, or
// text that needs quoting.
func genIDs(rng *rand.Rand, n int) []string {
	ids := make([]string, n)
	style := rng.IntN(3)
	for i := range ids {
		switch style {
		case 0:
			ids[i] = strconv.Itoa(1000 + i*7)
		case 1:
			ids[i] = fmt.Sprintf("row_%x_%d", rng.Uint32(), i)
		default:
			ids[i] = fmt.Sprintf("q%d, part %d", i, i%3) // needs quoting
		}
	}
	return ids
}

// rowGen makes one metric's rows of answers and predictions; its fields are
// per-case choices drawn once.
type rowGen struct {
	rng    *rand.Rand
	metric string
	k      int
	// Ties in predictions matter for AUC: round to a coarse grid half the time.
	coarse        bool
	accNumeric    bool
	qwkLabels     []int
	pearsonOffset float64
}

func newRowGen(rng *rand.Rand, metric string, k int) *rowGen {
	g := &rowGen{rng: rng, metric: metric, k: k}
	g.coarse = rng.IntN(2) == 0
	g.accNumeric = rng.IntN(2) == 0
	g.qwkLabels = []int{0, 1, 2, 3, 4, 5}
	if rng.IntN(2) == 0 {
		g.qwkLabels = []int{1, 2, 5, 9}
	}
	if rng.IntN(3) == 0 {
		g.pearsonOffset = 1e6
	}
	return g
}

// row makes row i's answer (tr) and prediction (pr) cells.
func (g *rowGen) row(i int) (tr, pr []string) {
	rng, k := g.rng, g.k
	tr = make([]string, k)
	pr = make([]string, k)
	switch g.metric {
	case "auc", "mean_column_auc":
		g.aucRow(i, tr, pr)
	case "log_loss":
		g.logLossRow(tr, pr)
	case "accuracy":
		g.accuracyRow(tr, pr)
	case "rmse", "mae", "mean_column_rmse":
		for t := 0; t < k; t++ {
			y := rng.NormFloat64()*10 + 50
			tr[t] = fmtNum(rng, y)
			pr[t] = fmtNum(rng, y+rng.NormFloat64()*3)
		}
	case "rmsle", "mean_column_rmsle":
		for t := 0; t < k; t++ {
			y := rng.ExpFloat64()*100 - 0.5
			tr[t] = fmtNum(rng, y)
			pr[t] = fmtNum(rng, max(-0.99, y*(0.5+rng.Float64())))
		}
	case "qwk":
		g.qwkRow(i, tr, pr)
	case "pearson":
		x := rng.NormFloat64()
		tr[0] = fmtNum(rng, g.pearsonOffset+x)
		pr[0] = fmtNum(rng, g.pearsonOffset+x+rng.NormFloat64())
	case "jaccard":
		tr[0] = genText(rng, 1+rng.IntN(6))
		switch rng.IntN(4) {
		case 0:
			pr[0] = tr[0]
		case 1:
			pr[0] = strings.ToUpper(tr[0])
		case 2:
			pr[0] = genText(rng, 1+rng.IntN(4))
		default:
			pr[0] = ""
		}
	}
	return tr, pr
}

func (g *rowGen) aucRow(i int, tr, pr []string) {
	rng := g.rng
	for t := 0; t < g.k; t++ {
		y := 0
		if i == 1 || (i > 1 && rng.IntN(3) == 0) { // rows 0 and 1 make both classes present
			y = 1
		}
		tr[t] = strconv.Itoa(y)
		p := 0.5*rng.Float64() + 0.4*float64(y)
		if g.coarse {
			p = math.Round(p*10) / 10
		}
		if g.metric == "mean_column_auc" && rng.IntN(4) == 0 {
			p = rng.NormFloat64() * 3 // no range rule for mean_column_auc
		}
		pr[t] = fmtNum(rng, p)
	}
}

func (g *rowGen) logLossRow(tr, pr []string) {
	rng, k := g.rng, g.k
	c := rng.IntN(k)
	for t := 0; t < k; t++ {
		tr[t] = "0"
	}
	tr[c] = "1"
	ps := make([]float64, k)
	sum := 0.0
	for t := range ps {
		ps[t] = rng.ExpFloat64()
		if t == c {
			ps[t] *= 3
		}
		if rng.IntN(6) == 0 {
			ps[t] = 0 // exercises clipping, also for the true class
		}
		sum += ps[t]
	}
	if sum == 0 {
		ps[0], sum = 1, 1
	}
	for t := range ps {
		ps[t] /= sum
		if rng.IntN(2) == 0 {
			pr[t] = strconv.FormatFloat(ps[t], 'f', 6, 64) // sums off by ~1e-6: exercises the row-sum tolerance
		} else {
			pr[t] = strconv.FormatFloat(ps[t], 'g', -1, 64)
		}
	}
}

func (g *rowGen) accuracyRow(tr, pr []string) {
	rng := g.rng
	if g.accNumeric {
		y := rng.IntN(10)
		tr[0] = strconv.Itoa(y)
		p := y
		if rng.IntN(3) == 0 {
			p = rng.IntN(10)
		}
		pr[0] = strconv.Itoa(p)
		if rng.IntN(4) == 0 {
			pr[0] += ".0" // pandas reads 3.0 == 3
		}
		return
	}
	labels := []string{"cat", "dog", "Dog", "bird", "fish, small"}
	tr[0] = labels[rng.IntN(len(labels))]
	pr[0] = tr[0]
	if rng.IntN(3) == 0 {
		pr[0] = labels[rng.IntN(len(labels))]
	}
}

func (g *rowGen) qwkRow(i int, tr, pr []string) {
	rng := g.rng
	y := g.qwkLabels[i%len(g.qwkLabels)]
	tr[0] = strconv.Itoa(y)
	p := y
	if rng.IntN(2) == 0 {
		p = g.qwkLabels[rng.IntN(len(g.qwkLabels))]
	}
	if rng.IntN(20) == 0 {
		p = 7 // a label the answers never use
	}
	pr[0] = strconv.Itoa(p)
	if rng.IntN(5) == 0 {
		pr[0] += ".0"
	}
}

// genFiles writes the answers and the submission: shuffled rows, permuted
// columns, assorted line ends.
func genFiles(rng *rand.Rand, targets, ids []string, truth, pred [][]string) (answers, submission string) {
	ans := &csvFile{}
	ans.add(append([]string{"id"}, targets...)...)
	for i := range ids {
		ans.add(append([]string{ids[i]}, truth[i]...)...)
	}
	sub := &csvFile{crlf: rng.IntN(3) == 0, bom: rng.IntN(4) == 0, noFinalNewline: rng.IntN(3) == 0}
	cols := rng.Perm(len(targets) + 1)
	row := func(id string, vals []string) []string {
		all := append([]string{id}, vals...)
		out := make([]string, len(all))
		for j, c := range cols {
			out[j] = all[c]
		}
		return out
	}
	sub.add(row("id", targets)...)
	for _, i := range rng.Perm(len(ids)) {
		sub.add(row(ids[i], pred[i])...)
	}
	return ans.String(), sub.String()
}

type pyResult struct {
	Valid bool     `json:"valid"`
	Score *float64 `json:"score"`
	Error string   `json:"error"`
}

// runReference grades all cases with testdata/reference.py in one process.
func runReference(t *testing.T, py string, dir string, cases []parityCase) []pyResult {
	t.Helper()
	type jsonCase struct {
		Metric  string   `json:"metric"`
		ID      string   `json:"id_column"`
		Targets []string `json:"target_columns"`
		Answers string   `json:"answers"`
		Sub     string   `json:"submission"`
	}
	var js []jsonCase
	for i, c := range cases {
		ap := filepath.Join(dir, fmt.Sprintf("%d-answers.csv", i))
		sp := filepath.Join(dir, fmt.Sprintf("%d-submission.csv", i))
		if err := os.WriteFile(ap, []byte(c.answers), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sp, []byte(c.submission), 0o644); err != nil {
			t.Fatal(err)
		}
		js = append(js, jsonCase{c.spec.Metric, c.spec.IDColumn, c.spec.TargetColumns, ap, sp})
	}
	cp := filepath.Join(dir, "cases.json")
	b, err := json.Marshal(js)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/reference.py", cp)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference.py: %v", err)
	}
	var res []pyResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("reference.py output: %v", err)
	}
	if len(res) != len(cases) {
		t.Fatalf("reference.py returned %d results for %d cases", len(res), len(cases))
	}
	return res
}

func TestParityWithSklearn(t *testing.T) {
	py := pythonWithSklearn(t)
	var cases []parityCase
	sizes := []int{2, 3, 7, 50, 1000}
	if !testing.Short() {
		sizes = append(sizes, 20000)
	}
	for _, m := range Metrics() {
		for _, n := range sizes {
			for seed := uint64(1); seed <= 3; seed++ {
				if m == "auc" || m == "mean_column_auc" || m == "qwk" || m == "pearson" {
					if n < 3 && m != "pearson" {
						continue // too few rows for both classes in every column
					}
				}
				cases = append(cases, genCase(m, n, seed))
			}
		}
	}
	ref := runReference(t, py, t.TempDir(), cases)
	worst := map[string]float64{}
	defer func() { t.Logf("%d cases; largest |go - sklearn| per metric: %v", len(cases), worst) }()
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := ref[i]
			if !want.Valid {
				t.Fatalf("reference grader rejected a generated case: %s", want.Error)
			}
			a, err := LoadAnswers(c.spec, strings.NewReader(c.answers))
			if err != nil {
				t.Fatalf("LoadAnswers: %v", err)
			}
			got := a.Grade(strings.NewReader(c.submission))
			if !got.Valid {
				t.Fatalf("invalid: %s", got.Error)
			}
			d := math.Abs(*got.Score - *want.Score)
			worst[c.spec.Metric] = max(worst[c.spec.Metric], d)
			if d > 1e-9*max(1, math.Abs(*want.Score)) {
				t.Errorf("score %.17g, sklearn %.17g (diff %.3g)", *got.Score, *want.Score, d)
			}
		})
	}
}
