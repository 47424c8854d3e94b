package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The re-exec sentinels: argv[1] of /proc/self/exe when it is started as the
// supervisor or as the exec stage. They are not valid mlerl commands.
const (
	superArg = "__mlerl-sandbox-supervise__"
	execArg  = "__mlerl-sandbox-exec__"
)

// Reexec must be the first thing main does. In the ordinary case it returns at
// once; when this process was started by the sandbox as its supervisor or exec
// stage, it does that job and exits without returning.
func Reexec() {
	if len(os.Args) < 3 {
		return
	}
	switch os.Args[1] {
	case superArg:
		os.Exit(supervise(os.Args[2]))
	case execArg:
		os.Exit(execStage(os.Args[2]))
	}
}

// superConfig is what the parent tells the supervisor (argv[2], JSON). It
// holds no secrets: the program arrives on stdin.
type superConfig struct {
	Argv     []string      `json:"argv"`
	Env      []string      `json:"env"`
	Dir      string        `json:"dir"`
	UID      int           `json:"uid"`
	Timeout  time.Duration `json:"timeout"`
	Restrict bool          `json:"restrict"`
	HasData  bool          `json:"has_data"`
	Rules    execRules     `json:"rules"`
	// ShmBytes > 0: the program gets a private tmpfs of that size at
	// /dev/shm (see privateShm, and execRules.ShmBytes without root).
	ShmBytes int64 `json:"shm_bytes"`
}

// execRules is what the exec stage restricts itself to before exec'ing python.
type execRules struct {
	Argv    []string `json:"argv"`
	RODirs  []string `json:"ro_dirs"`
	ROFiles []string `json:"ro_files"`
	RWDirs  []string `json:"rw_dirs"`
	RWFiles []string `json:"rw_files"`
	// ShmBytes > 0: mount a tmpfs of that size at /dev/shm first (the exec
	// stage is then started in a user and mount namespace of its own).
	ShmBytes int64 `json:"shm_bytes"`
}

// superStatus is what the supervisor reports back on fd 6.
type superStatus struct {
	Exit     int    `json:"exit"`
	Signal   string `json:"signal,omitempty"`
	MaxRSS   int64  `json:"maxrss"`   // bytes
	ShmPeak  int64  `json:"shm_peak"` // bytes: the peak use of the private /dev/shm
	TimedOut bool   `json:"timed_out"`
	Err      string `json:"err,omitempty"`
}

// Descriptor numbers in the supervisor: 0-4 as in the program (source,
// output, output, markers, started), 5 the data folder, 6 the status pipe.
// In the exec stage, fd 6 is instead the executable it was started from.
const (
	statusFD = 6
	selfFD   = 6
)

func landlockAvailable() error {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return fmt.Errorf("landlock not supported by this kernel: %w", err)
	}
	if v < 1 {
		return errors.New("landlock not supported by this kernel")
	}
	return nil
}

// rules lists what the program may touch in the landlock tier: the
// interpreter's tree and system libraries read-only, the same /etc subset as
// under bwrap, /proc and CPU topology and quota read-only, its working
// directory, the task's public data read-only, and the harmless character
// devices (runSupervised adds a private /dev/shm when it can make one).
func (s *Sandbox) rules(r *run) execRules {
	ro := []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys/devices/system/cpu"}
	if s.prefix != "/usr" && s.prefix != "/" {
		ro = append(ro, s.prefix)
	}
	// loky (joblib's process pool) reads the CPU quota from these before it
	// starts workers and fails on a refused open; with a working /dev/shm it
	// gets that far. They hold two numbers, nothing of other processes.
	roFiles := []string{"/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"}
	for _, f := range etcFiles {
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			ro = append(ro, f)
		} else if err == nil {
			roFiles = append(roFiles, f)
		}
	}
	if r.spec.DataDir != "" {
		if real, err := filepath.EvalSymlinks(r.spec.DataDir); err == nil {
			ro = append(ro, real)
		}
	}
	return execRules{
		Argv:    r.argv,
		RODirs:  ro,
		ROFiles: roFiles,
		RWDirs:  []string{r.dir},
		RWFiles: []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"},
	}
}

