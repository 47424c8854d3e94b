# Fills a memory-backed folder (SHM_DIR, default /dev/shm) with files of
# 16 MiB chunks until TARGET_BYTES are written or a write is refused, and
# reports how far it got. Each file stays below RLIMIT_FSIZE, so only the
# folder's own bound can stop it. HOLD_SECONDS keeps the files for a while
# (so a sampler sees them) before the program exits; KEEP=1 leaves them.
import os, time

folder = os.environ.get("SHM_DIR", "/dev/shm")
target = int(os.environ["TARGET_BYTES"])
tag = os.environ.get("TAG", "mlerl-shmfill")
# What else is there: a private /dev/shm holds nothing of the host's.
print("listing", sorted(os.listdir(folder)), flush=True)
chunk = b"s" * (16 << 20)
per_file = 64 << 20
written, n, names, err = 0, 0, [], None
try:
    while written < target and err is None:
        name = os.path.join(folder, "%s-%d" % (tag, n))
        names.append(name)
        n += 1
        with open(name, "wb") as f:
            done = 0
            while done < per_file and written < target:
                try:
                    f.write(chunk)
                    f.flush()
                except OSError as e:
                    err = e
                    break
                done += len(chunk)
                written += len(chunk)
except OSError as e:
    err = err or e
print("written %d MiB" % (written >> 20), flush=True)
print("stopped by", type(err).__name__ if err else "none", getattr(err, "errno", ""), flush=True)
time.sleep(float(os.environ.get("HOLD_SECONDS", "0")))
if os.environ.get("KEEP") != "1":
    for name in names:
        try:
            os.unlink(name)
        except OSError:
            pass
print("done", flush=True)
