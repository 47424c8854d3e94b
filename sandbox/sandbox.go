// Package sandbox runs one untrusted Python program isolated, with limits.
//
// Isolation is tiered and chosen once, when a Sandbox is made:
//
//   - "bwrap": bubblewrap with every namespace unshared (user, pid, net, ipc,
//     uts, cgroup, mount). The program sees /usr, a few files of /etc, a fresh
//     /proc, a read-only /dev with null, zero, full, random, urandom and
//     /dev/shm (a link to /tmp/.shm), a private tmpfs /tmp the size of the
//     memory limit, and its working directory at
//     /sandbox with the task's public files bound read-only at /sandbox/data.
//     A kill goes to the namespace's pid 1 (reported by bwrap, pinned by a
//     pidfd), which tears down the pid namespace, so the whole tree dies
//     even when bwrap is killed before it has built the sandbox. A
//     small shell script (init.sh) is the namespace's pid 1 (bwrap
//     --as-pid-1): it runs the interpreter and reaps the tree, so the rusage
//     the host gets from waiting for bwrap holds the program's peak memory.
//   - "landlock": for hosts without user namespaces. The mlerl binary re-executes
//     itself (see Reexec) as a supervisor that is a child subreaper. It applies
//     Landlock (filesystem, TCP, signal and abstract socket scoping) and a
//     seccomp filter that refuses non-Unix sockets: as root, to itself while
//     still privileged (so it can open every rule's path), and then starts
//     python under the run's uid; otherwise through a second re-exec, an exec
//     stage with a Landlock domain nested below the supervisor's. The
//     supervisor kills every descendant when the run ends and reports the
//     peak memory from its RUSAGE_CHILDREN. The program also gets a mount
//     namespace with a private tmpfs at /dev/shm the size of the memory
//     limit, so multiprocessing works: made by the supervisor as root (with
//     CAP_SYS_ADMIN), by the exec stage in a user namespace of its own
//     otherwise. Where neither can be made (a host without user
//     namespaces, a container's root) the program has no /dev/shm (see
//     memfs.go for why the host's is not shared) and multiprocessing's
//     locks fail.
//   - "none": no isolation, only when Config.AllowNone is set. It still uses the
//     supervisor, so limits and whole-tree killing hold.
//
// Limits are applied by a small bootstrap (bootstrap.py) that runs in the
// interpreter (started with -S; the bootstrap installs site's module path,
// probed once in New) before the program: RLIMIT_DATA for memory, RLIMIT_NPROC for
// processes, RLIMIT_FSIZE for file size. RLIMIT_DATA rather than RLIMIT_AS
// because glibc, OpenBLAS and xgboost reserve large PROT_NONE address ranges per
// thread that are never touched; RLIMIT_AS counts them and makes thread pools
// fail at modest limits, RLIMIT_DATA counts only writable private memory.
// MALLOC_ARENA_MAX=2 keeps glibc's per-thread arenas few. Files in memory
// (/tmp under bwrap, /dev/shm) are bounded by the same limit as a whole, and
// their peak is added to the peak memory (memfs.go). When the host runs
// mlerl as root, the program runs under a per-run unprivileged uid: root is
// exempt from RLIMIT_NPROC, and a distinct uid keeps runs from signalling
// each other.
//
// The program is fed on stdin and executed by the bootstrap, so its source
// (which holds the instrumenter's nonce) is never a file in the working
// directory. Whatever it writes to file descriptor 3 is returned as
// Result.Markers.
//
// # Why python -S, and what it changes
//
// Start-up is most of what a short run costs, and site is a third of an
// interpreter's start-up (about 3 ms of 11 here), more when a .pth file
// imports something: Debian's setuptools ships distutils-precedence.pth,
// whose shim turns `import distutils` (joblib does it, so every scikit-learn
// program) into importing setuptools and pkg_resources, about 230 ms. So the
// interpreter runs with -S and the bootstrap does the part of site programs
// rely on. What a program can tell apart from `python3 solution.py`:
//
//   - sys.path is the one site computed when the sandbox was made (system
//     and Debian dist-packages, and the folders .pth files name), appended
//     after the standard library as site does; sys.path[0] is the working
//     directory, as for a script there. The user's site folder is never
//     added (as with -s), and a package installed after New whose .pth adds
//     a folder is not seen until a new Sandbox is made.
//   - The import lines of .pth files do not run. `import distutils` gets the
//     standard library's (deprecated) distutils rather than setuptools' copy;
//     editable installs that work through an import hook (setuptools'
//     __editable__ finders) are not importable.
//   - sitecustomize and usercustomize do not run (Debian's installs apport's
//     crash-report excepthook; the bootstrap sets its own excepthook anyway).
//   - "site" is not in sys.modules and sys.flags.no_site is 1; the exit, quit
//     and help builtins are there, the interactive copyright, credits and
//     license are not (making them imports os, a millisecond per run).
//   - Child interpreters inherit -S (multiprocessing and loky copy the
//     parent's flags), so the bootstrap also puts the path in PYTHONPATH,
//     which os.environ shows; an interpreter started without -S runs site as
//     usual.
//   - __file__ is not set: the program is not a file (this is independent of
//     -S).
//
// BenchmarkRunOverhead compares a run with both `python3 prog.py` and
// `python3 -S` with the same path; its comment holds the measured ratios.
package sandbox

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Level names the isolation a run had.
// ProgramName is the file name the program's tracebacks show (bootstrap.py
// compiles the source under this name; it is never a file on disk).
const ProgramName = "solution.py"

