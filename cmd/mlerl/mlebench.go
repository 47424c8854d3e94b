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
	// Flags may come before, between or after the ids.
	var ids []string
	for {
		if err := fs.Parse(args); err != nil {
			return errUsage{err}
		}
		if fs.NArg() == 0 {
			break
		}
		ids = append(ids, fs.Arg(0))
		args = fs.Args()[1:]
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
	compDir := filepath.Join(repo, "mlebench", "competitions", id)
	raw, err := os.ReadFile(filepath.Join(compDir, "config.yaml"))
	if err != nil {
		return "", fmt.Errorf("no competition %q in %s: %v", id, repo, unwrapPath(err))
	}
	var cfg mleConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return "", fmt.Errorf("%s: %v", filepath.Join(compDir, "config.yaml"), strings.Join(strings.Fields(err.Error()), " "))
	}
	grader := "mlebench/" + id
	if _, err := grade.MLEBenchSpec(grader, nil); err != nil && strings.Contains(err.Error(), "unknown grader") {
		return "", fmt.Errorf("unknown grader: mlerl has no rule set for %s's grader (%s, %s); covered: %s",
			id, cfg.Grader.Name, cfg.Grader.GradeFn, strings.Join(grade.MLEBenchCompetitions(), ", "))
	}
	if err := prepared(data, id); err != nil {
		return "", err
	}
	answers := filepath.Join(data, filepath.FromSlash(cfg.Dataset.Answers))
	sample := filepath.Join(data, filepath.FromSlash(cfg.Dataset.SampleSubmission))
	leaderboard := filepath.Join(compDir, "leaderboard.csv")
	description := filepath.Join(repo, filepath.FromSlash(cfg.Description))
	for _, f := range []string{answers, sample, leaderboard} {
		if err := notLFSPointer(f); err != nil {
			return "", err
		}
	}
	header, err := grade.CSVHeaderFile(answers)
	if err != nil {
		return "", fmt.Errorf("answers: %v", err)
	}
	spec, err := grade.MLEBenchSpec(grader, header)
	if err != nil {
		return "", fmt.Errorf("answers %s: %v", answers, err)
	}
	desc, err := os.ReadFile(description)
	if err != nil {
		return "", fmt.Errorf("description: %v", err)
	}

	dir := filepath.Join(out, id)
	if _, err := os.Stat(dir); err == nil {
		return "", fmt.Errorf("%s already exists (remove it to import again)", dir)
	}
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
	publicSrc := filepath.Join(data, id, "prepared", "public")
	if err := linkTree(publicSrc, filepath.Join(tmp, "public")); err != nil {
		return "", err
	}
	// The contract's sample submission name, as a second link to the
	// competition's own sample file. The text-normalization challenges keep
	// it in prepared/private; MLE-bench publishes the same file zipped.
	privateSrc := filepath.Join(data, id, "prepared", "private")
	inside := func(dir string) bool {
		rel, err := filepath.Rel(dir, sample)
		return err == nil && !strings.HasPrefix(rel, "..")
	}
	if !inside(publicSrc) && !inside(privateSrc) {
		return "", fmt.Errorf("sample submission %s is not under %s", sample, filepath.Join(data, id, "prepared"))
	}
	dst := filepath.Join(tmp, "public", "sample_submission.csv")
	if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
		if err := linkFile(sample, dst); err != nil {
			return "", err
		}
	}
	if err := linkFile(answers, filepath.Join(tmp, "private", "answers.csv")); err != nil {
		return "", err
	}
	if err := linkFile(leaderboard, filepath.Join(tmp, "leaderboard.csv")); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "description.md"), desc, 0o644); err != nil {
		return "", err
	}
	meta := task.Task{
		Name: id, Metric: spec.Metric, IDColumn: spec.IDColumn, TargetColumns: spec.TargetColumns,
		Source: fmt.Sprintf("MLE-bench competition %s (%s), answers %s, imported by mlerl tasks import-mlebench", id, cfg.Name, cfg.Dataset.Answers),
		Grader: grader,
	}
	var y bytes.Buffer
	enc := yaml.NewEncoder(&y)
	enc.SetIndent(2)
	if err := enc.Encode(meta); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(tmp, "task.yaml"), y.Bytes(), 0o644); err != nil {
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
