package grade

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Imported MLE-bench competitions (task.yaml "grader: mlebench/<id>") are
// graded by a rule set per competition that reproduces that competition's
// grade.py in MLE-bench: its checks in its order, its row matching (sorted by
// id, or by position), what pandas makes of the file (frame.go) and its
// metric. Where grade.py raises any exception the submission is invalid; where
// it returns NaN (a constant prediction under Pearson r, say) the submission
// is invalid too, since a NaN cannot be a reward or rank. Scores are the
// grade function's value, not rounded (MLE-bench's Grader rounds to 5
// decimals; Rank does that).

// mleRules is one competition's grading rules.
type mleRules struct {
	id       string
	metric   string
	idColumn string
	// targets are the submission's value columns; nil means the answers'
	// columns other than the id, in the answers' order (one per class).
	targets []string
	// checkAnswers is grade.py's asserts about the answers: failing them
	// means the task is broken, not the submission.
	checkAnswers func(r *mleRules, ans *frame) error
	grade        func(r *mleRules, sub, ans *frame) (float64, error)
	// allColumns: the grader reads every answers column (otherwise only the
	// id and target columns are kept in memory).
	allColumns bool
}

// keepColumns says which answers columns the rule set reads.
func (r *mleRules) keepColumns() func(string) bool {
	if r.allColumns || r.targets == nil {
		return nil
	}
	want := map[string]bool{r.idColumn: true}
	for _, t := range r.targets {
		want[t] = true
	}
	return func(name string) bool { return want[name] }
}

// errInvalid marks a submission MLE-bench's grader would reject.
type errInvalid struct{ msg string }

func (e errInvalid) Error() string { return e.msg }

func reject(format string, args ...any) error {
	return errInvalid{fmt.Sprintf(format, args...)}
}

const mlebenchPrefix = "mlebench/"

var mleRuleSets = map[string]*mleRules{}

func register(r *mleRules) { mleRuleSets[r.id] = r }

// MLEBenchCompetitions returns the competition ids that have a rule set, sorted.
func MLEBenchCompetitions() []string {
	ids := make([]string, 0, len(mleRuleSets))
	for id := range mleRuleSets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func lookupGrader(grader string) (*mleRules, error) {
	id, ok := strings.CutPrefix(grader, mlebenchPrefix)
	if !ok {
		return nil, fmt.Errorf("unknown grader %q (want mlebench/<competition-id>)", grader)
	}
	r, ok := mleRuleSets[id]
	if !ok {
		return nil, fmt.Errorf("unknown grader %q: no rule set for MLE-bench competition %q (known: %s)",
			grader, id, strings.Join(MLEBenchCompetitions(), ", "))
	}
	return r, nil
}

// MLEBenchSpec is the spec an imported task's task.yaml carries for grader
// ("mlebench/<id>"): the metric family, the id column and the target columns,
// taken from the answers header where the targets are the classes.
func MLEBenchSpec(grader string, answersHeader []string) (Spec, error) {
	r, err := lookupGrader(grader)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{Metric: r.metric, IDColumn: r.idColumn, TargetColumns: r.targets}
	if r.targets == nil {
		for _, h := range answersHeader {
			if h != r.idColumn {
				s.TargetColumns = append(s.TargetColumns, h)
			}
		}
	}
	_, err = s.validateColumns()
	return s, err
}

// CheckMLEBenchSpec checks that grader is known and that spec names its
// metric, id column and (when fixed) target columns. It replaces
// Spec.Validate for imported tasks: the number of target columns is the
// competition's (dogs-vs-cats scores log loss on one column).
func CheckMLEBenchSpec(grader string, spec Spec) error {
	r, err := lookupGrader(grader)
	if err != nil {
		return err
	}
	if _, err := spec.validateColumns(); err != nil {
		return err
	}
	if spec.Metric != r.metric {
		return fmt.Errorf("grader %s scores with %s, not %s", grader, r.metric, spec.Metric)
	}
	if spec.IDColumn != r.idColumn {
		return fmt.Errorf("grader %s matches rows by %q, not %q", grader, r.idColumn, spec.IDColumn)
	}
	if r.targets != nil && !slices.Equal(spec.TargetColumns, r.targets) {
		return fmt.Errorf("grader %s scores columns %q, not %q", grader, r.targets, spec.TargetColumns)
	}
	return nil
}

// LoadMLEBenchAnswersFile reads an imported competition's answers file (its
// original file, unchanged) for grader "mlebench/<id>".
func LoadMLEBenchAnswersFile(grader string, spec Spec, path string) (*Answers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("answers: %w", err)
	}
	defer f.Close()
	a, err := LoadMLEBenchAnswers(grader, spec, f)
	if err != nil {
		return nil, fmt.Errorf("answers %s: %w", path, err)
	}
	return a, nil
}

// LoadMLEBenchAnswers reads answers for grader "mlebench/<id>".
func LoadMLEBenchAnswers(grader string, spec Spec, rd io.Reader) (*Answers, error) {
	if err := CheckMLEBenchSpec(grader, spec); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	r, _ := lookupGrader(grader)
	buf, err := readLimited(rd)
	if err != nil {
		return nil, err
	}
	fr, err := readFrameKeep(buf, r.keepColumns())
	if err != nil {
		return nil, err
	}
	if fr.n == 0 {
		return nil, errors.New("no rows")
	}
	if r.targets == nil {
		want, _ := MLEBenchSpec(grader, fr.names())
		if !slices.Equal(want.TargetColumns, spec.TargetColumns) {
			return nil, fmt.Errorf("target columns %q differ from the answers' classes %q", spec.TargetColumns, want.TargetColumns)
		}
	}
	if err := r.checkAnswers(r, fr); err != nil {
		return nil, err
	}
	m, _ := lookupMetric(spec.Metric)
	return &Answers{spec: spec, metric: m, k: len(spec.TargetColumns), mle: &mleAnswers{rules: r, frame: fr}}, nil
}

// mleAnswers is the answers side of an imported competition.
type mleAnswers struct {
	rules *mleRules
	frame *frame
}

// Grader returns "mlebench/<id>" for imported competitions, "" otherwise.
func (a *Answers) Grader() string {
	if a.mle == nil {
		return ""
	}
	return mlebenchPrefix + a.mle.rules.id
}