type Level string

// Isolation levels, best first.
const (
	LevelBwrap    Level = "bwrap"
	LevelLandlock Level = "landlock"
	LevelNone     Level = "none"
)

// Limits bound one run. A zero field means "use the default".
type Limits struct {
	Timeout      time.Duration // wall clock; the whole process tree is killed when it passes
	MemoryBytes  int64         // RLIMIT_DATA of every process; also the size of the run's tmpfs (/dev/shm, and /tmp under bwrap)
	MaxProcs     int           // RLIMIT_NPROC: processes and threads of the run's uid
	MaxFileBytes int64         // RLIMIT_FSIZE; also the most read back per collected file
	OutputBytes  int           // bytes of output kept from each end (head and tail)
}

// Defaults used for zero Limits fields.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultMemoryBytes  = 8 << 30
	DefaultMaxProcs     = 256
	DefaultMaxFileBytes = 1 << 30
	DefaultOutputBytes  = 64 << 10
	// MaxMarkerBytes bounds Result.Markers; later marker bytes are dropped.
	MaxMarkerBytes = 1 << 20
)

func (l Limits) withDefaults(d Limits) Limits {
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.MaxProcs <= 0 {
		l.MaxProcs = d.MaxProcs
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = d.OutputBytes
	}
	return l
}

var builtinLimits = Limits{
	Timeout:      DefaultTimeout,
	MemoryBytes:  DefaultMemoryBytes,
	MaxProcs:     DefaultMaxProcs,
	MaxFileBytes: DefaultMaxFileBytes,
	OutputBytes:  DefaultOutputBytes,
}

// Config chooses the interpreter, the isolation and the default limits.
type Config struct {
	Python    string // interpreter; default /usr/bin/python3
	Want      Level  // "" picks the best level that works here
	AllowNone bool   // must be true to ever run without isolation
	Limits    Limits // defaults for every run
	Root      string // where working directories are made; default os.TempDir()
}

// Spec is one program to run.
type Spec struct {
	Program []byte   // Python source
	DataDir string   // shown read-only as ./data; "" for none
	Collect []string // files (relative to the working dir) to copy out after the run
	Limits  Limits   // per-run overrides; zero fields use the sandbox's
	Env     []string // extra environment, KEY=VALUE, after (so overriding) the defaults
}

// Result is what a run produced. A program's failure is recorded here, not
// returned as an error.
type Result struct {
	ExitCode        int // 128+n when killed by signal n (also on timeout)
	TimedOut        bool
	Duration        time.Duration
	PeakMemoryBytes int64             // max RSS over the process tree, plus the peak use of the run's tmpfs
	Output          []byte            // stdout and stderr interleaved, middle dropped when long
	Markers         []byte            // what the program wrote to fd 3, at most MaxMarkerBytes
	Files           map[string][]byte // collected regular files that existed
	Isolation       Level
	Signal          string // e.g. "SIGKILL", when the program died of a signal
	OOM             bool   // the program ran out of memory, as far as can be told
}

