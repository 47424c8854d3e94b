package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sandboxHome is the working directory as the program sees it under bwrap.
const sandboxHome = "/sandbox"

// shmInTmp is the folder of the bwrap tier's /tmp that /dev/shm links to.
const shmInTmp = "/tmp/.shm"

// infoFD is where bwrap gets the pipe for its --info-fd report (the
// child's pid and namespaces); 3 and 4 are the program's.
const infoFD = 5

// etcFiles is the part of /etc a scientific Python stack reads: the dynamic
// linker's cache (without it every library is searched for, slowly), Debian's
// alternatives (libblas.so.3 resolves through them) and the time zone.
// Nothing else of /etc (passwd, hosts, ssl, machine-id, credentials) is
// visible. Every bind costs start-up time, so the list is kept to what
// numpy, pandas, scikit-learn and xgboost need; a symbolic link into the
// read-only /usr (the usual /etc/localtime) is recreated as a link, which
// costs no mount at all.
var etcFiles = []string{"/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime"}

// devNodes are the device files the program gets in its /dev (the same set
// the landlock tier allows). bwrap's own --dev also brings /dev/tty and a
// devpts instance: three more mounts per run that a batch program without a
// terminal has no use for.
var devNodes = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// prepareBwrap finds bwrap and builds the fixed part of its command line.
func (s *Sandbox) prepareBwrap() error {
	if err := s.findBwrap(); err != nil {
		return err
	}
	a := s.bwrapNamespaceArgs()
	// --as-pid-1: init.sh is the pid namespace's init and reaps the program
	// itself, in place of bwrap's own init, which bwrap never waits for: that
	// hid the program's rusage from the host (peak memory).
	a = append(a, "--as-pid-1", "--die-with-parent", "--new-session", "--hostname", "sandbox", "--ro-bind", "/usr", "/usr")
	a = s.appendBwrapHostDirs(a)
	a = appendBwrapEtc(a)
	a = appendBwrapDev(a)
	s.bwArgs = a
	return nil
}

// findBwrap sets s.bwrap to the bwrap binary and checks that the shell for
// the sandbox's init exists.
func (s *Sandbox) findBwrap() error {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		if _, serr := os.Stat("/usr/bin/bwrap"); serr != nil {
			return fmt.Errorf("bubblewrap not installed: %w", err)
		}
		bw = "/usr/bin/bwrap"
	}
	s.bwrap = bw
	if _, err := os.Stat(initShell); err != nil {
		return fmt.Errorf("no shell for the sandbox's init: %w", err)
	}
	return nil
}

// bwrapNamespaceArgs are bwrap's namespace, user and capability options.
func (s *Sandbox) bwrapNamespaceArgs() []string {
	if s.runAsID {
		// As root, bwrap runs privileged without a user namespace (one would
		// map the program to host root, which RLIMIT_NPROC exempts). Root's
		// capabilities are dropped but for four: CAP_SETUID/CAP_SETGID, for
		// the bootstrap's drop to the run's uid (which clears them all for
		// the program), CAP_KILL, for pid 1 to kill what the program leaves
		// behind under that uid, and CAP_DAC_READ_SEARCH, for bwrap to enter
		// the run's directory (owned by that uid). no_new_privs (always set
		// by bwrap) stops capabilities coming back through setuid binaries.
		return []string{"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
			"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_KILL", "--cap-add", "CAP_DAC_READ_SEARCH"}
	}
	return []string{"--unshare-all", "--unshare-user", "--disable-userns", "--uid", "1000", "--gid", "1000"}
}

// appendBwrapHostDirs mirrors the host's top-level library and binary
// folders (links on a merged-/usr system, binds otherwise) and the
// interpreter's prefix, read-only.
func (s *Sandbox) appendBwrapHostDirs(a []string) []string {
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", t, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	if s.prefix != "/usr" && s.prefix != "/" {
		a = append(a, "--ro-bind", s.prefix, s.prefix)
	}
	return a
}

