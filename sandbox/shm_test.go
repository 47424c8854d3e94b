package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// needPrivateShm skips a test of the private /dev/shm when runs of sb do
// not get one, saying why, and fails it when they should: the landlock
// tier's supervisor can mount one as root with CAP_SYS_ADMIN, and its exec
// stage without root where user namespaces can be made.
func needPrivateShm(t *testing.T, sb *Sandbox) {
	t.Helper()
	if ok, why := hasPrivateShm(sb); !ok {
		if sb.Level() == LevelLandlock && hostHasShm() && (sb.runAsID && capSysAdmin() || !sb.runAsID && userNamespacesWork()) {
			t.Fatalf("a private /dev/shm can be mounted here, yet %s", why)
		}
		t.Skip(why)
	}
}

// userNamespacesWork reports whether this process may start a child in a
// user and mount namespace of its own.
func userNamespacesWork() bool {
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS}
	return cmd.Run() == nil
}

// hasPrivateShm reports whether runs of sb get a private, bounded /dev/shm,
// and why not when they do not.
func hasPrivateShm(sb *Sandbox) (bool, string) {
	switch {
	case sb.Level() == LevelBwrap:
		return true, ""
	case sb.Level() == LevelLandlock && !hostHasShm():
		return false, "the host has no /dev/shm"
	case sb.Level() == LevelLandlock && !sb.privShm:
		return false, "no private /dev/shm could be mounted: " + sb.shmErr
	case sb.Level() == LevelLandlock:
		return true, ""
	}
	return false, "no private /dev/shm at level " + string(sb.Level())
}

// capSysAdmin reports whether this process has CAP_SYS_ADMIN (bit 21).
func capSysAdmin() bool {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<21) != 0
		}
	}
	return false
}

var writtenRe = regexp.MustCompile(`written (\d+) MiB`)

// written is what shmfill.py reports it wrote, in bytes.
func written(t *testing.T, out []byte) int64 {
	t.Helper()
	m := writtenRe.FindSubmatch(out)
	if m == nil {
		t.Fatalf("no written count in output:\n%s", tail(out))
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n << 20
}

// A program's memory-backed files (/dev/shm, and /tmp under bwrap) are
// bounded by its memory limit, kept off the host's /dev/shm, and counted in
// its peak memory, whether they are left at exit or removed before.
func TestSharedMemoryBoundedAndCounted(t *testing.T) {
	const limit = 256 << 20
	cases := []struct {
		name      string
		dir       string
		bwrapOnly bool // /tmp is a tmpfs only under bwrap (the landlock tier's is on disk)
		target    int64
		env       []string
		full      bool // the program must be refused with ENOSPC at the bound
	}{
		{"shm-past-limit", "/dev/shm", false, 3 * limit, []string{"KEEP=1"}, true},
		{"tmp-past-limit", "/tmp", true, 3 * limit, []string{"KEEP=1"}, true},
		// Removed before the program ends: only the sampling saw it.
		{"shm-held-then-removed", "/dev/shm", false, 160 << 20, []string{"HOLD_SECONDS=0.5"}, false},
	}
	// A file on the host's /dev/shm the program must not see.
	hostTag := fmt.Sprintf("mlerl-host-shm-%d", time.Now().UnixNano())
	if hostHasShm() {
		hostFile := filepath.Join("/dev/shm", hostTag)
		if err := os.WriteFile(hostFile, []byte("host"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(hostFile) })
	}
	for _, sb := range tiers(t) {
		for _, c := range cases {
			t.Run(string(sb.Level())+"/"+c.name, func(t *testing.T) {
				needPrivateShm(t, sb)
				if c.bwrapOnly && sb.Level() != LevelBwrap {
					t.Skip("/tmp is not a tmpfs in this tier")
				}
				tag := fmt.Sprintf("mlerl-shmfill-%d", time.Now().UnixNano())
				env := append([]string{"SHM_DIR=" + c.dir, "TARGET_BYTES=" + fmt.Sprint(c.target), "TAG=" + tag}, c.env...)
				res := mustRun(t, sb, Spec{Program: hostile(t, "shmfill.py"), Env: env,
					Limits: Limits{MemoryBytes: limit, Timeout: time.Minute}})
				if res.ExitCode != 0 || !bytes.Contains(res.Output, []byte("done")) {
					t.Fatalf("exit %d:\n%s", res.ExitCode, tail(res.Output))
				}
				n := written(t, res.Output)
				if c.full {
					if !bytes.Contains(res.Output, []byte("stopped by OSError 28")) {
						t.Errorf("not refused with ENOSPC:\n%s", tail(res.Output))
					}
					// It reached the bound (a few MiB of the program's own
					// use may sit there first), and not past it.
					if n > limit || n < limit-32<<20 {
						t.Errorf("wrote %d MiB under a %d MiB limit", n>>20, limit>>20)
					}
				} else if n != c.target {
					t.Errorf("wrote %d MiB, want %d", n>>20, c.target>>20)
				}
				// Counted: the files on top of the interpreter's own few tens
				// of MiB.
				if res.PeakMemoryBytes < n+4<<20 || res.PeakMemoryBytes > n+200<<20 {
					t.Errorf("peak memory %d MiB after writing %d MiB, want the files counted in it", res.PeakMemoryBytes>>20, n>>20)
				}
				if bytes.Contains(res.Output, []byte(hostTag)) {
					t.Errorf("the program sees the host's /dev/shm:\n%s", tail(res.Output))
				}
				for _, d := range []string{"/dev/shm", os.TempDir()} {
					if left, _ := filepath.Glob(filepath.Join(d, tag+"*")); len(left) > 0 {
						for _, f := range left {
							os.Remove(f)
						}
						t.Errorf("the program's files are on the host: %v", left)
					}
				}
			})
		}
	}
}

// Shared memory is also made by sizing a file and touching its pages
// through a mapping (multiprocessing.shared_memory, numpy memmaps): the size
// is granted sparse, and the first page past the bound kills the program
// with SIGBUS. The pages it got count twice in the peak (in the tmpfs and in
// the mapping's RSS), an upper bound.
func TestSharedMemoryMappedPastLimit(t *testing.T) {
	const limit = 256 << 20
	prog := `from multiprocessing import shared_memory
block = shared_memory.SharedMemory(create=True, size=3 * (256 << 20))
print("sized", block.size >> 20, flush=True)
buf = block.buf
for i in range(0, block.size, 4096):
    buf[i] = 1
    if i % (64 << 20) == 0:
        print("touched", i >> 20, flush=True)
print("touched all")
`
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			needPrivateShm(t, sb)
			res := mustRun(t, sb, Spec{Program: []byte(prog), Limits: Limits{MemoryBytes: limit, Timeout: time.Minute}})
			if res.Signal != "SIGBUS" || !bytes.Contains(res.Output, []byte("sized 768")) || bytes.Contains(res.Output, []byte("touched all")) {
				t.Fatalf("exit %d signal %q, want SIGBUS at the bound:\n%s", res.ExitCode, res.Signal, tail(res.Output))
			}
			if bytes.Contains(res.Output, []byte("touched 256")) {
				t.Errorf("touched past the %d MiB bound:\n%s", limit>>20, tail(res.Output))
			}
			t.Logf("peak memory %d MiB", res.PeakMemoryBytes>>20)
			if res.PeakMemoryBytes < limit || res.PeakMemoryBytes > 2*limit+200<<20 {
				t.Errorf("peak memory %d MiB, want the %d MiB mapped counted", res.PeakMemoryBytes>>20, limit>>20)
			}
		})
	}
}

