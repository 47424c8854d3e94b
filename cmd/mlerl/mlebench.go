package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mlerl/mlerl/grade"
	"github.com/mlerl/mlerl/task"
)

// tasks import-mlebench turns prepared MLE-bench competitions into task
// folders (docs/mlebench.md). The data is hard-linked where the file system
// allows and copied where it does not, never rewritten: the answers keep
// their original file (as private/answers.csv), and the task is graded by the
// competition's own rules (task.yaml "grader: mlebench/<id>").

const importUsage = "usage: mlerl tasks import-mlebench --repo MLEBENCH_CHECKOUT --data DATA_DIR [--out DIR] (ID... | --all)"

// mleConfig is the part of a competition's config.yaml the import reads.
type mleConfig struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Dataset     struct {
		Answers          string `yaml:"answers"`
		SampleSubmission string `yaml:"sample_submission"`
	} `yaml:"dataset"`
	Grader struct {
		Name    string `yaml:"name"`
		GradeFn string `yaml:"grade_fn"`
	} `yaml:"grader"`
}

func tasksImportMLEBench(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("tasks import-mlebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "MLE-bench checkout (with its Git LFS files pulled)")
	data := fs.String("data", "", "MLE-bench data folder: DATA/<id>/prepared/{public,private}")
	out := fs.String("out", "mlebench-tasks", "folder to write the task folders into")
	all := fs.Bool("all", false, "import every competition mlerl has rules for that is prepared in --data")
	ids, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if *repo == "" || *data == "" || (len(ids) == 0) == !*all {
		return usageErrorf("%s", importUsage)
	}
	if fi, err := os.Stat(filepath.Join(*repo, "mlebench", "competitions")); err != nil || !fi.IsDir() {
		return usageErrorf("--repo %s: not an MLE-bench checkout (no mlebench/competitions folder)", *repo)
	}
	if *all {
		for _, id := range grade.MLEBenchCompetitions() {
			if prepared(*data, id) == nil {
				ids = append(ids, id)
			} else {
				fmt.Fprintf(stderr, "%s: not prepared in %s, skipped\n", id, *data)
			}
		}
		if len(ids) == 0 {
			return usageErrorf("--all: none of the %d competitions mlerl has rules for is prepared in %s", len(grade.MLEBenchCompetitions()), *data)
		}
	}
	for _, id := range ids {
		dir, err := importCompetition(*repo, *data, *out, id, stderr)
		if err != nil {
			return errUsage{fmt.Errorf("%s: %w", id, err)}
		}
		fmt.Fprintf(stderr, "%s: imported to %s\n", id, dir)
	}
	return nil
}

// parseInterleaved parses args with fs and returns the positional ones: flags
// may come before, between or after them (`import-mlebench ID --out DIR ID`).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, errUsage{err}
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// prepared checks MLE-bench's prepared layout for id.
func prepared(data, id string) error {
	for _, sub := range []string{"public", "private"} {
		dir := filepath.Join(data, id, "prepared", sub)
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) == 0 {
			return fmt.Errorf("competition is not prepared: %s is missing or empty (run `mlebench prepare -c %s --data-dir %s`)", dir, id, data)
		}
	}
	return nil
}

// importCompetition writes the task folder out/id and returns its path.
func importCompetition(repo, data, out, id string, stderr io.Writer) (string, error) {
	src, err := readCompetition(repo, data, id)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(out, id)
	if _, err := os.Stat(dir); err == nil {
		return "", fmt.Errorf("%s already exists (remove it to import again)", dir)
	}
	// Built beside the target and renamed into place: a failed import
	// leaves nothing that looks like a task.
	tmp := dir + ".importing"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "private"), 0o755); err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	if err := src.write(tmp); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	ok = true
	t, err := task.Load(dir)
	if err != nil {
		return "", err
	}
	if err := t.Check(); err != nil {
		fmt.Fprintf(stderr, "%s: warning: %v\n", id, err)
	}
	return dir, nil
}

// mleSource is one prepared competition, read and checked.
type mleSource struct {
	id, grader                   string
	cfg                          mleConfig
	answers, sample, leaderboard string
	publicSrc, privateSrc        string
	desc                         []byte
	spec                         grade.Spec
}

