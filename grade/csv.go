package grade

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"unicode/utf8"
)

// maxFileBytes bounds what a submission or answers file may hold, so a runaway
// program cannot make the trainer read an unbounded file into memory.
const maxFileBytes = 1 << 30

var errEmpty = errors.New("empty file: no header line")

// readLimited reads all of r, failing beyond maxFileBytes. A file's size is
// known up front, so its buffer is allocated once instead of grown (growing
// a 200 MB buffer from 512 bytes costs more than parsing it).
func readLimited(r io.Reader) ([]byte, error) {
	size := 0
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if st.Size() > maxFileBytes {
				return nil, fmt.Errorf("file is larger than %d bytes", maxFileBytes)
			}
			size = int(st.Size())
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading: %w", err)
	}
	if buf.Len() > maxFileBytes {
		return nil, fmt.Errorf("file is larger than %d bytes", maxFileBytes)
	}
	return buf.Bytes(), nil
}

// csvDoc is a CSV file split into its header and body.
type csvDoc struct {
	header []string
	body   []byte
	// simple means the body has no quote characters and no lone CR, so a
	// record is exactly one line and a field exactly the bytes between commas.
	simple bool
}

// splitDoc strips a UTF-8 byte order mark, checks the bytes are UTF-8 text and
// reads the header (the first non-blank line, as pandas does).
func splitDoc(buf []byte) (csvDoc, error) {
	buf = bytes.TrimPrefix(buf, []byte("\xef\xbb\xbf"))
	if i := invalidUTF8(buf); i >= 0 {
		return csvDoc{}, fmt.Errorf("not UTF-8 text (invalid byte at offset %d)", i)
	}
	simple := bytes.IndexByte(buf, '"') < 0 && !hasLoneCR(buf)
	if simple {
		for len(buf) > 0 {
			line, rest := cutLine(buf)
			buf = rest
			if len(line) == 0 {
				continue
			}
			fields := bytes.Split(line, []byte(","))
			header := make([]string, len(fields))
			for i, f := range fields {
				header[i] = string(f)
			}
			return csvDoc{header: header, body: buf, simple: true}, nil
		}
		return csvDoc{}, errEmpty
	}
	q := quotedReader{buf: buf}
	fields, err := q.next()
	if err != nil {
		return csvDoc{}, fmt.Errorf("header: %w", err)
	}
	if fields == nil {
		return csvDoc{}, errEmpty
	}
	header := make([]string, len(fields))
	for i, f := range fields {
		header[i] = string(f)
	}
	return csvDoc{header: header, body: buf[q.pos:]}, nil
}

// invalidUTF8 returns the offset of the first byte that is not valid UTF-8, or -1.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// hasLoneCR reports whether b has a CR not followed by LF (an old-Mac line
// end, which pandas accepts and the simple reader does not).
func hasLoneCR(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '\r')
		if i < 0 {
			return false
		}
		if i+1 >= len(b) || b[i+1] != '\n' {
			return true
		}
		b = b[i+2:]
	}
}

// cutLine returns the first line of b without its LF or CRLF, and the rest.
func cutLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		line, rest = b, nil
	} else {
		line, rest = b[:i], b[i+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, rest
}

// splitParts cuts a simple body into at most n pieces of similar size, each
// ending just after a line feed (or at the end of the body).
func splitParts(body []byte, n int) [][]byte {
	if n < 1 {
		n = 1
	}
	parts := make([][]byte, 0, n)
	for i := n; i > 1 && len(body) > 0; i-- {
		cut := len(body) / i
		j := bytes.IndexByte(body[cut:], '\n')
		if j < 0 {
			break
		}
		cut += j + 1
		parts = append(parts, body[:cut])
		body = body[cut:]
	}
	return append(parts, body)
}

// recordSink receives the records of a body in order. fields alias the
// input and are only valid during the call. It returns false to stop.
type recordSink interface {
	record(fields [][]byte) bool
}

// recordFunc adapts a function to recordSink.
type recordFunc func(fields [][]byte) bool

func (f recordFunc) record(fields [][]byte) bool { return f(fields) }

// scanSimple feeds each non-blank line of a simple body to sink, split on commas.
func scanSimple(body []byte, ncols int, sink recordSink) {
	fields := make([][]byte, 0, ncols+1)
	for len(body) > 0 {
		var line []byte
		line, body = cutLine(body)
		if len(line) == 0 {
			continue // pandas skips blank lines
		}
		fields = fields[:0]
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				fields = append(fields, line)
				break
			}
			fields = append(fields, line[:i])
			line = line[i+1:]
		}
		if !sink.record(fields) {
			return
		}
	}
}

// scanQuoted feeds each record of a body that may hold quoted fields to sink.
// A malformed body (an unterminated quote) is reported after the records
// before it; rows is the number of records delivered before the failure.
func scanQuoted(body []byte, sink recordSink) (rows int, err error) {
	q := quotedReader{buf: body}
	for {
		fields, err := q.next()
		if err != nil {
			return rows, err
		}
		if fields == nil {
			return rows, nil
		}
		rows++
		if !sink.record(fields) {
			return rows, nil
		}
	}
}

// quotedReader reads RFC 4180 records the way pandas' C parser does: a quote
// opens a quoted field only at the start of a field, "" inside it is one quote,
// text after the closing quote is appended to the field, and LF, CRLF or a lone
// CR ends a record. Blank lines are skipped.
type quotedReader struct {
	buf     []byte
	pos     int
	scratch []byte
	ends    []int
	fields  [][]byte
}

var errUnterminated = errors.New("a quoted field is not closed before the end of the file")

// next returns the next record, or nil at the end of the input.
func (q *quotedReader) next() ([][]byte, error) {
	b := q.buf
	// Skip blank lines.
	for q.pos < len(b) && (b[q.pos] == '\n' || b[q.pos] == '\r') {
		q.pos++
	}
	if q.pos >= len(b) {
		return nil, nil
	}
	q.scratch = q.scratch[:0]
	q.ends = q.ends[:0]
	i := q.pos
	for {
		// At the start of a field.
		if i < len(b) && b[i] == '"' {
			i++
			for {
				j := bytes.IndexByte(b[i:], '"')
				if j < 0 {
					return nil, errUnterminated
				}
				q.scratch = append(q.scratch, b[i:i+j]...)
				i += j + 1
				if i < len(b) && b[i] == '"' {
					q.scratch = append(q.scratch, '"')
					i++
					continue
				}
				break
			}
		}
		// Unquoted text, or text after a closing quote.
		for i < len(b) && b[i] != ',' && b[i] != '\n' && b[i] != '\r' {
			q.scratch = append(q.scratch, b[i])
			i++
		}
		q.ends = append(q.ends, len(q.scratch))
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		// End of record.
		if i < len(b) && b[i] == '\r' {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
		break
	}
	q.pos = i
	q.fields = q.fields[:0]
	start := 0
	for _, end := range q.ends {
		q.fields = append(q.fields, q.scratch[start:end:end])
		start = end
	}
	return q.fields, nil
}