func (m *mleAnswers) gradeBytes(buf []byte) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = invalid("internal error while grading: %v", p)
		}
	}()
	sub, err := readFrame(buf)
	if err != nil {
		return invalid("%v", err)
	}
	score, err := m.rules.grade(m.rules, sub, m.frame)
	if err != nil {
		return invalid("%v", err)
	}
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return invalid("%s's grader returns %v for this submission (no score)", m.rules.id, score)
	}
	return valid(score)
}

// ---- checks shared by several grade.py files ----

func needColumns(f *frame, who string, names ...string) error {
	for _, n := range names {
		if !f.has(n) {
			return fmt.Errorf("%s have no column %q", who, n)
		}
	}
	return nil
}

func answersHave(names ...string) func(*mleRules, *frame) error {
	return func(_ *mleRules, a *frame) error { return needColumns(a, "answers", names...) }
}

// binaryColumn checks that an answers column holds 0/1 labels with both present.
func binaryColumn(a *frame, name string) error {
	c := a.col(name)
	if c == nil {
		return fmt.Errorf("answers have no column %q", name)
	}
	if !c.numeric() {
		return fmt.Errorf("answers column %q is not numeric", name)
	}
	seen := [2]bool{}
	for _, v := range c.nums {
		if v != 0 && v != 1 {
			return fmt.Errorf("answers column %q holds %v, not 0 or 1", name, v)
		}
		seen[int(v)] = true
	}
	if !seen[0] || !seen[1] {
		return fmt.Errorf("answers column %q has one class only; ROC AUC needs both", name)
	}
	return nil
}

// idsMatch is grade.py's (sub[id].values != ans[id].values).any() after both
// were sorted by id (sp, ap: the sorted row orders).
func idsMatch(sub *frame, sp []int, ans *frame, ap []int, id string) bool {
	sc, ac := sub.col(id), ans.col(id)
	if len(sp) != len(ap) {
		return false // numpy cannot compare arrays of different lengths: grade.py fails
	}
	for i := range sp {
		if !equalCells(sc, sp[i], ac, ap[i]) {
			return false
		}
	}
	return true
}

// finiteNumbers is scikit-learn's check_array on one column in row order
// perm: text cannot be converted, NaN and infinity are rejected.
func finiteNumbers(c *column, perm []int) ([]float64, error) {
	if !c.numeric() {
		return nil, reject("column %q holds text where numbers are needed", c.name)
	}
	out := make([]float64, len(perm))
	for i, p := range perm {
		v := c.nums[p]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, reject("column %q: %v is not a finite number (row %d)", c.name, v, p+1)
		}
		out[i] = v
	}
	return out, nil
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// rocAUC is scikit-learn's roc_auc_score for 0/1 y_true (both classes present).
func rocAUC(yTrue, yScore []float64) float64 {
	var pos, neg []float64
	for i, t := range yTrue {
		if t == 1 {
			pos = append(pos, yScore[i])
		} else {
			neg = append(neg, yScore[i])
		}
	}
	slices.Sort(pos)
	slices.Sort(neg)
	return aucSorted(pos, neg)
}

