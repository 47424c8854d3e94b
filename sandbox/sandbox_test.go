package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	Reexec()
	os.Exit(m.Run())
}

// newRoot makes a root for working directories that the per-run uid can
// traverse (t.TempDir is 0700), and checks it is empty when the test ends.
func newRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{root, filepath.Dir(root)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		left, _ := os.ReadDir(root)
		if len(left) != 0 {
			t.Errorf("left on disk under %s: %v", root, left)
		}
	})
	return root
}

// tiers returns one sandbox per isolation level that works here, forcing each
// level even when a better one exists.
func tiers(t *testing.T) []*Sandbox {
	t.Helper()
	root := newRoot(t)
	var out []*Sandbox
	for _, l := range []Level{LevelBwrap, LevelLandlock} {
		sb, err := New(context.Background(), Config{Want: l, Root: root})
		if err != nil {
			// A tier whose mechanism the machine has must work.
			_, noBwrap := exec.LookPath("bwrap")
			if (l == LevelBwrap && noBwrap == nil) || (l == LevelLandlock && landlockAvailable() == nil) {
				t.Errorf("tier %s: %v", l, err)
			} else {
				t.Logf("tier %s unavailable here: %v", l, err)
			}
			continue
		}
		if sb.Level() != l {
			t.Fatalf("asked for %s, got %s", l, sb.Level())
		}
		out = append(out, sb)
	}
	if len(out) == 0 {
		t.Skip("no isolation tier works on this machine")
	}
	return out
}

func hostile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hostile", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// task makes <dir>/task/{public/train.csv, private/answers.csv}. With open
// set, everything is world-readable, so only the sandbox stands between the
// program and the answers (not file permissions).
type taskDir struct {
	public, private, answers, secret string
}

func makeTask(t *testing.T, open bool) taskDir {
	t.Helper()
	base := t.TempDir()
	td := taskDir{
		public:  filepath.Join(base, "task", "public"),
		private: filepath.Join(base, "task", "private"),
		secret:  fmt.Sprintf("SECRET-ANSWER-%d", time.Now().UnixNano()),
	}
	td.answers = filepath.Join(td.private, "answers.csv")
	for _, d := range []string{td.public, td.private} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(td.public, "train.csv"), []byte("id,x\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(td.answers, []byte("id,y\n1,"+td.secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if open {
		for _, d := range []string{base, filepath.Dir(base)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return td
}

func mustRun(t *testing.T, sb *Sandbox, spec Spec) Result {
	t.Helper()
	res, err := sb.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("%s: Run: %v\noutput:\n%s", sb.Level(), err, res.Output)
	}
	if res.Isolation != sb.Level() {
		t.Errorf("result isolation %q, sandbox %q", res.Isolation, sb.Level())
	}
	return res
}

func TestBasics(t *testing.T) {
	td := makeTask(t, false) // 0700 parents: exercises descriptor-based access to data
	prog := `import os, sys
print(open("data/train.csv").read().strip())
os.write(3, b"stage-1\n")
open("submission.csv", "w").write("id,y\n1,0.5\n")
os.makedirs("out", exist_ok=True)
open("out/extra.txt", "w").write("x")
os.symlink("/etc/hostname", "link.txt")
sys.stderr.write("to stderr\n")
sys.exit(3)
`
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: []byte(prog), DataDir: td.public,
				Collect: []string{"submission.csv", "out/extra.txt", "link.txt", "missing.csv"}})
			if res.ExitCode != 3 {
				t.Errorf("exit %d, want 3; output:\n%s", res.ExitCode, res.Output)
			}
			if !bytes.Contains(res.Output, []byte("id,x\n1,2")) || !bytes.Contains(res.Output, []byte("to stderr")) {
				t.Errorf("output %q lacks data or stderr", res.Output)
			}
			if string(res.Markers) != "stage-1\n" {
				t.Errorf("markers %q", res.Markers)
			}
			if string(res.Files["submission.csv"]) != "id,y\n1,0.5\n" || string(res.Files["out/extra.txt"]) != "x" {
				t.Errorf("files %v", res.Files)
			}
			if _, ok := res.Files["link.txt"]; ok {
				t.Error("a symlink was collected")
			}
			if _, ok := res.Files["missing.csv"]; ok {
				t.Error("a missing file was collected")
			}
			if res.PeakMemoryBytes < 1<<20 || res.PeakMemoryBytes > 1<<30 {
				t.Errorf("peak memory %d implausible for a small python", res.PeakMemoryBytes)
			}
			if res.Duration <= 0 || res.TimedOut {
				t.Errorf("duration %v timed out %v", res.Duration, res.TimedOut)
			}
		})
	}
}

