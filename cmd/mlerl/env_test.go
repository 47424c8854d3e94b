package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The run's queue token is made once, private to its owner, and kept for a
// resume; an empty token file (a crash while writing it) is replaced.
func TestRunToken(t *testing.T) {
	dir := t.TempDir()
	tok, file, err := runToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 || file != filepath.Join(dir, "nats-token") || len(tok) < 20 {
		t.Fatalf("token %q in %s (%v, %v)", tok, file, fi.Mode(), err)
	}
	again, _, err := runToken(dir)
	if err != nil || again != tok {
		t.Fatalf("second call: %q, %v; want the same token %q", again, err, tok)
	}
	if err := os.WriteFile(file, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh, _, err := runToken(dir)
	if err != nil || fresh == "" || fresh == tok {
		t.Fatalf("after an empty file: %q, %v", fresh, err)
	}
}

func TestProgramTimeout(t *testing.T) {
	for _, tc := range []struct{ budget, want time.Duration }{
		{10 * time.Second, 10 * time.Second},
		{time.Minute, 30 * time.Second},
		{4 * time.Minute, 40 * time.Second},
		{10 * time.Minute, 100 * time.Second},
		{time.Hour, 10 * time.Minute},
	} {
		if got := programTimeout(tc.budget, 10*time.Minute); got != tc.want {
			t.Errorf("budget %v: program timeout %v, want %v", tc.budget, got, tc.want)
		}
	}
}
