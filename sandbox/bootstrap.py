# Runs first inside every sandboxed interpreter
# (python3 -S -c BOOTSTRAP DATA NPROC FSIZE UID INIT PATHS)
# with fd 0 the program source, fd 3 the marker pipe and fd 4 the started pipe.
# It lowers the resource limits before any untrusted code runs, then reads the
# program from stdin and executes it as __main__. The source never touches the
# working directory, so the program cannot read back the instrumenter's nonce
# from a file; tracebacks still show source lines because the excepthook puts the
# text in linecache under the name "solution.py".
#
# The interpreter runs with -S: the site module (and the .pth files it executes)
# costs about as much as the rest of start-up. PATHS is the sys.path the host's
# interpreter computed with site, found once when the sandbox was made. The
# sandbox normally passes this file compiled (marshal, by the same interpreter,
# when the sandbox was made) behind a small -c stub that removes it from
# argv, so the arguments above are the same either way.
import sys


def _mlerl_init():
    # Under bwrap this interpreter is pid 1 of the sandbox's pid namespace
    # (bwrap --as-pid-1): it forks the program and reaps it, and every orphan
    # the program leaves. bwrap waits for pid 1 and the host waits for bwrap,
    # so the kernel's rusage of the host's wait covers the program's whole
    # tree: peak memory is measured outside anything the program can write.
    # This process stays as it was started (root with CAP_SETUID when the
    # host is root), so the program, under another uid, cannot signal or
    # trace it; it runs no untrusted code. It forks first thing and imports
    # nothing (posix is built in): whatever it touched before the fork, the
    # program's process pays for again in copy-on-write faults.
    import posix as os

    # kill(-1) below reaches every process this one may signal: inside the
    # sandbox's own pid namespace that is the run, anywhere else (a bootstrap
    # started by hand, a bwrap without --unshare-pid) it would be the host.
    # Refuse to be an init anywhere but as pid 1.
    if os.getpid() != 1:
        sys.stderr.write("sandbox: bootstrap init mode outside a new pid namespace\n")
        os._exit(125)
    pid = os.fork()
    if pid == 0:
        return
    # A same-uid program (no root on the host) could otherwise interrupt
    # the wait and lose its rusage; _signal spares signal.py's enum import.
    import _signal

    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
    # Our copies of the program's pipes would keep them open past its end.
    for fd in (0, 3, 4):
        try:
            os.close(fd)
        except OSError:
            pass
    status = None
    while status is None:
        try:
            got, st = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(125)
        if got == pid:
            status = st
    # The program is over: kill what it left behind and reap it here. The
    # kernel would kill it too when pid 1 exits, but would reap it without
    # accounting, and its memory would go missing from the peak. kill(-1)
    # from pid 1 reaches every process of this namespace and nothing outside
    # it; repeating it after each reap catches children forked meanwhile.
    while True:
        try:
            os.kill(-1, 9)
        except OSError:
            pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    # A signal cannot be re-raised on pid 1; bwrap reports 128+n either way.
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


def _mlerl_boot(g):
    # posix rather than os: the os module costs a millisecond, which a
    # program that never needs it should not pay.
    import posix as os
    import resource

    uid = int(sys.argv[4])
    if uid >= 0:
        # Under bwrap started by root: leave root for the run's own uid. This
        # clears every capability, and makes RLIMIT_NPROC (which root
        # ignores) count this run's processes alone.
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        except OSError as e:
            sys.stderr.write("sandbox: drop to uid %d: %s\n" % (uid, e))
            sys.exit(125)

    limits = (
        (resource.RLIMIT_DATA, int(sys.argv[1])),
        (resource.RLIMIT_NPROC, int(sys.argv[2])),
        (resource.RLIMIT_FSIZE, int(sys.argv[3])),
        (resource.RLIMIT_CORE, 0),
    )
    for which, want in limits:
        if want < 0:
            continue
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY and hard < want:
            want = hard
        try:
            resource.setrlimit(which, (want, want))
        except (ValueError, OSError) as e:
            sys.stderr.write("sandbox: setrlimit(%d, %d): %s\n" % (which, want, e))
            sys.exit(125)
    # What site would have done that programs rely on: the package folders
    # (appended, as site does, after any PYTHONPATH the run was given), and
    # the exit/quit/help builtins (scripts call exit()).
    # With -c, sys.path[0] is "" (the directory current at each import); a
    # script's is the folder it was started in, which the program's is.
    if sys.path and sys.path[0] == "":
        sys.path[0] = os.getcwd()
    extra = [p for p in sys.argv[6].split(":") if p and p not in sys.path]
    if extra:
        sys.path.extend(extra)
        # Child interpreters inherit -S (multiprocessing and joblib's loky
        # start workers with the parent's flags); through PYTHONPATH they
        # find the same packages. The environment is set both ways: putenv
        # for processes started without an explicit env, posix.environ for
        # os.environ, which is built from it when os is first imported.
        val = ":".join(extra).encode("utf-8", "surrogateescape")
        if os.environ.get(b"PYTHONPATH"):
            val = os.environ[b"PYTHONPATH"] + b":" + val
        os.putenv(b"PYTHONPATH", val)
        os.environ[b"PYTHONPATH"] = val
    import builtins
    import _sitebuiltins

    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")
    builtins.help = _sitebuiltins._Helper()
    # Not copyright, credits and license: _sitebuiltins._Printer imports os
    # (a millisecond), for builtins only an interactive session uses.
    # Tell the host the interpreter is up and the limits hold: from here on a
    # failure is the program's, not the sandbox's.
    try:
        os.write(4, b".")
        os.close(4)
    except OSError:
        pass
    src = sys.stdin.buffer.read()
    # linecache (through tokenize and re) costs more to import than the
    # interpreter takes to start, so it is loaded only for a traceback.
    hook = g.pop("_mlerl_excepthook")
    sys.excepthook = lambda kind, value, tb: hook(kind, value, tb, src)
    sys.argv[:] = ["solution.py"]
    code = compile(src, "solution.py", "exec", dont_inherit=True)
    # The program's globals are what `python3 solution.py` starts with: the
    # bootstrap's own names (and sys, marshal of the stub) are removed.
    for name in [k for k in g if not (k.startswith("__") and k.endswith("__"))]:
        del g[name]
    exec(code, g)


def _mlerl_excepthook(kind, value, tb, src):
    # The interpreter's own traceback printer reads source lines from disk,
    # where the program is not; the traceback module reads linecache. The
    # bootstrap's own frames are left out.
    import linecache
    import traceback

    text = src.decode("utf-8", "replace")
    linecache.cache["solution.py"] = (len(text), None, text.splitlines(True), "solution.py")
    while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
        tb = tb.tb_next
    traceback.print_exception(kind, value, tb)


if sys.argv[5] == "1":
    _mlerl_init()
_mlerl_boot(globals())