// prepareAUROC is MLE-bench's prepare_for_auroc_metric followed by
// roc_auc_score.
func gradeAUROC(r *mleRules, sub, ans *frame) (float64, error) {
	id, target := r.idColumn, r.targets[0]
	if !sub.has(id) {
		return 0, reject("submission has no %q column", id)
	}
	if !sub.has(target) {
		return 0, reject("submission has no %q column", target)
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	tc := sub.col(target)
	if !tc.numeric() {
		return 0, reject("column %q is not numeric (pandas.to_numeric fails)", target)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range tc.nums {
		if !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo < 0 || hi > 1 {
		return 0, reject("column %q must hold probabilities in [0, 1] (min %v, max %v)", target, lo, hi)
	}
	sp, ap := sub.col(id).order(), ans.sortedRows(id)
	if !idsMatch(sub, sp, ans, ap, id) {
		return 0, reject("submission %q values differ from the answers'", id)
	}
	yScore, err := finiteNumbers(tc, sp)
	if err != nil {
		return 0, err
	}
	yTrue, _ := finiteNumbers(ans.col(target), ap)
	return rocAUC(yTrue, yScore), nil
}

func checkAUROCAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", r.idColumn); err != nil {
		return err
	}
	return binaryColumn(a, r.targets[0])
}

// labelSet is a column of class labels as scikit-learn's _check_targets
// accepts them: numbers that are all integers, or text with no missing cell.
type labelSet struct {
	text bool
	nums []float64
	strs []string
}

func classLabels(c *column, perm []int) (labelSet, error) {
	if c.numeric() {
		vals, err := finiteNumbers(c, perm)
		if err != nil {
			return labelSet{}, err
		}
		for _, v := range vals {
			if v != math.Trunc(v) {
				return labelSet{}, reject("column %q: %v is not a class label (scikit-learn sees continuous targets)", c.name, v)
			}
		}
		return labelSet{nums: vals}, nil
	}
	out := labelSet{text: true, strs: make([]string, len(perm))}
	for i, p := range perm {
		if c.na[p] {
			return labelSet{}, reject("column %q: a missing label next to text labels (scikit-learn rejects the mix)", c.name)
		}
		out.strs[i] = c.strs[p]
	}
	return out, nil
}

// pairLabels checks y_true and y_pred as scikit-learn's classification
// metrics do and returns each row's label ranks in their sorted union.
func pairLabels(yTrue, yPred labelSet) (rt, rp []int, nlabels int, err error) {
	if yTrue.text != yPred.text {
		return nil, nil, 0, reject("labels mix text and numbers (scikit-learn: mix of label input types)")
	}
	if yTrue.text {
		all := append(slices.Clone(yTrue.strs), yPred.strs...)
		slices.Sort(all)
		all = slices.Compact(all)
		rank := func(s string) int { i, _ := slices.BinarySearch(all, s); return i }
		for i := range yTrue.strs {
			rt = append(rt, rank(yTrue.strs[i]))
			rp = append(rp, rank(yPred.strs[i]))
		}
		return rt, rp, len(all), nil
	}
	all := append(slices.Clone(yTrue.nums), yPred.nums...)
	slices.Sort(all)
	all = slices.Compact(all)
	rank := func(v float64) int { i, _ := slices.BinarySearch(all, v); return i }
	for i := range yTrue.nums {
		rt = append(rt, rank(yTrue.nums[i]))
		rp = append(rp, rank(yPred.nums[i]))
	}
	return rt, rp, len(all), nil
}

// accuracy is scikit-learn's accuracy_score(y_true, y_pred) on two label
// columns in row orders ap and sp. Its checks are _check_targets': numbers
// must be finite integers; a text column must have no missing cell (numpy
// cannot sort text with NaN; a leading NaN makes the type "unknown"). Text
// against numbers is rejected only when both sides have at most two labels
// (the binary case merges the label sets); otherwise no text label equals a
// number and those rows count as misses.
func accuracy(truth *column, ap []int, pred *column, sp []int) (float64, error) {
	distinct := func(c *column, perm []int) (int, error) {
		if c.numeric() {
			vals, err := finiteNumbers(c, perm)
			if err != nil {
				return 0, err
			}
			for _, v := range vals {
				if v != math.Trunc(v) {
					return 0, reject("column %q: %v is not a class label (scikit-learn sees continuous targets)", c.name, v)
				}
			}
			slices.Sort(vals)
			return len(slices.Compact(vals)), nil
		}
		set := map[string]bool{}
		for _, p := range perm {
			if c.na[p] {
				return 0, reject("column %q: a missing label among text labels (scikit-learn cannot type the targets)", c.name)
			}
			set[c.strs[p]] = true
		}
		return len(set), nil
	}
	nt, err := distinct(truth, ap)
	if err != nil {
		return 0, fmt.Errorf("answers: %v", err)
	}
	np, err := distinct(pred, sp)
	if err != nil {
		return 0, err
	}
	if truth.numeric() != pred.numeric() && nt <= 2 && np <= 2 {
		return 0, reject("binary labels mix text and numbers (scikit-learn cannot merge them)")
	}
	hits := 0
	for i := range sp {
		if equalCells(truth, ap[i], pred, sp[i]) {
			hits++
		}
	}
	return float64(hits) / float64(len(sp)), nil
}

// quadraticKappa is cohen_kappa_score(weights="quadratic") on label ranks.
func quadraticKappa(rt, rp []int, nlabels int) float64 {
	n := len(rt)
	ht := make([]float64, nlabels)
	hp := make([]float64, nlabels)
	observed := 0.0
	for i := range rt {
		ht[rt[i]]++
		hp[rp[i]]++
		d := float64(rt[i] - rp[i])
		observed += d * d
	}
	expected := 0.0
	for i := 0; i < nlabels; i++ {
		for j := 0; j < nlabels; j++ {
			d := float64(i - j)
			expected += d * d * ht[i] * hp[j]
		}
	}
	return 1 - observed*float64(n)/expected // 0/0 is NaN, as scikit-learn's
}

// pearsonR is scipy.stats.pearsonr's statistic; NaN where scipy's is NaN.
func pearsonR(x, y []float64) float64 {
	if constant(x) || constant(y) {
		return math.NaN()
	}
	if len(x) == 2 {
		return sign(x[1]-x[0]) * sign(y[1]-y[0])
	}
	x, y = slices.Clone(x), slices.Clone(y)
	center(x)
	center(y)
	nx, ny := norm(x), norm(y)
	if nx == 0 || ny == 0 || math.IsInf(nx, 0) || math.IsInf(ny, 0) {
		return math.NaN()
	}
	var dot neumaier
	for i := range x {
		dot.add((x[i] / nx) * (y[i] / ny))
	}
	return max(-1, min(1, dot.value()))
}

// logLossRows is scikit-learn >= 1.5's log_loss on one-hot answers: clip to
// [eps, 1-eps], no renormalisation, mean over rows of -sum(y * log p).
func logLossRows(yTrue, yPred [][]float64) float64 {
	var s neumaier
	for i, t := range yTrue {
		row := 0.0
		for j, y := range t {
			if y != 0 {
				row -= y * math.Log(clipProb(yPred[i][j]))
			}
		}
		s.add(row)
	}
	return s.value() / float64(len(yTrue))
}

// matrix gathers columns (in cols' order) of rows perm as finite numbers.
func matrix(f *frame, cols []string, perm []int) ([][]float64, error) {
	out := make([][]float64, len(perm))
	for i := range out {
		out[i] = make([]float64, len(cols))
	}
	for j, name := range cols {
		vals, err := finiteNumbers(f.col(name), perm)
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			out[i][j] = v
		}
	}
	return out, nil
}

// rowSums is DataFrame.sum(axis=1) over cols: NaN skipped, left to right;
// text fails (pandas 2 raises TypeError).
func rowSums(f *frame, cols []string) ([]float64, error) {
	sums := make([]float64, f.n)
	for _, name := range cols {
		c := f.col(name)
		if !c.numeric() {
			return nil, reject("column %q holds text; rows cannot be summed", name)
		}
		for i, v := range c.nums {
			if !math.IsNaN(v) {
				sums[i] += v
			}
		}
	}
	return sums, nil
}

// allInUnit is ((df[cols] >= 0) & (df[cols] <= 1)).all().all().
func allInUnit(f *frame, cols []string) error {
	for _, name := range cols {
		c := f.col(name)
		if !c.numeric() {
			return reject("column %q holds text; probabilities must be numbers", name)
		}
		for i, v := range c.nums {
			if !(v >= 0 && v <= 1) {
				return reject("column %q row %d: %v is not a probability in [0, 1]", name, i+1, v)
			}
		}
	}
	return nil
}

// isClose is numpy.isclose(a, 1, atol=1e-6) with rtol=1e-5.
func isCloseToOne(v float64) bool { return math.Abs(v-1) <= 1e-6+1e-5*1 }

// oneHotLogLoss is MLE-bench's one_hot_dfs_to_log_loss_inputs (submission
// columns restricted to the answers', both sorted by id, ids asserted equal)
// followed by log_loss. ansCols are the answers' columns, in order.
func oneHotLogLoss(sub *frame, ans *frame, ansCols []string, id string) (float64, error) {
	for _, c := range ansCols {
		if !sub.has(c) {
			return 0, reject("submission lacks column %q of the answers", c)
		}
	}
	sp, ap := sub.col(id).order(), ans.sortedRows(id)
	if !idsMatch(sub, sp, ans, ap, id) {
		return 0, reject("submission ids differ from the answers' after sorting")
	}
	var classes []string
	for _, c := range ansCols {
		if c != id {
			classes = append(classes, c)
		}
	}
	yPred, err := matrix(sub, classes, sp)
	if err != nil {
		return 0, err
	}
	yTrue, err := matrix(ans, classes, ap)
	if err != nil {
		return 0, err
	}
	return logLossRows(yTrue, yPred), nil
}

