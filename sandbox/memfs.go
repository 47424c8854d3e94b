package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A run's memory-backed files: /tmp and /dev/shm under bwrap, /dev/shm in the
// landlock tier (where it can be mounted). They are tmpfs, whose pages are host RAM that no
// process's RSS shows (unless mapped) and that RLIMIT_DATA does not bound: a
// program could otherwise fill the host's memory through them. Each tier
// therefore gives the run a private tmpfs sized to its memory limit (writes
// past it fail with ENOSPC, touching a mapped page past it raises SIGBUS) and
// follows how full it is from outside the program, so the peak is added to
// Result.PeakMemoryBytes.
//
// The peak is sampled (every memSampleEvery, and once when the run is over,
// from a descriptor that keeps the file system alive after the program's
// namespace is gone): files that fill and vanish between two samples are
// missed, though never more than the size bound, and so may be what a
// program that ends within one sample wrote. The sum of peak RSS and
// peak tmpfs use is an upper bound of the run's memory: pages of a tmpfs file
// the program maps count in the mapping process's RSS as well.
//
// Where the landlock tier can make no mount namespace (a host without user
// namespaces, which is what the tier is for, or root without CAP_SYS_ADMIN,
// as in a container) the program gets no /dev/shm at all, and
// multiprocessing's locks, queues and pools (POSIX semaphores, which glibc
// always makes in /dev/shm) fail there; joblib, seeing no working
// semaphores, runs serially. The host's /dev/shm is not granted instead: it
// is bounded only by half the host's RAM, and every run of the same uid
// would see, and could alter, the others' semaphores. No environment
// setting moves glibc's /dev/shm, and redirecting the program's opens there
// with seccomp user notification would cost a round trip to the supervisor
// on every file the program opens (Python's imports are hundreds).

// memSampleEvery is how often a run's tmpfs is measured: statfs is one cheap
// system call, and at tmpfs write speeds (a few GB/s) 10 ms is at most some
// tens of MiB a short-lived file can hide.
const memSampleEvery = 10 * time.Millisecond

// memFS follows the used bytes of one tmpfs through a descriptor on it.
type memFS struct {
	fd   int
	peak atomic.Int64
}

// openMemFS takes fd (any descriptor on the file system, O_PATH will do),
// checks that it is a tmpfs, and takes a first sample.
func openMemFS(fd int) (*memFS, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("statfs: %w", err)
	}
	if st.Type != unix.TMPFS_MAGIC {
		unix.Close(fd)
		return nil, fmt.Errorf("not a tmpfs (type %#x)", st.Type)
	}
	m := &memFS{fd: fd}
	m.sample()
	return m, nil
}

// sample measures the file system once and keeps the largest use seen.
func (m *memFS) sample() {
	var st unix.Statfs_t
	if unix.Fstatfs(m.fd, &st) != nil {
		return
	}
	used := int64(st.Blocks-st.Bfree) * st.Bsize
	for {
		old := m.peak.Load()
		if used <= old || m.peak.CompareAndSwap(old, used) {
			return
		}
	}
}

// Peak is the largest use sampled so far, in bytes.
func (m *memFS) Peak() int64 { return m.peak.Load() }

// close releases the descriptor, and with it the file system once the
// program's namespace is gone too.
func (m *memFS) close() { unix.Close(m.fd) }

// watchBwrapTmp follows the tmpfs at /tmp of a bwrap sandbox (which also
// holds /dev/shm) until done is closed, and returns its peak use in bytes.
// child is the sandbox's pid 1 as bwrap reported it; up is closed once the
// bootstrap has started, when bwrap's mounts are all in place and the
// program has not run yet (before that, the child's root may still be the
// host's). A run that ends before its /tmp is reached has no tmpfs peak (it
// is bounded all the same); a live sandbox whose /tmp cannot be reached is
// an error.
func watchBwrapTmp(child *bwrapChild, up, done <-chan struct{}) (int64, error) {
	// A report already in counts even when done is closed too (a short run).
	select {
	case <-child.ready:
	default:
		select {
		case <-child.ready:
		case <-done:
			return 0, nil
		}
	}
	if child.err != nil {
		return 0, child.err
	}
	if child.pidfd < 0 {
		return 0, nil // it had ended before it could be pinned
	}
	// The pidfd pins which process the pid means: as long as it says the
	// process has not exited, /proc/PID is still it and not a reuse.
	pidfd := child.pidfd
	select {
	case <-up:
	case <-done:
		return 0, nil
	}
	m, err := openBwrapTmp(child.pid)
	// A process on its way out releases its root before its pidfd reports
	// the exit: a root that is gone (ENOENT) means an exit in progress, so
	// wait for the pidfd to say so rather than fail the run.
	if exited(pidfd) || (errors.Is(err, unix.ENOENT) && exitedWithin(pidfd, time.Second)) {
		if m != nil {
			m.close()
		}
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer m.close()
	tick := time.NewTicker(memSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			m.sample()
		case <-done:
			// What the program left is still there: the descriptor holds
			// the file system.
			m.sample()
			return m.Peak(), nil
		}
	}
}

