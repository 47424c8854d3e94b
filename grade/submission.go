package grade

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
)

// parallelMinBytes is the body size below which one goroutine reads the
// submission: splitting small files costs more than it saves.
const parallelMinBytes = 1 << 18

// logLossEps is the clipping bound of CONTRACT.md §1: float64 machine epsilon,
// which scikit-learn >= 1.5's log_loss clips with.
const logLossEps = 0x1p-52

// rowSumTolerance is numpy.isclose(sum, 1, atol=1e-6) with its default
// rtol=1e-5, which MLE-bench's log_loss graders use to check row sums.
const rowSumTolerance = 1e-6 + 1e-5

func invalid(format string, args ...any) Result {
	return Result{Error: fmt.Sprintf(format, args...)}
}

func valid(score float64) Result {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return invalid("score is not finite (%v): predictions too large to score", score)
	}
	return Result{Valid: true, Score: &score}
}

// GradeFile grades the submission CSV at path.
func (a *Answers) GradeFile(path string) Result {
	f, err := os.Open(path)
	if err != nil {
		return invalid("cannot read submission: %v", err)
	}
	defer f.Close()
	return a.Grade(f)
}

// Grade reads a submission CSV and scores it. It never panics: a submission
// that cannot be scored is invalid with a one-line reason.
func (a *Answers) Grade(submission io.Reader) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = invalid("internal error while grading: %v", p)
		}
	}()
	buf, err := readLimited(submission)
	if err != nil {
		return invalid("cannot read submission: %v", err)
	}
	return a.gradeBytes(buf)
}

func (a *Answers) gradeBytes(buf []byte) Result {
	if a.mle != nil {
		return a.mle.gradeBytes(buf)
	}
	doc, err := splitDoc(buf)
	if err != nil {
		return invalid("%v", err)
	}
	roles, err := columnRoles(a.spec, doc.header)
	if err != nil {
		return invalid("%v", err)
	}
	nparts := 1
	if len(doc.body) >= parallelMinBytes {
		nparts = runtime.GOMAXPROCS(0)
	}
	return a.gradeDoc(doc, roles, nparts)
}

// gradeDoc grades a parsed document, reading a simple body in nparts pieces.
func (a *Answers) gradeDoc(doc csvDoc, roles []int, nparts int) Result {
	ncols := len(doc.header)
	var ws []*worker
	if doc.simple {
		parts := splitParts(doc.body, nparts)
		ws = make([]*worker, len(parts))
		var wg sync.WaitGroup
		for i, p := range parts {
			w := a.newWorker(roles, ncols)
			ws[i] = w
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer w.recoverPanic()
				scanSimple(p, ncols, w)
				if w.errMsg == "" {
					w.flush()
				}
			}()
		}
		wg.Wait()
	} else {
		w := a.newWorker(roles, ncols)
		ws = []*worker{w}
		func() {
			defer w.recoverPanic()
			if _, qerr := scanQuoted(doc.body, recordFunc(w.recordNow)); qerr != nil && w.errMsg == "" {
				w.errRow, w.errMsg = w.rows+1, qerr.Error()
			}
		}()
	}

	// The first failure in file order wins, so messages do not depend on timing.
	before := 0
	for _, w := range ws {
		if w.errMsg != "" {
			return invalid("row %d: %s", before+w.errRow, w.errMsg)
		}
		before += w.rows
	}
	total := before
	n := len(a.ids)

	seen := make([]int32, n)
	row := int32(0)
	for _, w := range ws {
		for _, ai := range w.rowAns {
			row++
			if seen[ai] != 0 {
				return invalid("row %d: id %q appears twice (also row %d)", row, clip(a.ids[ai]), seen[ai])
			}
			seen[ai] = row
		}
	}
	if total != n {
		if total == 0 {
			return invalid("no data rows (header only), expected %d", n)
		}
		for i, s := range seen {
			if s == 0 {
				return invalid("has %d rows, expected %d: id %q is missing", total, n, clip(a.ids[i]))
			}
		}
		return invalid("has %d rows, expected %d", total, n)
	}
	return a.score(ws)
}

// neumaier is a compensated sum, so a million-row mean stays within a few
// ulps of numpy's pairwise sum.
type neumaier struct{ sum, c float64 }

func (s *neumaier) add(x float64) {
	t := s.sum + x
	if math.Abs(s.sum) >= math.Abs(x) {
		s.c += (s.sum - t) + x
	} else {
		s.c += (x - t) + s.sum
	}
	s.sum = t
}