// appendBwrapEtc adds the /etc subset of etcFiles.
func appendBwrapEtc(a []string) []string {
	// A folder bwrap makes for mount points would be closed to the run's uid.
	a = append(a, "--perms", "0755", "--dir", "/etc")
	for _, f := range etcFiles {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		if t, err := os.Readlink(f); err == nil && strings.HasPrefix(t, "/usr/") && !strings.Contains(t, "/../") {
			a = append(a, "--symlink", t, f)
		} else {
			a = append(a, "--ro-bind", f, f)
		}
	}
	return a
}

// appendBwrapDev adds /proc and a read-only /dev of devNodes, the standard
// stream links and /dev/shm.
func appendBwrapDev(a []string) []string {
	// No /sys: glibc, OpenBLAS and joblib count CPUs from /proc and the
	// affinity mask without it.
	a = append(a, "--proc", "/proc", "--perms", "0755", "--tmpfs", "/dev")
	for _, d := range devNodes {
		if _, err := os.Stat(d); err == nil {
			a = append(a, "--dev-bind", d, d)
		}
	}
	for i, n := range []string{"stdin", "stdout", "stderr"} {
		a = append(a, "--symlink", fmt.Sprintf("/proc/self/fd/%d", i), "/dev/"+n)
	}
	// multiprocessing's semaphores and shared memory live in /dev/shm. It is
	// a folder of the run's /tmp tmpfs (see runBwrap), so one size bound and
	// one measurement cover both (bwrap can bind only host paths, so the
	// tmpfs cannot be shown at two places; Debian itself once had /dev/shm
	// link to /run/shm). /dev is then made read-only: without root its
	// tmpfs belongs to the program's uid, and would be memory no bound
	// covers; the device nodes are mounts of their own and stay writable.
	return append(a, "--symlink", "/proc/self/fd", "/dev/fd", "--symlink", shmInTmp, "/dev/shm", "--remount-ro", "/dev")
}

// tmpPeak is watchBwrapTmp's result: the peak of the sandbox's /tmp.
type tmpPeak struct {
	bytes int64
	err   error
}

// runBwrap runs r under bwrap (the bwrap tier).
func (s *Sandbox) runBwrap(ctx context.Context, r *run, res *Result) error {
	p, err := newPipes()
	if err != nil {
		return err
	}
	defer p.close()

	// bwrap reports its child's pid, through which the host measures the
	// sandbox's /tmp and kills the sandbox.
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: pipe: %w", err)
	}
	defer infoR.Close()
	defer infoW.Close()

	cmd := s.bwrapCommand(r, p, infoW)
	resetPeakRSS()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: start bwrap: %w", err)
	}
	p.closeChildEnds()
	infoW.Close()
	wait := p.pump(r)
	child := readBwrapChild(infoR)
	defer child.close()
	tmpDone := make(chan struct{})
	tmpRes := make(chan tmpPeak, 1)
	go func() {
		n, err := watchBwrapTmp(child, p.upCh, tmpDone)
		tmpRes <- tmpPeak{n, err}
	}()

	werr := awaitBwrap(ctx, cmd, child, r.limits.Timeout, res)
	res.Duration = time.Since(start)
	// Killing the sandbox's pid 1 kills its pid namespace; the pipes close
	// with the last process in it.
	waitPumps(wait, p, 5*time.Second)
	close(tmpDone)
	tmp := <-tmpRes
	return bwrapResult(ctx, r, res, cmd, p, werr, tmp)
}