func TestTraceback(t *testing.T) {
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: []byte("x = 1\nraise ValueError('boom')  # line two\n")})
			if res.ExitCode != 1 {
				t.Errorf("exit %d", res.ExitCode)
			}
			for _, want := range []string{`File "solution.py", line 2`, "raise ValueError('boom')  # line two", "ValueError: boom"} {
				if !bytes.Contains(res.Output, []byte(want)) {
					t.Errorf("traceback lacks %q:\n%s", want, res.Output)
				}
			}
		})
	}
}

func TestEnvironmentIsClean(t *testing.T) {
	t.Setenv("MLERL_API_KEY", "sk-should-never-leak")
	t.Setenv("HTTPS_PROXY", "http://leak.example")
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "env.py"), Env: []string{"EXTRA=1"}})
			var got struct {
				Env     map[string]string
				Cwd     string
				UID     int
				Listing []string
				Root    []string
			}
			if err := json.Unmarshal(bytes.TrimSpace(res.Output), &got); err != nil {
				t.Fatalf("output %q: %v", res.Output, err)
			}
			for k := range got.Env {
				if strings.Contains(k, "MLERL") || strings.Contains(strings.ToUpper(k), "PROXY") {
					t.Errorf("host variable %s leaked", k)
				}
			}
			if got.Env["EXTRA"] != "1" || got.Env["LANG"] != "C.UTF-8" || got.Env["OMP_NUM_THREADS"] == "" {
				t.Errorf("environment %v", got.Env)
			}
			if got.Env["HOME"] != got.Cwd {
				t.Errorf("HOME %q, cwd %q", got.Env["HOME"], got.Cwd)
			}
			if os.Geteuid() == 0 && got.UID == 0 {
				t.Error("program runs as root")
			}
			if sb.Level() == LevelBwrap {
				for _, d := range got.Root {
					switch d {
					case "usr", "bin", "lib", "lib64", "sbin", "etc", "proc", "dev", "tmp", "sandbox", "sys", "lib32", "libx32":
					default:
						t.Errorf("host path /%s visible", d)
					}
				}
			}
		})
	}
}

func TestNetworkDenied(t *testing.T) {
	tcp, udp, saw := listenLoopback(t)
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "network.py"),
				Env: []string{fmt.Sprintf("HOST_TCP_PORT=%d", tcp), fmt.Sprintf("HOST_UDP_PORT=%d", udp)}})
			// Under bwrap a datagram may leave the socket into the sandbox's
			// own loopback; the listeners below show it never reaches the
			// host. Elsewhere no socket may even be made.
			if sb.Level() != LevelBwrap && bytes.Contains(res.Output, []byte(" sent")) {
				t.Errorf("a network operation succeeded:\n%s", res.Output)
			}
			if !bytes.Contains(res.Output, []byte("tcp4 blocked")) || !bytes.Contains(res.Output, []byte("dns blocked")) {
				t.Errorf("program did not run its attempts:\n%s", res.Output)
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // let any datagram in flight land
	if n := saw(); n != 0 {
		t.Errorf("host listeners received %d connections or datagrams", n)
	}
}

func TestPrivateUnreadable(t *testing.T) {
	td := makeTask(t, true)
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "private.py"), DataDir: td.public,
				Env: []string{"HOST_PRIVATE_FILE=" + td.answers, "HOST_PUBLIC_DIR=" + td.public}})
			if bytes.Contains(res.Output, []byte(td.secret)) {
				t.Errorf("private answers read:\n%s", res.Output)
			}
			if !bytes.Contains(res.Output, []byte("denied /proc/1/root")) {
				t.Errorf("program did not run its attempts:\n%s", res.Output)
			}
		})
	}
}

