package grade

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchFiles are a generated answers file and a shuffled submission for it.
type benchFiles struct {
	spec                Spec
	answers, submission string
}

// writeBenchFiles writes n rows for metric ("auc", or "log_loss" with k
// classes), formatted as pandas' to_csv writes floats (shortest round-trip).
func writeBenchFiles(tb testing.TB, dir, metric string, n, k int) benchFiles {
	tb.Helper()
	rng := rand.New(rand.NewPCG(7, uint64(k)))
	targets := []string{"target"}
	if metric == "log_loss" {
		targets = make([]string, k)
		for t := range targets {
			targets[t] = "class_" + strconv.Itoa(t)
		}
	}
	spec := Spec{Metric: metric, IDColumn: "id", TargetColumns: targets}
	bf := benchFiles{spec: spec,
		answers:    filepath.Join(dir, fmt.Sprintf("%s-%d-answers.csv", metric, n)),
		submission: filepath.Join(dir, fmt.Sprintf("%s-%d-submission.csv", metric, n)),
	}
	af, err := os.Create(bf.answers)
	if err != nil {
		tb.Fatal(err)
	}
	sf, err := os.Create(bf.submission)
	if err != nil {
		tb.Fatal(err)
	}
	aw, sw := bufio.NewWriterSize(af, 1<<20), bufio.NewWriterSize(sf, 1<<20)
	header := "id," + strings.Join(targets, ",") + "\n"
	aw.WriteString(header)
	sw.WriteString(header)
	truth := make([]int, n)
	for i := range truth {
		truth[i] = rng.IntN(len(targets) + 1)
	}
	var line []byte
	for i := 0; i < n; i++ {
		line = append(line[:0], "id_"...)
		line = strconv.AppendInt(line, int64(i)*7919%100000007, 10)
		for t := range targets {
			v := 0
			if metric == "auc" && truth[i]%2 == 1 || metric == "log_loss" && truth[i]%k == t {
				v = 1
			}
			line = append(line, ',')
			line = strconv.AppendInt(line, int64(v), 10)
		}
		aw.Write(append(line, '\n'))
	}
	probs := make([]float64, len(targets))
	for _, i := range rng.Perm(n) {
		line = append(line[:0], "id_"...)
		line = strconv.AppendInt(line, int64(i)*7919%100000007, 10)
		if metric == "auc" {
			p := min(1, 0.7*rng.Float64()+0.3*float64(truth[i]%2))
			line = append(line, ',')
			line = strconv.AppendFloat(line, p, 'g', -1, 64)
		} else {
			sum := 0.0
			for t := range probs {
				probs[t] = rng.ExpFloat64()
				if truth[i]%k == t {
					probs[t] += 1
				}
				sum += probs[t]
			}
			for t := range probs {
				line = append(line, ',')
				line = strconv.AppendFloat(line, probs[t]/sum, 'g', -1, 64)
			}
		}
		sw.Write(append(line, '\n'))
	}
	for _, c := range []interface{ Flush() error }{aw, sw} {
		if err := c.Flush(); err != nil {
			tb.Fatal(err)
		}
	}
	af.Close()
	sf.Close()
	return bf
}

var benchCache = map[string]benchFiles{}

func benchGrade1M(b *testing.B, metric string, k int) {
	key := fmt.Sprint(metric, k)
	bf, ok := benchCache[key]
	if !ok {
		dir, err := os.MkdirTemp("", "grade-bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		bf = writeBenchFiles(b, dir, metric, 1_000_000, k)
		benchCache[key] = bf
	}
	a, err := LoadAnswersFile(bf.spec, bf.answers)
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(bf.submission)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := a.GradeFile(bf.submission); !r.Valid {
			b.Fatal(r.Error)
		}
	}
}

// BenchmarkGradeQuoted1M grades the auc file with every id quoted, as R's
// write.csv writes them: the sequential quoted-field reader's cost.
func BenchmarkGradeQuoted1M(b *testing.B) {
	dir := b.TempDir()
	bf := writeBenchFiles(b, dir, "auc", 1_000_000, 1)
	raw, err := os.ReadFile(bf.submission)
	if err != nil {
		b.Fatal(err)
	}
	var q []byte
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if i := strings.IndexByte(line, ','); i > 0 {
			q = append(append(append(append(q, '"'), line[:i]...), '"'), line[i:]...)
		}
	}
	qpath := filepath.Join(dir, "quoted.csv")
	if err := os.WriteFile(qpath, q, 0o644); err != nil {
		b.Fatal(err)
	}
	a, err := LoadAnswersFile(bf.spec, bf.answers)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		if r := a.GradeFile(qpath); !r.Valid {
			b.Fatal(r.Error)
		}
	}
}