// checkOneHotAnswers checks the answers are an id column plus one-hot classes.
func checkOneHotAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", r.idColumn); err != nil {
		return err
	}
	for _, c := range a.cols {
		if c.name == r.idColumn {
			continue
		}
		if c.typ == colObject {
			return fmt.Errorf("answers column %q is not numeric", c.name)
		}
		for _, v := range c.nums {
			if v != 0 && v != 1 {
				return fmt.Errorf("answers column %q holds %v, not 0 or 1", c.name, v)
			}
		}
	}
	return nil
}

func init() {
	registerAUROC()
	registerSingleTarget()
	registerMultiColumn()
	registerLite()
	registerJigsaw()
	registerTextNormalization()
	registerDogsVsCats()
}

// registerAUROC adds the competitions graded by prepare_for_auroc_metric
// followed by roc_auc_score on one target column.
func registerAUROC() {
	for _, c := range []struct{ id, idCol, target string }{
		{"detecting-insults-in-social-commentary", "Comment", "Insult"},
		{"random-acts-of-pizza", "request_id", "requester_received_pizza"},
		{"tabular-playground-series-may-2022", "id", "target"},
		// The lite split's other prepare_for_auroc_metric competitions.
		{"aerial-cactus-identification", "id", "has_cactus"},
		{"histopathologic-cancer-detection", "id", "label"},
		{"siim-isic-melanoma-classification", "image_name", "target"},
		{"the-icml-2013-whale-challenge-right-whale-redux", "clip", "probability"},
		{"mlsp-2013-birds", "Id", "Probability"},
	} {
		register(&mleRules{id: c.id, metric: "auc", idColumn: c.idCol, targets: []string{c.target},
			checkAnswers: checkAUROCAnswers, grade: gradeAUROC})
	}
}

// registerSingleTarget adds competitions that score one target column with
// their own metric (accuracy, quadratic kappa, Jaccard, Pearson r).
func registerSingleTarget() {
	// prepare_for_accuracy_metric, then accuracy_score.
	register(&mleRules{id: "tabular-playground-series-dec-2021", metric: "accuracy", idColumn: "Id", targets: []string{"Cover_Type"},
		checkAnswers: answersHave("Id", "Cover_Type"),
		grade:        gradeTabularDec2021})

	// Its own prepare_for_grading (no row-count check), then
	// cohen_kappa_score(y_pred, y_true, weights="quadratic").
	register(&mleRules{id: "learning-agency-lab-automated-essay-scoring-2", metric: "qwk", idColumn: "essay_id", targets: []string{"score"},
		checkAnswers: answersHave("essay_id", "score"),
		grade:        gradeEssayScoring})

	// Its own prepare_for_metric, then the mean Jaccard of word sets.
	register(&mleRules{id: "tweet-sentiment-extraction", metric: "jaccard", idColumn: "textID", targets: []string{"selected_text"},
		checkAnswers: answersHave("textID", "selected_text"),
		grade:        gradeTweetSentimentExtraction})

	// Its own prepare_for_metric, then pearsonr(y_true, y_pred).
	register(&mleRules{id: "us-patent-phrase-to-phrase-matching", metric: "pearson", idColumn: "id", targets: []string{"score"},
		checkAnswers: answersHave("id", "score"),
		grade:        gradeUSPatentPhrases})
}

// gradeTabularDec2021 grades tabular-playground-series-dec-2021.
func gradeTabularDec2021(r *mleRules, sub, ans *frame) (float64, error) {
	id, target := r.idColumn, r.targets[0]
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	if err := needColumns(sub, "submission", target, id); err != nil {
		return 0, reject("%v", err)
	}
	sp, ap := sub.col(id).order(), ans.sortedRows(id)
	if !idsMatch(sub, sp, ans, ap, id) {
		return 0, reject("submission %q values differ from the answers'", id)
	}
	return accuracy(ans.col(target), ap, sub.col(target), sp)
}

// gradeEssayScoring grades learning-agency-lab-automated-essay-scoring-2.
func gradeEssayScoring(r *mleRules, sub, ans *frame) (float64, error) {
	id, target := r.idColumn, r.targets[0]
	if err := needColumns(sub, "submission", target, id); err != nil {
		return 0, reject("%v", err)
	}
	if sub.n == 0 {
		return 0, reject("submission has no rows")
	}
	sp, ap := sub.col(id).order(), ans.sortedRows(id)
	if !idsMatch(sub, sp, ans, ap, id) {
		return 0, reject("submission must contain the same ids as the answers")
	}
	yPred, err := classLabels(sub.col(target), sp)
	if err != nil {
		return 0, err
	}
	yTrue, err := classLabels(ans.col(target), ap)
	if err != nil {
		return 0, fmt.Errorf("answers: %v", err)
	}
	rt, rp, nl, err := pairLabels(yTrue, yPred)
	if err != nil {
		return 0, err
	}
	return quadraticKappa(rt, rp, nl), nil
}