func TestWritesConfined(t *testing.T) {
	td := makeTask(t, true)
	home, _ := os.UserHomeDir()
	hostTmp := os.TempDir()
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			tag := fmt.Sprintf("mlerl-planted-%d", time.Now().UnixNano())
			targets := []string{
				filepath.Join(home, tag), filepath.Join(hostTmp, tag), "/var/tmp/" + tag,
				"/dev/shm/" + tag, "/" + tag, "/etc/" + tag, "/usr/" + tag, td.private + "/" + tag,
			}
			res := mustRun(t, sb, Spec{Program: hostile(t, "write.py"), DataDir: td.public,
				Env: []string{"HOST_WRITE_TARGETS=" + strings.Join(targets, ":"), "HOST_PUBLIC_DIR=" + td.public, "TAG=" + tag}})
			if !bytes.Contains(res.Output, []byte("inside ok")) {
				t.Errorf("writes inside the working dir and /tmp failed:\n%s", res.Output)
			}
			targets = append(targets, filepath.Join(td.public, "planted.txt"), filepath.Join(filepath.Dir(sb.root), "planted-"+tag), filepath.Join(sb.root, "planted-"+tag))
			for _, p := range targets {
				for _, q := range []string{p, p + ".d"} {
					if _, err := os.Lstat(q); err == nil {
						os.RemoveAll(q)
						t.Errorf("program wrote %s on the host\n%s", q, res.Output)
					}
				}
			}
		})
	}
}

func TestSourceNotOnDisk(t *testing.T) {
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: hostile(t, "source.py")})
			if !bytes.Contains(res.Output, []byte("hits: []")) {
				t.Errorf("program found its source:\n%s", res.Output)
			}
		})
	}
}

func TestMarkersDoNotBlock(t *testing.T) {
	// 4 MiB to fd 3 (past the 1 MiB cap and any pipe buffer), 4 MiB to stdout.
	prog := `import os, sys
chunk = b"m" * 65536
for i in range(64):
    os.write(3, chunk)
    sys.stdout.write("o" * 65536)
print("done")
`
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: []byte(prog), Limits: Limits{Timeout: 60 * time.Second}})
			if res.TimedOut || res.ExitCode != 0 || !bytes.HasSuffix(res.Output, []byte("done\n")) {
				t.Fatalf("exit %d timed out %v, tail %q", res.ExitCode, res.TimedOut, tail(res.Output))
			}
			if len(res.Markers) != MaxMarkerBytes {
				t.Errorf("markers %d bytes, want the cap %d", len(res.Markers), MaxMarkerBytes)
			}
		})
	}
}

func TestConcurrentRuns(t *testing.T) {
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for i := range 6 {
				wg.Go(func() {
					prog := fmt.Sprintf("import os\nos.write(3, b'%d')\nopen('submission.csv','w').write('%d')\nprint(%d)\n", i, i, i)
					res, err := sb.Run(context.Background(), Spec{Program: []byte(prog), Collect: []string{"submission.csv"}})
					want := fmt.Sprint(i)
					if err != nil || strings.TrimSpace(string(res.Output)) != want || string(res.Markers) != want || string(res.Files["submission.csv"]) != want {
						errs <- fmt.Sprintf("run %d: err %v output %q markers %q files %v", i, err, res.Output, res.Markers, res.Files)
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
		})
	}
}

func tail(b []byte) []byte {
	if len(b) > 300 {
		return b[len(b)-300:]
	}
	return b
}

// The task folder may sit under a directory only root can traverse (the
// suite is extracted under /root/.cache, /root being 0700). Running as root,
// every tier must still show the program its public files, and still keep
// private/ next to them unreadable.
func TestDataUnderClosedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the closed directory must be closed to the run's uid")
	}
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	td := taskDir{
		public:  filepath.Join(closed, "task", "public"),
		private: filepath.Join(closed, "task", "private"),
		secret:  fmt.Sprintf("SECRET-ANSWER-%d", time.Now().UnixNano()),
	}
	td.answers = filepath.Join(td.private, "answers.csv")
	for _, d := range []string{td.public, td.private} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(td.public, "train.csv"), []byte("id,x\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(td.answers, []byte("id,y\n1,"+td.secret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := append([]byte("print(open('data/train.csv').read().strip())\n"), hostile(t, "private.py")...)
	for _, sb := range tiers(t) {
		t.Run(string(sb.Level()), func(t *testing.T) {
			res := mustRun(t, sb, Spec{Program: prog, DataDir: td.public,
				Env: []string{"HOST_PRIVATE_FILE=" + td.answers, "HOST_PUBLIC_DIR=" + td.public}})
			if !bytes.HasPrefix(res.Output, []byte("id,x\n1,2\n")) {
				t.Errorf("public data not readable:\n%s", tail(res.Output))
			}
			if bytes.Contains(res.Output, []byte(td.secret)) {
				t.Errorf("private answers read:\n%s", res.Output)
			}
			if !bytes.Contains(res.Output, []byte("denied /proc/1/root")) {
				t.Errorf("program did not run its attempts:\n%s", tail(res.Output))
			}
		})
	}
}

