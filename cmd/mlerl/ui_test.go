package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestUIUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"ui"}, "give one or more run folders"},
		{[]string{"ui", t.TempDir() + "/missing"}, "is not a run folder"},
		{[]string{"ui", t.TempDir(), "--listen", "not-an-address"}, "listen"},
	} {
		var stderr bytes.Buffer
		if got := run(context.Background(), c.args, &bytes.Buffer{}, &stderr); got != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, got, stderr.String(), c.want)
		}
	}
}

func TestUIServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var stderr bytes.Buffer
	// Flags after the folders are read too.
	if got := run(ctx, []string{"ui", t.TempDir(), "--listen", "127.0.0.1:0"}, &bytes.Buffer{}, &stderr); got != 0 {
		t.Fatalf("exit %d: %s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), "http://127.0.0.1:") {
		t.Errorf("no address printed: %q", stderr.String())
	}
}
