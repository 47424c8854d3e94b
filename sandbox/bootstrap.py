# Runs first inside every sandboxed interpreter
# (python3 -S -c BOOTSTRAP DATA NPROC FSIZE UID PATHS)
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
    extra = [p for p in sys.argv[5].split(":") if p and p not in sys.path]
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
    except BrokenPipeError:
        # No one reads the started pipe: the host that started this run has
        # died, in a moment before bwrap's --die-with-parent held (or its
        # run was killed meanwhile). No one would time, bound or collect
        # the program, so it is not run.
        sys.stderr.write("sandbox: the host is gone; the program is not run\n")
        os._exit(125)
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


_mlerl_boot(globals())