// gradeTweetSentimentExtraction grades tweet-sentiment-extraction.
func gradeTweetSentimentExtraction(r *mleRules, sub, ans *frame) (float64, error) {
	id, target := r.idColumn, r.targets[0]
	if err := needColumns(sub, "submission", id, target); err != nil {
		return 0, reject("%v", err)
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	sp, ap := sub.col(id).order(), ans.sortedRows(id)
	if !idsMatch(sub, sp, ans, ap, id) {
		return 0, reject("submission textID values differ from the answers'")
	}
	sc, ac := sub.col(target), ans.col(target)
	var js jaccardScratch
	var sum neumaier
	for i := range sp {
		pred := sc.pyStr(sp[i])
		truth := wordSet([]byte(ac.pyStr(ap[i])))
		if len(truth) == 0 {
			if len(wordSet([]byte(pred))) == 0 {
				return 0, reject("row for %q: both texts have no words (grade.py divides by zero)", sub.col(id).pyStr(sp[i]))
			}
			sum.add(0)
			continue
		}
		sum.add(js.jaccard([]byte(pred), truth))
	}
	return sum.value() / float64(len(sp)), nil
}

// gradeUSPatentPhrases grades us-patent-phrase-to-phrase-matching.
func gradeUSPatentPhrases(r *mleRules, sub, ans *frame) (float64, error) {
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	if err := needColumns(sub, "submission", "id", "score"); err != nil {
		return 0, reject("%v", err)
	}
	sp, ap := sub.col("id").order(), ans.sortedRows("id")
	if !idsMatch(sub, sp, ans, ap, "id") {
		return 0, reject("ids differ between the submission and the answers")
	}
	yPred, err := finiteNumbers(sub.col("score"), sp)
	if err != nil {
		return 0, err
	}
	yTrue, err := finiteNumbers(ans.col("score"), ap)
	if err != nil {
		return 0, fmt.Errorf("answers: %v", err)
	}
	if len(yTrue) < 2 {
		return 0, reject("Pearson r needs at least 2 rows")
	}
	return pearsonR(yTrue, yPred), nil
}

// Class and target columns of the multi-column competitions below.
var (
	plantClasses = []string{"healthy", "multiple_diseases", "rust", "scab"}
	lmsysClasses = []string{"winner_model_a", "winner_model_b", "winner_tie"}
	nomadTargets = []string{"formation_energy_ev_natom", "bandgap_energy_ev"}
)

// registerMultiColumn adds competitions that score several columns: per-class
// ROC AUC, one-hot log loss, per-column RMSLE.
func registerMultiColumn() {
	// Exact column set, row count, sort by image_id, mean of per-class ROC AUC.
	register(&mleRules{id: "plant-pathology-2020-fgvc7", metric: "mean_column_auc", idColumn: "image_id", targets: plantClasses,
		checkAnswers: checkPlantPathologyAnswers,
		grade:        gradePlantPathology})

	// Exact column set, row count, row sums, range, then one-hot log loss.
	register(&mleRules{id: "leaf-classification", metric: "log_loss", idColumn: "id",
		checkAnswers: checkOneHotAnswers,
		grade:        gradeLeafClassification})

	// Shape (rows, 4), positional row sums and range, then one-hot log loss.
	register(&mleRules{id: "spooky-author-identification", metric: "log_loss", idColumn: "id",
		checkAnswers: checkOneHotAnswers,
		grade:        gradeSpookyAuthor})

	// Required columns (extra ones ignored), rows, range, sums rounded to 6
	// decimals equal to 1, sort by id, one-hot log loss.
	register(&mleRules{id: "lmsys-chatbot-arena", metric: "log_loss", idColumn: "id", targets: lmsysClasses,
		checkAnswers: checkLMSYSAnswers,
		grade:        gradeLMSYS})

	// Columns present, rows; rows paired by position (ids are not read);
	// mean of the two columns' RMSLE.
	register(&mleRules{id: "nomad2018-predict-transparent-conductors", metric: "mean_column_rmsle", idColumn: "id", targets: nomadTargets,
		checkAnswers: answersHave(nomadTargets...),
		grade:        gradeNomad2018})
}

// checkPlantPathologyAnswers is plant-pathology-2020-fgvc7's answers check.
func checkPlantPathologyAnswers(r *mleRules, a *frame) error {
	if !a.sameColumnSet(append([]string{"image_id"}, plantClasses...)) {
		return fmt.Errorf("answers columns %q are not image_id plus %q", a.names(), plantClasses)
	}
	for _, c := range plantClasses {
		if err := binaryColumn(a, c); err != nil {
			return err
		}
	}
	return nil
}

// gradePlantPathology grades plant-pathology-2020-fgvc7.
func gradePlantPathology(r *mleRules, sub, ans *frame) (float64, error) {
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	if !sub.sameColumnSet(append([]string{"image_id"}, plantClasses...)) {
		return 0, reject("submission columns %q are not exactly image_id plus %q", sub.names(), plantClasses)
	}
	sp, ap := sub.col("image_id").order(), ans.sortedRows("image_id")
	if !idsMatch(sub, sp, ans, ap, "image_id") {
		return 0, reject("submission image_id values differ from the answers'")
	}
	total := 0.0
	for _, c := range plantClasses {
		yTrue, _ := finiteNumbers(ans.col(c), ap)
		yScore, err := finiteNumbers(sub.col(c), sp)
		if err != nil {
			return 0, err
		}
		total += rocAUC(yTrue, yScore)
	}
	return total / float64(len(plantClasses)), nil
}

// gradeLeafClassification grades leaf-classification.
func gradeLeafClassification(r *mleRules, sub, ans *frame) (float64, error) {
	cols := ans.names()
	classes := cols[1:]
	if cols[0] != "id" {
		classes = slices.DeleteFunc(slices.Clone(cols), func(s string) bool { return s == "id" })
	}
	if !sub.sameColumnSet(cols) {
		return 0, reject("submission must have an id column and a column for each of the %d classes", len(classes))
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	sums, err := rowSums(sub, classes)
	if err != nil {
		return 0, err
	}
	for i, s := range sums {
		if !isCloseToOne(s) {
			return 0, reject("row %d: probabilities sum to %v, not 1", i+1, s)
		}
	}
	if err := allInUnit(sub, classes); err != nil {
		return 0, err
	}
	return oneHotLogLoss(sub, ans, cols, "id")
}

// gradeSpookyAuthor grades spooky-author-identification.
func gradeSpookyAuthor(r *mleRules, sub, ans *frame) (float64, error) {
	cols := ans.names()
	if sub.n != ans.n || len(sub.cols) != len(cols) {
		return 0, reject("submission shape (%d, %d) differs from (%d, %d)", sub.n, len(sub.cols), ans.n, len(cols))
	}
	positional := sub.names()[1:] // submission.iloc[:, 1:], whatever those columns are
	sums, err := rowSums(sub, positional)
	if err != nil {
		return 0, err
	}
	for i, s := range sums {
		if !isCloseToOne(s) {
			return 0, reject("row %d: probabilities sum to %v, not 1", i+1, s)
		}
	}
	if err := allInUnit(sub, positional); err != nil {
		return 0, err
	}
	return oneHotLogLoss(sub, ans, cols, "id")
}

// checkLMSYSAnswers is lmsys-chatbot-arena's answers check.
func checkLMSYSAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", append([]string{"id"}, lmsysClasses...)...); err != nil {
		return err
	}
	for _, c := range lmsysClasses {
		for _, v := range a.col(c).nums {
			if v != 0 && v != 1 {
				return fmt.Errorf("answers column %q holds %v, not 0 or 1", c, v)
			}
		}
		if !a.col(c).numeric() {
			return fmt.Errorf("answers column %q is not numeric", c)
		}
	}
	return nil
}