// runSupervised runs r through the re-exec'd supervisor (landlock and none).
func (s *Sandbox) runSupervised(ctx context.Context, r *run, res *Result) error {
	p, err := newPipes()
	if err != nil {
		return err
	}
	defer p.close()
	statR, statW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: pipe: %w", err)
	}
	defer statR.Close()
	defer statW.Close()

	cmd, err := s.supervisorCommand(r, p, statW)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: start supervisor: %w", err)
	}
	p.closeChildEnds()
	statW.Close()
	wait := p.pump(r)
	var status []byte
	statDone := make(chan struct{})
	go func() {
		status, _ = io.ReadAll(io.LimitReader(statR, 1<<16))
		close(statDone)
	}()

	werr := awaitSupervisor(ctx, cmd, r.limits.Timeout, res)
	res.Duration = time.Since(start)
	waitPumps(wait, p, 5*time.Second)
	<-statDone
	return supervisedResult(ctx, r, res, p, werr, status)
}

// superConfigFor is the supervisor's configuration for r.
func (s *Sandbox) superConfigFor(r *run) superConfig {
	cfg := superConfig{
		Argv:     r.argv,
		Env:      append(baseEnv(r.dir, filepath.Join(r.dir, "tmp")), r.spec.Env...),
		Dir:      r.dir,
		UID:      r.uid,
		Timeout:  r.limits.Timeout,
		Restrict: s.level == LevelLandlock,
		HasData:  r.dataFD != nil,
	}
	if cfg.Restrict {
		cfg.Rules = s.rules(r)
		// The program gets a /dev/shm of its own (multiprocessing needs one
		// for its semaphores), bounded by the memory limit and measured,
		// where New found one can be mounted: as root, or without root
		// where user namespaces are allowed. Otherwise it has none: the
		// host's is shared with every other process and unbounded, so it is
		// not granted, and multiprocessing's locks fail.
		if s.privShm {
			cfg.ShmBytes = r.limits.MemoryBytes
			cfg.Rules.RWDirs = append(cfg.Rules.RWDirs, "/dev/shm")
			if r.uid < 0 {
				cfg.Rules.ShmBytes = cfg.ShmBytes
			}
		}
	}
	return cfg
}

// supervisorCommand is the re-exec of this binary as r's supervisor, with
// the program's descriptors and statW for its status.
func (s *Sandbox) supervisorCommand(r *run, p *pipes, statW *os.File) (*exec.Cmd, error) {
	cfg := s.superConfigFor(r)
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("sandbox: supervisor config: %w", err)
	}
	cmd := exec.Command(s.self, superArg, string(js))
	cmd.Env = []string{}
	cmd.Stdin = p.srcR
	cmd.Stdout = p.outW
	cmd.Stderr = p.outW
	cmd.ExtraFiles = []*os.File{p.markW, p.upW, r.dataFD, statW}
	// SIGTERM rather than SIGKILL when we die, so the supervisor still kills
	// the program's tree on its way out.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	return cmd, nil
}

// awaitSupervisor waits for the supervisor to exit. When ctx ends it asks
// the supervisor to stop (SIGTERM), killing it 10s later; a supervisor that
// outlives the run's timeout by 30s is killed and the run counted as timed
// out in res. It returns cmd.Wait's error.
func awaitSupervisor(ctx context.Context, cmd *exec.Cmd, timeout time.Duration, res *Result) error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The supervisor keeps the deadline itself; this one only catches a
	// supervisor that is stuck.
	backstop := time.NewTimer(timeout + 30*time.Second)
	defer backstop.Stop()
	var werr error
	select {
	case werr = <-exited:
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case werr = <-exited:
		case <-time.After(10 * time.Second):
			werr = killAndWait(cmd, exited)
		}
	case <-backstop.C:
		res.TimedOut = true
		werr = killAndWait(cmd, exited)
	}
	return werr
}

