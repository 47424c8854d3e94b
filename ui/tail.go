package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// tail follows one JSONL file as it grows: each poll reads only the bytes
// appended since the last, parses the complete lines and keeps the offset
// just past them, so a line being written is read whole on a later poll.
// recs only ever grows by append (or is replaced when the file shrinks), so a
// copy of the slice taken under the run's lock stays valid without copying
// the records.
type tail[T any] struct {
	path string
	off  int64
	recs []T
	bad  int // lines that did not parse, skipped
}

// poll reads what was appended; changed says whether recs changed.
func (t *tail[T]) poll() (changed bool, err error) {
	fi, err := os.Stat(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil // not written yet
	}
	if err != nil {
		return false, fmt.Errorf("ui: %w", err)
	}
	if fi.Size() < t.off {
		// A resume cuts a log back to its last checkpoint: start over.
		t.off, t.recs, changed = 0, nil, true
	}
	if fi.Size() == t.off {
		return changed, nil
	}
	f, err := os.Open(t.path)
	if err != nil {
		return changed, fmt.Errorf("ui: %w", err)
	}
	defer f.Close()
	buf := make([]byte, fi.Size()-t.off)
	n, err := f.ReadAt(buf, t.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return changed, fmt.Errorf("ui: read %s: %w", t.path, err)
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		return changed, nil
	}
	for _, line := range bytes.Split(buf[:end], []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v T
		if json.Unmarshal(line, &v) != nil {
			t.bad++ // one damaged line must not hide the rest of the run
			continue
		}
		t.recs = append(t.recs, v)
		changed = true
	}
	t.off += int64(end + 1)
	return changed, nil
}

// stamp tells whether a small file that is replaced whole (run.json,
// summary.json, best/result.json, checkpoint/state.json) changed.
type stamp struct {
	size int64
	mod  time.Time
	ok   bool
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{fi.Size(), fi.ModTime(), true}
}
