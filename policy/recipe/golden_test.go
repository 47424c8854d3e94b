package recipe

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the rendered programs in testdata/golden")

// goldenRandomPlans is how many seeded random plans each task pins.
const goldenRandomPlans = 5

// goldenVariants pin what no suite task has: a suite task's profile with its
// metric replaced (same targets, so the same learning problem), or with its
// images found by id (data/images/<id>.png) instead of named by a column.
var goldenVariants = []struct {
	task, name string
	change     func(p *Profile)
}{
	{"ames-housing", "rmse", func(p *Profile) { p.Metric = "rmse" }},
	{"ames-housing", "mae", func(p *Profile) { p.Metric = "mae" }},
	{"ames-housing", "pearson", func(p *Profile) { p.Metric = "pearson" }},
	{"meats-composition", "mean_column_rmsle", func(p *Profile) { p.Metric = "mean_column_rmsle" }},
	{"digit-images", "images_by_id", func(p *Profile) {
		p.ImagesByID, p.ImageExt = true, ".png"
		p.Columns = slices.DeleteFunc(slices.Clone(p.Columns), func(c Column) bool { return c.Kind == KindImage })
	}},
}

// goldenCase is one rendered program pinned under testdata/golden/<dir>/<name>.py.
type goldenCase struct {
	dir, name string
	p         *Profile
	pl        *Plan
}

// goldenPlans are the plans pinned for p: every edit that applies (the first,
// "default", is Default's plan) and goldenRandomPlans seeded random plans.
func goldenPlans(dir string, p *Profile) []goldenCase {
	var cs []goldenCase
	for _, e := range Edits() {
		if pl, ok := e.Apply(p); ok {
			cs = append(cs, goldenCase{dir, slug(e.Name), p, pl})
		}
	}
	for i := range goldenRandomPlans {
		pl := Random(p, rand.New(rand.NewPCG(1, uint64(i))))
		cs = append(cs, goldenCase{dir, fmt.Sprintf("random-%d", i+1), p, pl})
	}
	return cs
}

// goldenOptionPlans pin every option of every decision once: for each
// decision and option, the default plan changed to take it (with the model
// family or ensemble that asks it) on the first suite task, in folder order,
// where that is allowed and differs from the task's default plan.
func goldenOptionPlans(dirs []string, profiles map[string]*Profile) []goldenCase {
	var cs []goldenCase
	for _, s := range grammar[1:] {
		for _, o := range s.options {
			e := Edit{Name: s.name, Choose: map[string]string{s.name: o}}
			for _, fam := range familyOptions {
				if slices.Contains(familyHyper[fam], s.name) {
					e.Choose["model.family"] = fam
					break
				}
			}
			switch s.name {
			case "ensemble.second":
				e.Choose["ensemble"] = "average"
			case "ensemble.nb_weight":
				e.Choose["ensemble"] = "nb_loglinear"
			}
			for _, d := range dirs {
				p := profiles[filepath.Base(d)]
				pl, ok := e.Apply(p)
				if ok && pl.Get(s.name) == o && pl.Key() != Default(p).Key() {
					cs = append(cs, goldenCase{p.Name, "option-" + slug(s.name+" "+o), p, pl})
					break
				}
			}
		}
	}
	return cs
}

// slug is an edit's name as a file name: lower case, runs of anything but
// letters and digits as one "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	return b.String()
}

func goldenCases(t *testing.T) []goldenCase {
	dirs := suiteTasks()
	if len(dirs) == 0 {
		t.Skip("no suite/tasks in this checkout")
	}
	// The fixtures with kinds no suite task has (dates, ids, many-level
	// categoricals, several text columns) come last, so every option the
	// suite can take stays pinned on the suite and the new ones on them.
	dirs = append(dirs, "testdata/tiny-events", "testdata/tiny-notes")
	profiles := map[string]*Profile{}
	var cs []goldenCase
	for _, d := range dirs {
		p := mustProfile(t, d)
		profiles[p.Name] = p
		cs = append(cs, goldenPlans(p.Name, p)...)
	}
	cs = append(cs, goldenOptionPlans(dirs, profiles)...)
	for _, v := range goldenVariants {
		base := profiles[v.task]
		if base == nil {
			t.Fatalf("golden variant of %s: no such suite task", v.task)
		}
		p := *base
		v.change(&p)
		cs = append(cs, goldenPlans(v.task+"."+v.name, &p)...)
	}
	return cs
}

// TestRenderGolden compares Render's programs with testdata/golden byte for
// byte: suite tasks (and a few metric variants) and the fixtures
// tiny-events and tiny-notes, each with the edits that
// apply and seeded random plans. `go test ./policy/recipe -run
// TestRenderGolden -update` rewrites them; check the diff before committing.
func TestRenderGolden(t *testing.T) {
	root := filepath.Join("testdata", "golden")
	cs := goldenCases(t)
	if *update {
		if err := os.RemoveAll(root); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	for _, c := range cs {
		path := filepath.Join(root, c.dir, c.name+".py")
		if want[path] {
			t.Fatalf("two golden cases write %s", path)
		}
		want[path] = true
		code, err := Render(c.p, c.pl)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (run with -update to create it)", err)
			continue
		}
		if !bytes.Equal(old, []byte(code)) {
			t.Errorf("%s differs from the rendered program (run with -update after checking the diff):\n%s", path, firstDiff(string(old), code))
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.py"))
	sort.Strings(files)
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s is no golden case's (run with -update to remove it)", f)
		}
	}
	t.Logf("%d golden programs", len(want))
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n golden: %s\n render: %s", i+1, x, y)
		}
	}
	return "(equal lines)"
}

// TestSilentLines: a line holding only a control action vanishes with its
// newline, other lines (blank ones too) stay as written.
func TestSilentLines(t *testing.T) {
	src := "{{define \"x\"}}\na = 1\n\n{{if .}}\n    b = {{.}}\n  {{else}}\nb = 0\n{{end}}\n{{.Use \"m\" \"n\"}}\n{{$v := 1}}\nc = {{if .}}1{{end}}\n{{end}}\n"
	want := "{{define \"x\"}}a = 1\n\n{{if .}}    b = {{.}}\n{{else}}b = 0\n{{end}}{{.Use \"m\" \"n\"}}{{$v := 1}}c = {{if .}}1{{end}}\n{{end}}"
	if got := silentLine.ReplaceAllString(src, "$1"); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
