# SECRET-NONCE-IN-COMMENT
# Looks for its own source text on disk and on its descriptors.
import os

hits = []
for root, dirs, files in os.walk("."):
    for f in files:
        p = os.path.join(root, f)
        try:
            if b"SECRET-NONCE" in open(p, "rb").read():
                hits.append(p)
        except OSError:
            pass
for fd in os.listdir("/proc/self/fd"):
    try:
        b = os.read(int(fd), 1 << 20)
        if b"SECRET-NONCE" in b:
            hits.append("fd" + fd)
    except OSError:
        pass
try:
    if b"SECRET-NONCE" in open("/proc/self/cmdline", "rb").read():
        hits.append("cmdline")
except OSError:
    pass
print("hits:", hits)
