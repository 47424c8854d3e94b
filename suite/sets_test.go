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

// committedSets are the task sets committed outside the binary and where.
var committedSets = []struct {
	set *taskSet
	dir string
}{
	{unseenSet, "../bench/unseen"},
	{tuningSet, "../bench/tuning"},
}

// TestCommittedSets checks the committed unseen and tuning tasks: one folder
// per definition, each a valid task (its sample submission grades), and none
// of them a suite task or a task of the other set.
func TestCommittedSets(t *testing.T) {
	seen := map[string]string{}
	for _, cs := range committedSets {
		for _, d := range cs.set.defs {
			if slices.Contains(Names(), d.name) {
				t.Errorf("%s task %s is also a suite task", cs.set.name, d.name)
			}
			if other, ok := seen[d.name]; ok {
				t.Errorf("task %s is in both the %s and the %s set", d.name, other, cs.set.name)
			}
			seen[d.name] = cs.set.name
			tk, err := task.Load(filepath.Join(cs.dir, d.name))
			if err != nil {
				t.Errorf("%s: %v", d.name, err)
				continue
			}
			if err := tk.Check(); err != nil {
				t.Errorf("%s: %v", d.name, err)
			}
		}
	}
}

// TestCommittedSetsRebuild rebuilds the unseen and tuning sets from the
// Debian packages and compares each with its committed folders byte for
// byte.
func TestCommittedSetsRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the unseen and tuning builds")
	}
	for _, cs := range committedSets {
		t.Run(cs.set.name, func(t *testing.T) {
			ctx := context.Background()
			if err := CheckSetTools(ctx, cs.set.name); err != nil {
				t.Skipf("cannot rebuild the %s set here: %v", cs.set.name, err)
			}
			out := t.TempDir()
			if err := BuildSet(ctx, cs.set.name, out, nil); err != nil {
				t.Fatal(err)
			}
			built, err := Sums(os.DirFS(out))
			if err != nil {
				t.Fatal(err)
			}
			all, err := Sums(os.DirFS(cs.dir))
			if err != nil {
				t.Fatal(err)
			}
			// Only the task folders: the set's folder also holds its README.
			var committed []byte
			for _, line := range strings.SplitAfter(string(all), "\n") {
				for _, d := range cs.set.defs {
					if strings.Contains(line, "  "+d.name+"/") {
						committed = append(committed, line...)
					}
				}
			}
			if string(built) != string(committed) {
				diffs, _ := Diff(out, committed)
				t.Fatalf("a rebuild differs from %s (package versions changed? rebuild with mlerl suite build --set %s --out %s):\n%s",
					cs.dir, cs.set.name, strings.TrimPrefix(cs.dir, "../"), strings.Join(diffs, "\n"))
			}
		})
	}
}

// TestSplitFortunes: strfile's "%" separators, an attribution on a last
// "--" line, whitespace collapsed, empty fortunes skipped.
func TestSplitFortunes(t *testing.T) {
	in := "%\nOne  line.\n%\nTwo\n\tlines,\n\t\t-- Some  Author\n%\n\n%\n-- not an attribution alone\n%\n"
	got := splitFortunes(in)
	want := []fortune{
		{text: "One line.", lines: 1},
		{text: "Two lines,", attribution: "Some Author", lines: 3},
		{text: "-- not an attribution alone", lines: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("splitFortunes = %+v, want %+v", got, want)
	}
}

// TestFortunesNeedEnoughPerCategory: a category file with too few fortunes
// is a clear error, not a thin class.
func TestFortunesNeedEnoughPerCategory(t *testing.T) {
	raw := t.TempDir()
	for _, c := range fortuneCategories {
		body := strings.Repeat("A fortune.\n%\n", fortuneMinPerCategory)
		if c == "zippy" {
			body = "Only one.\n"
		}
		if err := os.WriteFile(filepath.Join(raw, c), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := loadFortunes(raw)
	if err == nil || !strings.Contains(err.Error(), "zippy: 1 fortunes") {
		t.Fatalf("loadFortunes = %v, want an error naming zippy's count", err)
	}
}

// TestCheckToolsOfASetWithoutR: a set made from data files alone needs no R,
// and names the Debian package of a file it cannot find.
func TestCheckToolsOfASetWithoutR(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no Rscript
	set := &taskSet{name: "files", files: []debFile{{filepath.Join(t.TempDir(), "no-such-file"), "some-data-package"}}}
	err := checkTools(context.Background(), set, filepath.Join(t.TempDir(), "python3"))
	if !IsMissing(err) || err.Error() != "suite build needs Debian packages some-data-package (apt-get install some-data-package)" {
		t.Fatalf("checkTools = %v, want a MissingError naming some-data-package alone", err)
	}
	set.files = nil
	if err := checkTools(context.Background(), set, filepath.Join(t.TempDir(), "python3")); err != nil {
		t.Fatalf("checkTools of a set needing nothing = %v", err)
	}
}