// gradeLMSYS grades lmsys-chatbot-arena.
func gradeLMSYS(r *mleRules, sub, ans *frame) (float64, error) {
	required := append([]string{"id"}, lmsysClasses...)
	var missing []string
	for _, c := range required {
		if !sub.has(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return 0, reject("submission is missing required columns %q", missing)
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	if err := allInUnit(sub, lmsysClasses); err != nil {
		return 0, err
	}
	sums, err := rowSums(sub, lmsysClasses)
	if err != nil {
		return 0, err
	}
	for i, s := range sums {
		if math.RoundToEven(s*1e6)/1e6 != 1 {
			return 0, reject("row %d: probabilities sum to %v, which rounded to 6 decimals is not 1", i+1, s)
		}
	}
	return oneHotLogLoss(sub, ans, required, "id")
}

// gradeNomad2018 grades nomad2018-predict-transparent-conductors.
func gradeNomad2018(r *mleRules, sub, ans *frame) (float64, error) {
	if err := needColumns(sub, "submission", nomadTargets...); err != nil {
		return 0, reject("%v", err)
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	perm := identity(sub.n)
	total := 0.0
	for _, c := range nomadTargets {
		yTrue, err := finiteNumbers(ans.col(c), perm)
		if err != nil {
			return 0, fmt.Errorf("answers: %v", err)
		}
		yPred, err := finiteNumbers(sub.col(c), perm)
		if err != nil {
			return 0, err
		}
		var s neumaier
		for i := range yTrue {
			if yTrue[i] <= -1 || yPred[i] <= -1 {
				return 0, reject("column %q row %d: values must be > -1 for RMSLE", c, i+1)
			}
			d := math.Log1p(yTrue[i]) - math.Log1p(yPred[i])
			s.add(d * d)
		}
		total += math.Sqrt(s.value() / float64(len(yTrue)))
	}
	return total / 2, nil
}

// ranzcrClasses are the nine scored classes of
// ranzcr-clip-catheter-line-classification.
var ranzcrClasses = []string{"ETT - Abnormal", "ETT - Borderline", "ETT - Normal", "NGT - Abnormal", "NGT - Borderline",
	"NGT - Incompletely Imaged", "NGT - Normal", "CVC - Abnormal", "CVC - Borderline"}

// registerLite adds rule sets for more competitions of MLE-bench's lite
// split (experiments/splits/low.txt) whose metric family mlerl has.
func registerLite() {
	// Set of ids equal, then both sorted by id (no element-wise id check;
	// equal sets and lengths make it one), cohen_kappa_score quadratic.
	register(&mleRules{id: "aptos2019-blindness-detection", metric: "qwk", idColumn: "id_code", targets: []string{"diagnosis"},
		checkAnswers: answersHave("id_code", "diagnosis"),
		grade:        gradeAPTOS2019})

	// Both sorted by key, then paired by position: keys are not compared, and
	// there is no row-count check beyond scikit-learn's equal lengths.
	register(&mleRules{id: "new-york-city-taxi-fare-prediction", metric: "rmse", idColumn: "key", targets: []string{"fare_amount"},
		checkAnswers: answersHave("key", "fare_amount"),
		grade:        gradeTaxiFare})

	// Columns, float values, rows, sorted by id, ids element-wise, RMSE.
	register(&mleRules{id: "denoising-dirty-documents", metric: "rmse", idColumn: "id", targets: []string{"value"},
		checkAnswers: checkDenoisingAnswers,
		grade:        gradeDenoising})

	// Every class column present (extra columns ignored), id, rows, row sums
	// in the class list's order, range, then one-hot log loss.
	register(&mleRules{id: "dog-breed-identification", metric: "log_loss", idColumn: "id",
		checkAnswers: checkOneHotAnswers,
		grade:        gradeDogBreed})

	// The nine scored classes (the answers also hold "CVC - Normal" and
	// "Swan Ganz Catheter Present", which are not scored): each through
	// prepare_for_auroc_metric, then the mean.
	register(&mleRules{id: "ranzcr-clip-catheter-line-classification", metric: "mean_column_auc", idColumn: "StudyInstanceUID", targets: ranzcrClasses,
		checkAnswers: checkRANZCRAnswers,
		grade:        gradeRANZCR})
}

// gradeAPTOS2019 grades aptos2019-blindness-detection.
func gradeAPTOS2019(r *mleRules, sub, ans *frame) (float64, error) {
	if err := needColumns(sub, "submission", "diagnosis"); err != nil {
		return 0, reject("%v", err)
	}
	if sub.n == 0 {
		return 0, reject("submission has no rows")
	}
	if !sub.has("id_code") {
		return 0, reject("submission has no id_code column (grade.py fails reading it)")
	}
	sp, ap := sub.col("id_code").order(), ans.sortedRows("id_code")
	if !idsMatch(sub, sp, ans, ap, "id_code") {
		return 0, reject("submission id_code values differ from the answers' (as a set, or in count)")
	}
	yPred, err := classLabels(sub.col("diagnosis"), sp)
	if err != nil {
		return 0, err
	}
	yTrue, err := classLabels(ans.col("diagnosis"), ap)
	if err != nil {
		return 0, fmt.Errorf("answers: %v", err)
	}
	rt, rp, nl, err := pairLabels(yTrue, yPred)
	if err != nil {
		return 0, err
	}
	return quadraticKappa(rt, rp, nl), nil
}

// gradeTaxiFare grades new-york-city-taxi-fare-prediction.
func gradeTaxiFare(r *mleRules, sub, ans *frame) (float64, error) {
	if err := needColumns(sub, "submission", "fare_amount", "key"); err != nil {
		return 0, reject("%v", err)
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d (scikit-learn: inconsistent lengths)", sub.n, ans.n)
	}
	sp, ap := sub.col("key").order(), ans.sortedRows("key")
	return rmseOf(ans.col("fare_amount"), ap, sub.col("fare_amount"), sp)
}

// checkDenoisingAnswers is denoising-dirty-documents' answers check.
func checkDenoisingAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", "id", "value"); err != nil {
		return err
	}
	if !a.col("value").numeric() {
		return errors.New(`answers column "value" is not numeric`)
	}
	return nil
}

// gradeDenoising grades denoising-dirty-documents.
func gradeDenoising(r *mleRules, sub, ans *frame) (float64, error) {
	if err := needColumns(sub, "submission", "id", "value"); err != nil {
		return 0, reject("%v", err)
	}
	if !sub.col("value").numeric() {
		return 0, reject(`column "value" holds text; it must be floats`)
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	sp, ap := sub.col("id").order(), ans.sortedRows("id")
	if !idsMatch(sub, sp, ans, ap, "id") {
		return 0, reject("submission id values differ from the answers'")
	}
	return rmseOf(ans.col("value"), ap, sub.col("value"), sp)
}

// gradeDogBreed grades dog-breed-identification.
func gradeDogBreed(r *mleRules, sub, ans *frame) (float64, error) {
	cols := ans.names()
	classes := slices.DeleteFunc(slices.Clone(cols), func(s string) bool { return s == "id" })
	for _, c := range classes {
		if !sub.has(c) {
			return 0, reject("submission has no column for class %q", c)
		}
	}
	if !sub.has("id") {
		return 0, reject("submission has no id column")
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	sums, err := rowSums(sub, classes)
	if err != nil {
		return 0, err
	}
	for i, s := range sums {
		if !isCloseToOne(s) {
			return 0, reject("row %d: probabilities sum to %v, not 1", i+1, s)
		}
	}
	if err := allInUnit(sub, classes); err != nil {
		return 0, err
	}
	return oneHotLogLoss(sub, ans, cols, "id")
}

// checkRANZCRAnswers is ranzcr-clip-catheter-line-classification's answers check.
func checkRANZCRAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", "StudyInstanceUID"); err != nil {
		return err
	}
	for _, c := range ranzcrClasses {
		if err := binaryColumn(a, c); err != nil {
			return err
		}
	}
	return nil
}

// gradeRANZCR grades ranzcr-clip-catheter-line-classification.
func gradeRANZCR(r *mleRules, sub, ans *frame) (float64, error) {
	for _, c := range ranzcrClasses {
		if !sub.has(c) {
			return 0, reject("class %q is not in the submission", c)
		}
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	total := 0.0
	for _, c := range ranzcrClasses {
		one := &mleRules{idColumn: "StudyInstanceUID", targets: []string{c}}
		auc, err := gradeAUROC(one, sub, ans)
		if err != nil {
			return 0, err
		}
		total += auc
	}
	return total / float64(len(ranzcrClasses)), nil
}

// jigsawClasses are the six label columns of
// jigsaw-toxic-comment-classification-challenge.
var jigsawClasses = []string{"toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"}

// jigsawKey is a cell's identity as a pandas index label: missing, a number
// (as a number) or a string.
func jigsawKey(c *column, i int) string {
	if c.missing(i) {
		return ""
	}
	if c.numeric() {
		return "n" + strconv.FormatFloat(c.nums[i], 'g', -1, 64)
	}
	return "s" + c.strs[i]
}

// registerJigsaw: its grade.py indexes both files by id, sorts the index,
// drops the rows the answers mark -1 (a boolean mask aligned on id), and
// passes every remaining column of each file, in file order, to
// roc_auc_score(average="macro"): columns pair by position, not by name.
func registerJigsaw() {
	register(&mleRules{id: "jigsaw-toxic-comment-classification-challenge", metric: "mean_column_auc", idColumn: "id", targets: jigsawClasses, allColumns: true,
		checkAnswers: checkJigsawAnswers,
		grade:        gradeJigsaw})
}

// checkJigsawAnswers is jigsaw-toxic-comment-classification-challenge's answers check.
func checkJigsawAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", append([]string{"id"}, jigsawClasses...)...); err != nil {
		return err
	}
	for _, c := range a.cols {
		if c.name == "id" {
			continue
		}
		if !c.numeric() {
			return fmt.Errorf("answers column %q is not numeric", c.name)
		}
	}
	return nil
}

