package recipe

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// stats are what summarise counts of one column's sample values.
type stats struct {
	present, totalLen, words, images int
	numeric, integer, nonASCII       bool
	booleans                         bool // every value is a TRUE/FALSE spelling pandas reads as bool
	seen                             map[string]int
	values                           []string // the present values, in row order
}

// columnStats counts column i's sample values. Distinct values are counted
// without a cap: a capped count makes every long column look repetitive, so
// "mostly distinct" could never hold past twice the cap.
func columnStats(rows [][]string, i int) stats {
	st := stats{numeric: true, integer: true, booleans: true, seen: map[string]int{}}
	for _, r := range rows {
		if i >= len(r) || pandasNA[r[i]] {
			continue
		}
		v := r[i]
		st.present++
		st.values = append(st.values, v)
		st.totalLen += utf8.RuneCountInString(v)
		st.words += len(strings.Fields(v))
		st.seen[v]++
		if !utf8ValidASCII(v) {
			st.nonASCII = true
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			st.numeric = false
		} else if f != math.Trunc(f) {
			st.integer = false
		}
		if !pandasBool[v] {
			st.booleans = false
		}
		if isImagePath(v) {
			st.images++
		}
	}
	return st
}

// pandasBool are the spellings pandas' read_csv turns into True and False.
var pandasBool = map[string]bool{"True": true, "False": true, "TRUE": true, "FALSE": true, "true": true, "false": true}

func isImagePath(v string) bool {
	lv := strings.ToLower(v)
	for _, ext := range imageExts {
		if strings.HasSuffix(lv, ext) {
			return true
		}
	}
	return false
}

// Thresholds of classify.
const (
	// highCardinalityLevels: more levels than this makes a categorical
	// column high-cardinality.
	highCardinalityLevels = 50
	// idUniqueShare: an id-named column this close to one value per row
	// identifies rows; below it, its values are labels shared by rows (a
	// user, a movie) and it is a categorical column.
	idUniqueShare = 0.9
	// minIDRows: fewer sample values than this prove nothing about
	// uniqueness.
	minIDRows = 20
)

// classify sets the kind of a feature column. In order: image paths;
// identifiers (named like one and nearly unique, or one distinct token per
// row); an id-named column of whole numbers with repeated values, which is
// categorical (an id's size means nothing); numbers; dates in one strict
// format; free text; and the rest categorical.
func classify(c *Column, st stats) {
	share := 0.0
	if st.present > 0 {
		share = float64(len(st.seen)) / float64(st.present)
	}
	named := idName(c.Name)
	c.PandasNumeric = st.present > 0 && (st.numeric || st.booleans)
	enough := st.present >= minIDRows
	switch {
	case st.present > 0 && st.images*10 >= st.present*9:
		c.Kind = KindImage
	case enough && named && share >= idUniqueShare,
		enough && share == 1 && singleTokens(st) && !st.numeric:
		c.Kind = KindIDLike
	case enough && named && st.numeric && st.integer: // labels shared by rows: a user, a movie
		c.Kind = KindCategorical
	case st.numeric:
		c.Kind, c.PandasNumeric = KindNumeric, false
	case dateFormat(st.values) != "":
		c.Kind, c.DateFormat = KindDate, dateFormat(st.values)
	case isText(c, st, share):
		c.Kind = KindText
	default:
		c.Kind = KindCategorical
	}
	c.HighCardinality = c.Kind == KindCategorical && len(st.seen) > highCardinalityLevels
}

// isText says a string column is free text: long values, or several words
// per value that are mostly distinct, or several words per value over an
// open vocabulary (more distinct values than a closed set of labels has).
func isText(c *Column, st stats, share float64) bool {
	return c.MeanLen >= 30 ||
		c.MeanWords >= 2 && share > 0.5 ||
		c.MeanWords >= 3 && len(st.seen) > 2*highCardinalityLevels
}

// idPattern matches column names of identifiers: id, ID, user_id, userId,
// id_str, tweet-id, movieID.
var idPattern = regexp.MustCompile(`^(?i:id)$|(?i:[_\- ]id)$|[a-z]Id$|[a-z]ID$|^(?i:id[_\- ])|(?i:[_\- ]id[_\- ])`)

func idName(name string) bool { return idPattern.MatchString(name) }

// singleTokens says no value has a space: codes and keys, not phrases.
func singleTokens(st stats) bool { return st.words == st.present }

// dateLayouts are the strict formats a date column may have: the Go layout
// that checks a value and the strptime format the program parses it with.
var dateLayouts = []struct{ layout, format string }{
	{"2006-01-02", "%Y-%m-%d"},
	{"2006-01-02 15:04:05", "%Y-%m-%d %H:%M:%S"},
	{"2006-01-02T15:04:05", "%Y-%m-%dT%H:%M:%S"},
	{"2006-01-02T15:04:05Z", "%Y-%m-%dT%H:%M:%SZ"},
	{"2006-01-02 15:04", "%Y-%m-%d %H:%M"},
	{"2006/01/02", "%Y/%m/%d"},
	{"01/02/2006", "%m/%d/%Y"},
	{"02/01/2006", "%d/%m/%Y"},
	{"02.01.2006", "%d.%m.%Y"},
}

// dateFormat is the strptime format every value fits, "" when none does
// (or there are no values).
func dateFormat(values []string) string {
	if len(values) == 0 {
		return ""
	}
	for _, d := range dateLayouts {
		ok := true
		for _, v := range values {
			if _, err := time.Parse(d.layout, v); err != nil {
				ok = false
				break
			}
		}
		if ok {
			return d.format
		}
	}
	return ""
}
