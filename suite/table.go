package suite

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
)

// table is a CSV file held in memory as strings. Values pass through the
// build untouched (R already wrote them in a stable form), so nothing is lost
// or reformatted between the source package and the task files.
type table struct {
	path   string
	header []string
	rows   [][]string
}

func readTable(path string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read raw data: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("read header of %s: %w", path, err)
	}
	t := &table{path: path, header: header}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		t.rows = append(t.rows, rec)
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("read %s: no data rows", path)
	}
	return t, nil
}

// col is the index of a named column.
func (t *table) col(name string) (int, error) {
	i := slices.Index(t.header, name)
	if i < 0 {
		return 0, fmt.Errorf("%s: no column %q (have %v)", t.path, name, t.header)
	}
	return i, nil
}

// without is the header minus the named columns, with their indices.
func (t *table) without(names ...string) (header []string, idx []int) {
	for i, h := range t.header {
		if !slices.Contains(names, h) {
			header = append(header, h)
			idx = append(idx, i)
		}
	}
	return header, idx
}

func pick(row []string, idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = row[j]
	}
	return out
}

// encodeCSV renders rows with encoding/csv: "\n" line ends, quotes only
// where needed. The same rows always give the same bytes.
func encodeCSV(header []string, rows [][]string) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write(header); err != nil {
		return nil, err
	}
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
