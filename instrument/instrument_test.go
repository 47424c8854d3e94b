package instrument

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// needPython skips a test when Debian's python3 (with the ML packages) is absent.
func needPython(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(DefaultPython); err != nil {
		t.Skipf("%s not available: %v", DefaultPython, err)
	}
}

func readProgram(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// workdir makes a fresh working directory holding a copy of testdata/data as
// data/, like the sandbox's.
func workdir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS("testdata/data")); err != nil {
		t.Fatal(err)
	}
	return dir
}

type runResult struct {
	markers []byte
	stdout  string
	exit    int
}

// run executes code with python in dir, fd 3 attached to a pipe, as the sandbox does.
func run(t testing.TB, dir, code string) runResult {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "solution.py"), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, DefaultPython, "solution.py")
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the child holds the only write end now
	got := make(chan []byte)
	go func() {
		b, _ := readAll(r)
		got <- b
	}()
	err = cmd.Wait()
	markers := <-got
	r.Close()
	res := runResult{markers: markers, stdout: out.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return res
}

func readAll(f *os.File) ([]byte, error) {
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return b, nil
		}
	}
}

// insertedStages lists the distinct stages a sealed program can report.
func insertedStages(p *Program) []string {
	seen := make([]bool, len(stages))
	for _, s := range p.stageOf {
		seen[s] = true
	}
	out := []string{}
	for i, ok := range seen {
		if ok {
			out = append(out, stages[i])
		}
	}
	return out
}

var (
	imp  = "imported packages"
	load = "loaded data"
	def  = "defined model"
	trl  = "training loss"
	fit  = "trained model"
	tel  = "test loss"
	pred = "predicted test labels"
)

// programs are realistic solutions with the stages the AST instrumenter must
// find in each, and the stages a run on the tiny data in testdata/data reaches.
var programs = []struct {
	file      string
	inserted  []string
	reached   []string
	wantExit0 bool
}{
	{"p01_logreg_basic.py", []string{imp, load, def, fit, tel, pred}, nil, true},
	{"p02_xgb_sklearn_api.py", []string{imp, load, def, trl, fit, tel, pred}, nil, true},
	{"p03_xgb_native.py", []string{imp, load, def, trl, fit, tel, pred}, nil, true},
	{"p04_main_functions.py", []string{imp, load, def, fit, tel, pred}, nil, true},
	{"p05_pipeline_gridsearch.py", []string{imp, load, def, trl, fit, pred}, nil, true},
	{"p06_kfold_oof.py", []string{imp, load, def, trl, fit, tel, pred}, nil, true},
	{"p07_text_tfidf.py", []string{imp, load, def, trl, fit, pred}, nil, true},
	{"p08_numpy_rf_regressor.py", []string{imp, load, def, trl, fit, tel, pred}, nil, true},
	{"p09_images_knn.py", []string{imp, load, def, trl, fit, pred}, nil, true},
	{"p10_odd_formatting.py", []string{imp, load, def, fit, tel, pred}, nil, true},
	// Does not parse: unchanged, no markers, fails at run time.
	{"p11_syntax_error.py", []string{}, []string{}, false},
	{"p12_no_ml.py", []string{imp}, nil, true},
	// torch is not installed here: found statically, fails at import.
	{"p13_torch_loop.py", []string{imp, load, def, trl, fit}, []string{}, false},
}

func TestASTStageDetection(t *testing.T) {
	needPython(t)
	ast := NewAST("")
	for _, tc := range programs {
		t.Run(tc.file, func(t *testing.T) {
			code := readProgram(t, filepath.Join("testdata/programs", tc.file))
			p, err := Prepare(context.Background(), ast, code)
			if err != nil {
				t.Fatal(err)
			}
			if got := insertedStages(p); !slices.Equal(got, tc.inserted) {
				t.Errorf("inserted stages\n got %q\nwant %q", got, tc.inserted)
			}
			if p.Method != "ast" {
				t.Errorf("method %q, want ast", p.Method)
			}
			if len(tc.inserted) == 0 && p.Code != code {
				t.Errorf("code without markers was changed")
			}
		})
	}
}

