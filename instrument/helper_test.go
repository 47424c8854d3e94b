package instrument

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const smallProgram = "import pandas as pd\ndf = pd.read_csv('train.csv')\nprint(df.shape)\n"

// The helper process is kept between requests, and one that died while idle
// is replaced without the request failing.
func TestHelperKeptAndReplaced(t *testing.T) {
	needPython(t)
	in := NewAST("")
	ctx := context.Background()
	mustInsert := func() {
		t.Helper()
		marked, err := in.Insert(ctx, smallProgram)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(marked, "__mlerl_stage__(") {
			t.Fatalf("no markers:\n%s", marked)
		}
	}
	mustInsert()
	before := helpers.idlePIDs(DefaultPython)
	if len(before) == 0 {
		t.Fatal("no helper kept after a request")
	}
	mustInsert()
	after := helpers.idlePIDs(DefaultPython)
	if len(after) != len(before) || after[len(after)-1] != before[len(before)-1] {
		t.Fatalf("idle helpers %v after a second request, want the same as %v", after, before)
	}
	for _, pid := range after {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	mustInsert()
	// The request took the helper that was idle last, found it dead, and
	// put a fresh one in its place.
	now := helpers.idlePIDs(DefaultPython)
	if top := now[len(now)-1]; slices.Contains(after, top) {
		t.Fatalf("killed helper %d kept after the request that found it dead", top)
	}
}

// Parallel requests each get a helper; at most maxIdleHelpers stay.
func TestHelperParallel(t *testing.T) {
	needPython(t)
	in := NewAST("")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 3 {
				m, err := in.Insert(context.Background(), smallProgram)
				if err == nil && !strings.Contains(m, "__mlerl_stage__(") {
					err = errors.New("no markers")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(helpers.idlePIDs(DefaultPython)); n < 1 || n > maxIdleHelpers {
		t.Errorf("%d idle helpers, want 1..%d", n, maxIdleHelpers)
	}
}

// A helper that misbehaves fails the request with a clear error (one that
// hangs, at the caller's deadline) and is not kept.
func TestHelperMisbehaves(t *testing.T) {
	cases := []struct {
		name, script, want string
		limit              time.Duration // the caller's deadline
	}{
		{"hangs", "exec sleep 60", "deadline exceeded", time.Second},
		// The others must fail on their own, long before their deadline.
		{"garbage reply", "read line; echo 'not json'; exec sleep 60", "decoding reply", 5 * time.Minute},
		{"dies", "echo 'Segmentation fault' >&2; exit 139", "Segmentation fault", 5 * time.Minute},
		{"endless reply", "read line; exec head -c 20000000 /dev/zero", "reply over", 5 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := filepath.Join(t.TempDir(), "python")
			if err := os.WriteFile(fake, []byte("#!/bin/sh\n"+tc.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.limit)
			defer cancel()
			_, err := NewAST(fake).Insert(ctx, smallProgram)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if pids := helpers.idlePIDs(fake); len(pids) != 0 {
				t.Errorf("misbehaving helper kept: %v", pids)
			}
		})
	}
}

// A cancelled request returns the context's error and leaves the pool usable.
func TestHelperCancelled(t *testing.T) {
	needPython(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewAST("").Insert(ctx, smallProgram); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, err := NewAST("").Insert(context.Background(), smallProgram); err != nil {
		t.Fatal(err)
	}
}

// idlePIDs lists the process ids of python's idle helpers.
func (p *helperPool) idlePIDs(python string) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, h := range p.idle[python] {
		pids = append(pids, h.cmd.Process.Pid)
	}
	return pids
}