// bwrapCommand is the bwrap command for r: the fixed arguments of
// prepareBwrap, then r's /tmp, working directory, data and program, with
// the program's descriptors.
func (s *Sandbox) bwrapCommand(r *run, p *pipes, infoW *os.File) *exec.Cmd {
	args := append([]string{"--info-fd", fmt.Sprint(infoFD)}, s.bwArgs...)
	// The private /tmp, /dev/shm's folder included, is memory: bounded by
	// the memory limit and measured into the peak (memfs.go).
	args = append(args, "--perms", "1777", "--size", fmt.Sprint(r.limits.MemoryBytes), "--tmpfs", "/tmp",
		"--perms", "1777", "--dir", shmInTmp)
	args = append(args, "--bind", r.dir, sandboxHome)
	if r.spec.DataDir != "" {
		args = append(args, "--ro-bind", r.spec.DataDir, sandboxHome+"/data")
	}
	// The root tmpfs bwrap builds is writable until remounted; nothing may be
	// written outside the working directory and /tmp.
	args = append(args, "--remount-ro", "/", "--chdir", sandboxHome, "--", initShell, "-c", initScript, "mlerl-init")
	args = append(args, r.argv...)

	cmd := exec.Command(s.bwrap, args...)
	cmd.Env = append(baseEnv(sandboxHome, "/tmp"), r.spec.Env...)
	cmd.Stdin = p.srcR
	cmd.Stdout = p.outW
	cmd.Stderr = p.outW
	// Descriptors: 3 markers, 4 started, 5 bwrap's info (bwrap does not
	// pass it on to the sandbox).
	cmd.ExtraFiles = []*os.File{p.markW, p.upW, infoW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// awaitBwrap waits for bwrap to exit, killing the sandbox at the deadline
// (setting res.TimedOut) or when ctx ends; it returns cmd.Wait's error.
func awaitBwrap(ctx context.Context, cmd *exec.Cmd, child *bwrapChild, timeout time.Duration, res *Result) error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var werr error
	select {
	case werr = <-exited:
	case <-timer.C:
		res.TimedOut = true
		werr = killBwrap(cmd, child, exited)
	case <-ctx.Done():
		werr = killBwrap(cmd, child, exited)
	}
	return werr
}

// reportWait bounds how long a kill waits for bwrap's report of its child.
// bwrap writes it right after creating the child, so only a bwrap stuck
// before that (when it has no child to leave behind) makes the wait last.
const reportWait = 5 * time.Second

// killBwrap kills a bwrap run and returns cmd.Wait's error. Killing bwrap
// alone is not enough: the sandbox's pid 1 binds itself to bwrap's life
// (--die-with-parent) only after bwrap has built its mounts, and a bwrap
// killed before that left the namespace running on its own, the program
// in it outside every limit of the host. So the kill goes to the sandbox's
// pid 1, which takes the whole pid namespace with it, as soon as bwrap has
// reported it, and to bwrap.
func killBwrap(cmd *exec.Cmd, child *bwrapChild, exited <-chan error) error {
	reported := closedWithin(child.ready, reportWait)
	child.kill()
	cmd.Process.Kill()
	werr := <-exited
	// A report that came late (or with bwrap's exit) still gets its kill.
	if !reported && closedWithin(child.ready, time.Second) {
		child.kill()
	}
	return werr
}

// closedWithin reports whether ch is closed within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// bwrapChild is the sandbox's pid 1 as bwrap reports it on --info-fd, right
// after creating it, pinned by a pidfd so that neither a signal nor a /proc
// lookup can reach a later process that reuses the pid.
type bwrapChild struct {
	info  *os.File      // the read end of bwrap's --info-fd
	ready chan struct{} // closed once the fields below are set
	pid   int
	pidfd int   // -1 when there is none: no report, or pid 1 had ended
	err   error // why there is no report
}

// bwrapInfo is the part of bwrap's --info-fd report the host uses.
type bwrapInfo struct {
	ChildPID int `json:"child-pid"`
}

// readBwrapChild reads bwrap's report from info in the background; close
// releases info.
func readBwrapChild(info *os.File) *bwrapChild {
	c := &bwrapChild{info: info, ready: make(chan struct{}), pidfd: -1}
	go func() {
		defer close(c.ready)
		var bi bwrapInfo
		if err := json.NewDecoder(info).Decode(&bi); err != nil {
			c.err = fmt.Errorf("bwrap info: %w", err)
			return
		}
		if bi.ChildPID <= 0 {
			c.err = fmt.Errorf("bwrap info: child pid %d", bi.ChildPID)
			return
		}
		c.pid = bi.ChildPID
		fd, err := unix.PidfdOpen(bi.ChildPID, 0)
		if errors.Is(err, unix.ESRCH) {
			return
		}
		if err != nil {
			c.err = fmt.Errorf("pidfd of the sandbox's pid 1: %w", err)
			return
		}
		// bwrap reported the pid while that process was alive, and it is
		// bwrap's child, so only bwrap reaping it could free the pid before
		// the pidfd pinned it. A pid reused meanwhile would not be the init
		// of a pid namespace.
		if !namespaceInit(bi.ChildPID) {
			unix.Close(fd)
			return
		}
		c.pidfd = fd
	}()
	return c
}

// namespaceInit reports whether pid is pid 1 of its own pid namespace.
func namespaceInit(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			return len(f) > 1 && f[len(f)-1] == "1"
		}
	}
	return false
}

