package report

import (
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func copyRun(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// parse walks the page as XML (the report is written well-formed on purpose)
// and returns the charts, the section titles and every attribute value.
func parse(t *testing.T, page string) (charts int, titles []string, attrs []string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Entity = xml.HTMLEntity
	inH2 := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("report.html is not well-formed: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			for _, a := range x.Attr {
				attrs = append(attrs, a.Name.Local+"="+a.Value)
				if x.Name.Local == "svg" && a.Name.Local == "class" && a.Value == "chart" {
					charts++
				}
			}
			inH2 = x.Name.Local == "h2"
		case xml.CharData:
			if inH2 {
				titles = append(titles, string(x))
			}
		case xml.EndElement:
			inH2 = false
		}
	}
	return charts, titles, attrs
}

func TestWriteRendersFourChartsOffline(t *testing.T) {
	dir := copyRun(t, "testdata/run")
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	charts, titles, attrs := parse(t, page)
	if charts != 4 {
		t.Errorf("%d charts, want 4", charts)
	}
	want := []string{"Best score and mean reward over time", "Execution time over time", "Where programs fail", "Reward distribution", "Best program", "Episodes"}
	if len(titles) != len(want) {
		t.Fatalf("titles %q", titles)
	}
	for i, w := range want {
		if !strings.Contains(titles[i], w) {
			t.Errorf("chart %d titled %q, want %q", i+1, titles[i], w)
		}
	}
	for _, a := range attrs {
		if strings.HasPrefix(a, "src=") || strings.HasPrefix(a, "href=") {
			t.Errorf("external reference: %s", a)
		}
	}
	for _, bad := range []string{"http:", "https:", "<script", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it must render offline", bad)
		}
	}
	// Axes name their units; the failure chart counts the fixture's episodes
	// (53 complete lines; the torn 54th is skipped).
	for _, s := range []string{"training time (min)", "execution time (s)", "best score", "mean reward per batch", "number of episodes (of 53)", "valid submission"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func TestWriteEmptyRun(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if charts, _, _ := parse(t, string(b)); charts != 4 {
		t.Errorf("empty run: %d charts (placeholders), want 4", charts)
	}
}

func TestWriteRejectsCorruptMiddleLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "metrics.jsonl"), []byte("{\"update\":1}\nnot json\n{\"update\":2}\n"), 0o644)
	if err := Write(dir); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("corrupt middle line: %v", err)
	}
}

func TestFailureCategory(t *testing.T) {
	for _, c := range []struct {
		e    Episode
		want string
	}{
		{Episode{Valid: true}, "valid submission"},
		{Episode{}, "failed before any stage"},
		{Episode{Stages: []string{"imported packages", "loaded data"}}, "failed after: loaded data"},
		// Markers may arrive out of order; the furthest known stage counts.
		{Episode{Stages: []string{"trained model", "loaded data"}}, "failed after: trained model"},
		{Episode{Stages: []string{"custom"}}, "failed after: custom"},
	} {
		if got := failureCategory(c.e); got != c.want {
			t.Errorf("%v: %q, want %q", c.e.Stages, got, c.want)
		}
	}
}

func TestNiceTicks(t *testing.T) {
	got := niceTicks(0, 88, 8)
	if len(got) < 5 || got[0] != 0 || got[len(got)-1] > 88 {
		t.Errorf("ticks %v", got)
	}
	if got := niceTicks(5, 5, 4); len(got) == 0 {
		t.Error("no ticks for an empty range")
	}
}

func TestOverlayNamesEveryRun(t *testing.T) {
	a, err := Load("testdata/run")
	if err != nil {
		t.Fatal(err)
	}
	b := a
	a.Name, a.Config = "rl", map[string]any{"policy": "recipe", "duration_aware": true}
	b.Name, b.Config = "baseline", map[string]any{"policy": "recipe", "no_learn": true}
	page := Charts([]Run{a, b})
	for _, s := range []string{"<b>rl</b>", "RL, duration-aware", "<b>baseline</b>", "--no-learn", "stroke-dasharray"} {
		if !strings.Contains(page, s) {
			t.Errorf("overlay lacks %q", s)
		}
	}
	if n := strings.Count(page, `class="chart"`); n != 4 {
		t.Errorf("%d charts, want 4", n)
	}
}

func TestHighlightKeepsEveryCharacter(t *testing.T) {
	src := "import pandas as pd  # load\ns = 'a\\'b' + \"\"\"doc\n\"\"\" < 3.5e2\nprint(len(s))  ünï\n"
	got := Highlight(src)
	if !strings.Contains(got, `<span class="k">import</span>`) || !strings.Contains(got, `<span class="c"># load</span>`) ||
		!strings.Contains(got, `<span class="b">print</span>`) || !strings.Contains(got, `<span class="n">3.5e2</span>`) {
		t.Errorf("highlight: %s", got)
	}
	d := xml.NewDecoder(strings.NewReader("<pre>" + got + "</pre>"))
	d.Entity = xml.HTMLEntity
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := tok.(xml.CharData); ok {
			text.Write(c)
		}
	}
	if text.String() != src {
		t.Errorf("text %q, want %q", text.String(), src)
	}
}

// The facts table says where the best program places on the leaderboard:
// summary.json's "rank" for one task, "ranks" by task for several.
func TestFactsShowRank(t *testing.T) {
	one := Run{Summary: map[string]any{"rank": map[string]any{"medal": "bronze", "above_median": true,
		"gold_threshold": 0.2, "silver_threshold": 0.25, "bronze_threshold": 0.3, "median_threshold": 0.4}}}
	if f := Facts(one); !strings.Contains(f, "<td>leaderboard</td><td><b>bronze medal, above median (gold 0.2, silver 0.25, bronze 0.3, median 0.4)</b>") {
		t.Errorf("one task: %s", f)
	}
	several := Run{Summary: map[string]any{"ranks": map[string]any{
		"b": map[string]any{"medal": nil, "above_median": false},
		"a": map[string]any{"medal": "gold", "above_median": true},
	}}}
	f := Facts(several)
	ia, ib := strings.Index(f, "leaderboard: a</td><td><b>gold medal, above median"), strings.Index(f, "leaderboard: b</td><td><b>no medal, below median")
	if ia < 0 || ib < ia {
		t.Errorf("several tasks: %s", f)
	}
	if f := Facts(Run{Summary: map[string]any{"completed": 3}}); strings.Contains(f, "leaderboard") {
		t.Errorf("no leaderboard: %s", f)
	}
}