func (s *neumaier) merge(o neumaier) { s.add(o.sum); s.add(o.c) }
func (s neumaier) value() float64    { return s.sum + s.c }

// worker reads one part of a submission. Metrics whose rows are independent
// (errors, log loss, accuracy, Jaccard) are summed while reading; the others
// keep each row's values for a second pass.
type worker struct {
	a     *Answers
	roles []int
	ncols int
	idCol int
	next  int32 // the answer row to try first: submissions are usually in answer order
	guess bool  // whether to try next before the index

	batch   [][]byte // queued rows' fields, row-major
	queued  int
	hashes  [batchRows]uint64
	touched byte // keeps the prefetching loads alive
	keep    bool // whether to keep values in vals
	rows    int
	errRow  int
	errMsg  string

	rowAns []int32   // answer row of each submission row
	vals   []float64 // row-major values of kept rows
	cur    []float64

	sums             []neumaier // per target
	matches          int
	numericSubLabels int
	js               jaccardScratch
}

func (a *Answers) newWorker(roles []int, ncols int) *worker {
	w := &worker{a: a, roles: roles, ncols: ncols, cur: make([]float64, a.k), sums: make([]neumaier, a.k),
		batch: make([][]byte, batchRows*ncols), guess: true}
	for j, r := range roles {
		if r < 0 {
			w.idCol = j
		}
	}
	switch a.metric.name {
	case "auc", "mean_column_auc", "pearson", "qwk":
		w.keep = true
	}
	return w
}

func (w *worker) recoverPanic() {
	if p := recover(); p != nil && w.errMsg == "" {
		w.errRow, w.errMsg = w.rows, fmt.Sprintf("internal error while grading: %v", p)
	}
}

func (w *worker) fail(format string, args ...any) bool {
	w.errRow, w.errMsg = w.rows, fmt.Sprintf(format, args...)
	return false
}

// batchRows is how many rows a worker reads before looking up their ids
// together (see idIndex).
const batchRows = 32

// record queues a row of a simple file, whose fields alias the file and so
// stay valid, and handles the queue when it is full.
func (w *worker) record(fields [][]byte) bool {
	if len(fields) != w.ncols {
		// Keep errors in file order: the queued rows come first.
		if !w.flush() {
			return false
		}
		w.rows++
		return w.fail("has %d fields, the header has %d", len(fields), w.ncols)
	}
	copy(w.batch[w.queued*w.ncols:], fields)
	w.queued++
	if w.queued == batchRows {
		return w.flush()
	}
	return true
}

// recordNow handles a row at once (quoted files reuse the fields' memory).
func (w *worker) recordNow(fields [][]byte) bool {
	if len(fields) != w.ncols {
		w.rows++
		return w.fail("has %d fields, the header has %d", len(fields), w.ncols)
	}
	copy(w.batch, fields)
	w.queued = 1
	return w.flush()
}

// flush looks up the queued rows' ids and handles the rows in order.
// Submissions are usually written in the answers' order, so while that holds
// the row after the previous match is tried first; otherwise the ids are
// hashed and their slots touched before any is resolved, so the cache
// misses of the whole batch overlap.
func (w *worker) flush() bool {
	a, nc, n := w.a, w.ncols, w.queued
	w.queued = 0
	hashed := !w.guess
	if hashed {
		var t byte
		for i := 0; i < n; i++ {
			w.hashes[i] = a.index.hash(w.batch[i*nc+w.idCol])
			t += a.index.touch(w.hashes[i])
		}
		w.touched += t
	}
	for i := 0; i < n; i++ {
		f := w.batch[i*nc : (i+1)*nc]
		id := f[w.idCol]
		ai := int32(-1)
		if w.guess && int(w.next) < len(a.ids) && a.ids[w.next] == string(id) {
			ai = w.next
		} else {
			h := w.hashes[i]
			if !hashed {
				h = a.index.hash(id)
			}
			ai = a.index.find(id, h)
			w.guess = ai >= 0 && ai == w.next
		}
		w.next = ai + 1
		if !w.row(f, ai) {
			return false
		}
	}
	return true
}

