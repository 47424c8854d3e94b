package suite

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestSumsFormatAndOrder(t *testing.T) {
	// "a-b" sorts before "a/b" as a path string though WalkDir visits "a"
	// first; the output must be sorted by whole path.
	fsys := fstest.MapFS{
		"a/b":   {Data: []byte("x")},
		"a-b":   {Data: []byte("")},
		"z.txt": {Data: []byte("hello\n")},
	}
	got, err := Sums(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a-b\n" +
		"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881  a/b\n" +
		"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  z.txt\n"
	if string(got) != want {
		t.Errorf("Sums =\n%s\nwant\n%s", got, want)
	}
}

func TestDiff(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"same": "1", "changed": "2", "extra": "3"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := Sums(fstest.MapFS{
		"same":    {Data: []byte("1")},
		"changed": {Data: []byte("not 2")},
		"missing": {Data: []byte("4")},
	})
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(dir, want)
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"changed: changed", "extra: extra", "missing: missing"}; !slices.Equal(diffs, w) {
		t.Errorf("Diff = %v, want %v", diffs, w)
	}
}

func TestParseSumsRejectsBadLines(t *testing.T) {
	good := strings.Repeat("ab", 32)
	tests := []struct{ in, want string }{
		{"nothex  a\n", "line 1"},
		{good + " a\n", "line 1"},
		{good + "  \n", "line 1"},
		{good + "  a\n" + good + "  a\n", "a listed twice"},
	}
	for _, tt := range tests {
		if _, err := parseSums([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseSums(%q) = %v, want error containing %q", tt.in, err, tt.want)
		}
	}
	m, err := parseSums([]byte(good + "  dir/file name.csv\n\n"))
	if err != nil || m["dir/file name.csv"] != good {
		t.Errorf("good line parsed as %v, %v", m, err)
	}
}