// TestSealedProgramsRun runs every sealed program for real and checks the
// stages reported through fd 3. Not -short: 13 training programs (the short
// run keeps TestPartialCreditOrder, TestForgedMarkers and TestSealedRunsWithoutFD3).
func TestSealedProgramsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 13 Python training programs")
	}
	needPython(t)
	ast := NewAST("")
	for _, tc := range programs {
		t.Run(tc.file, func(t *testing.T) {
			code := readProgram(t, filepath.Join("testdata/programs", tc.file))
			p, err := Prepare(context.Background(), ast, code)
			if err != nil {
				t.Fatal(err)
			}
			dir := workdir(t)
			res := run(t, dir, p.Code)
			if (res.exit == 0) != tc.wantExit0 {
				t.Fatalf("exit %d, want success %v; output:\n%s", res.exit, tc.wantExit0, res.stdout)
			}
			want := tc.reached
			if want == nil {
				want = tc.inserted
			}
			if got := p.Stages(res.markers); !slices.Equal(got, want) {
				t.Errorf("reached\n got %q\nwant %q\noutput:\n%s", got, want, res.stdout)
			}
			if tc.wantExit0 && tc.file != "p12_no_ml.py" {
				if _, err := os.Stat(filepath.Join(dir, "submission.csv")); err != nil {
					t.Errorf("no submission: %v", err)
				}
			}
			if strings.Contains(res.stdout, p.nonce) && p.nonce != "" {
				t.Errorf("nonce leaked into output")
			}
		})
	}
}

// TestPartialCreditOrder: programs failing later earn more stages, as the
// paper intends: import < load < fit < predict < writing the submission.
func TestPartialCreditOrder(t *testing.T) {
	needPython(t)
	ast := NewAST("")
	cases := []struct {
		file string
		want []string
	}{
		{"f1_import.py", []string{}},
		{"f2_load.py", []string{imp}},
		{"f3_fit.py", []string{imp, load, def}},
		{"f4_predict.py", []string{imp, load, def, fit, tel}},
		{"f5_submission.py", []string{imp, load, def, fit, tel, pred}},
	}
	prev := -1
	for _, tc := range cases {
		code := readProgram(t, filepath.Join("testdata/fail", tc.file))
		p, err := Prepare(context.Background(), ast, code)
		if err != nil {
			t.Fatal(err)
		}
		res := run(t, workdir(t), p.Code)
		if res.exit == 0 {
			t.Errorf("%s: exit 0, want a failure", tc.file)
		}
		got := p.Stages(res.markers)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: reached %q, want %q\n%s", tc.file, got, tc.want, res.stdout)
		}
		if len(got) <= prev {
			t.Errorf("%s: %d stages, not more than the earlier failure's %d", tc.file, len(got), prev)
		}
		prev = len(got)
	}
}

// TestForgedMarkers: a program that prints marker texts, calls __mlerl_stage__,
// keeps a canonical marker line in its own code and writes guessed lines to fd 3
// earns only the stage it really reached.
func TestForgedMarkers(t *testing.T) {
	needPython(t)
	code := readProgram(t, "testdata/forge.py")
	p, err := Prepare(context.Background(), NewAST(""), code)
	if err != nil {
		t.Fatal(err)
	}
	if p.Points != 1 {
		t.Errorf("points %d, want 1 (the imports marker only)", p.Points)
	}
	res := run(t, workdir(t), p.Code)
	if res.exit != 0 {
		t.Fatalf("exit %d:\n%s", res.exit, res.stdout)
	}
	if got := p.Stages(res.markers); !slices.Equal(got, []string{imp}) {
		t.Errorf("reached %q, want only %q; fd3 bytes %q", got, imp, res.markers)
	}
	// The forger did get bytes into fd 3 — they just do not count.
	if !strings.Contains(string(res.markers), "trained model") {
		t.Errorf("forgery did not reach fd 3, so the test proves nothing: %q", res.markers)
	}
}

func TestNoneRunsUnchanged(t *testing.T) {
	code := "print('hi')\n"
	p, err := Prepare(context.Background(), nil, code)
	if err != nil {
		t.Fatal(err)
	}
	if p.Code != code || p.Method != "none" || p.Points != 0 {
		t.Errorf("got %+v", p)
	}
	if got := p.Stages([]byte("anything 0\n")); len(got) != 0 || got == nil {
		t.Errorf("stages %q, want empty non-nil", got)
	}
}

// TestSealedRunsWithoutFD3: markers never break a program, even when fd 3 is
// closed (a sandbox tier without the pipe, or a person running the file).
func TestSealedRunsWithoutFD3(t *testing.T) {
	needPython(t)
	code := "import sys\nx = open('data/train.csv').read()\nprint(len(x) > 0)\n"
	p, err := Prepare(context.Background(), NewAST(""), code)
	if err != nil {
		t.Fatal(err)
	}
	if p.Points != 2 {
		t.Fatalf("points %d, want 2:\n%s", p.Points, p.Code)
	}
	dir := workdir(t)
	if err := os.WriteFile(filepath.Join(dir, "solution.py"), []byte(p.Code), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(DefaultPython, "solution.py")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Fatalf("without fd 3: %v\n%s", err, out)
	}
}