// The init (init.sh) kills every process it may signal once the program
// ends; anywhere but as pid 1 of a fresh pid namespace that would be the
// host's processes. It must refuse to run there. The check runs inside a pid
// namespace where the init is pid 2 (bwrap's own init is pid 1), so a
// regression could only kill inside that namespace.
func TestInitOnlyAsPID1(t *testing.T) {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("needs bwrap for a throwaway pid namespace")
	}
	args := []string{"--unshare-pid", "--die-with-parent", "--dev-bind", "/", "/", "--",
		initShell, "-c", initScript, "mlerl-init", "/bin/echo", "program ran"}
	if os.Geteuid() != 0 {
		args = append([]string{"--unshare-user"}, args...)
	}
	out, err := exec.Command(bw, args...).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 {
		t.Fatalf("init outside pid 1: err %v, want exit 125; output:\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("outside a new pid namespace")) || bytes.Contains(out, []byte("program ran")) {
		t.Errorf("output:\n%s", out)
	}
}

// The interpreter runs with -S and the bootstrap stands in for site; what
// programs get from site must still be there: the package folders (in child
// interpreters too, which inherit -S from multiprocessing and joblib), and
// the exit() builtin.
func TestSiteReplacement(t *testing.T) {
	cases := []struct {
		name     string
		prog     string
		wantExit int
		want     string
		heavy    bool // imports numpy/sklearn/joblib: not -short
	}{
		{"exit-builtin", "print('before')\nexit(3)\n", 3, "before", false},
		{"quit-builtin", "quit(4)\n", 4, "", false},
		{"packages", "import numpy, sklearn\nprint('imported')\n", 0, "imported", true},
		{"child-with-parent-flags", `import subprocess, sys
flags = subprocess._args_from_interpreter_flags()
assert "-S" in flags, flags
subprocess.run([sys.executable, *flags, "-c", "import numpy; print('child imported')"], check=True)
`, 0, "child imported", true},
		// The bootstrap (and the stub that loads it compiled) leave no names
		// behind: `python3 solution.py` starts with dunders only.
		{"clean-globals", "print('names', sorted(k for k in globals() if not k.startswith('__')))\n", 0, "names []", false},
		{"path0-is-working-dir", "import os, sys\nassert sys.path[0] == os.getcwd(), sys.path\nprint('path0 ok')\n", 0, "path0 ok", false},
		// The bootstrap imports nothing a bare interpreter would not: os
		// alone costs a millisecond per run.
		{"bootstrap-imports", "import sys\nprint('has os', 'os' in sys.modules)\n", 0, "has os False", false},
		{"joblib-loky", `from joblib import Parallel, delayed
import numpy as np
print("sum", sum(Parallel(n_jobs=2, backend="loky")(delayed(np.square)(i) for i in range(4))))
`, 0, "sum 14", true},
	}
	for _, sb := range tiers(t) {
		for _, c := range cases {
			t.Run(string(sb.Level())+"/"+c.name, func(t *testing.T) {
				if c.heavy && testing.Short() {
					t.Skip("imports numpy/sklearn")
				}
				res := mustRun(t, sb, Spec{Program: []byte(c.prog), Limits: Limits{Timeout: 2 * time.Minute}})
				if res.ExitCode != c.wantExit || !bytes.Contains(res.Output, []byte(c.want)) {
					t.Errorf("exit %d (want %d), output lacks %q:\n%s", res.ExitCode, c.wantExit, c.want, tail(res.Output))
				}
				if bytes.Contains(res.Output, []byte("Error")) {
					t.Errorf("an error was printed:\n%s", tail(res.Output))
				}
			})
		}
	}
}