// exited reports whether the process of pidfd has ended.
func exited(pidfd int) bool { return exitedWithin(pidfd, 0) }

// exitedWithin reports whether the process of pidfd ends within d.
func exitedWithin(pidfd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1 && fds[0].Revents&unix.POLLIN != 0
	}
}

// openBwrapTmp opens the sandbox's /tmp through the root of its pid 1. The
// program can neither mount nor replace /tmp there (the sandbox's / is
// read-only), and no symlink is followed on the way.
func openBwrapTmp(pid int) (*memFS, error) {
	root, err := unix.Open(filepath.Join("/proc", fmt.Sprint(pid), "root"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox root: %w", err)
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, "tmp", &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("sandbox /tmp: %w", err)
	}
	m, err := openMemFS(fd)
	if err != nil {
		return nil, fmt.Errorf("sandbox /tmp: %w", err)
	}
	return m, nil
}

// shmMaxFiles bounds the files of the landlock tier's private /dev/shm (a
// million empty files would hold about a GiB of kernel memory).
const shmMaxFiles = 1 << 16

// privateShm gives the calling thread (and the processes it starts) a mount
// namespace of its own with a fresh tmpfs of size bytes at /dev/shm, and
// returns a sampler of it. Needs CAP_SYS_ADMIN: the supervisor calls it as
// root. The caller must hold its OS thread locked for as long as it starts
// processes or opens paths that must see this /dev/shm.
func privateShm(size int64) (*memFS, error) {
	// Mount namespaces are per thread; Go starts new threads from a clean
	// template thread when the current one is locked, so the namespace stays
	// with this thread.
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := mountShm(size); err != nil {
		return nil, err
	}
	fd, err := unix.Open("/dev/shm", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open private /dev/shm: %w", err)
	}
	m, err := openMemFS(fd)
	if err != nil {
		return nil, fmt.Errorf("private /dev/shm: %w", err)
	}
	return m, nil
}

// mountShm mounts a tmpfs of size bytes on /dev/shm, in a mount namespace
// the caller has just made (privateShm as root; the exec stage without root,
// started in a user and mount namespace of its own).
func mountShm(size int64) error {
	// Private first: with the host's usual shared propagation, the mount
	// below would appear on the host's /dev/shm.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// Inodes are kernel memory the size does not count; the default allows
	// millions. Semaphores and shared blocks are a few files each.
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=1777", size, shmMaxFiles)
	if err := unix.Mount("mlerl-shm", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs on /dev/shm: %w", err)
	}
	return nil
}

// dropCaps clears every capability of the calling thread, ambient ones
// included, so the program it executes next starts with none (the exec
// stage raised CAP_SYS_ADMIN in its user namespace to mount /dev/shm).
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// openChildShm opens the /dev/shm process pid sees, once it is not the
// host's (the exec stage mounts its own shortly after it starts): nil and
// no error until then. pid must be an unreaped child of the caller, so it
// cannot be reused meanwhile.
func openChildShm(pid int, host uint64) (*memFS, error) {
	root, err := unix.Open(filepath.Join("/proc", fmt.Sprint(pid), "root"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("root of %d: %w", pid, err)
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, "dev/shm", &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, fmt.Errorf("/dev/shm of %d: %w", pid, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev == host {
		unix.Close(fd)
		return nil, err
	}
	return openMemFS(fd)
}

// hostShmDev is the device of the host's /dev/shm.
func hostShmDev() uint64 {
	var st unix.Stat_t
	if unix.Stat("/dev/shm", &st) != nil {
		return 0
	}
	return st.Dev
}

// hostHasShm reports whether the host has a /dev/shm folder to mount over.
func hostHasShm() bool {
	fi, err := os.Stat("/dev/shm")
	return err == nil && fi.IsDir()
}
