package suite

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func TestMain(m *testing.M) {
	if os.Getenv("MLERL_SUITE_DIR_HELPER") == "1" {
		// A helper process of TestDirProcessesRace: its parent chose the cache.
		os.Exit(m.Run())
	}
	// Dir extracts into the user's cache; keep tests out of the real one.
	cache, err := os.MkdirTemp("", "mlerl-suite-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	os.Exit(code)
}

func TestCommittedTasksMatchSHA256SUMS(t *testing.T) {
	got, err := Sums(tasks())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sha256sums) {
		diffs, err := Diff("tasks", sha256sums)
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("embedded tasks differ from SHA256SUMS (rebuild with go test ./suite -run TestUpdate -update):\n%s", strings.Join(diffs, "\n"))
	}
	// The on-disk copy is what the embed was built from; it must agree too.
	diffs, err := Verify("tasks")
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("tasks/ differs from SHA256SUMS:\n%s", strings.Join(diffs, "\n"))
	}
}

func TestNames(t *testing.T) {
	want := []string{"ames-housing", "austen-authorship", "digit-images", "fine-food-reviews", "hpc-job-class",
		"letter-recognition", "meats-composition", "soybean-disease", "stackoverflow-remote", "telco-churn"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	var defs []string
	for _, d := range taskDefs {
		defs = append(defs, d.name)
	}
	if !slices.Equal(defs, want) {
		t.Fatalf("build definitions %v differ from the embedded tasks %v", defs, want)
	}
}

func TestDir(t *testing.T) {
	d, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d, filepath.Join(os.Getenv("XDG_CACHE_HOME"), "mlerl", "suite-")) {
		t.Errorf("Dir() = %s, want under $XDG_CACHE_HOME/mlerl/suite-", d)
	}
	again, err := Dir()
	if err != nil || again != d {
		t.Fatalf("second Dir() = %q, %v; want %q", again, err, d)
	}
	diffs, err := Verify(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("extracted suite differs from SHA256SUMS:\n%s", strings.Join(diffs, "\n"))
	}
	for _, name := range Names() {
		fi, err := os.Stat(filepath.Join(d, name, "private"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s/private has mode %v, want 0700", name, fi.Mode().Perm())
		}
	}
}

func TestExtractConcurrent(t *testing.T) {
	root := t.TempDir()
	src := smallSuite()
	const n = 6
	var wg sync.WaitGroup
	dirs := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { dirs[i], errs[i] = extract(src, root) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("extraction %d: %v", i, errs[i])
		}
		if dirs[i] != dirs[0] {
			t.Fatalf("extraction %d went to %s, extraction 0 to %s", i, dirs[i], dirs[0])
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != filepath.Base(dirs[0]) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("cache root holds %v, want only %s (temporary copies must be removed)", names, filepath.Base(dirs[0]))
	}
	want, err := Sums(src)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := Diff(dirs[0], want)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("extracted suite differs:\n%s", strings.Join(diffs, "\n"))
	}
}

// smallSuite is a stand-in for the embedded suite, big enough (a few hundred
// files) that concurrent extractions overlap, small enough to copy often.
func smallSuite() fstest.MapFS {
	m := fstest.MapFS{}
	for k := range 3 {
		task := fmt.Sprintf("task-%d", k)
		m[task+"/task.yaml"] = &fstest.MapFile{Data: []byte("name: " + task + "\n")}
		m[task+"/private/answers.csv"] = &fstest.MapFile{Data: []byte("id,y\n1,0\n")}
		for i := range 100 {
			m[fmt.Sprintf("%s/public/images/%d.png", task, i)] = &fstest.MapFile{Data: bytes.Repeat([]byte{byte(i)}, 200)}
		}
	}
	return m
}

