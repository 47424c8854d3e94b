package runfolder

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mlerl/mlerl/rl"
)

// runSome trains a fresh run in dir for a few updates and returns its last
// checkpoint's update count.
func runSome(t *testing.T, dir string) int {
	t.Helper()
	tb, cfg := setup(t)
	cfg.MaxEpisodes = 48
	f, err := Create(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := rl.Run(context.Background(), cfg, newEnv(t, tb), newPolicy(t, tb), tasks, f)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Updates
}

// A run folder on a full disk (its episodes file writes to /dev/full, a real
// ENOSPC) stops the run with one error naming the folder and the file; the
// last checkpoint stays readable and the run resumes from it.
func TestDiskFullStopsWithClearError(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	defer full.Close()
	dir := t.TempDir()
	updates := runSome(t, dir)

	tb, cfg := setup(t)
	pol := newPolicy(t, tb)
	f, ck, err := Resume(dir, pol, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.episodes.Close()
	f.episodes = full // the disk fills up
	cfg.Resume, cfg.Budget = ck, ck.Elapsed+10*time.Minute
	_, err = rl.Run(context.Background(), cfg, newEnv(t, tb), pol, tasks, f)
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "run folder "+dir) || !strings.Contains(err.Error(), EpisodesFile) {
		t.Fatalf("run on a full disk: %v; want ENOSPC naming %s and %s", err, dir, EpisodesFile)
	}
	f.metrics.Close()

	pol2 := newPolicy(t, tb)
	_, ck2, err := Resume(dir, pol2, Options{})
	if err != nil {
		t.Fatalf("resume after the disk filled: %v", err)
	}
	if ck2.Counters.Updates != updates {
		t.Errorf("resumed at update %d, want the last good checkpoint's %d", ck2.Counters.Updates, updates)
	}
}

// A truncated or corrupt state.json, or a damaged policy, is a clear error
// at resume, never a panic; the checkpoint before it is used when there is one.
func TestDamagedCheckpointFallsBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, cdir string)
	}{
		{"truncated state", func(t *testing.T, cdir string) { truncate(t, filepath.Join(cdir, stateFile), 17) }},
		{"garbage state", func(t *testing.T, cdir string) { write(t, filepath.Join(cdir, stateFile), "\x00\xff not json") }},
		{"empty state", func(t *testing.T, cdir string) { write(t, filepath.Join(cdir, stateFile), "{}") }},
		{"state gone", func(t *testing.T, cdir string) { os.Remove(filepath.Join(cdir, stateFile)) }},
		{"policy damaged", func(t *testing.T, cdir string) {
			pols, _ := filepath.Glob(filepath.Join(cdir, "policy-*", "*"))
			newest := ""
			for _, p := range pols {
				if newest == "" || p > newest {
					newest = p
				}
			}
			write(t, newest, "{\"broken")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			updates := runSome(t, dir)
			cdir := filepath.Join(dir, CheckDir)
			if _, err := os.Stat(filepath.Join(cdir, prevStateFile)); err != nil {
				t.Fatalf("no previous checkpoint kept: %v", err)
			}
			tc.damage(t, cdir)
			tb, _ := setup(t)
			f, ck, err := Resume(dir, newPolicy(t, tb), Options{})
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			f.Close()
			if ck.Counters.Updates >= updates {
				t.Errorf("resumed at update %d: not the checkpoint before the damaged %d", ck.Counters.Updates, updates)
			}
			// Both damaged: a clear error, no panic.
			tc.damage(t, cdir)
			write(t, filepath.Join(cdir, prevStateFile), "[1,2")
			if _, _, err := Resume(dir, newPolicy(t, tb), Options{}); err == nil || !strings.Contains(err.Error(), "resume "+dir) {
				t.Errorf("both checkpoints damaged: %v", err)
			}
		})
	}
}

func truncate(t *testing.T, path string, n int64) {
	t.Helper()
	if err := os.Truncate(path, n); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// LoadPolicy takes a finished run's learnt policy (train --init-policy) and
// leaves its folder as it was; a damaged last checkpoint falls back to the
// one before it, and a folder with neither is a clear error.
func TestLoadPolicy(t *testing.T) {
	dir := t.TempDir()
	updates := runSome(t, dir)
	before, err := os.ReadFile(filepath.Join(dir, EpisodesFile))
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := setup(t)
	pol := newPolicy(t, tb)
	if err := LoadPolicy(dir, pol); err != nil {
		t.Fatal(err)
	}
	if pol.Version() != updates {
		t.Errorf("loaded policy at version %d, want the run's last update %d", pol.Version(), updates)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, EpisodesFile)); string(after) != string(before) {
		t.Error("LoadPolicy changed the run's episodes.jsonl")
	}

	write(t, filepath.Join(dir, CheckDir, stateFile), "{\"broken")
	pol = newPolicy(t, tb)
	if err := LoadPolicy(dir, pol); err != nil || pol.Version() >= updates || pol.Version() == 0 {
		t.Errorf("damaged last checkpoint: err %v, version %d (want the one before %d)", err, pol.Version(), updates)
	}
	if err := LoadPolicy(t.TempDir(), newPolicy(t, tb)); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("a folder without a run: %v", err)
	}
}

// state.json, once written, is present at every instant of a run: a process
// killed mid-checkpoint (or a reader such as the UI) finds the last
// checkpoint under its name, not only the one before it. A reader polls the
// file while a run writes its checkpoints.
func TestStateNeverAbsentDuringCheckpoints(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, CheckDir, stateFile)
	stop := make(chan struct{})
	halt := sync.OnceFunc(func() { close(stop) })
	t.Cleanup(halt) // runSome's t.Fatal must not leave the reader spinning
	missing := make(chan int, 1)
	go func() {
		seen, gaps := false, 0
		for {
			select {
			case <-stop:
				missing <- gaps
				return
			default:
			}
			_, err := os.Stat(state)
			switch {
			case err == nil:
				seen = true
			case seen:
				gaps++
			}
		}
	}()
	updates := runSome(t, dir)
	halt()
	if gaps := <-missing; gaps > 0 {
		t.Errorf("state.json was absent %d times while %d checkpoints were written", gaps, updates)
	}
	if updates < 3 {
		t.Fatalf("only %d updates: too few checkpoints to test", updates)
	}
}
