# Tries to read the task's private answers by every path we could think of.
# Anything read is printed; the test fails if the secret shows up.
import os

secret_abs = os.environ["HOST_PRIVATE_FILE"]  # absolute host path
data_real = os.environ["HOST_PUBLIC_DIR"]
rel = os.path.relpath(secret_abs, data_real)   # ../private/answers.csv
tries = [
    secret_abs,
    "data/" + rel,
    "./data/../../" + os.path.basename(os.path.dirname(data_real)) + "/private/answers.csv",
    os.path.join(data_real, rel),
    "/proc/self/cwd/data/" + rel,
    "/proc/1/root" + secret_abs,
    "/proc/self/root" + secret_abs,
    "/proc/%d/root%s" % (os.getppid(), secret_abs),
]
for fd in range(3, 64):
    tries.append("/proc/self/fd/%d/%s" % (fd, rel))
    tries.append("/proc/self/fd/%d/private/answers.csv" % fd)
try:
    tries.append(os.path.join(os.readlink("data"), rel))
except OSError:
    pass
for i, t in enumerate(list(tries)):
    try:
        os.symlink(t, "link%d" % i)
        tries.append("link%d" % i)
    except OSError:
        pass
for t in tries:
    try:
        with open(t) as f:
            print("READ", t, f.read())
    except Exception as e:
        print("denied", t, type(e).__name__)
# Walk whatever is visible, looking for the file by name.
for top in ["/", "/proc/1/root", "/proc/self/root"]:
    for root, dirs, files in os.walk(top):
        if root == top:
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr", "dev")]
        for f in files:
            if f == "answers.csv":
                p = os.path.join(root, f)
                try:
                    print("READ", p, open(p).read())
                except Exception as e:
                    print("found but denied", p, type(e).__name__)
