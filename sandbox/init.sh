# pid 1 of the bwrap tier's pid namespace (bwrap --as-pid-1), run as
#   /bin/sh -c INIT mlerl-init PYTHON ARGS...
# It runs the interpreter (the bootstrap, then the program) and reaps it and
# every orphan the program leaves. bwrap waits for pid 1 and the host waits
# for bwrap, so the kernel's rusage of the host's wait covers the program's
# whole tree: peak memory is measured outside anything the program can write.
# This process stays as it was started (root when the host is root), so the
# program, under another uid, cannot signal or trace it; it runs no
# untrusted code. Signals sent from inside the namespace to a pid 1 that has
# no handler for them are dropped by the kernel; those a shell may handle
# itself (sh -c catches SIGINT and would end on it) get a trap that does
# nothing, so a program under pid 1's own uid (no root on the host) cannot
# end pid 1 early and lose the tree's accounting. A trapped signal is reset
# to its default in the commands the shell starts, and one that arrives
# while a foreground command runs waits until it ends.
#
# A shell rather than the interpreter itself: a forked interpreter pays in
# copy-on-write faults for every page of its parent's heap it touches, its
# exit included (about 3 ms per run, measured); the shell is small and the
# interpreter it starts is a fresh image.
#
# kill -1 below reaches every process this one may signal: inside the
# sandbox's own pid namespace that is the run, anywhere else (started by
# hand, a bwrap without --unshare-pid) it would be the host. Refuse to be an
# init anywhere but as pid 1.
[ "$$" = 1 ] || { echo "sandbox: init outside a new pid namespace" >&2; exit 125; }
trap : HUP INT QUIT TERM USR1 USR2 ALRM
# In the foreground, so the interpreter's signal dispositions are the shell's
# own (an asynchronous command would start with SIGINT ignored). While it
# waits, the shell reaps any child, orphans adopted meanwhile included.
"$@"
s=$?
# The program is over: kill what it left behind and reap it here. The kernel
# would kill it too when pid 1 exits, but would reap it without accounting,
# and its memory would go missing from the peak. kill -1 from pid 1 reaches
# every process of this namespace and nothing outside it, zombies included,
# so it fails only once every one has been reaped; the shell reaps while it
# waits for /bin/true.
while kill -s KILL -- -1 2>/dev/null; do /bin/true; done
exit "$s"
