package grade

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A frame is a CSV file read the way MLE-bench reads it: pandas.read_csv with
// its default options and float_precision="round_trip". It exists for the
// imported MLE-bench competitions, whose graders work on what pandas makes of
// a file rather than on the file's text:
//
//   - Header names that repeat become "a", "a.1", "a.2"; an empty one becomes
//     "Unnamed: i". Blank and whitespace-only lines are skipped. A row with
//     fewer fields than the header is padded with NaN; a row with more is an
//     error (pandas raises, or treats the first column as an index, which no
//     grader here accepts either).
//   - Each column gets one type, inferred as pandas' C parser does: int64 when
//     every cell is an integer (optional sign, spaces or tabs around it) and
//     none is missing; else float64 when every non-missing cell is a number
//     (missing cells are NaN; "inf" and "infinity" in any case, signed, are
//     infinities); else bool when every cell is True/TRUE/true/False/FALSE/false
//     and none is missing; else text ("object"), where missing cells are NaN
//     and every other cell keeps its exact text.
//   - Missing means the whole cell is one of pandas 2's default NA words:
//     "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
//     "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
//     "nan", "null" (quoted or not; " NA" with a space is text).
//   - Integers beyond int64 are read as float64 (pandas makes them uint64 or
//     text; nothing graded here has such ids).
type frame struct {
	cols  []*column
	index map[string]int
	n     int

	mu     sync.Mutex
	orders map[string][]int // sortedRows' cache
}

type colType uint8

const (
	colInt    colType = iota // int64, never missing
	colFloat                 // float64, NaN where missing
	colBool                  // bool, never missing
	colObject                // text, with missing cells
)

func (t colType) String() string {
	return [...]string{"int64", "float64", "bool", "object"}[t]
}

// column holds one column in its inferred type. nums holds every numeric
// type's values as float64 (bool as 0/1), which is what numpy compares and
// scikit-learn computes with; ints keeps int64 values exactly.
type column struct {
	name string
	typ  colType
	ints []int64
	nums []float64
	strs []string // object: the text (raw text for other types too)
	na   []bool   // object: missing cells

	dropped bool // read without its values (readFrameKeep)
}

var pandasNA = map[string]bool{
	"": true, "#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true,
	"-NaN": true, "-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true,
	"NA": true, "NULL": true, "NaN": true, "None": true, "n/a": true, "nan": true, "null": true,
}

var errFrameEmpty = errors.New("empty file")

// readFrame parses a CSV file into a frame.
func readFrame(buf []byte) (*frame, error) { return readFrameKeep(buf, nil) }

// readFrameKeep is readFrame keeping only the data of the columns keep
// accepts (nil: all); the others keep their name, without values. Large
// answers files hold many columns a grader never reads.
func readFrameKeep(buf []byte, keep func(name string) bool) (*frame, error) {
	doc, err := splitDoc(buf)
	if err != nil {
		if errors.Is(err, errEmpty) {
			return nil, errFrameEmpty
		}
		return nil, err
	}
	ncols := len(doc.header)
	names := pandasNames(doc.header)
	kept := make([]bool, ncols)
	for j, name := range names {
		kept[j] = keep == nil || keep(name)
	}
	raw := make([][]string, ncols)
	rows := 0
	var rowErr error
	sink := recordFunc(func(fields [][]byte) bool {
		if len(fields) == 1 && len(bytes.Trim(fields[0], " \t")) == 0 && len(fields[0]) > 0 {
			return true // a whitespace-only line: pandas skips it
		}
		rows++
		if len(fields) > ncols {
			rowErr = fmt.Errorf("row %d has %d fields, the header has %d", rows, len(fields), ncols)
			return false
		}
		for j := range raw {
			if !kept[j] {
				continue
			}
			if j < len(fields) {
				raw[j] = append(raw[j], string(fields[j]))
			} else {
				raw[j] = append(raw[j], "") // missing: NaN
			}
		}
		return true
	})
	if doc.simple {
		scanSimple(doc.body, ncols, sink)
	} else if _, err := scanQuoted(doc.body, sink); err != nil {
		return nil, err
	}
	if rowErr != nil {
		return nil, rowErr
	}
	f := &frame{index: make(map[string]int, ncols), n: rows}
	for j, name := range names {
		f.index[name] = j
		if kept[j] {
			f.cols = append(f.cols, inferColumn(name, raw[j]))
		} else {
			f.cols = append(f.cols, &column{name: name, typ: colObject, dropped: true})
		}
	}
	return f, nil
}