// TestExtractLosesRace makes a rival finish its extraction between our
// copy and our rename: we must use the rival's folder and drop our copy.
func TestExtractLosesRace(t *testing.T) {
	root := t.TempDir()
	src := smallSuite()
	var rival string
	beforeRename = func(final string) {
		beforeRename = nil // the rival's own extract must not recurse here
		d, err := extract(src, root)
		if err != nil {
			t.Errorf("rival extract: %v", err)
		}
		rival = d
		if err := os.WriteFile(filepath.Join(d, "rival"), nil, 0o644); err != nil {
			t.Error(err)
		}
	}
	defer func() { beforeRename = nil }()
	d, err := extract(src, root)
	if err != nil {
		t.Fatal(err)
	}
	if rival == "" || d != rival {
		t.Fatalf("extract = %q, rival made %q; want the rival's folder", d, rival)
	}
	if _, err := os.Stat(filepath.Join(d, "rival")); err != nil {
		t.Fatalf("the rival's folder was replaced: %v", err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("cache root holds %d entries, want 1 (the losing copy must be removed)", len(entries))
	}
}

func TestExtractReusesExisting(t *testing.T) {
	root := t.TempDir()
	src := smallSuite()
	d, err := extract(src, root)
	if err != nil {
		t.Fatal(err)
	}
	// A marker file survives a second extraction only if the folder is reused.
	marker := filepath.Join(d, "marker")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d2, err := extract(src, root)
	if err != nil || d2 != d {
		t.Fatalf("second extract = %q, %v; want %q", d2, err, d)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("existing extraction was replaced: %v", err)
	}
	// Different contents go to a different folder.
	other := fstestWithExtraFile(t)
	d3, err := extract(other, root)
	if err != nil {
		t.Fatal(err)
	}
	if d3 == d {
		t.Fatalf("different contents extracted to the same folder %s", d)
	}
}

func fstestWithExtraFile(t *testing.T) fs.FS {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "x", "private"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x", "private", "answers.csv"), []byte("id,y\n1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return os.DirFS(dir)
}

func TestResolve(t *testing.T) {
	suiteDir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	folder := t.TempDir()
	file := filepath.Join(folder, "task.yaml")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{in: "telco-churn", want: filepath.Join(suiteDir, "telco-churn")},
		{in: "digit-images", want: filepath.Join(suiteDir, "digit-images")},
		{in: folder, want: folder},
		{in: "tasks/ames-housing", want: must(filepath.Abs("tasks/ames-housing"))},
		{in: "no-such-task", wantErr: `unknown task "no-such-task": not a suite name (ames-housing, austen-authorship,`},
		{in: file, wantErr: "is a file, not a task folder"},
		{in: "", wantErr: "no task given"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Resolve(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(got, "task.yaml")); err != nil && tt.in != folder {
				t.Errorf("resolved folder has no task.yaml: %v", err)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestBuildDeterministic rebuilds the suite twice from the Debian packages:
// the two builds must be byte-identical, and equal to the committed suite.
func TestBuildDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping two full suite builds")
	}
	ctx := context.Background()
	if err := CheckSetTools(ctx, "suite"); err != nil {
		t.Skipf("cannot rebuild the suite here: %v", err)
	}
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := BuildSet(ctx, "suite", d, nil); err != nil {
			t.Fatal(err)
		}
	}
	sa, err := Sums(os.DirFS(a))
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Sums(os.DirFS(b))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sa, sb) {
		diffs, _ := Diff(b, sa)
		t.Fatalf("two builds differ:\n%s", strings.Join(diffs, "\n"))
	}
	diffs, err := Verify(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("a rebuild differs from the committed suite (package versions changed? rebuild with -update):\n%s", strings.Join(diffs, "\n"))
	}
}

func TestCheckToolsNamesMissingPackages(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := checkTools(context.Background(), suiteSet, filepath.Join(t.TempDir(), "python3"))
	if !IsMissing(err) {
		t.Fatalf("CheckTools with nothing installed = %v, want a MissingError", err)
	}
	msg := err.Error()
	for _, p := range []string{"r-base-core", "r-cran-modeldata", "r-cran-mlbench", "r-cran-janeaustenr", "python3-sklearn", "python3-pil"} {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not name %s", msg, p)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is more than one line", msg)
	}
}

// TestDirProcessesRace starts several processes (this test binary, in helper
// mode) that call Dir on an empty cache at once: all must print the same
// folder, and no temporary copy may be left behind.
func TestDirProcessesRace(t *testing.T) {
	if os.Getenv("MLERL_SUITE_DIR_HELPER") == "1" {
		d, err := Dir()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(d)
		os.Exit(0)
	}
	cache := t.TempDir()
	const n = 3
	cmds := make([]*exec.Cmd, n)
	outs := make([]bytes.Buffer, n)
	for i := range n {
		c := exec.Command(os.Args[0], "-test.run=^TestDirProcessesRace$")
		c.Env = append(os.Environ(), "MLERL_SUITE_DIR_HELPER=1", "XDG_CACHE_HOME="+cache)
		c.Stdout = &outs[i]
		c.Stderr = &outs[i]
		cmds[i] = c
	}
	for _, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v: %s", i, err, outs[i].String())
		}
	}
	first := strings.TrimSpace(outs[0].String())
	for i := range n {
		if got := strings.TrimSpace(outs[i].String()); got != first {
			t.Fatalf("process %d got %q, process 0 got %q", i, got, first)
		}
	}
	entries, err := os.ReadDir(filepath.Join(cache, "mlerl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || filepath.Join(cache, "mlerl", entries[0].Name()) != first {
		t.Fatalf("cache holds %d entries, want only %s", len(entries), first)
	}
	if diffs, err := Verify(first); err != nil || len(diffs) > 0 {
		t.Fatalf("extracted suite: %v %v", diffs, err)
	}
}
