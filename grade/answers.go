package grade

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
)

// Answers are a task's private answers, parsed once and reused for every
// submission graded against them. An Answers is safe for concurrent Grade calls.
type Answers struct {
	spec   Spec
	metric metricInfo
	ids    []string // answer order
	index  *idIndex // id -> answer row
	k      int      // number of target columns

	nums []float64 // row-major n×k numeric answers (float and int kinds)

	// log_loss: the class (target index) of each row.
	class []int32

	// accuracy: text labels, and their numbers when every label is a number.
	labels       []string
	numericLabel bool

	// jaccard: each row's sorted set of lower-cased words.
	words [][]string

	// qwk: the distinct answer labels, sorted.
	qwkLabels []int64

	// mle is set for imported MLE-bench competitions, graded by their own rules.
	mle *mleAnswers
}

// LoadAnswersFile reads an answers CSV from path.
func LoadAnswersFile(spec Spec, path string) (*Answers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("answers: %w", err)
	}
	defer f.Close()
	a, err := LoadAnswers(spec, f)
	if err != nil {
		return nil, fmt.Errorf("answers %s: %w", path, err)
	}
	return a, nil
}

// LoadAnswers reads an answers CSV: the id column and the target columns, one
// row per test id. An error means the task itself is broken.
func LoadAnswers(spec Spec, r io.Reader) (*Answers, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	m, _ := lookupMetric(spec.Metric)
	buf, err := readLimited(r)
	if err != nil {
		return nil, err
	}
	doc, err := splitDoc(buf)
	if err != nil {
		return nil, err
	}
	roles, err := columnRoles(spec, doc.header)
	if err != nil {
		return nil, err
	}
	l := &answersLoader{
		a: &Answers{
			spec:   spec,
			metric: m,
			k:      len(spec.TargetColumns),
		},
		roles: roles,
		ncols: len(doc.header),
	}
	// Sizing the columns up front saves copying them as they grow.
	if rows := bytes.Count(doc.body, []byte{'\n'}) + 1; rows <= maxFileBytes/2 {
		l.ends = make([]int, 0, rows)
		l.arena = make([]byte, 0, rows*8)
		switch {
		case m.name == "log_loss":
			l.a.class = make([]int32, 0, rows)
		case m.kind != kindString:
			l.a.nums = make([]float64, 0, rows*l.a.k)
		}
	}
	if doc.simple {
		scanSimple(doc.body, l.ncols, l)
	} else {
		_, qerr := scanQuoted(doc.body, l)
		if l.err == nil && qerr != nil {
			l.err = fmt.Errorf("row %d: %w", l.rows+1, qerr)
		}
	}
	if l.err != nil {
		return nil, l.err
	}
	if err := l.finish(); err != nil {
		return nil, err
	}
	return l.a, nil
}

// IDs returns the test ids in answers-file order.
func (a *Answers) IDs() []string { return slices.Clone(a.ids) }

// Spec returns the spec the answers were loaded with.
func (a *Answers) Spec() Spec { return a.spec }

// columnRoles maps each header column to -1 (the id) or its target index, and
// checks that the header is exactly the id column plus the target columns.
func columnRoles(spec Spec, header []string) ([]int, error) {
	want := make(map[string]int, len(spec.TargetColumns)+1)
	want[spec.IDColumn] = -1
	for i, c := range spec.TargetColumns {
		want[c] = i
	}
	roles := make([]int, len(header))
	seen := make(map[string]bool, len(header))
	for i, h := range header {
		if seen[h] {
			return nil, fmt.Errorf("column %q appears twice in the header", clip(h))
		}
		seen[h] = true
		role, ok := want[h]
		if !ok {
			return nil, fmt.Errorf("unexpected column %q (expected %s)", clip(h), expectedColumns(spec))
		}
		roles[i] = role
	}
	if len(header) != len(want) {
		for _, c := range append([]string{spec.IDColumn}, spec.TargetColumns...) {
			if !seen[c] {
				return nil, fmt.Errorf("missing column %q (expected %s)", c, expectedColumns(spec))
			}
		}
	}
	return roles, nil
}

func expectedColumns(spec Spec) string {
	s := fmt.Sprintf("%q", spec.IDColumn)
	for _, c := range spec.TargetColumns {
		s += fmt.Sprintf(", %q", c)
	}
	return s
}

// clip shortens text quoted in error messages.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

type answersLoader struct {
	a     *Answers
	roles []int
	ncols int
	rows  int
	err   error
	arena []byte // ids, concatenated, to make one string at the end
	ends  []int
	vals  []float64
	strs  [][]byte
}

func (l *answersLoader) fail(format string, args ...any) bool {
	l.err = fmt.Errorf("row %d: %s", l.rows, fmt.Sprintf(format, args...))
	return false
}