// pandasNames names header columns as pandas does: an empty name is
// "Unnamed: i", a repeated one gets ".1", ".2", ...
func pandasNames(header []string) []string {
	names := make([]string, len(header))
	taken := make(map[string]bool, len(header))
	seen := make(map[string]int)
	for j, h := range header {
		name := h
		if name == "" {
			name = "Unnamed: " + strconv.Itoa(j)
		}
		if k, dup := seen[h]; dup {
			for {
				name = fmt.Sprintf("%s.%d", h, k)
				k++
				if !taken[name] {
					break
				}
			}
			seen[h] = k
		} else {
			seen[h] = 1
		}
		taken[name] = true
		names[j] = name
	}
	return names
}

func (f *frame) col(name string) *column {
	if j, ok := f.index[name]; ok {
		return f.cols[j]
	}
	return nil
}

func (f *frame) has(names ...string) bool {
	for _, n := range names {
		if f.col(n) == nil {
			return false
		}
	}
	return true
}

func (f *frame) names() []string {
	out := make([]string, len(f.cols))
	for i, c := range f.cols {
		out[i] = c.name
	}
	return out
}

// sameColumnSet is Python's set(df.columns) == set(want).
func (f *frame) sameColumnSet(want []string) bool {
	a := slices.Clone(f.names())
	b := slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func trimSpaceTab(s string) string { return strings.Trim(s, " \t") }

// parseInt64 reads an integer as pandas' C parser does.
func parseInt64(s string) (int64, bool) {
	t := trimSpaceTab(s)
	if t == "" {
		return 0, false
	}
	d := t
	if d[0] == '+' || d[0] == '-' {
		d = d[1:]
	}
	if d == "" {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(strings.TrimPrefix(t, "+"), 10, 64)
	return v, err == nil
}

// parseFloatCell reads a number as pandas' C parser with round_trip does,
// including its infinity spellings.
func parseFloatCell(s string) (float64, bool) {
	v, st := parseNumber([]byte(s))
	if st == numOK {
		return v, true
	}
	t := strings.ToLower(trimSpaceTab(s))
	sign := 1.0
	if t != "" && (t[0] == '+' || t[0] == '-') {
		if t[0] == '-' {
			sign = -1
		}
		t = t[1:]
	}
	if t == "inf" || t == "infinity" {
		return math.Inf(int(sign)), true
	}
	return 0, false
}

// inferColumn types a column as pandas' read_csv does: int64 if every cell
// is an integer (and none missing), else float64 if every non-missing cell is
// a number, else bool if every cell is a True/False word, else object.
func inferColumn(name string, raw []string) *column {
	c := &column{name: name, strs: raw}
	n := len(raw)
	missing := 0
	for _, s := range raw {
		if pandasNA[s] {
			missing++
		}
	}
	if missing == 0 {
		if ints, ok := intCells(raw); ok {
			c.typ, c.ints = colInt, ints
			c.nums = make([]float64, n)
			for i, v := range ints {
				c.nums[i] = float64(v)
			}
			return c
		}
	}
	if nums, ok := floatCells(raw); ok && n > 0 {
		c.typ, c.nums = colFloat, nums
		return c
	}
	if missing == 0 && n > 0 {
		if bools, ok := boolCells(raw); ok {
			c.typ, c.nums = colBool, bools
			return c
		}
	}
	if n == 0 {
		// pandas types an empty column as object.
		c.typ = colObject
		return c
	}
	c.typ = colObject
	c.na = make([]bool, n)
	for i, s := range raw {
		c.na[i] = pandasNA[s]
	}
	return c
}

// intCells parses every cell as an int64; ok is false at the first that is not.
func intCells(raw []string) ([]int64, bool) {
	ints := make([]int64, len(raw))
	for i, s := range raw {
		v, good := parseInt64(s)
		if !good {
			return nil, false
		}
		ints[i] = v
	}
	return ints, true
}

// floatCells parses every cell as a float64, missing cells as NaN; ok is
// false at the first cell that is neither.
func floatCells(raw []string) ([]float64, bool) {
	nums := make([]float64, len(raw))
	for i, s := range raw {
		if pandasNA[s] {
			nums[i] = math.NaN()
			continue
		}
		v, good := parseFloatCell(s)
		if !good {
			return nil, false
		}
		nums[i] = v
	}
	return nums, true
}

// boolCells reads every cell as a pandas bool word (1 or 0); ok is false at
// the first cell that is not one.
func boolCells(raw []string) ([]float64, bool) {
	bools := make([]float64, len(raw))
	for i, s := range raw {
		switch s {
		case "True", "TRUE", "true":
			bools[i] = 1
		case "False", "FALSE", "false":
			bools[i] = 0
		default:
			return nil, false
		}
	}
	return bools, true
}

func (c *column) numeric() bool { return c.typ != colObject }

// missing reports whether cell i is NaN.
func (c *column) missing(i int) bool {
	switch c.typ {
	case colFloat:
		return math.IsNaN(c.nums[i])
	case colObject:
		return c.na[i]
	}
	return false
}

// order returns the row order of pandas' sort_values on this column:
// ascending, missing values last. Ties keep file order (pandas' default
// quicksort does not promise that; see docs/mlebench.md).
func (c *column) order() []int {
	idx := make([]int, len(c.strs))
	for i := range idx {
		idx[i] = i
	}
	var less func(a, b int) int
	switch c.typ {
	case colInt:
		less = func(a, b int) int { return cmp.Compare(c.ints[a], c.ints[b]) }
	case colObject:
		less = func(a, b int) int {
			ma, mb := c.na[a], c.na[b]
			if ma || mb {
				return cmp.Compare(b2i(ma), b2i(mb))
			}
			return strings.Compare(c.strs[a], c.strs[b]) // UTF-8 byte order is code point order, as Python's
		}
	default:
		less = func(a, b int) int { return cmp.Compare(c.nums[a], c.nums[b]) } // cmp puts NaN first
		nan := 0
		for i, v := range c.nums {
			if !math.IsNaN(v) {
				idx[i-nan] = i
			} else {
				nan++
			}
		}
		j := len(idx) - nan
		for i, v := range c.nums {
			if math.IsNaN(v) {
				idx[j] = i
				j++
			}
		}
		head := idx[:len(idx)-nan]
		slices.SortFunc(head, func(a, b int) int {
			if r := less(a, b); r != 0 {
				return r
			}
			return cmp.Compare(a, b)
		})
		return idx
	}
	slices.SortFunc(idx, func(a, b int) int {
		if r := less(a, b); r != 0 {
			return r
		}
		return cmp.Compare(a, b) // stable: file order among equal values
	})
	return idx
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sortedRows is col(name).order(), computed once per frame and column (the
// answers are sorted the same way for every submission).
func (f *frame) sortedRows(name string) []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o, ok := f.orders[name]; ok {
		return o
	}
	if f.orders == nil {
		f.orders = map[string][]int{}
	}
	o := f.col(name).order()
	f.orders[name] = o
	return o
}

// equalCells is numpy's a[i] == b[j] for two columns' cells: numbers compare
// as numbers (int64 against float64 as float64), text as text, a number never
// equals text, and NaN equals nothing.
func equalCells(a *column, i int, b *column, j int) bool {
	if a.missing(i) || b.missing(j) {
		return false
	}
	if a.numeric() != b.numeric() {
		return false
	}
	if !a.numeric() {
		return a.strs[i] == b.strs[j]
	}
	if a.typ == colInt && b.typ == colInt {
		return a.ints[i] == b.ints[j]
	}
	return a.nums[i] == b.nums[j]
}

// pyStr is Python's str() of cell i after pandas' fillna("") (astype(str)).
func (c *column) pyStr(i int) string {
	if c.missing(i) {
		return ""
	}
	switch c.typ {
	case colInt:
		return strconv.FormatInt(c.ints[i], 10)
	case colFloat:
		return pyFloatRepr(c.nums[i])
	case colBool:
		if c.nums[i] == 1 {
			return "True"
		}
		return "False"
	}
	return c.strs[i]
}

// pyStrNaN is Python's str() of cell i after pandas' astype(str) without
// fillna: a missing cell is "nan".
func (c *column) pyStrNaN(i int) string {
	if c.missing(i) {
		return "nan"
	}
	return c.pyStr(i)
}

// pyFloatRepr is Python's repr of a float: the shortest digits that read back
// exactly, in positional notation when the decimal exponent is in [-4, 16),
// else in scientific notation with at least two exponent digits.
func pyFloatRepr(v float64) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±XX
	k := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[k+1:])
	if v != 0 && (exp < -4 || exp >= 16) {
		return e
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// CSVHeaderFile returns the column names of a CSV file as pandas names them
// (repeats become "a.1", empty names "Unnamed: i"), reading only its start.
func CSVHeaderFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	buf = buf[:n]
	if n == len(buf) { // keep whole lines only: the header is the first record
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i+1]
		}
	}
	fr, err := readFrame(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return fr.names(), nil
}