// Sandbox runs programs. It is safe for concurrent use.
type Sandbox struct {
	level   Level
	python  string // resolved path of the interpreter
	prefix  string // directory tree the interpreter lives in, e.g. /usr
	root    string
	limits  Limits
	self    string   // path of this executable, for the re-exec tiers
	bwrap   string   // path of bwrap
	bwArgs  []string // the fixed part of bwrap's command line
	runAsID bool     // run programs under a per-run uid (we are root)
	sysPath string   // sys.path[1:] with site, ":"-joined; the sandbox runs python -S
	boot    []string // how the interpreter gets the bootstrap: "-c" and its code
	// privShm: landlock-tier programs get a private, bounded /dev/shm
	// (New found one can be mounted); shmErr says why not when it failed.
	privShm bool
	shmErr  string
}

//go:embed bootstrap.py
var bootstrapSource string

// initScript is pid 1 of the bwrap tier (see init.sh), run by initShell.
//
//go:embed init.sh
var initScript string

// initShell runs initScript; /bin is a link into /usr or bound read-only in
// the sandbox, so the host's path holds there too.
const initShell = "/bin/sh"

// uidBase is the first of the uids given to programs when mlerl runs as
// root; far above any uid a distribution hands out.
const uidBase = 1_600_000_000

var uidSeq atomic.Uint32

func (s *Sandbox) nextUID() int {
	if !s.runAsID {
		return -1
	}
	return uidBase + int(uidSeq.Add(1)%1_000_000)
}

// New probes what isolation works here, once, and picks the best one allowed.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	py := cfg.Python
	if py == "" {
		py = "/usr/bin/python3"
	}
	resolved, err := filepath.EvalSymlinks(py)
	if err != nil {
		return nil, fmt.Errorf("sandbox: python %q: %w", py, err)
	}
	if !filepath.IsAbs(resolved) {
		if resolved, err = filepath.Abs(resolved); err != nil {
			return nil, fmt.Errorf("sandbox: python %q: %w", py, err)
		}
	}
	root := cfg.Root
	if root == "" {
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: root %q: %w", root, err)
	}
	s := &Sandbox{
		python:  resolved,
		prefix:  filepath.Dir(filepath.Dir(resolved)),
		root:    root,
		limits:  cfg.Limits.withDefaults(builtinLimits),
		runAsID: os.Geteuid() == 0,
	}
	if s.self, err = os.Executable(); err != nil {
		return nil, fmt.Errorf("sandbox: own executable: %w", err)
	}
	if s.sysPath, s.boot, err = probePython(ctx, resolved); err != nil {
		return nil, err
	}

	var order []Level
	switch cfg.Want {
	case "":
		order = []Level{LevelBwrap, LevelLandlock}
		if cfg.AllowNone {
			order = append(order, LevelNone)
		}
	case LevelBwrap, LevelLandlock:
		order = []Level{cfg.Want}
	case LevelNone:
		if !cfg.AllowNone {
			return nil, errors.New("sandbox: level \"none\" runs untrusted code without isolation; it needs AllowNone")
		}
		order = []Level{LevelNone}
	default:
		return nil, fmt.Errorf("sandbox: unknown level %q (want bwrap, landlock or none)", cfg.Want)
	}
	var why []string
	for _, l := range order {
		err := s.probe(ctx, l)
		if err == nil {
			s.level = l
			return s, nil
		}
		why = append(why, fmt.Sprintf("%s: %v", l, err))
	}
	return nil, fmt.Errorf("sandbox: no isolation level works here (%s)", strings.Join(why, "; "))
}

// probePython asks the interpreter, once, for the module search path the
// site module gives it (system package folders and the path lines of their
// .pth files; not the user's site, as with -s), and for the bootstrap
// compiled to its own code format. Programs then run with -S and the
// bootstrap installs this path, which saves site's start-up work on every
// run; the compiled bootstrap saves compiling it (about a millisecond) on
// every run. The environment is as clean as the sandbox's, so no PYTHONPATH
// of the host leaks in.
func probePython(ctx context.Context, python string) (sysPath string, boot []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-s", "-c", `import json, marshal, sys
code = compile(sys.stdin.read(), "<string>", "exec", dont_inherit=True)
print(json.dumps({"path": sys.path[1:], "code": marshal.dumps(code).hex(), "version": sys.hexversion}))`)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}
	cmd.Dir = "/"
	cmd.Stdin = strings.NewReader(bootstrapSource)
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: python %s: module search path: %w", python, err)
	}
	var got struct {
		Path    []string `json:"path"`
		Code    string   `json:"code"`
		Version int64    `json:"version"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return "", nil, fmt.Errorf("sandbox: python %s: module search path %q: %w", python, truncate(out, 300), err)
	}
	// The list travels ":"-joined; an entry holding ":" (or a relative one,
	// which would resolve inside the working directory) is left out.
	var paths []string
	for _, p := range got.Path {
		if filepath.IsAbs(p) && !strings.Contains(p, ":") {
			paths = append(paths, p)
		}
	}
	boot = []string{"-c", bootstrapSource}
	// The supervised tiers carry argv twice in one argument (their JSON
	// config), and Linux caps one argument at 128 KiB.
	if got.Code != "" && len(got.Code) < 24<<10 {
		// The stub takes the code out of argv, so the bootstrap sees the
		// arguments it would see started from source. Code compiled by one
		// interpreter version is refused by another (the interpreter was
		// upgraded under a running mlerl): the run fails as the sandbox's.
		boot = []string{"-c", fmt.Sprintf(bootStub, got.Version), got.Code}
	}
	return strings.Join(paths, ":"), boot, nil
}

