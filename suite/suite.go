// Package suite is mlerl's built-in task suite: ten tasks made from data
// that Debian packages ship, embedded in the binary, and the deterministic
// build that prepares them (Build) and checks them against SHA256SUMS.
//
// The prepared task folders are committed under tasks/, so users need neither
// R nor the rebuild. Regenerate them with
//
//	go test ./suite -run TestUpdate -update
//
// or `mlerl suite build --out DIR --verify` to check a rebuild.
package suite

import (
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

//go:embed all:tasks
var tasksFS embed.FS

// sha256sums is the recorded checksum of every file of the prepared suite.
//
//go:embed SHA256SUMS
var sha256sums []byte

// tasks is the embedded suite rooted at the folder holding the task folders.
func tasks() fs.FS {
	sub, err := fs.Sub(tasksFS, "tasks")
	if err != nil {
		panic(err) // "tasks" is a valid path; fs.Sub cannot fail on it
	}
	return sub
}

// Names lists the suite's task names, sorted.
func Names() []string {
	entries, err := fs.ReadDir(tasks(), ".")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names
}

// Verify compares the task folders under dir with the recorded checksums and
// returns one line per difference; none means dir is exactly the suite.
func Verify(dir string) ([]string, error) { return Diff(dir, sha256sums) }

var (
	dirMu  sync.Mutex
	dirVal string
)

// Dir extracts the embedded suite, once, into
// <user cache dir>/mlerl/suite-<hash of its contents>/ and returns that
// folder, which holds one folder per task. An extraction already there is
// reused; a new binary with different tasks gets a new folder.
func Dir() (string, error) {
	dirMu.Lock()
	defer dirMu.Unlock()
	if dirVal != "" {
		return dirVal, nil
	}
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	d, err := extract(tasks(), root)
	if err != nil {
		return "", err
	}
	dirVal = d
	return d, nil
}

// cacheRoot is $XDG_CACHE_HOME/mlerl or ~/.cache/mlerl. Without a home
// directory (some service accounts) it falls back to the temp dir, so the
// suite still works.
func cacheRoot() (string, error) {
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "mlerl"), nil
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("mlerl-cache-%d", os.Getuid())), nil
}

// contentHash names an extraction by what is in it: every path and its bytes.
func contentHash(src fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash embedded suite: %w", err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:12], nil
}

// extract writes src into root/suite-<hash>/ unless it is already there.
// Files go into a temporary folder that is renamed into place, so a reader
// never sees a half-written suite; when several processes race, one rename
// wins and the others discard their copies.
func extract(src fs.FS, root string) (string, error) {
	sum, err := contentHash(src)
	if err != nil {
		return "", err
	}
	final := filepath.Join(root, "suite-"+sum)
	if fi, err := os.Stat(final); err == nil && fi.IsDir() {
		return final, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("extract suite: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".suite-"+sum+"-")
	if err != nil {
		return "", fmt.Errorf("extract suite: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := writeTree(src, tmp); err != nil {
		return "", fmt.Errorf("extract suite into %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("extract suite: %w", err)
	}
	if beforeRename != nil {
		beforeRename(final)
	}
	if err := os.Rename(tmp, final); err != nil {
		// Another process renamed its copy first: use that one.
		if fi, serr := os.Stat(final); serr == nil && fi.IsDir() {
			return final, nil
		}
		return "", fmt.Errorf("extract suite: %w", err)
	}
	return final, nil
}

// beforeRename lets a test make another process win the race for final.
var beforeRename func(final string)

// writeTree copies src into dst. private/ folders get mode 0700: the answers
// are for the grader, not for other users or agent code.
func writeTree(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			if p == "." {
				return nil
			}
			mode := os.FileMode(0o755)
			if path.Base(p) == "private" {
				mode = 0o700
			}
			if err := os.Mkdir(target, mode); err != nil {
				return err
			}
			return os.Chmod(target, mode) // not subject to the umask
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// Resolve turns a task argument into a task folder: a suite name gives its
// extracted folder; otherwise an existing directory gives its absolute path.
// A suite name wins over a same-named directory in the working directory;
// write ./name to mean the directory.
func Resolve(nameOrPath string) (string, error) {
	names := Names()
	if slices.Contains(names, nameOrPath) {
		d, err := Dir()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, nameOrPath), nil
	}
	if nameOrPath == "" {
		return "", fmt.Errorf("no task given: want a suite name (%s) or a task folder", strings.Join(names, ", "))
	}
	fi, err := os.Stat(nameOrPath)
	switch {
	case err == nil && fi.IsDir():
		abs, err := filepath.Abs(nameOrPath)
		if err != nil {
			return "", fmt.Errorf("task %q: %w", nameOrPath, err)
		}
		return abs, nil
	case err == nil:
		return "", fmt.Errorf("task %q is a file, not a task folder or a suite name (%s)", nameOrPath, strings.Join(names, ", "))
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("unknown task %q: not a suite name (%s) nor an existing folder", nameOrPath, strings.Join(names, ", "))
	default:
		return "", fmt.Errorf("task %q: %w", nameOrPath, err)
	}
}
