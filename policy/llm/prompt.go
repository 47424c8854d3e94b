package llm

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/rl"
	"github.com/mlerl/mlerl/task"
)

// The prompts carry the content of the paper's appendix C (its C.1 and C.2),
// written in our own words: prompts/*.tmpl, golden-tested in testdata/golden.
//
//go:embed prompts/*.tmpl
var promptFiles embed.FS

var prompts = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"join": strings.Join,
}).ParseFS(promptFiles, "prompts/*.tmpl"))

// Limits bound what the prompts show, so a prompt stays near the paper's
// 1024-token budget whatever the task's files look like. Sizes are in bytes
// of text; a token is about 4 of them.
type Limits struct {
	Description int // description.md
	LineWidth   int // one line of a data snippet
	Rows        int // data rows shown under each file's header
	Files       int // data files shown one by one; the rest are counted
	DirExamples int // names shown for a summarised folder
	Code        int // the previous program in an improve prompt
	Output      int // the previous program's output (head and tail)
	Plan        int // the previous plan
}

// DefaultLimits keep a typical task's scratch prompt to a few thousand bytes.
func DefaultLimits() Limits {
	return Limits{
		Description: 6000, LineWidth: 200, Rows: 3, Files: 12, DirExamples: 3,
		Code: 12000, Output: 2000, Plan: 1500,
	}
}

// DefaultPackages are the Python packages the sandbox's interpreter has
// (CONTRACT.md §2; Pillow for image tasks); a new slice on each call.
func DefaultPackages() []string {
	return []string{"numpy", "pandas", "scipy", "scikit-learn", "xgboost", "PIL (Pillow)"}
}

// TaskInfo is what the prompts say about a task; built once per task.
type TaskInfo struct {
	Name        string
	Description string
	Metric      string
	Direction   string // "higher" or "lower"
	MetricNote  string // grade.Family.Note
	IDColumn    string
	Targets     []string
	Columns     []string // id column then targets: the submission's header
	// SampleSubmission is the head of sample_submission.csv.
	SampleSubmission string
	Files            []FileInfo
	Omitted          int // files not shown because of Limits.Files
	Packages         []string
	TimeLimit        string // "" when not known
}

// FileInfo is one entry of the prompt's data section: a file with a snippet
// or a folder with a summary.
type FileInfo struct {
	Path     string // as the program sees it: ./data/...
	About    string // "12.3 KB, 1,439 lines" or "folder, 1,797 files (.png 1,797), 1.2 MB"
	Snippet  string // a file's header and first rows, or the start of a text file
	Examples string // a folder's first few names
}

// NewTaskInfo reads what the prompts need from a task folder: description,
// sample submission and a snippet of each public data file.
func NewTaskInfo(t *task.Task, lim Limits, packages []string) (*TaskInfo, error) {
	desc, err := t.Description()
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	info := &TaskInfo{
		Name: t.Name, Description: clip(strings.TrimSpace(desc), lim.Description),
		Metric: t.Metric, Direction: "higher",
		IDColumn: t.IDColumn, Targets: t.TargetColumns,
		Columns:  append([]string{t.IDColumn}, t.TargetColumns...),
		Packages: packages,
	}
	// The grader's description of the metric: its direction, and the one
	// thing the paper's prompt says about it beyond its name (what a valid
	// prediction looks like).
	if m, err := grade.FamilyOf(t.Metric); err == nil {
		info.MetricNote = m.Note
		if m.LowerIsBetter {
			info.Direction = "lower"
		}
	}
	if s, err := csvHead(t.SampleSubmissionPath(), lim); err == nil {
		info.SampleSubmission = s
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	entries, err := os.ReadDir(t.PublicDir())
	if err != nil {
		return nil, fmt.Errorf("task %s: %w", t.Name, err)
	}
	// Files first, then folders, each by name: the prompt reads the same on
	// every machine.
	sort.SliceStable(entries, func(i, j int) bool {
		if entries[i].IsDir() != entries[j].IsDir() {
			return !entries[i].IsDir()
		}
		return entries[i].Name() < entries[j].Name()
	})
	for _, e := range entries {
		if e.Name() == "sample_submission.csv" || strings.HasPrefix(e.Name(), ".") {
			continue // shown as the submission format
		}
		if len(info.Files) >= lim.Files {
			info.Omitted++
			continue
		}
		p := filepath.Join(t.PublicDir(), e.Name())
		var fi FileInfo
		if e.IsDir() {
			fi, err = dirInfo(p, lim)
		} else {
			fi, err = fileInfo(p, lim)
		}
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.Name, err)
		}
		fi.Path = "./data/" + e.Name()
		if e.IsDir() {
			fi.Path += "/"
		}
		info.Files = append(info.Files, fi)
	}
	return info, nil
}

// headBytes is how much of a file is read for its snippet.
const headBytes = 64 << 10

// fileInfo shows a text file's header and first rows (or its start), and
// says a binary file is binary.
func fileInfo(path string, lim Limits) (FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FileInfo{}, err
	}
	fi := FileInfo{About: humanBytes(st.Size())}
	head, err := readHead(path, headBytes)
	if err != nil {
		return FileInfo{}, err
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)) {
		fi.About += ", binary"
		return fi, nil
	}
	if n, err := countLines(path); err == nil {
		fi.About += ", " + commas(n) + " lines"
	}
	fi.Snippet = snippet(head, lim, len(head) < int(st.Size()))
	return fi, nil
}