// The bootstrap travels compiled by the interpreter it runs in; compiled by
// another version, the run must fail as the sandbox's, not run anything.
func TestCompiledBootstrapVersionChecked(t *testing.T) {
	for _, sb := range tiers(t) {
		if len(sb.boot) != 3 {
			t.Fatalf("%s: bootstrap not passed compiled: %q", sb.Level(), sb.boot[:1])
		}
		other := *sb
		other.boot = []string{"-c", strings.Replace(sb.boot[1], "sys.hexversion != ", "sys.hexversion != 1 + ", 1), sb.boot[2]}
		res, err := other.Run(context.Background(), Spec{Program: []byte("print('program ran')")})
		if err == nil || bytes.Contains(res.Output, []byte("program ran")) {
			t.Errorf("%s: err %v, output %q", sb.Level(), err, res.Output)
		}
	}
}

// The device files, /dev/shm and the time zone programs use are there
// (bwrap builds a smaller /dev than its --dev and links /etc/localtime).
func TestDevices(t *testing.T) {
	prog := `import multiprocessing, os, time
with open("/dev/null", "w") as f:
    f.write("x")
assert len(open("/dev/urandom", "rb").read(8)) == 8
assert open("/dev/zero", "rb").read(4) == bytes(4)
# (Opening /dev/stdout is refused when the host is root: the program's uid
# does not own the output pipe. The link is there.)
assert os.path.lexists("/dev/stdout")
if os.environ.get("CHECK_SHM"):
    lock = multiprocessing.Lock()
    lock.acquire()
    lock.release()
assert os.path.exists("/etc/localtime") and time.tzname[0], time.tzname
print("devices ok")
`
	for _, sb := range tiers(t) {
		// The landlock tier without root grants no /dev/shm (its semaphores
		// fail there; see TestMultiprocessing).
		var env []string
		if ok, _ := hasPrivateShm(sb); ok {
			env = []string{"CHECK_SHM=1"}
		}
		res := mustRun(t, sb, Spec{Program: []byte(prog), Env: env})
		if res.ExitCode != 0 || !bytes.Contains(res.Output, []byte("devices ok")) {
			t.Errorf("%s: exit %d:\n%s", sb.Level(), res.ExitCode, tail(res.Output))
		}
	}
}

// The program's end reaches the host through pid 1 (init.sh under bwrap):
// its exit code, the signal that killed it, and its signal dispositions are
// an interpreter's own (the shell starts it in the foreground, so SIGINT is
// not ignored).
func TestExitAndSignalsThroughInit(t *testing.T) {
	cases := []struct {
		name, prog string
		exit       int
		signal     string
		want       string
	}{
		{"sigint-handler", "import signal\nprint('default', signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n", 0, "", "default True"},
		{"killed-by-sigterm", "import os, signal\nprint('dying', flush=True)\nos.kill(os.getpid(), signal.SIGTERM)\n", 143, "SIGTERM", "dying"},
		{"exit-code", "import sys\nsys.exit(42)\n", 42, "", ""},
	}
	for _, sb := range tiers(t) {
		for _, c := range cases {
			t.Run(string(sb.Level())+"/"+c.name, func(t *testing.T) {
				res := mustRun(t, sb, Spec{Program: []byte(c.prog)})
				if res.ExitCode != c.exit || res.Signal != c.signal || !bytes.Contains(res.Output, []byte(c.want)) {
					t.Errorf("exit %d signal %q (want %d %q), output:\n%s", res.ExitCode, res.Signal, c.exit, c.signal, tail(res.Output))
				}
			})
		}
	}
}