// supervisedResult fills res from the supervisor's status report, and says
// why the run failed when the supervisor or the interpreter did not work.
func supervisedResult(ctx context.Context, r *run, res *Result, p *pipes, werr error, status []byte) error {
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return fmt.Errorf("sandbox: wait supervisor: %w", werr)
	}
	var st superStatus
	if err := json.Unmarshal(status, &st); err != nil {
		if res.TimedOut || ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("sandbox: supervisor failed (no status, %v): %s", werr, strings.TrimSpace(string(truncate(r.out.Bytes(), 500))))
	}
	if st.Err != "" {
		return fmt.Errorf("sandbox: supervisor: %s", st.Err)
	}
	res.ExitCode, res.Signal, res.PeakMemoryBytes = st.Exit, st.Signal, st.MaxRSS+st.ShmPeak
	res.TimedOut = res.TimedOut || st.TimedOut
	if !p.up.Load() && !res.TimedOut && ctx.Err() == nil {
		return fmt.Errorf("sandbox: the interpreter did not start (exit %d): %s", res.ExitCode, strings.TrimSpace(string(truncate(r.out.Bytes(), 500))))
	}
	return nil
}

// supervise is the supervisor: a child subreaper that starts the exec stage,
// enforces the deadline and, when the program ends for any reason, kills every
// process left under it before reporting.
func supervise(arg string) int {
	// The program must not inherit the status pipe and forge a report.
	unix.CloseOnExec(statusFD)
	status := os.NewFile(statusFD, "status")
	report := func(st superStatus) int {
		b, _ := json.Marshal(st)
		status.Write(b)
		status.Close()
		return 0
	}
	var cfg superConfig
	if err := json.Unmarshal([]byte(arg), &cfg); err != nil {
		return report(superStatus{Err: fmt.Sprintf("bad config: %v", err)})
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return report(superStatus{Err: fmt.Sprintf("subreaper: %v", err)})
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)

	// Pdeathsig is bound to the thread that forks; keep this goroutine on one
	// thread for the whole run. Every function below runs on it.
	runtime.LockOSThread()
	var shm *memFS
	if cfg.ShmBytes > 0 && cfg.UID >= 0 {
		// Before the ruleset is built: its /dev/shm rule must name the
		// private tmpfs, which only this thread sees.
		var err error
		if shm, err = privateShm(cfg.ShmBytes); err != nil {
			return report(superStatus{Err: fmt.Sprintf("private /dev/shm: %v", err)})
		}
		defer shm.close()
	}
	cmd, selfFile, err := programCommand(&cfg)
	if err != nil {
		return report(superStatus{Err: err.Error()})
	}
	fds, childShm := setupProgram(cmd, &cfg, selfFile)
	if err := cmd.Start(); err != nil {
		return report(superStatus{Err: fmt.Sprintf("start: %v", err)})
	}
	// Our copies would keep the pipes open after the tree is gone.
	for _, f := range append(fds, os.Stdin, os.Stdout, os.Stderr) {
		if f != nil {
			f.Close()
		}
	}
	sv := &supervisor{mainPID: cmd.Process.Pid, shm: shm, sigchld: sigchld, stop: stop, st: superStatus{Exit: -1}}

	// Every kill happens on this goroutine, which is locked to the thread
	// that forked the program. go-landlock restricts each thread with its
	// own landlock_restrict_self, so each thread of ours is a separate
	// domain; with signal scoping only the forking thread's domain (the
	// program's) may signal the program. The loop sleeps on SIGCHLD, the
	// deadline and stop requests, and reaps with WNOHANG.
	timer := time.NewTimer(cfg.Timeout)
	defer timer.Stop()
	// The private /dev/shm is sampled while the program runs (nil channel:
	// no tick without one). The exec stage's is found once it is mounted.
	var tick <-chan time.Time
	sv.hostShm = hostShmDev()
	if shm != nil || childShm {
		t := time.NewTicker(memSampleEvery)
		defer t.Stop()
		tick = t.C
	}
	sv.loop(tick, timer.C)
	if sv.openedChildShm {
		defer sv.shm.close()
	}
	return report(sv.finish())
}