// snippet is the first 1+Rows lines, each cut at LineWidth, with "..." when
// more follows.
func snippet(head []byte, lim Limits, truncated bool) string {
	lines := strings.SplitAfter(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	n := min(len(lines), 1+lim.Rows)
	var b strings.Builder
	for _, l := range lines[:n] {
		b.WriteString(clip(strings.TrimRight(l, "\n"), lim.LineWidth))
		b.WriteByte('\n')
	}
	if n < len(lines) || truncated {
		b.WriteString("...\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func csvHead(path string, lim Limits) (string, error) {
	head, err := readHead(path, headBytes)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return snippet(head, lim, len(head) < int(st.Size())), nil
}

// dirInfo summarises a folder (typically images) by its file count, the
// extensions present and a few names: listing thousands of files would
// spend the prompt on nothing.
func dirInfo(path string, lim Limits) (FileInfo, error) {
	var n int
	var size int64
	exts := map[string]int{}
	var names []string
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		n++
		if info, err := d.Info(); err == nil {
			size += info.Size()
		}
		ext := strings.ToLower(filepath.Ext(p))
		if ext == "" {
			ext = "(no extension)"
		}
		exts[ext]++
		rel, _ := filepath.Rel(path, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return FileInfo{}, err
	}
	keys := make([]string, 0, len(exts))
	for k := range exts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if exts[keys[i]] != exts[keys[j]] {
			return exts[keys[i]] > exts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + commas(exts[k])
	}
	fi := FileInfo{About: fmt.Sprintf("folder, %s files (%s), %s", commas(n), strings.Join(parts, ", "), humanBytes(size))}
	sort.Strings(names)
	if len(names) > 0 {
		ex := names[:min(len(names), lim.DirExamples)]
		fi.Examples = "e.g. " + strings.Join(ex, ", ")
		if len(names) > len(ex) {
			fi.Examples += ", ..."
		}
	}
	return fi, nil
}

func readHead(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, nil
}

// countLines counts newlines (plus a last unterminated line). Data files are
// read once per task per run, so the cost is paid once.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	n, last := 0, byte('\n')
	buf := make([]byte, 1<<16)
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// trimPartialRune drops a UTF-8 sequence cut by the read limit.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " [...]"
}

// headTail keeps the start and the end of a long text (errors and final
// scores are at the end; what the program set out to do is at the start).
func headTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := n / 2
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - n/2
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	// Whole lines read better; give up at most half of each side for it.
	if i := strings.LastIndexByte(s[h/2:h], '\n'); i >= 0 {
		h = h/2 + i + 1
	}
	if i := strings.IndexByte(s[t:t+(len(s)-t)/2], '\n'); i >= 0 {
		t += i + 1
	}
	head := s[:h]
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + "[... " + commas(t-h) + " bytes left out ...]\n" + s[t:]
}

// durationWords says a time limit the way a person would: "10 minutes".
func durationWords(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	case d%time.Second == 0:
		return plural(int(d/time.Second), "second")
	}
	return d.String()
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// improveData is what the improve template shows of the previous solution.
type improveData struct {
	Task      *TaskInfo
	Plan      string
	Code      string
	Output    string
	Score     string
	DurationS string
	Stages    string
}

// Messages renders the conversation for one prompt: the system role and the
// scratch or improve request.
func Messages(info *TaskInfo, pr rl.Prompt, lim Limits) ([]Message, error) {
	var sys, user bytes.Buffer
	if err := prompts.ExecuteTemplate(&sys, "system.tmpl", info); err != nil {
		return nil, fmt.Errorf("rendering system prompt: %w", err)
	}
	if pr.Parent == nil {
		if err := prompts.ExecuteTemplate(&user, "scratch.tmpl", info); err != nil {
			return nil, fmt.Errorf("rendering scratch prompt: %w", err)
		}
	} else {
		res := pr.Parent.Result
		d := improveData{
			Task:      info,
			Plan:      clip(strings.TrimSpace(pr.Parent.Action.Plan), lim.Plan),
			Code:      clip(strings.TrimRight(pr.Parent.Action.Code, "\n"), lim.Code),
			Output:    headTail(strings.TrimRight(res.Output, "\n"), lim.Output),
			DurationS: strconv.FormatFloat(res.DurationS, 'f', 1, 64),
			Stages:    strings.Join(res.Stages, ", "),
		}
		if res.Valid && res.Score != nil {
			d.Score = strconv.FormatFloat(*res.Score, 'g', 6, 64)
		}
		if err := prompts.ExecuteTemplate(&user, "improve.tmpl", d); err != nil {
			return nil, fmt.Errorf("rendering improve prompt: %w", err)
		}
	}
	return []Message{
		{Role: "system", Content: tidy(sys.String())},
		{Role: "user", Content: tidy(user.String())},
	}, nil
}

// tidy trims the blank lines template actions leave at the ends; the inside
// is left alone, since it holds the previous program verbatim.
func tidy(s string) string { return strings.TrimSpace(s) }
