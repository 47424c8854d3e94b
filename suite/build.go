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
//go:embed build/export.R build/digits.py build/descriptions/*.md
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

// rPackages maps the R packages the export uses to the Debian packages
// that ship them.
var rPackages = []struct{ r, deb string }{
	{"modeldata", "r-cran-modeldata"},
	{"mlbench", "r-cran-mlbench"},
	{"janeaustenr", "r-cran-janeaustenr"},
}

var pyModules = []struct{ mod, deb string }{
	{"numpy", "python3-numpy"},
	{"sklearn", "python3-sklearn"},
	{"PIL", "python3-pil"},
}

// CheckTools reports a *MissingError when Rscript, an R data package,
// Python or one of its modules is missing.
func CheckTools(ctx context.Context) error { return checkTools(ctx, python) }

func checkTools(ctx context.Context, python string) error {
	var missing []string
	if _, err := exec.LookPath("Rscript"); err != nil {
		missing = append(missing, "r-base-core")
		for _, p := range rPackages {
			missing = append(missing, p.deb)
		}
	} else {
		var names []string
		for _, p := range rPackages {
			names = append(names, fmt.Sprintf("%q", p.r))
		}
		script := fmt.Sprintf(`for (p in c(%s)) if (!requireNamespace(p, quietly = TRUE)) cat(p, "\n")`, strings.Join(names, ","))
		out, err := command(ctx, "Rscript", "-e", script).Output()
		if err != nil {
			return fmt.Errorf("check R packages: %w", err)
		}
		for _, p := range rPackages {
			if slices.Contains(strings.Fields(string(out)), p.r) {
				missing = append(missing, p.deb)
			}
		}
	}
	if _, err := os.Stat(python); err != nil {
		missing = append(missing, "python3")
		for _, m := range pyModules {
			missing = append(missing, m.deb)
		}
	} else {
		var b strings.Builder
		b.WriteString("import importlib.util\n")
		for _, m := range pyModules {
			fmt.Fprintf(&b, "if importlib.util.find_spec(%q) is None: print(%q)\n", m.mod, m.mod)
		}
		out, err := command(ctx, python, "-c", b.String()).Output()
		if err != nil {
			return fmt.Errorf("check Python modules: %w", err)
		}
		for _, m := range pyModules {
			if slices.Contains(strings.Fields(string(out)), m.mod) {
				missing = append(missing, m.deb)
			}
		}
	}
	if len(missing) > 0 {
		return &MissingError{Packages: missing}
	}
	return nil
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

// Build exports the raw data from the Debian packages and writes every task
// folder into out (created if needed; a task folder already there is
// replaced). Progress goes to log, one line per task. The same packages give
// the same bytes.
func Build(ctx context.Context, out string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if err := CheckTools(ctx); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "mlerl-suite-raw-")
	if err != nil {
		return fmt.Errorf("suite build: %w", err)
	}
	defer os.RemoveAll(work)
	for _, name := range []string{"export.R", "digits.py"} {
		b, err := buildFS.ReadFile("build/" + name)
		if err != nil {
			return fmt.Errorf("suite build: %w", err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			return fmt.Errorf("suite build: %w", err)
		}
	}
	raw := filepath.Join(work, "raw")
	fmt.Fprintln(log, "suite: exporting raw data with R")
	if err := run(ctx, log, "Rscript", filepath.Join(work, "export.R"), raw); err != nil {
		return fmt.Errorf("suite build: export: %w", err)
	}
	fmt.Fprintln(log, "suite: writing digit images with Python")
	if err := run(ctx, log, python, filepath.Join(work, "digits.py"), raw); err != nil {
		return fmt.Errorf("suite build: digits: %w", err)
	}
	for _, def := range taskDefs {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := buildTask(raw, out, def.name, def.load)
		if err != nil {
			return fmt.Errorf("suite build: %s: %w", def.name, err)
		}
		fmt.Fprintf(log, "suite: %s: %s\n", def.name, n)
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