// programCommand is the command the supervisor starts: the program itself,
// or the exec stage that restricts itself first. selfFile is this binary,
// opened for the exec stage (nil otherwise).
func programCommand(cfg *superConfig) (cmd *exec.Cmd, selfFile *os.File, err error) {
	switch {
	case cfg.Restrict && cfg.UID >= 0:
		// As root the supervisor restricts itself and starts python
		// directly under the run's uid: one re-exec of this binary instead
		// of two. The ruleset is populated now, while we may still open
		// every rule's path (the run's uid may be unable to reach the data
		// folder, e.g. under /root), and the uid is dropped in the child
		// between fork and exec. Sharing the program's Landlock domain is
		// safe here because the program runs under another uid: it can
		// neither signal nor trace the supervisor.
		if err := restrict(cfg.Rules); err != nil {
			return nil, nil, fmt.Errorf("restrict: %v", err)
		}
		cmd = exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	case cfg.Restrict:
		// Without root the program would share our uid; in our Landlock
		// domain it could signal or trace us (and escape the tree kill), so
		// a separate exec stage nests a domain of its own below ours.
		// The exec stage is this binary again, run under the program's uid,
		// which may not be allowed to reach its path (a go build cache, a
		// home directory); executing it through a descriptor we opened
		// needs only its execute bit.
		self, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("own executable: %v", err)
		}
		if selfFile, err = os.Open(self); err != nil {
			return nil, nil, fmt.Errorf("open own executable: %v", err)
		}
		rules, _ := json.Marshal(cfg.Rules)
		cmd = exec.Command(fmt.Sprintf("/proc/self/fd/%d", selfFD), execArg, string(rules))
	default:
		cmd = exec.Command(cfg.Argv[0], cfg.Argv[1:]...)
	}
	return cmd, selfFile, nil
}

// setupProgram sets cmd's environment, descriptors, session, namespaces and
// credentials. It returns the descriptors passed on (for the supervisor to
// close once the program has started) and whether the exec stage mounts a
// /dev/shm of its own.
func setupProgram(cmd *exec.Cmd, cfg *superConfig, selfFile *os.File) (fds []*os.File, childShm bool) {
	cmd.Env = cfg.Env
	cmd.Dir = cfg.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	fds = []*os.File{os.NewFile(3, "markers"), os.NewFile(4, "started"), nil, selfFile}
	if cfg.HasData {
		fds[2] = os.NewFile(dataFDNum, "data")
	}
	cmd.ExtraFiles = fds
	// A new session: no controlling terminal to inject input into.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	childShm = cfg.Restrict && cfg.UID < 0 && cfg.Rules.ShmBytes > 0
	if childShm {
		// Without root, the exec stage gets a user namespace (our uid and
		// gid mapped to themselves, so the program sees its own) and a
		// mount namespace, and CAP_SYS_ADMIN there to mount its /dev/shm;
		// it clears its capabilities before python runs.
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	if cfg.UID >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(cfg.UID), Gid: uint32(cfg.UID), Groups: []uint32{}}
	}
	return fds, childShm
}

// supervisor is the state of supervise's wait loop, which runs on the
// thread that forked the program.
type supervisor struct {
	mainPID int
	// shm is the /dev/shm being measured: the private one, or the exec
	// stage's once found (openedChildShm: supervise must close it).
	shm            *memFS
	openedChildShm bool
	hostShm        uint64
	sigchld, stop  <-chan os.Signal
	st             superStatus
	// mainDone: the program has exited; killing: the run is being stopped.
	mainDone, killing bool
}

// reap collects every child that has ended; true when none is left.
func (sv *supervisor) reap() bool {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.ECHILD):
			return true
		case err != nil:
			sv.st.Err = fmt.Sprintf("wait: %v", err)
			return true
		case pid == 0:
			return false
		case pid == sv.mainPID:
			sv.mainDone = true
			if ws.Signaled() {
				sv.st.Exit, sv.st.Signal = 128+int(ws.Signal()), unix.SignalName(ws.Signal())
			} else {
				sv.st.Exit = ws.ExitStatus()
			}
		}
	}
}

// loop reaps until no child is left, killing the tree once the program has
// ended, at the deadline or on a stop request, and sampling /dev/shm on
// tick.
func (sv *supervisor) loop(tick, deadline <-chan time.Time) {
	for !sv.reap() {
		if sv.mainDone || sv.killing {
			// Leftovers of a program that ended, or a run being stopped:
			// kill them, then poll (orphans are handed to us as they die).
			killDescendants()
			select {
			case <-sv.sigchld:
			case <-time.After(2 * time.Millisecond):
			}
			continue
		}
		select {
		case <-sv.sigchld:
		case <-tick:
			sv.sampleShm()
		case <-deadline:
			sv.st.TimedOut, sv.killing = true, true
		case <-sv.stop:
			sv.killing = true
		}
	}
}

