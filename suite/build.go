package suite

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

// The build scripts and description templates travel inside the binary, so
// `mlerl suite build` works from any directory.
//
//go:embed build/export.R build/export-unseen.R build/digits.py build/descriptions/*.md
var buildFS embed.FS

// python is the interpreter that writes the digit images: Debian's, which has
// scikit-learn and PIL (a pyenv python on PATH may not).
const python = "/usr/bin/python3"

// MissingError says which Debian packages the build needs but cannot find.
type MissingError struct{ Packages []string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("suite build needs Debian packages %s (apt-get install %s)",
		strings.Join(e.Packages, ", "), strings.Join(e.Packages, " "))
}

// rPackage is an R package an export script uses and the Debian package
// that ships it.
type rPackage struct{ r, deb string }

// taskDef is one task of a set: its name and the loader that turns the raw
// exports into a dataset.
type taskDef struct {
	name string
	load func(raw string) (*dataset, error)
}

// taskSet is what one build makes: the R script (under build/) that exports
// the raw data ("" for a set made from data files alone), the R packages it
// needs, whether the digit images are written too, and the tasks.
type taskSet struct {
	name      string
	script    string
	rPackages []rPackage
	digits    bool
	// files are data files other Debian packages install, copied into the
	// raw folder as raw/<base name> before the tasks are made.
	files []debFile
	defs  []taskDef
}

// debFile is a data file and the Debian package that installs it.
type debFile struct{ path, deb string }

// suiteSet is the embedded suite; unseenSet (unseen.go) the tasks held out
// from tuning the built-in policy, committed under bench/unseen/.
var suiteSet = &taskSet{
	name:   "suite",
	script: "export.R",
	rPackages: []rPackage{
		{"modeldata", "r-cran-modeldata"},
		{"mlbench", "r-cran-mlbench"},
		{"janeaustenr", "r-cran-janeaustenr"},
	},
	digits: true,
	defs:   taskDefs,
}

// Sets names the task sets BuildSet knows: "suite" (the embedded tasks),
// "unseen" (bench/unseen/, held out from tuning) and "tuning"
// (bench/tuning/, tuned on beside the suite).
func Sets() []string { return []string{"suite", "unseen", "tuning"} }

func setNamed(name string) (*taskSet, error) {
	switch name {
	case "suite", "":
		return suiteSet, nil
	case "unseen":
		return unseenSet, nil
	case "tuning":
		return tuningSet, nil
	}
	return nil, fmt.Errorf("unknown task set %q (want one of %s)", name, strings.Join(Sets(), ", "))
}

var pyModules = []struct{ mod, deb string }{
	{"numpy", "python3-numpy"},
	{"sklearn", "python3-sklearn"},
	{"PIL", "python3-pil"},
}

// CheckSetTools reports a *MissingError when Rscript, an R data package,
// Python or one of its modules the named task set's build needs is missing
// (see Sets).
func CheckSetTools(ctx context.Context, set string) error {
	s, err := setNamed(set)
	if err != nil {
		return err
	}
	return checkTools(ctx, s, python)
}

func checkTools(ctx context.Context, set *taskSet, py string) error {
	var missing []string
	if set.script != "" { // a set without an R export reads Debian data files only
		m, err := missingR(ctx, set)
		if err != nil {
			return err
		}
		missing = m
	}
	for _, f := range set.files {
		if _, err := os.Stat(f.path); err != nil && !slices.Contains(missing, f.deb) {
			missing = append(missing, f.deb)
		}
	}
	if set.digits { // only the digit images need Python
		m, err := missingPython(ctx, py)
		if err != nil {
			return err
		}
		missing = append(missing, m...)
	}
	if len(missing) > 0 {
		return &MissingError{Packages: missing}
	}
	return nil
}

// missingR lists the Debian packages of R and the set's R data packages that
// are not installed.
func missingR(ctx context.Context, set *taskSet) ([]string, error) {
	var missing []string
	if _, err := exec.LookPath("Rscript"); err != nil {
		missing = append(missing, "r-base-core")
		for _, p := range set.rPackages {
			missing = append(missing, p.deb)
		}
		return missing, nil
	}
	var names []string
	for _, p := range set.rPackages {
		names = append(names, fmt.Sprintf("%q", p.r))
	}
	script := fmt.Sprintf(`for (p in c(%s)) if (!requireNamespace(p, quietly = TRUE)) cat(p, "\n")`, strings.Join(names, ","))
	out, err := command(ctx, "Rscript", "-e", script).Output()
	if err != nil {
		return nil, fmt.Errorf("check R packages: %w", err)
	}
	for _, p := range set.rPackages {
		if slices.Contains(strings.Fields(string(out)), p.r) {
			missing = append(missing, p.deb)
		}
	}
	return missing, nil
}

