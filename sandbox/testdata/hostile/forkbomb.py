# Forks until refused; every child sleeps so they pile up.
import os
import time

n = 0
for i in range(2000):
    try:
        pid = os.fork()
    except OSError as e:
        print("refused after", n, type(e).__name__, flush=True)
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print("forked", n, flush=True)
