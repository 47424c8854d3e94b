package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlerl/mlerl/episode"
	"github.com/mlerl/mlerl/sandbox"
)

// TestExecEndToEnd is the binary's quick real end-to-end run (kept under
// -short): `mlerl exec --json` on a tiny task runs a program in the real
// sandbox, grades its submission and prints the episode result; a program
// that fails exits 1 with no valid submission.
func TestExecEndToEnd(t *testing.T) {
	if _, err := sandbox.New(context.Background(), sandbox.Config{}); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	taskDir := filepath.Join("testdata", "tiny-llm")
	write := func(code string) string {
		p := filepath.Join(t.TempDir(), "prog.py")
		if err := os.WriteFile(p, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The test column x ranks the answers perfectly: AUC 1.
	good := write(`import csv
rows = list(csv.DictReader(open("data/test.csv")))
with open("submission.csv", "w") as f:
    f.write("id,label\n")
    for r in rows:
        f.write(r["id"] + "," + r["x"] + "\n")
print("wrote", len(rows), "rows")
`)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"exec", "--task", taskDir, "--code", good, "--json", "--timeout", "2m"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	var res episode.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not one episode result: %v\n%s", err, stdout.String())
	}
	if !res.Valid || res.Score == nil || *res.Score != 1 || res.ExitCode != 0 || res.Task != "tiny-llm" {
		t.Errorf("result %+v, want a valid submission scoring AUC 1", res)
	}
	if res.Isolation == "" || res.Isolation == "none" {
		t.Errorf("isolation %q, want a real sandbox tier", res.Isolation)
	}

	bad := write("import csv\nrows = list(csv.DictReader(open('data/test.csv')))\nraise SystemExit('gave up')\n")
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"exec", "--task", taskDir, "--code", bad, "--json", "--timeout", "2m"}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("failing program: exit %d, want 1\nstderr %s", code, stderr.String())
	}
	res = episode.Result{}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not one episode result: %v\n%s", err, stdout.String())
	}
	if res.Valid || res.Score != nil || res.ExitCode == 0 {
		t.Errorf("failing program: result %+v, want no valid submission and a non-zero exit", res)
	}
}