// bootStub runs the precompiled bootstrap (argv[1], hex) as __main__.
const bootStub = `import sys, marshal
if sys.hexversion != %d:
    sys.stderr.write("sandbox: the interpreter changed since the sandbox was made\n")
    raise SystemExit(125)
exec(marshal.loads(bytes.fromhex(sys.argv.pop(1))))`

// probe prepares level l and checks it end to end with a trivial program.
func (s *Sandbox) probe(ctx context.Context, l Level) error {
	switch l {
	case LevelBwrap:
		if err := s.prepareBwrap(); err != nil {
			return err
		}
	case LevelLandlock:
		if err := landlockAvailable(); err != nil {
			return err
		}
	}
	if l != LevelBwrap && s.runAsID && !searchableByOthers(s.root) {
		return fmt.Errorf("the run's uid cannot reach working directories under %s: make it and its parents traversable (o+x)", s.root)
	}
	s.level = l
	defer func() { s.level = "" }()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	probe := Spec{Program: []byte("import os\nos.write(3, b'm')\nprint('ok')\n")}
	s.privShm = l == LevelLandlock && hostHasShm()
	res, err := s.Run(ctx, probe)
	if err != nil && s.privShm && ctx.Err() == nil {
		// Root without CAP_SYS_ADMIN (a container's usual root), or a host
		// without user namespaces, cannot make a mount namespace: the tier
		// still works, without a /dev/shm.
		s.privShm, s.shmErr = false, err.Error()
		res, err = s.Run(ctx, probe)
	}
	if err != nil {
		return err
	}
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Output)) != "ok" || string(res.Markers) != "m" {
		return fmt.Errorf("probe program failed: exit %d, output %q", res.ExitCode, truncate(res.Output, 300))
	}
	return nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// Level reports the isolation every run of s gets.
func (s *Sandbox) Level() Level { return s.level }

// run is one execution in progress, shared by the tiers.
type run struct {
	spec    Spec
	limits  Limits
	dir     string   // the working directory on the host
	uid     int      // -1: run as ourselves
	dataFD  *os.File // supervised tiers only
	argv    []string // python and its arguments, as seen inside the sandbox
	out     *headTail
	markers *capped
}

// Run executes spec. It returns an error only when the sandbox itself fails
// or ctx is cancelled; the program's own failure is in the Result.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Isolation: s.level}
	if s.level == "" {
		return res, errors.New("sandbox: not initialised (use New)")
	}
	for _, name := range spec.Collect {
		if !validCollectName(name) {
			return res, fmt.Errorf("sandbox: collect %q: want a relative path inside the working directory", name)
		}
	}
	r := &run{spec: spec, limits: spec.Limits.withDefaults(s.limits), uid: s.nextUID()}
	if err := s.makeDir(r); err != nil {
		return res, err
	}
	defer r.cleanup()

	r.out = newHeadTail(r.limits.OutputBytes)
	r.markers = &capped{max: MaxMarkerBytes}
	// Under bwrap the bootstrap drops to the run's uid itself (bwrap runs as
	// root so it can reach any data folder); the supervisor does it in the
	// other tiers.
	dropTo := -1
	if s.level == LevelBwrap {
		dropTo = r.uid
	}
	r.argv = append([]string{s.python, "-S"}, s.boot...)
	r.argv = append(r.argv,
		fmt.Sprint(r.limits.MemoryBytes), fmt.Sprint(r.limits.MaxProcs), fmt.Sprint(r.limits.MaxFileBytes), fmt.Sprint(dropTo),
		s.sysPath)

	var err error
	switch s.level {
	case LevelBwrap:
		err = s.runBwrap(ctx, r, &res)
	default:
		err = s.runSupervised(ctx, r, &res)
	}
	res.Output = r.out.Bytes()
	res.Markers = r.markers.Bytes()
	if err != nil {
		return res, err
	}
	if res.TimedOut {
		res.ExitCode, res.Signal = 128+int(unix.SIGKILL), "SIGKILL"
	}
	if !res.OOM && res.ExitCode != 0 {
		res.OOM = looksOOM(r.out.Tail())
	}
	res.Files = collect(r.dir, spec.Collect, r.limits.MaxFileBytes)
	if ctx.Err() != nil && !res.TimedOut {
		return res, fmt.Errorf("sandbox: run cancelled: %w", ctx.Err())
	}
	return res, nil
}