// row checks and scores one row whose id is answer row ai (-1: unknown).
func (w *worker) row(fields [][]byte, ai int32) bool {
	w.rows++
	a := w.a
	if ai < 0 {
		return w.fail("unknown id %q", clip(string(fields[w.idCol])))
	}
	w.rowAns = append(w.rowAns, ai)

	if a.metric.kind == kindString {
		f := fields[0]
		for j, r := range w.roles {
			if r >= 0 {
				f = fields[j]
			}
		}
		if a.metric.name == "jaccard" {
			w.sums[0].add(w.js.jaccard(f, a.words[ai]))
			return true
		}
		return w.accuracyRow(ai, f)
	}

	rowSum := 0.0
	for j, f := range fields {
		t := w.roles[j]
		if t < 0 {
			continue
		}
		v, st := parseNumber(f)
		if st != numOK {
			return w.fail("column %q: %s", a.spec.TargetColumns[t], numberProblem(st, f))
		}
		switch a.metric.name {
		case "auc", "log_loss":
			if v < 0 || v > 1 {
				return w.fail("column %q: %v is outside [0, 1]", a.spec.TargetColumns[t], v)
			}
		case "rmsle", "mean_column_rmsle":
			if v <= -1 {
				return w.fail("column %q: %v is not > -1 (the metric takes log1p)", a.spec.TargetColumns[t], v)
			}
		case "qwk":
			if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
				return w.fail("column %q: %q is not an integer label", a.spec.TargetColumns[t], clip(string(f)))
			}
		}
		w.cur[t] = v
		rowSum += v
	}
	if w.keep {
		w.vals = append(w.vals, w.cur...)
		return true
	}
	var truth []float64 // log_loss keeps classes, not numbers
	if a.metric.name != "log_loss" {
		truth = a.nums[int(ai)*a.k : int(ai)*a.k+a.k]
	}
	switch a.metric.name {
	case "log_loss":
		if math.Abs(rowSum-1) > rowSumTolerance {
			return w.fail("probabilities sum to %v, not 1 (tolerance %v)", rowSum, rowSumTolerance)
		}
		// scikit-learn >= 1.5: clip, no renormalisation, -log p(true).
		w.sums[0].add(-math.Log(clipProb(w.cur[a.class[ai]])))
	case "rmse", "mean_column_rmse":
		for t, v := range w.cur {
			d := truth[t] - v
			w.sums[t].add(d * d)
		}
	case "mae":
		w.sums[0].add(math.Abs(truth[0] - w.cur[0]))
	case "rmsle", "mean_column_rmsle":
		for t, v := range w.cur {
			d := math.Log1p(truth[t]) - math.Log1p(v)
			w.sums[t].add(d * d)
		}
	}
	return true
}

func clipProb(p float64) float64 {
	return min(max(p, logLossEps), 1-logLossEps)
}

func (w *worker) accuracyRow(ai int32, label []byte) bool {
	a := w.a
	col := a.spec.TargetColumns[0]
	if len(label) == 0 {
		return w.fail("column %q: empty label", col)
	}
	v, st := parseNumber(label)
	if a.numericLabel {
		if st != numOK {
			return w.fail("column %q: %q is not a number (the answer labels are numbers)", col, clip(string(label)))
		}
		if v == a.nums[ai] {
			w.matches++
		}
		return true
	}
	if st == numOK {
		w.numericSubLabels++
	}
	if a.labels[ai] == string(label) {
		w.matches++
	}
	return true
}

// score computes the metric once every row has been read and checked.
func (a *Answers) score(ws []*worker) Result {
	n := len(a.ids)
	k := a.k
	sums := make([]neumaier, k)
	for _, w := range ws {
		for t := range sums {
			sums[t].merge(w.sums[t])
		}
	}
	mean := func(t int) float64 { return sums[t].value() / float64(n) }
	switch a.metric.name {
	case "log_loss", "mae", "jaccard":
		return valid(mean(0))
	case "rmse", "rmsle":
		return valid(math.Sqrt(mean(0)))
	case "mean_column_rmse", "mean_column_rmsle":
		total := 0.0
		for t := 0; t < k; t++ {
			total += math.Sqrt(mean(t))
		}
		return valid(total / float64(k))
	case "accuracy":
		matches, numeric := 0, 0
		for _, w := range ws {
			matches += w.matches
			numeric += w.numericSubLabels
		}
		if !a.numericLabel && numeric == n {
			return invalid("every submitted label is a number but the answer labels are text (sklearn rejects the mix of label types)")
		}
		return valid(float64(matches) / float64(n))
	case "auc", "mean_column_auc":
		return a.scoreAUC(ws)
	case "pearson":
		return a.scorePearson(ws)
	case "qwk":
		return a.scoreQWK(ws)
	}
	return invalid("metric %q has no scorer", a.metric.name)
}
