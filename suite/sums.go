package suite

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Sums lists the SHA-256 of every regular file under root in the format of
// sha256sum(1), sorted by path, so `cd DIR && sha256sum -c SHA256SUMS` works.
func Sums(root fs.FS) ([]byte, error) {
	var b bytes.Buffer
	err := fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return fmt.Errorf("hash %s: %w", p, err)
		}
		fmt.Fprintf(&b, "%x  %s\n", h.Sum(nil), p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checksums: %w", err)
	}
	// WalkDir visits in lexical order per directory, which is not the same as
	// sorting whole paths ("a/b" vs "a-b"); sort so the file is canonical.
	lines := strings.SplitAfter(b.String(), "\n")
	lines = lines[:len(lines)-1]
	slices.SortFunc(lines, func(x, y string) int { return strings.Compare(x[66:], y[66:]) })
	return []byte(strings.Join(lines, "")), nil
}

// parseSums reads sha256sum(1) output into path -> hex digest.
func parseSums(b []byte) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		sum, path, ok := strings.Cut(line, "  ")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || path == "" {
			return nil, fmt.Errorf("SHA256SUMS line %d: want \"<64 hex digits>  <path>\", got %q", n, line)
		}
		if _, dup := m[path]; dup {
			return nil, fmt.Errorf("SHA256SUMS line %d: %s listed twice", n, path)
		}
		m[path] = sum
	}
	return m, sc.Err()
}

// Diff compares the files under dir with the checksums in want and returns
// one line per difference ("changed: p", "missing: p", "extra: p"), sorted.
func Diff(dir string, want []byte) ([]string, error) {
	wantSums, err := parseSums(want)
	if err != nil {
		return nil, err
	}
	got, err := Sums(os.DirFS(dir))
	if err != nil {
		return nil, err
	}
	gotSums, err := parseSums(got)
	if err != nil {
		return nil, err
	}
	var diffs []string
	for p, s := range gotSums {
		w, ok := wantSums[p]
		switch {
		case !ok:
			diffs = append(diffs, "extra: "+p)
		case w != s:
			diffs = append(diffs, "changed: "+p)
		}
	}
	for p := range wantSums {
		if _, ok := gotSums[p]; !ok {
			diffs = append(diffs, "missing: "+p)
		}
	}
	slices.Sort(diffs)
	return diffs, nil
}