// looksOOM recognises the ways Python and the C++ libraries report an
// allocation refused by RLIMIT_DATA. The program could print these itself;
// OOM is advice for the reader, nothing is rewarded on it.
func looksOOM(tail []byte) bool {
	t := string(tail)
	return strings.Contains(t, "MemoryError") || strings.Contains(t, "std::bad_alloc") ||
		strings.Contains(t, "Cannot allocate memory")
}

func validCollectName(name string) bool {
	if name == "" || filepath.IsAbs(name) || strings.ContainsRune(name, 0) {
		return false
	}
	c := filepath.Clean(name)
	return c == name && c != "." && c != ".." && !strings.HasPrefix(c, "../")
}

// makeDir creates the run's working directory with an empty data/ mount point
// (bwrap) or a data link (other tiers), owned by the run's uid.
func (s *Sandbox) makeDir(r *run) error {
	dir, err := os.MkdirTemp(s.root, "mlerl-run-")
	if err != nil {
		return fmt.Errorf("sandbox: working directory: %w", err)
	}
	r.dir = dir
	fail := func(err error) error {
		r.cleanup()
		return err
	}
	if r.spec.DataDir != "" {
		fi, err := os.Stat(r.spec.DataDir)
		if err != nil {
			return fail(fmt.Errorf("sandbox: data dir: %w", err))
		}
		if !fi.IsDir() {
			return fail(fmt.Errorf("sandbox: data dir %q is not a directory", r.spec.DataDir))
		}
	}
	if r.spec.DataDir != "" && s.level != LevelBwrap {
		// An O_PATH descriptor lets the program reach the folder through
		// /proc/self/fd even when one of its parents, such as /root, is
		// closed to the run's uid.
		fd, err := unix.Open(r.spec.DataDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(fmt.Errorf("sandbox: open data dir: %w", err))
		}
		r.dataFD = os.NewFile(uintptr(fd), r.spec.DataDir)
	}
	if s.level == LevelBwrap {
		if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
			return fail(fmt.Errorf("sandbox: working directory: %w", err))
		}
	} else {
		if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
			return fail(fmt.Errorf("sandbox: working directory: %w", err))
		}
		if r.spec.DataDir != "" {
			target, err := s.dataLink(r.spec.DataDir, r.uid)
			if err != nil {
				return fail(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, "data")); err != nil {
				return fail(fmt.Errorf("sandbox: data link: %w", err))
			}
		}
	}
	if r.uid >= 0 {
		err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, r.uid, r.uid)
		})
		if err != nil {
			return fail(fmt.Errorf("sandbox: chown working directory: %w", err))
		}
	}
	return nil
}

// dataFDNum is where the data folder's descriptor sits in the program of the
// supervised tiers; data/ links to /proc/self/fd/5 when the real path is not
// reachable by the program's uid.
const dataFDNum = 5

// dataLink returns what the data/ symlink points at in the supervised tiers.
func (s *Sandbox) dataLink(data string, uid int) (string, error) {
	abs, err := filepath.Abs(data)
	if err != nil {
		return "", fmt.Errorf("sandbox: data dir: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("sandbox: data dir: %w", err)
	}
	if uid < 0 || searchableByOthers(abs) {
		return abs, nil
	}
	return fmt.Sprintf("/proc/self/fd/%d", dataFDNum), nil
}

// searchableByOthers reports whether every directory on the way to p (p
// included) can be traversed by any uid.
func searchableByOthers(p string) bool {
	for {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		parent := filepath.Dir(p)
		if parent == p {
			return true
		}
		p = parent
	}
}

func (r *run) cleanup() {
	if r.dataFD != nil {
		r.dataFD.Close()
		r.dataFD = nil
	}
	if r.dir != "" {
		removeAll(r.dir)
		r.dir = ""
	}
}

// removeAll deletes dir even when the program removed permissions from the
// folders it made (which stops a non-root owner from deleting their entries).
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}