// A program that runs under pid 1's own uid (bwrap with a user namespace,
// as on a host where mlerl is not root) may send pid 1 signals; the kernel
// drops those pid 1 has no handler for, so the run still ends normally with
// its tree reaped and measured. When the host is root, the test builds that
// user-namespace configuration itself.
func TestInitIgnoresProgramSignals(t *testing.T) {
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
	prog := `import os, signal, time
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGSEGV, signal.SIGKILL):
    try:
        os.kill(1, s)
    except OSError as e:
        print("refused", s, e)
time.sleep(0.2)
b = b"x" * (200 << 20)
print("alive", os.getuid(), os.stat("/proc/1").st_uid)
`
	res, err := sb.Run(context.Background(), Spec{Program: []byte(prog), Limits: Limits{Timeout: time.Minute}})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, res.Output)
	}
	if res.ExitCode != 0 || !bytes.Contains(res.Output, []byte("alive 1000 1000")) {
		t.Fatalf("exit %d signal %q, output:\n%s", res.ExitCode, res.Signal, tail(res.Output))
	}
	if res.PeakMemoryBytes < 200<<20 {
		t.Errorf("peak memory %d MiB, want at least 200", res.PeakMemoryBytes>>20)
	}
}

// Capabilities: the program has none, and under bwrap as root its pid 1
// keeps only CAP_DAC_READ_SEARCH, CAP_KILL, CAP_SETGID and CAP_SETUID
// (bits 2 and 5-7), not root's full set.
func TestNoCapabilities(t *testing.T) {
	prog := `def caps(pid):
    for line in open("/proc/%s/status" % pid):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
print("caps", caps("self"), caps(1))
`
	for _, sb := range tiers(t) {
		res := mustRun(t, sb, Spec{Program: []byte(prog)})
		var self, init int64
		if _, err := fmt.Sscanf(string(tail(res.Output)), "caps %d %d", &self, &init); err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: exit %d, %v:\n%s", sb.Level(), res.ExitCode, err, tail(res.Output))
		}
		if self != 0 {
			t.Errorf("%s: the program's effective capabilities are %#x, want none", sb.Level(), self)
		}
		if sb.Level() == LevelBwrap && os.Geteuid() == 0 && init != 0xe4 {
			t.Errorf("bwrap as root: pid 1's effective capabilities are %#x, want 0xe4 (DAC_READ_SEARCH, KILL, SETGID, SETUID)", init)
		}
	}
}

// The bootstrap runs no program once no one reads its started pipe: the host
// died while bwrap was still building the sandbox (when killing bwrap does
// not yet kill its child), and no one would bound or collect the run.
func TestBootstrapRunsNothingForADeadHost(t *testing.T) {
	sb := tiers(t)[0]
	dir := t.TempDir()
	flag := filepath.Join(dir, "ran")
	markR, markW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer markR.Close()
	defer markW.Close()
	upR, upW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer upW.Close()
	upR.Close() // the host's end, gone with the host
	args := append([]string{"-S"}, sb.boot...)
	args = append(args, "-1", "-1", "-1", "-1", sb.sysPath)
	cmd := exec.Command(sb.python, args...)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("open(%q, 'w').write('x')\n", flag))
	cmd.ExtraFiles = []*os.File{markW, upW}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 {
		t.Errorf("err %v, want exit status 125; output %q", err, out)
	}
	if !bytes.Contains(out, []byte("host is gone")) {
		t.Errorf("output %q does not say why", out)
	}
	if _, err := os.Stat(flag); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the program ran (stat %s: %v)", flag, err)
	}

	// The same bootstrap with the host's end open runs the program.
	upR2, upW2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer upR2.Close()
	defer upW2.Close()
	cmd = exec.Command(sb.python, args...)
	cmd.Stdin = strings.NewReader(fmt.Sprintf("open(%q, 'w').write('x')\n", flag))
	cmd.ExtraFiles = []*os.File{markW, upW2}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with a host: %v\n%s", err, out)
	}
	if _, err := os.Stat(flag); err != nil {
		t.Errorf("with a host the program did not run: %v", err)
	}
}
