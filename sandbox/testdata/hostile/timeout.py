# Leaves processes behind that try hard to survive: a setsid'd child ignoring
# SIGTERM, a double-forked daemon, and a main process that ignores SIGTERM and
# never ends. Their argv carries a tag the test looks for in the host's /proc.
import os
import signal
import subprocess
import sys
import time

tag = os.environ["TAG"]
survivor = "import os,signal,time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntry: os.setsid()\nexcept OSError: pass\nwhile True: time.sleep(1)"
subprocess.Popen([sys.executable, "-c", survivor, tag], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", survivor, tag])
    os._exit(0)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("children started", flush=True)
if os.environ.get("MODE") == "exit":
    time.sleep(0.5)
    sys.exit(0)
while True:
    time.sleep(1)