// missingPython lists the Debian packages of Python and the modules the digit
// images need that are not installed.
func missingPython(ctx context.Context, py string) ([]string, error) {
	var missing []string
	if _, err := os.Stat(py); err != nil {
		missing = append(missing, "python3")
		for _, m := range pyModules {
			missing = append(missing, m.deb)
		}
		return missing, nil
	}
	var b strings.Builder
	b.WriteString("import importlib.util\n")
	for _, m := range pyModules {
		fmt.Fprintf(&b, "if importlib.util.find_spec(%q) is None: print(%q)\n", m.mod, m.mod)
	}
	out, err := command(ctx, py, "-c", b.String()).Output()
	if err != nil {
		return nil, fmt.Errorf("check Python modules: %w", err)
	}
	for _, m := range pyModules {
		if slices.Contains(strings.Fields(string(out)), m.mod) {
			missing = append(missing, m.deb)
		}
	}
	return missing, nil
}

// command runs tools in a fixed locale so their output does not depend on
// the user's settings.
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8")
	return c
}

// run runs a command and folds its stderr into the error.
func run(ctx context.Context, log io.Writer, name string, args ...string) error {
	c := command(ctx, name, args...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if s := strings.TrimSpace(stderr.String()); s != "" && log != nil {
		for _, line := range strings.Split(s, "\n") {
			fmt.Fprintf(log, "suite: %s\n", strings.TrimSpace(line))
		}
	}
	return nil
}

// BuildSet exports the raw data from the Debian packages and writes every
// task folder of the named set (see Sets) into out (created if needed; a task
// folder already there is replaced). Progress goes to log, one line per task.
// The same packages give the same bytes.
func BuildSet(ctx context.Context, set, out string, log io.Writer) error {
	s, err := setNamed(set)
	if err != nil {
		return err
	}
	return buildSet(ctx, s, out, log)
}

func buildSet(ctx context.Context, set *taskSet, out string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if err := checkTools(ctx, set, python); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mlerl-suite-raw-")
	if err != nil {
		return fmt.Errorf("%s build: %w", set.name, err)
	}
	defer os.RemoveAll(work)
	var scripts []string
	if set.script != "" {
		scripts = append(scripts, set.script)
	}
	if set.digits {
		scripts = append(scripts, "digits.py")
	}
	for _, name := range scripts {
		b, err := buildFS.ReadFile("build/" + name)
		if err != nil {
			return fmt.Errorf("%s build: %w", set.name, err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			return fmt.Errorf("%s build: %w", set.name, err)
		}
	}
	raw := filepath.Join(work, "raw")
	if set.script != "" {
		fmt.Fprintf(log, "%s: exporting raw data with R\n", set.name)
		if err := run(ctx, log, "Rscript", filepath.Join(work, set.script), raw); err != nil {
			return fmt.Errorf("%s build: export: %w", set.name, err)
		}
	} else if err := os.MkdirAll(raw, 0o755); err != nil {
		return fmt.Errorf("%s build: %w", set.name, err)
	}
	for _, f := range set.files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return fmt.Errorf("%s build: %w", set.name, err)
		}
		if err := os.WriteFile(filepath.Join(raw, filepath.Base(f.path)), b, 0o644); err != nil {
			return fmt.Errorf("%s build: %w", set.name, err)
		}
	}
	if set.digits {
		fmt.Fprintf(log, "%s: writing digit images with Python\n", set.name)
		if err := run(ctx, log, python, filepath.Join(work, "digits.py"), raw); err != nil {
			return fmt.Errorf("%s build: digits: %w", set.name, err)
		}
	}
	for _, def := range set.defs {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := buildTask(raw, out, def.name, def.load)
		if err != nil {
			return fmt.Errorf("%s build: %s: %w", set.name, def.name, err)
		}
		fmt.Fprintf(log, "%s: %s: %s\n", set.name, def.name, n)
	}
	return nil
}

// buildTask writes one task folder and returns a short summary.
func buildTask(raw, out, name string, load func(string) (*dataset, error)) (string, error) {
	ds, err := load(raw)
	if err != nil {
		return "", err
	}
	if ds.name != name {
		return "", fmt.Errorf("loader made task %q", ds.name)
	}
	desc, err := descriptionTemplate(name)
	if err != nil {
		return "", err
	}
	r, err := render(ds, desc)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(out, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	paths := make([]string, 0, len(r.files))
	for p := range r.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		mode := os.FileMode(0o755)
		if strings.HasPrefix(p, "private/") {
			mode = 0o700
		}
		if err := os.MkdirAll(filepath.Dir(full), mode); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, r.files[p], 0o644); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d train rows, %d test rows, %d files", r.train, r.test, len(r.files)), nil
}

// IsMissing reports whether err is a *MissingError.
func IsMissing(err error) bool {
	var m *MissingError
	return errors.As(err, &m)
}

// descriptionTemplate is a task's description.md template, with the shared
// sections of common.md (files, how the program runs) defined.
func descriptionTemplate(name string) (*template.Template, error) {
	common, err := buildFS.ReadFile("build/descriptions/common.md")
	if err != nil {
		return nil, fmt.Errorf("description template: %w", err)
	}
	text, err := buildFS.ReadFile("build/descriptions/" + name + ".md")
	if err != nil {
		return nil, fmt.Errorf("description template: %w", err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(common))
	if err != nil {
		return nil, fmt.Errorf("description template common.md: %w", err)
	}
	if _, err := t.Parse(string(text)); err != nil {
		return nil, fmt.Errorf("description template %s.md: %w", name, err)
	}
	return t, nil
}