// gradeJigsaw grades jigsaw-toxic-comment-classification-challenge.
func gradeJigsaw(r *mleRules, sub, ans *frame) (float64, error) {
	if !sub.has("id") {
		return 0, reject("submission is missing the id column")
	}
	for _, c := range jigsawClasses {
		if !sub.has(c) {
			return 0, reject("submission is missing the column %q", c)
		}
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	keptSub, keptAns, err := jigsawScoredRows(sub, ans)
	if err != nil {
		return 0, err
	}
	return jigsawMacroAUC(sub, ans, keptSub, keptAns)
}

// jigsawScoredRows is grade.py's sort by id and boolean mask: the rows of
// each file, sorted by id, whose answers labels are not -1. A submission id
// the answers lack fails the mask's alignment.
func jigsawScoredRows(sub, ans *frame) (keptSub, keptAns []int, err error) {
	ap := ans.sortedRows("id")
	keep := make(map[string]bool, ans.n)
	for _, i := range ap {
		sum := 0.0
		for _, c := range jigsawClasses {
			sum += ans.col(c).nums[i]
		}
		keep[jigsawKey(ans.col("id"), i)] = sum >= 0
	}
	for _, i := range ap {
		if keep[jigsawKey(ans.col("id"), i)] {
			keptAns = append(keptAns, i)
		}
	}
	idc := sub.col("id")
	for _, i := range idc.order() {
		k, ok := keep[jigsawKey(idc, i)]
		if !ok || idc.missing(i) {
			return nil, nil, reject("submission id %q is not an answers id (pandas: unalignable boolean indexer)", idc.strs[i])
		}
		if k {
			keptSub = append(keptSub, i)
		}
	}
	if len(keptSub) != len(keptAns) {
		return nil, nil, reject("scored rows differ in number: %d in the submission, %d in the answers (repeated ids)", len(keptSub), len(keptAns))
	}
	return keptSub, keptAns, nil
}

// jigsawMacroAUC is roc_auc_score(average="macro") on every non-id column of
// each file, paired by position, over the scored rows.
func jigsawMacroAUC(sub, ans *frame, keptSub, keptAns []int) (float64, error) {
	var subCols, ansCols []string
	for _, n := range sub.names() {
		if n != "id" {
			subCols = append(subCols, n)
		}
	}
	for _, n := range ans.names() {
		if n != "id" {
			ansCols = append(ansCols, n)
		}
	}
	if len(subCols) > len(ansCols) {
		return 0, reject("submission has %d value columns, the answers %d (roc_auc_score pairs them by position)", len(subCols), len(ansCols))
	}
	total := 0.0
	for j, name := range subCols {
		yScore, err := finiteNumbers(sub.col(name), keptSub)
		if err != nil {
			return 0, err
		}
		yTrue, err := finiteNumbers(ans.col(ansCols[j]), keptAns)
		if err != nil {
			return 0, fmt.Errorf("answers: %v", err)
		}
		pos := 0
		for _, v := range yTrue {
			if v != 0 && v != 1 {
				return 0, fmt.Errorf("answers column %q holds %v in a scored row", ansCols[j], v)
			}
			pos += int(v)
		}
		if pos == 0 || pos == len(yTrue) {
			return 0, reject("answers column %q has one class in the scored rows; ROC AUC is undefined", ansCols[j])
		}
		total += rocAUC(yTrue, yScore)
	}
	return total / float64(len(subCols)), nil
}

// registerTextNormalization: sorted by id, ids element-wise, both "after"
// columns through astype(str) (no fillna: a missing cell is "nan"), then
// accuracy_score on the strings.
func registerTextNormalization() {
	for _, id := range []string{"text-normalization-challenge-english-language", "text-normalization-challenge-russian-language"} {
		register(&mleRules{id: id, metric: "accuracy", idColumn: "id", targets: []string{"after"},
			checkAnswers: answersHave("id", "after"),
			grade:        gradeTextNormalization})
	}
}

// gradeTextNormalization grades both text-normalization-challenge competitions.
func gradeTextNormalization(r *mleRules, sub, ans *frame) (float64, error) {
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	if err := needColumns(sub, "submission", "after", "id"); err != nil {
		return 0, reject("%v", err)
	}
	sp, ap := sub.col("id").order(), ans.sortedRows("id")
	if !idsMatch(sub, sp, ans, ap, "id") {
		return 0, reject("submission ids differ from the answers'")
	}
	pc, tc := sub.col("after"), ans.col("after")
	hits := 0
	for i := range sp {
		if pc.pyStrNaN(sp[i]) == tc.pyStrNaN(ap[i]) {
			hits++
		}
	}
	return float64(hits) / float64(len(sp)), nil
}

// registerDogsVsCats: binary log loss on one probability column. Ids as a
// set, rows, range, sorted by id (ids not compared again: equal sets and
// lengths make them equal), log_loss on 1-D labels: each row's loss is
// -log(clip(p)) for label 1, -log(clip(1-p)) for label 0.
func registerDogsVsCats() {
	register(&mleRules{id: "dogs-vs-cats-redux-kernels-edition", metric: "log_loss", idColumn: "id", targets: []string{"label"},
		checkAnswers: checkDogsVsCatsAnswers,
		grade:        gradeDogsVsCats})
}

// checkDogsVsCatsAnswers is dogs-vs-cats-redux-kernels-edition's answers check.
func checkDogsVsCatsAnswers(r *mleRules, a *frame) error {
	if err := needColumns(a, "answers", "id"); err != nil {
		return err
	}
	return binaryColumn(a, "label")
}

// gradeDogsVsCats grades dogs-vs-cats-redux-kernels-edition.
func gradeDogsVsCats(r *mleRules, sub, ans *frame) (float64, error) {
	if err := needColumns(sub, "submission", "id", "label"); err != nil {
		return 0, reject("%v", err)
	}
	sp, ap := sub.col("id").order(), ans.sortedRows("id")
	if !sameIDSet(sub.col("id"), sp, ans.col("id"), ap) {
		return 0, reject("submission and answers have different ids")
	}
	if sub.n != ans.n {
		return 0, reject("submission has %d rows, the answers %d", sub.n, ans.n)
	}
	if err := allInUnit(sub, []string{"label"}); err != nil {
		return 0, err
	}
	yPred, err := finiteNumbers(sub.col("label"), sp)
	if err != nil {
		return 0, err
	}
	yTrue, _ := finiteNumbers(ans.col("label"), ap)
	var s neumaier
	for i, y := range yTrue {
		p := yPred[i]
		if y == 1 {
			s.add(-math.Log(clipProb(p)))
		} else {
			s.add(-math.Log(clipProb(1 - p)))
		}
	}
	return s.value() / float64(len(yTrue)), nil
}

// sameIDSet is Python's set(a) == set(b) on two id columns sorted in orders
// ap and bp: equal values (numbers as numbers) collapse; NaN equals nothing.
func sameIDSet(a *column, ap []int, b *column, bp []int) bool {
	dedup := func(c *column, p []int) []int {
		var out []int
		for _, i := range p {
			if len(out) > 0 && equalCells(c, out[len(out)-1], c, i) {
				continue
			}
			out = append(out, i)
		}
		return out
	}
	ua, ub := dedup(a, ap), dedup(b, bp)
	if len(ua) != len(ub) {
		return false
	}
	for i := range ua {
		if !equalCells(a, ua[i], b, ub[i]) {
			return false
		}
	}
	return true
}

// rmseOf is root_mean_squared_error over two columns in the given row orders.
func rmseOf(truth *column, ap []int, pred *column, sp []int) (float64, error) {
	yTrue, err := finiteNumbers(truth, ap)
	if err != nil {
		return 0, fmt.Errorf("answers: %v", err)
	}
	yPred, err := finiteNumbers(pred, sp)
	if err != nil {
		return 0, err
	}
	var s neumaier
	for i := range yTrue {
		d := yTrue[i] - yPred[i]
		s.add(d * d)
	}
	return math.Sqrt(s.value() / float64(len(yTrue))), nil
}
