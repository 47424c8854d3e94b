package suite

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/task"
)

// unseenDir is where the unseen task set is committed.
const unseenDir = "../bench/unseen"

// TestUnseenCommitted checks the committed unseen tasks: one folder per
// definition, each a valid task (its sample submission grades), and none of
// them a suite task.
func TestUnseenCommitted(t *testing.T) {
	var want []string
	for _, d := range unseenSet.defs {
		want = append(want, d.name)
	}
	for _, name := range want {
		if slices.Contains(Names(), name) {
			t.Errorf("unseen task %s is also a suite task", name)
		}
		tk, err := task.Load(filepath.Join(unseenDir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if err := tk.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestUnseenRebuild rebuilds the unseen set from the Debian packages and
// compares it with the committed folders byte for byte.
func TestUnseenRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the unseen build")
	}
	ctx := context.Background()
	if err := CheckSetTools(ctx, "unseen"); err != nil {
		t.Skipf("cannot rebuild the unseen set here: %v", err)
	}
	out := t.TempDir()
	if err := BuildSet(ctx, "unseen", out, nil); err != nil {
		t.Fatal(err)
	}
	built, err := Sums(os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	all, err := Sums(os.DirFS(unseenDir))
	if err != nil {
		t.Fatal(err)
	}
	// Only the task folders: bench/unseen also holds its README.
	var committed []byte
	for _, line := range strings.SplitAfter(string(all), "\n") {
		for _, d := range unseenSet.defs {
			if strings.Contains(line, "  "+d.name+"/") {
				committed = append(committed, line...)
			}
		}
	}
	if string(built) != string(committed) {
		diffs, _ := Diff(out, committed)
		t.Fatalf("a rebuild differs from bench/unseen (package versions changed? rebuild with mlerl suite build --set unseen --out bench/unseen):\n%s",
			strings.Join(diffs, "\n"))
	}
}