func (l *answersLoader) record(fields [][]byte) bool {
	l.rows++
	a := l.a
	if len(fields) != l.ncols {
		return l.fail("has %d fields, the header has %d", len(fields), l.ncols)
	}
	if cap(l.vals) < a.k {
		l.vals = make([]float64, a.k)
		l.strs = make([][]byte, a.k)
	}
	var id []byte
	for j, f := range fields {
		t := l.roles[j]
		if t < 0 {
			id = f
			continue
		}
		col := a.spec.TargetColumns[t]
		switch a.metric.kind {
		case kindString:
			if len(f) == 0 {
				return l.fail("column %q: empty label", col)
			}
			l.strs[t] = f
		default:
			v, st := parseNumber(f)
			if msg := numberProblem(st, f); msg != "" {
				return l.fail("column %q: %s", col, msg)
			}
			if a.metric.kind == kindInt && (v != math.Trunc(v) || math.Abs(v) > 1<<53) {
				return l.fail("column %q: %q is not an integer label", col, clip(string(f)))
			}
			l.vals[t] = v
		}
	}
	if len(id) == 0 {
		return l.fail("empty id")
	}
	l.arena = append(l.arena, id...)
	l.ends = append(l.ends, len(l.arena))

	switch a.metric.name {
	case "auc", "mean_column_auc", "log_loss":
		ones := 0
		for t, v := range l.vals[:a.k] {
			if v != 0 && v != 1 {
				return l.fail("column %q: %v is not 0 or 1", a.spec.TargetColumns[t], v)
			}
			if v == 1 {
				ones++
				if a.metric.name == "log_loss" {
					a.class = append(a.class, int32(t))
				}
			}
		}
		if a.metric.name == "log_loss" && ones != 1 {
			return l.fail("has %d classes set to 1, log_loss answers need exactly one", ones)
		}
	case "rmsle", "mean_column_rmsle":
		for t, v := range l.vals[:a.k] {
			if v <= -1 {
				return l.fail("column %q: %v is not > -1", a.spec.TargetColumns[t], v)
			}
		}
	case "jaccard":
		set := wordSet(l.strs[0])
		if len(set) == 0 {
			return l.fail("column %q: no words (the Jaccard score would divide by zero)", a.spec.TargetColumns[0])
		}
		a.words = append(a.words, set)
	case "accuracy":
		a.labels = append(a.labels, string(l.strs[0]))
	}
	if a.metric.kind != kindString && a.metric.name != "log_loss" {
		a.nums = append(a.nums, l.vals[:a.k]...)
	}
	return true
}

// numberProblem describes why a cell is not a finite number, or returns "".
func numberProblem(st numStatus, f []byte) string {
	switch st {
	case numEmpty:
		return "empty value where a number is needed"
	case numNotFinite:
		return fmt.Sprintf("%q is not a finite number", clip(string(f)))
	case numBad:
		return fmt.Sprintf("%q is not a number", clip(string(f)))
	}
	return ""
}

// finish builds the id strings and checks properties of the whole column.
func (l *answersLoader) finish() error {
	a := l.a
	n := l.rows
	if n == 0 {
		return errors.New("no rows")
	}
	all := string(l.arena)
	a.ids = make([]string, n)
	start := 0
	for i, end := range l.ends {
		a.ids[i] = all[start:end]
		start = end
	}
	var err error
	if a.index, err = newIDIndex(all, l.ends); err != nil {
		return err
	}
	k := a.k
	switch a.metric.name {
	case "auc", "mean_column_auc":
		for t := 0; t < k; t++ {
			pos := 0
			for i := 0; i < n; i++ {
				if a.nums[i*k+t] == 1 {
					pos++
				}
			}
			if pos == 0 || pos == n {
				return fmt.Errorf("column %q: all %d answers are %d; ROC AUC needs both classes", a.spec.TargetColumns[t], n, min(pos, 1))
			}
		}
	case "pearson":
		if constant(a.nums) {
			return fmt.Errorf("column %q: all answers are %v; Pearson r is undefined", a.spec.TargetColumns[0], a.nums[0])
		}
	case "qwk":
		labels := make([]int64, n)
		for i, v := range a.nums {
			labels[i] = int64(v)
		}
		slices.Sort(labels)
		a.qwkLabels = slices.Compact(labels)
		if len(a.qwkLabels) < 2 {
			return fmt.Errorf("column %q: all answers are %d; quadratic weighted kappa needs two labels", a.spec.TargetColumns[0], a.qwkLabels[0])
		}
	case "accuracy":
		nums := make([]float64, n)
		a.numericLabel = true
		for i, s := range a.labels {
			v, st := parseNumber([]byte(s))
			if st != numOK {
				a.numericLabel = false
				break
			}
			nums[i] = v
		}
		if a.numericLabel {
			a.nums = nums
		}
	}
	return nil
}

func constant(v []float64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}
