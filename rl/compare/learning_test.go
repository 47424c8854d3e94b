package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mlerl/mlerl/rl"
)

// Every learning setting is named when two parts differ in it alone, so a
// setting added to Learning is held against a merge without a line in
// Merge; each has a results-file name of the rl_ family.
func TestLearningDiffNamesEverySetting(t *testing.T) {
	lt := reflect.TypeFor[Learning]()
	for i := range lt.NumField() {
		f := lt.Field(i)
		what, name := f.Tag.Get("what"), strings.Split(f.Tag.Get("json"), ",")[0]
		if what == "" || !strings.HasPrefix(name, "rl_") {
			t.Errorf("%s: what %q, json name %q; want a label and an rl_ name", f.Name, what, name)
			continue
		}
		var l Learning
		v := reflect.ValueOf(&l).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Float64:
			v.SetFloat(0.5)
		case reflect.Int, reflect.Int64: // an int64 is a time.Duration
			v.SetInt(8)
		case reflect.Bool:
			v.SetBool(true)
		default:
			t.Fatalf("%s: kind %v has no test value", f.Name, v.Kind())
		}
		d := Learning{}.diff(l)
		if !strings.HasPrefix(d, what+" (") || strings.Contains(d, "), ") {
			t.Errorf("%s alone differs: diff %q, want only %q", f.Name, d, what)
		}
		if l.diff(l) != "" {
			t.Errorf("%s: a setting differs from itself: %q", f.Name, l.diff(l))
		}
	}
}

// Results files written by earlier binaries read into the same settings:
// the JSON names are the files', and a setting a file predates is off.
func TestLearningReadsCommittedResults(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Learning
	}{
		{"rl-vs-prompting-letter-20m-f42e53c.json", Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, Buffer: 1}},
		{"rl-vs-prompting-hpc-4m-46ff8f9-slower-only.json", Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, ChargeSlowerOnly: true, Buffer: 1}},
		{"rl-vs-prompting-hpc-4m-2c956b9-widen16.json", Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, WidenAfter: 16, Buffer: 1}},
		{"rl-vs-prompting-hpc-4m-2c956b9-screen4.json", Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, Screen: 4, Buffer: 1}},
		{"rl-vs-prompting-digit-4m-7be06d8-screen-after.json", Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, ScratchPrior: 0.5, PriorOnRepeat: true, Screen: 8, ScreenAfter: 64, Buffer: 1}},
		{"rl-vs-prompting-hpc-4m-2c956b9-edit-floor.json", Learning{Utility: "rank", ImproveCredit: "absolute", TimeCharge: 0.25, EditFloor: 0.5, Buffer: 1}},
	} {
		b, err := os.ReadFile(filepath.Join("..", "..", "bench", "results", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if d := tc.want.diff(r.Learning); d != "" {
			t.Errorf("%s: settings differ from the expected in %s", tc.file, d)
		}
		// Written again, the file's names come back.
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var again Result
		if err := json.Unmarshal(out, &again); err != nil || again.Learning != r.Learning {
			t.Errorf("%s: written and read again: %+v (%v), want %+v", tc.file, again.Learning, err, r.Learning)
		}
		for _, name := range []string{`"rl_utility"`, `"rl_improve_credit"`, `"rl_time_charge"`, `"rl_elite"`, `"rl_buffer"`} {
			if !strings.Contains(string(out), name) {
				t.Errorf("%s: written again without %s", tc.file, name)
			}
		}
	}
}

// Settings no RL arm could run with are refused before a run starts.
func TestLearningCheck(t *testing.T) {
	for _, tc := range []struct {
		l    Learning
		want string // "" for none
	}{
		{Learning{}, ""},
		{Learning{Screen: 8, ScreenPerSecond: true}, ""},
		{Learning{ScreenPerSecond: true}, "--screen-per-second changes how the screen picks: it needs --screen K"},
		{Learning{Utility: "best"}, `--utility "best"`},
		{Learning{TimeCharge: -0.5}, "--time-charge -0.5"},
		{Learning{ChargeSlowerOnly: true}, "needs --time-charge above 0"},
		{Learning{Utility: rl.UtilityReward, Elite: 0.2}, "--elite needs --utility rank"},
		{Learning{Elite: 0.2, TimeCharge: 0.25, ChargeSlowerOnly: true, Screen: 8}, ""},
		{Learning{Screen: 1}, "screen 1"},
		{Learning{EditFloor: 1.5}, "edit floor 1.5"},
		{Learning{ScratchPrior: -0.2}, "scratch prior -0.2"},
		{Learning{WidenAfter: -1}, "widen"},
	} {
		err := tc.l.check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.l, err, tc.want)
		}
	}
}
