# Runs first inside every sandboxed interpreter (python3 -s -c BOOTSTRAP DATA NPROC FSIZE UID)
# with fd 0 the program source, fd 3 the marker pipe and fd 4 the started pipe.
# It lowers the resource limits before any untrusted code runs, then reads the
# program from stdin and executes it as __main__. The source never touches the
# working directory, so the program cannot read back the instrumenter's nonce
# from a file; tracebacks still show source lines because the excepthook puts the
# text in linecache under the name "solution.py".
import sys


def _mlerl_boot(g):
    import os
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
    del g["_mlerl_boot"]
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


_mlerl_boot(globals())
