package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/report"
)

func TestTailReadsOnlyCompleteNewLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "episodes.jsonl")
	tl := tail[report.Episode]{path: path}
	if c, err := tl.poll(); c || err != nil {
		t.Fatalf("missing file: changed %v, %v", c, err)
	}
	os.WriteFile(path, []byte(`{"episode":"a"}`+"\n"+`{"episode":"b`), 0o644)
	if c, err := tl.poll(); !c || err != nil || len(tl.recs) != 1 {
		t.Fatalf("one line and a torn one: changed %v, %v, %d records", c, err, len(tl.recs))
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`"}` + "\n")
	f.Close()
	if c, _ := tl.poll(); !c || len(tl.recs) != 2 || tl.recs[1].ID != "b" {
		t.Fatalf("the torn line completed: %+v", tl.recs)
	}
	if c, _ := tl.poll(); c {
		t.Error("nothing new, yet changed")
	}
	// A resume cuts the log back: the tail starts over.
	os.WriteFile(path, []byte(`{"episode":"c"}`+"\n"), 0o644)
	if c, _ := tl.poll(); !c || len(tl.recs) != 1 || tl.recs[0].ID != "c" {
		t.Fatalf("after a cut: %+v", tl.recs)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

func TestServerFollowsAndRenders(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "rl"), filepath.Join(t.TempDir(), "baseline")
	writeRun(t, a, 8, false, 0)
	writeRun(t, b, 4, true, 1)
	s := New([]string{a, b}, Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	views := get(t, srv.URL+"/api/views")
	for _, want := range []string{"<b>rl</b>", "<b>baseline</b>", "--no-learn"} {
		if !strings.Contains(views, want) {
			t.Errorf("views lack %q", want)
		}
	}
	if n := strings.Count(get(t, srv.URL+"/api/rows?run=0&from=6"), "<tr"); n != 2 {
		t.Errorf("rows from 6: %d, want 2", n)
	}
	appendEpisode(t, a, 8, 0)
	s.poll()
	if n := strings.Count(get(t, srv.URL+"/api/rows?run=0&from=8"), "<tr"); n != 1 {
		t.Errorf("after an append, rows from 8: %d, want 1", n)
	}
	if d := get(t, srv.URL+"/api/episode?run=0&n=1"); !strings.Contains(d, `<span class="k">import</span>`) {
		t.Errorf("best episode's detail lacks its highlighted program: %s", d)
	}
	if d := get(t, srv.URL+"/api/episode?run=0&n=2"); !strings.Contains(d, "by its plan") {
		t.Errorf("another episode's detail: %s", d)
	}
	if p := get(t, srv.URL+"/api/policy?run=0"); !strings.Contains(p, "not wired") {
		t.Errorf("policy view without task loading: %s", p)
	}
}

func TestPolicyViewFromCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a policy a few steps")
	}
	dir := filepath.Join(t.TempDir(), "rl")
	writeRun(t, dir, 4, false, 0)
	writeCheckpoint(t, dir)
	s := New([]string{dir}, Options{LoadTask: loadSuiteTask})
	out := s.policy(0, s.runs[0].snapshot())
	for _, want := range []string{"policy version 3", "read.loader", `class="pbar prior"`} {
		if !strings.Contains(out, want) {
			t.Errorf("policy view lacks %q:\n%s", want, out)
		}
	}
}
