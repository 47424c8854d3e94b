package sandbox

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter of the landlock tier. Landlock (before ABI 10) does not
// cover UDP, raw or packet sockets, so network denial rests here: socket()
// succeeds only for AF_UNIX (local pipes for multiprocessing). io_uring is
// refused because its operations bypass seccomp; bpf and perf_event_open are
// attack surface no ML program needs. Other architectures' calling
// conventions (x32 on amd64) are refused outright.

// seccompData offsets (struct seccomp_data).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] on little-endian machines
)

func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

func bpfStmt(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

func bpfJump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// seccompFilter builds the program. Layout:
//
//	arch check; load nr; [x32 check]; socket? → arg check; denied list → EPERM; allow
func seccompFilter() ([]unix.SockFilter, error) {
	arch, ok := auditArch()
	if !ok {
		return nil, errors.New("no seccomp filter for " + runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	denied := []uint32{
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
	}

	f := []unix.SockFilter{
		bpfStmt(ld, offArch),
		bpfJump(jeq, arch, 1, 0),
		bpfStmt(ret, unix.SECCOMP_RET_KILL_PROCESS),
		bpfStmt(ld, offNr),
	}
	if runtime.GOARCH == "amd64" {
		// x32 system calls carry bit 30; they would reach socket() by another number.
		f = append(f,
			bpfJump(jge, 0x40000000, 0, 1),
			bpfStmt(ret, errno(unix.ENOSYS)),
		)
	}
	// socket(): allow AF_UNIX only.
	f = append(f,
		bpfJump(jeq, unix.SYS_SOCKET, 0, 4),
		bpfStmt(ld, offArg0),
		bpfJump(jeq, unix.AF_UNIX, 0, 1),
		bpfStmt(ret, unix.SECCOMP_RET_ALLOW),
		bpfStmt(ret, errno(unix.EACCES)),
	)
	for _, nr := range denied {
		f = append(f,
			bpfJump(jeq, nr, 0, 1),
			bpfStmt(ret, errno(unix.EPERM)),
		)
	}
	f = append(f, bpfStmt(ret, unix.SECCOMP_RET_ALLOW))
	return f, nil
}

// installSeccomp loads the filter on every thread (TSYNC), so whichever
// thread execs carries it. no_new_privs is required and already set by
// Landlock; set it again for the none-Landlock path's sake.
func installSeccomp() error {
	f, err := seccompFilter()
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(f)
	if e != 0 {
		return e
	}
	return nil
}