// The landlock tier's private /dev/shm also bounds its number of files:
// inodes are kernel memory its size does not count. (bwrap cannot set a
// tmpfs's inode count.)
func TestShmFileCountBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 66,536 files (about 5 s)")
	}
	prog := fmt.Sprintf(`import os
n = 0
try:
    while n < %d:
        open("/dev/shm/f%%d" %% n, "w").close()
        n += 1
except OSError as e:
    print("refused", e.errno)
print("files", n)
`, shmMaxFiles+1000)
	for _, sb := range tiers(t) {
		if sb.Level() != LevelLandlock {
			continue
		}
		t.Run(string(sb.Level()), func(t *testing.T) {
			needPrivateShm(t, sb)
			res := mustRun(t, sb, Spec{Program: []byte(prog), Limits: Limits{Timeout: time.Minute}})
			var n int
			if _, err := fmt.Sscanf(string(bytes.TrimSpace(tail(res.Output))), "refused 28\nfiles %d", &n); err != nil || n > shmMaxFiles {
				t.Errorf("want ENOSPC within %d files (%v):\n%s", shmMaxFiles, err, tail(res.Output))
			}
		})
	}
}

// multiprocessing needs /dev/shm: its locks and queues are POSIX semaphores
// there, shared_memory blocks are files there. Every tier with a private
// /dev/shm must run it.
func TestMultiprocessing(t *testing.T) {
	prog := `import multiprocessing as mp
from multiprocessing import shared_memory

def square(x):
    return x * x

if __name__ == "__main__":
    lock = mp.Lock()
    with lock:
        pass
    q = mp.Queue()
    q.put("queued")
    print(q.get(timeout=10))
    with mp.Pool(2) as pool:
        print("pool", sum(pool.map(square, range(10))))
    block = shared_memory.SharedMemory(create=True, size=1 << 20)
    block.buf[:5] = b"hello"
    other = shared_memory.SharedMemory(name=block.name)
    print("shared", bytes(other.buf[:5]).decode())
    other.close()
    block.close()
    block.unlink()
`
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			needPrivateShm(t, sb)
			res := mustRun(t, sb, Spec{Program: []byte(prog), Limits: Limits{Timeout: time.Minute}})
			for _, want := range []string{"queued", "pool 285", "shared hello"} {
				if res.ExitCode != 0 || !bytes.Contains(res.Output, []byte(want)) {
					t.Errorf("exit %d, output lacks %q:\n%s", res.ExitCode, want, tail(res.Output))
				}
			}
		})
	}
}