// readCompetition reads competition id's config from the checkout repo and
// checks its prepared data under data: the grader is known, the files are
// there and are not Git LFS pointers.
func readCompetition(repo, data, id string) (*mleSource, error) {
	compDir := filepath.Join(repo, "mlebench", "competitions", id)
	raw, err := os.ReadFile(filepath.Join(compDir, "config.yaml"))
	if err != nil {
		return nil, fmt.Errorf("no competition %q in %s: %v", id, repo, unwrapPath(err))
	}
	src := &mleSource{id: id, grader: "mlebench/" + id, leaderboard: filepath.Join(compDir, "leaderboard.csv")}
	if err := yaml.Unmarshal(raw, &src.cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(compDir, "config.yaml"), strings.Join(strings.Fields(err.Error()), " "))
	}
	if _, err := grade.MLEBenchSpec(src.grader, nil); err != nil && strings.Contains(err.Error(), "unknown grader") {
		return nil, fmt.Errorf("unknown grader: mlerl has no rule set for %s's grader (%s, %s); covered: %s",
			id, src.cfg.Grader.Name, src.cfg.Grader.GradeFn, strings.Join(grade.MLEBenchCompetitions(), ", "))
	}
	if err := prepared(data, id); err != nil {
		return nil, err
	}
	src.answers = filepath.Join(data, filepath.FromSlash(src.cfg.Dataset.Answers))
	src.sample = filepath.Join(data, filepath.FromSlash(src.cfg.Dataset.SampleSubmission))
	src.publicSrc = filepath.Join(data, id, "prepared", "public")
	src.privateSrc = filepath.Join(data, id, "prepared", "private")
	for _, f := range []string{src.answers, src.sample, src.leaderboard} {
		if err := notLFSPointer(f); err != nil {
			return nil, err
		}
	}
	header, err := grade.CSVHeaderFile(src.answers)
	if err != nil {
		return nil, fmt.Errorf("answers: %v", err)
	}
	if src.spec, err = grade.MLEBenchSpec(src.grader, header); err != nil {
		return nil, fmt.Errorf("answers %s: %v", src.answers, err)
	}
	if src.desc, err = os.ReadFile(filepath.Join(repo, filepath.FromSlash(src.cfg.Description))); err != nil {
		return nil, fmt.Errorf("description: %v", err)
	}
	return src, nil
}

// write fills the task folder tmp: data linked (never changed), the
// answers as their original file, the description and task.yaml.
func (src *mleSource) write(tmp string) error {
	if err := linkTree(src.publicSrc, filepath.Join(tmp, "public")); err != nil {
		return err
	}
	// The contract's sample submission name, as a second link to the
	// competition's own sample file. The text-normalization challenges keep
	// it in prepared/private; MLE-bench publishes the same file zipped.
	inside := func(dir string) bool {
		rel, err := filepath.Rel(dir, src.sample)
		return err == nil && !strings.HasPrefix(rel, "..")
	}
	if !inside(src.publicSrc) && !inside(src.privateSrc) {
		return fmt.Errorf("sample submission %s is not under %s", src.sample, filepath.Dir(src.publicSrc))
	}
	dst := filepath.Join(tmp, "public", "sample_submission.csv")
	if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		if err := linkFile(src.sample, dst); err != nil {
			return err
		}
	}
	if err := linkFile(src.answers, filepath.Join(tmp, "private", "answers.csv")); err != nil {
		return err
	}
	if err := linkFile(src.leaderboard, filepath.Join(tmp, "leaderboard.csv")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "description.md"), src.desc, 0o644); err != nil {
		return err
	}
	meta := task.Task{
		Name: src.id, Metric: src.spec.Metric, IDColumn: src.spec.IDColumn, TargetColumns: src.spec.TargetColumns,
		Source: fmt.Sprintf("MLE-bench competition %s (%s), answers %s, imported by mlerl tasks import-mlebench", src.id, src.cfg.Name, src.cfg.Dataset.Answers),
		Grader: src.grader,
	}
	var y bytes.Buffer
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(meta); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(tmp, "task.yaml"), y.Bytes(), 0o644)
}

// lfsPointer is how a Git LFS pointer file starts.
const lfsPointer = "version https://git-lfs.github.com/spec/"

func notLFSPointer(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	head := make([]byte, len(lfsPointer))
	n, _ := io.ReadFull(f, head)
	if string(head[:n]) == lfsPointer {
		return fmt.Errorf("%s is a Git LFS pointer, not a CSV (run `git lfs pull` in the MLE-bench checkout)", path)
	}
	return nil
}

// linkTree mirrors the files under src into dst, each hard-linked or copied.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return err
			}
			return linkFile(real, target)
		case d.Type().IsRegular():
			return linkFile(p, target)
		}
		return nil
	})
}

// linkFile hard-links src to dst, or copies it when a link is impossible
// (another file system). The content is never changed.
func linkFile(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%s: %v", src, unwrapPath(err))
	}
	defer in.Close()
	outF, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(outF, in); err != nil {
		outF.Close()
		return err
	}
	return outF.Close()
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return errors.New("missing")
		}
		return pe.Err
	}
	return err
}