// BenchmarkGrade1M grades a 1,000,000-row shuffled submission, file reading
// and CSV parsing included; the answers are loaded once, as the trainer does.
func BenchmarkGrade1M(b *testing.B) {
	b.Run("auc", func(b *testing.B) { benchGrade1M(b, "auc", 1) })
	b.Run("log_loss_10", func(b *testing.B) { benchGrade1M(b, "log_loss", 10) })
}

// TestSpeedVsPandas times the Go grader and pandas + scikit-learn on the same
// 1,000,000-row files in one run and prints the ratios. The two are timed
// alternately (Go, Python, Go, Python, ...) and the best of 3 of each is
// kept, so a change in the machine's load hits both; CPU seconds are
// reported too, as they depend less on what else the machine is running.
// Run: MLERL_BENCH=1 go test -run TestSpeedVsPandas -v ./grade/
func TestSpeedVsPandas(t *testing.T) {
	if os.Getenv("MLERL_BENCH") != "1" {
		t.Skip("set MLERL_BENCH=1 to compare with pandas + scikit-learn (takes a few minutes)")
	}
	py := pythonWithSklearn(t)
	dir := t.TempDir()
	const n, repeats = 1_000_000, 3
	for _, c := range []struct {
		metric string
		k      int
	}{{"auc", 1}, {"log_loss", 10}} {
		bf := writeBenchFiles(t, dir, c.metric, n, c.k)
		st, _ := os.Stat(bf.submission)
		inf := math.Inf(1)
		goGrade, goAll, goGradeCPU, goAllCPU, pyWall, pyCPU := inf, inf, inf, inf, inf, inf
		var score float64
		for i := 0; i < repeats; i++ {
			start, startCPU := time.Now(), cpuSeconds(t)
			a, err := LoadAnswersFile(bf.spec, bf.answers)
			if err != nil {
				t.Fatal(err)
			}
			loaded, loadedCPU := time.Now(), cpuSeconds(t)
			r := a.GradeFile(bf.submission)
			if !r.Valid {
				t.Fatal(r.Error)
			}
			end, endCPU := time.Now(), cpuSeconds(t)
			score = *r.Score
			goGrade = min(goGrade, end.Sub(loaded).Seconds())
			goAll = min(goAll, end.Sub(start).Seconds())
			goGradeCPU = min(goGradeCPU, endCPU-loadedCPU)
			goAllCPU = min(goAllCPU, endCPU-startCPU)

			out, err := exec.Command(py, "testdata/reference.py", "--bench", c.metric, bf.spec.IDColumn,
				strings.Join(bf.spec.TargetColumns, ","), bf.answers, bf.submission, "1").Output()
			if err != nil {
				t.Fatalf("reference.py --bench: %v", err)
			}
			var res struct {
				Seconds    float64 `json:"seconds"`
				CPUSeconds float64 `json:"cpu_seconds"`
				Score      float64 `json:"score"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("reference.py --bench output %q: %v", out, err)
			}
			if math.Abs(res.Score-score) > 1e-9 {
				t.Errorf("%s: Go score %.17g, sklearn %.17g", c.metric, score, res.Score)
			}
			pyWall, pyCPU = min(pyWall, res.Seconds), min(pyCPU, res.CPUSeconds)
		}
		t.Logf("%s, %d rows, submission %.0f MB (best of %d):", c.metric, n, float64(st.Size())/1e6, repeats)
		t.Logf("  wall: pandas+sklearn %.3fs | Go grade %.3fs = %.1fx faster | Go load answers + grade %.3fs = %.1fx faster",
			pyWall, goGrade, pyWall/goGrade, goAll, pyWall/goAll)
		t.Logf("  CPU:  pandas+sklearn %.3fs | Go grade %.3fs = %.1fx less | Go load answers + grade %.3fs = %.1fx less",
			pyCPU, goGradeCPU, pyCPU/goGradeCPU, goAllCPU, pyCPU/goAllCPU)
	}
}

// cpuSeconds is the CPU time this process has used, all threads.
func cpuSeconds(t *testing.T) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkLoadAnswers1M parses a 1,000,000-row answers file (done once per
// task by the trainer, but part of a one-off `mlerl grade`).
func BenchmarkLoadAnswers1M(b *testing.B) {
	for _, c := range []struct {
		metric string
		k      int
	}{{"auc", 1}, {"log_loss", 10}} {
		b.Run(c.metric, func(b *testing.B) {
			bf := writeBenchFiles(b, b.TempDir(), c.metric, 1_000_000, c.k)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := LoadAnswersFile(bf.spec, bf.answers); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