// collect copies the named regular files out of dir without following
// symlinks at any component; missing, special or oversized files are left out.
func collect(dir string, names []string, max int64) map[string][]byte {
	files := map[string][]byte{}
	if len(names) == 0 {
		return files
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return files
	}
	defer unix.Close(dfd)
	for _, name := range names {
		fd, err := unix.Openat2(dfd, name, &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
		})
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), name)
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
			f.Close()
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, max+1))
		f.Close()
		if err != nil || int64(len(b)) > max {
			continue
		}
		files[name] = b
	}
	return files
}

// baseEnv is the whole environment a program gets besides Spec.Env: nothing
// of the host's leaks in (no API keys, no proxies).
func baseEnv(home, tmp string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"USER=sandbox",
		"LOGNAME=sandbox",
		"LANG=C.UTF-8",
		"PYTHONUNBUFFERED=1", // output survives a kill, and interleaves in order
		"PYTHONDONTWRITEBYTECODE=1",
		"PYTHONHASHSEED=0",
		"OMP_NUM_THREADS=2",
		"OPENBLAS_NUM_THREADS=2",
		"MKL_NUM_THREADS=2",
		"MALLOC_ARENA_MAX=2",
		"MPLBACKEND=Agg",
	}
}

// pipes are the three pipes every tier wires the same way.
type pipes struct {
	srcR, srcW   *os.File // program source → stdin
	outR, outW   *os.File // stdout+stderr
	markR, markW *os.File // fd 3
	upR, upW     *os.File // fd 4: the bootstrap writes one byte once limits hold
	up           atomic.Bool
	upCh         chan struct{} // closed when up becomes true
}

func newPipes() (*pipes, error) {
	p := &pipes{upCh: make(chan struct{})}
	var err error
	if p.srcR, p.srcW, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		p.close()
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	if p.markR, p.markW, err = os.Pipe(); err != nil {
		p.close()
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	if p.upR, p.upW, err = os.Pipe(); err != nil {
		p.close()
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	return p, nil
}

func (p *pipes) close() {
	for _, f := range []*os.File{p.srcR, p.srcW, p.outR, p.outW, p.markR, p.markW, p.upR, p.upW} {
		if f != nil {
			f.Close()
		}
	}
}

// closeChildEnds drops our copies of the ends the child holds, so the readers
// see EOF when the last process in the sandbox exits.
func (p *pipes) closeChildEnds() {
	p.srcR.Close()
	p.outW.Close()
	p.markW.Close()
	p.upW.Close()
	p.srcR, p.outW, p.markW, p.upW = nil, nil, nil, nil
}

// pump feeds the program and drains its output; wait blocks until the
// readers have seen EOF.
func (p *pipes) pump(r *run) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(4)
	src, outR, markR, srcW, upR := r.spec.Program, p.outR, p.markR, p.srcW, p.upR
	go func() {
		defer wg.Done()
		// A program that never reads stdin gets EPIPE here once it exits; the
		// bootstrap always reads it all before running anything.
		srcW.Write(src)
		srcW.Close()
	}()
	go func() { defer wg.Done(); io.Copy(r.out, outR) }()
	go func() { defer wg.Done(); io.Copy(r.markers, markR) }()
	go func() {
		defer wg.Done()
		var b [1]byte
		if n, _ := upR.Read(b[:]); n == 1 {
			p.up.Store(true)
			close(p.upCh)
		}
	}()
	p.srcW = nil
	return wg.Wait
}

// waitPumps waits for the output readers, but not forever: a process that
// somehow outlived the run must not hang Run (the tiers kill trees, this is
// a second line).
func waitPumps(wait func(), p *pipes, grace time.Duration) {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		p.outR.Close()
		p.markR.Close()
		p.upR.Close()
		<-done
	}
}

func exitInfo(ps *os.ProcessState) (code int, sig string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(unix.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

func maxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024 // Linux reports kilobytes
	}
	return 0
}