// sampleShm samples the /dev/shm being measured, first finding the exec
// stage's if there is none yet; failing to find it while the program runs
// stops the run.
func (sv *supervisor) sampleShm() {
	if sv.shm == nil {
		var err error
		if sv.shm, err = openChildShm(sv.mainPID, sv.hostShm); err != nil && !hasEnded(sv.mainPID) {
			sv.st.Err = fmt.Sprintf("measure the private /dev/shm: %v", err)
			sv.killing = true
		}
		if sv.shm != nil {
			sv.openedChildShm = true
		}
	}
	if sv.shm != nil {
		sv.shm.sample()
	}
}

// finish completes the status: the children's peak RSS and the /dev/shm
// peak.
func (sv *supervisor) finish() superStatus {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_CHILDREN, &ru) == nil {
		sv.st.MaxRSS = ru.Maxrss * 1024
	}
	if sv.shm != nil {
		// Files the program left count too.
		sv.shm.sample()
		sv.st.ShmPeak = sv.shm.Peak()
	}
	return sv.st
}

// hasEnded reports whether child pid has exited (without reaping it): its
// /proc entry then no longer leads to its files.
func hasEnded(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	// A zero siginfo means still running; an error, that it is gone.
	return err != nil || info.Signo != 0
}

// killDescendants SIGKILLs every process below this one, repeating until a
// pass finds none: a process that was forking when killed leaves orphans,
// which the kernel hands to us as the subreaper, and the next pass gets them.
func killDescendants() {
	me := os.Getpid()
	for pass := 0; pass < 100; pass++ {
		pids := descendants(me)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// descendants lists the processes below root by scanning /proc (the
// per-task children files need CONFIG_PROC_CHILDREN, often absent).
func descendants(root int) []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	parent := make(map[int]int, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if f[0] == "Z" || f[0] == "X" {
			// Dead already, waiting to be reaped: nothing to kill, and no
			// children (they were handed to us when it died).
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		parent[pid] = ppid
	}
	var out []int
	for pid := range parent {
		for p, hops := parent[pid], 0; p != 0 && hops < 4096; p, hops = parent[p], hops+1 {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// execStage restricts this process and becomes python.
func execStage(arg string) int {
	var r execRules
	if err := json.Unmarshal([]byte(arg), &r); err != nil || len(r.Argv) == 0 {
		fmt.Fprintf(os.Stderr, "sandbox: exec stage: bad config: %v\n", err)
		return 126
	}
	// Our own executable must not stay open in python.
	unix.CloseOnExec(selfFD)
	runtime.LockOSThread()
	if r.ShmBytes > 0 {
		// This thread execs python: its capabilities are the ones to clear.
		if err := mountShm(r.ShmBytes); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: exec stage: %v\n", err)
			return 126
		}
		if err := dropCaps(); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: exec stage: %v\n", err)
			return 126
		}
	}
	if err := restrict(r); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: exec stage: %v\n", err)
		return 126
	}
	err := syscall.Exec(r.Argv[0], r.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "sandbox: exec %s: %v\n", r.Argv[0], err)
	return 126
}

// restrict applies Landlock and the seccomp filter to every thread of this
// process; both survive execve and bind all descendants.
func restrict(r execRules) error {
	rules := []landlock.Rule{
		landlock.RODirs(r.RODirs...).IgnoreIfMissing(),
		landlock.ROFiles(r.ROFiles...).IgnoreIfMissing(),
		landlock.RWDirs(r.RWDirs...),
		landlock.RWFiles(r.RWFiles...).IgnoreIfMissing(),
	}
	// V11 with BestEffort: filesystem, TCP (and UDP where the kernel knows
	// it) with no port allowed, and scoping of signals and abstract Unix
	// sockets to the sandbox, downgraded to what the kernel supports.
	if err := landlock.V11.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := installSeccomp(); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