// meminfoShmem is the host's Shmem of /proc/meminfo in bytes: every tmpfs
// and shared-memory page of the machine.
func meminfoShmem() int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		var kb int64
		if n, _ := fmt.Sscanf(l, "Shmem: %d kB", &kb); n == 1 {
			return kb << 10
		}
	}
	return -1
}

// The figures of issue 13: how much host memory a program limited to 1 GiB
// can fill through /dev/shm and /tmp, and the peak reported. The host's
// Shmem is sampled while it runs (other work on the machine moves it too,
// hence not part of the ordinary tests). Measured 2026-11-24 on the 2-core
// development machine as root (the after column also as nobody, with the
// same figures):
//
//	                  before (01e75aa)                       after
//	bwrap /dev/shm    3072 MiB (all it tried), peak 24 MiB   1024 MiB, then ENOSPC; peak 1048 MiB
//	bwrap /tmp        1024 MiB (sized as a file), peak 24    1024 MiB with /dev/shm, ENOSPC; peak 1048
//	landlock /dev/shm none (refused: multiprocessing fails) 1024 MiB, then ENOSPC; peak 1048 MiB
//
// Run: MLERL_BENCH=1 go test -run TestShmFillFigures -v ./sandbox/
func TestShmFillFigures(t *testing.T) {
	if os.Getenv("MLERL_BENCH") != "1" {
		t.Skip("set MLERL_BENCH=1 to measure what a 1 GiB-limited program fills (writes 1 GiB per case)")
	}
	const limit = 1 << 30
	for _, sb := range tiers(t) {
		for _, dir := range []string{"/dev/shm", "/tmp"} {
			t.Run(string(sb.Level())+dir, func(t *testing.T) {
				needPrivateShm(t, sb)
				if dir == "/tmp" && sb.Level() != LevelBwrap {
					t.Skip("/tmp is not a tmpfs in this tier")
				}
				base := meminfoShmem()
				var rose atomic.Int64
				stop := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					for {
						select {
						case <-stop:
							return
						case <-time.After(10 * time.Millisecond):
						}
						if v := meminfoShmem() - base; v > rose.Load() {
							rose.Store(v)
						}
					}
				}()
				res := mustRun(t, sb, Spec{Program: hostile(t, "shmfill.py"), Limits: Limits{MemoryBytes: limit, Timeout: 2 * time.Minute},
					Env: []string{"TARGET_BYTES=" + fmt.Sprint(3*limit), "HOLD_SECONDS=0.5", "SHM_DIR=" + dir}})
				close(stop)
				<-sampled
				n := written(t, res.Output)
				t.Logf("%s %s: wrote %d MiB, host Shmem rose by up to %d MiB, peak memory %d MiB, exit %d",
					sb.Level(), dir, n>>20, rose.Load()>>20, res.PeakMemoryBytes>>20, res.ExitCode)
				if n > limit || rose.Load() > limit+256<<20 {
					t.Errorf("a 1 GiB-limited program filled %d MiB (host Shmem +%d MiB)", n>>20, rose.Load()>>20)
				}
				if res.PeakMemoryBytes < n {
					t.Errorf("peak memory %d MiB below the %d MiB written", res.PeakMemoryBytes>>20, n>>20)
				}
			})
		}
	}
}

// The bwrap tier's /dev is read-only: without root its tmpfs belongs to the
// program's uid, and would be memory no bound covers. The test builds that
// configuration (as TestInitIgnoresProgramSignals does) when the host is
// root, where file permissions alone would refuse the write.
func TestDevReadOnly(t *testing.T) {
	sbs := tiers(t)
	if sbs[0].Level() != LevelBwrap {
		t.Skip("needs the bwrap tier")
	}
	sb := *sbs[0]
	if sb.runAsID {
		sb.runAsID = false
		if err := sb.prepareBwrap(); err != nil {
			t.Fatal(err)
		}
	}
	res := mustRun(t, &sb, Spec{Program: []byte(`import errno, os
print("owner", os.stat("/dev").st_uid == os.getuid())
try:
    open("/dev/planted", "w").write("x")
    print("wrote /dev")
except OSError as e:
    print("refused", errno.errorcode[e.errno])
`)})
	if !bytes.Contains(res.Output, []byte("owner True")) || !bytes.Contains(res.Output, []byte("refused EROFS")) {
		t.Errorf("exit %d, want /dev owned by the program and read-only:\n%s", res.ExitCode, tail(res.Output))
	}
}
