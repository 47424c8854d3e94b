package suite

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rebuild tasks/ and SHA256SUMS from the Debian packages")

// TestUpdate regenerates the committed suite: go test ./suite -run TestUpdate -update
func TestUpdate(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rebuild tasks/ and SHA256SUMS")
	}
	if err := BuildSet(context.Background(), "suite", "tasks", testLog{t}); err != nil {
		t.Fatal(err)
	}
	sums, err := Sums(os.DirFS("tasks"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("SHA256SUMS", sums, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testLog sends build progress to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