// kill sends SIGKILL to the sandbox's pid 1, if it has been reported and
// pinned; sent from the host's pid namespace, it cannot be caught.
func (c *bwrapChild) kill() {
	select {
	case <-c.ready:
	default:
		return
	}
	if c.pidfd >= 0 {
		unix.PidfdSendSignal(c.pidfd, unix.SIGKILL, nil, 0)
	}
}

// close ends the read of the report, if it is still waiting, and releases
// the pidfd.
func (c *bwrapChild) close() {
	c.info.Close()
	<-c.ready
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
	}
}

// bwrapResult fills res from bwrap's exit and the /tmp peak, and says why
// the run failed when the program never started or was not measured.
func bwrapResult(ctx context.Context, r *run, res *Result, cmd *exec.Cmd, p *pipes, werr error, tmp tmpPeak) error {
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return fmt.Errorf("sandbox: wait bwrap: %w", werr)
	}
	res.ExitCode, res.Signal = exitInfo(cmd.ProcessState)
	// bwrap reports a child killed by signal n as exit status 128+n.
	if res.Signal == "" && res.ExitCode > 128 && res.ExitCode < 128+65 {
		res.Signal = signalName(syscall.Signal(res.ExitCode - 128))
	}
	// bwrap waited for init.sh (pid 1), which waited for the program and
	// reaped its orphans: the kernel folded their peak RSS into this.
	// Add the peak of its memory-backed files.
	res.PeakMemoryBytes = maxRSS(cmd.ProcessState) + tmp.bytes
	if !p.up.Load() && !res.TimedOut && ctx.Err() == nil {
		// bwrap itself failed before the program ran (bad mount, no userns).
		return fmt.Errorf("sandbox: bwrap failed (exit %d): %s", res.ExitCode, strings.TrimSpace(string(truncate(r.out.Bytes(), 500))))
	}
	if tmp.err != nil && !res.TimedOut && ctx.Err() == nil {
		// A peak without /tmp would understate the run's memory.
		return fmt.Errorf("sandbox: measure the sandbox's /tmp: %w", tmp.err)
	}
	return nil
}

func killAndWait(cmd *exec.Cmd, exited <-chan error) error {
	cmd.Process.Kill()
	return <-exited
}

func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// resetPeakRSS lowers this process's peak-RSS mark to its current RSS. Go
// starts bwrap with vfork, and the kernel records the parent's peak RSS as
// the peak of a vforked child that execs: bwrap's, and so the run's, peak
// memory would include the highest RSS this process ever had (a trainer's
// past peak, a test binary's). After the reset it includes only what this
// process holds now. Best effort: without /proc the figure stays as it was.
func resetPeakRSS() {
	if f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0); err == nil {
		f.Write([]byte("5"))
		f.Close()
	}
}
