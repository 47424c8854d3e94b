# Tries to write outside its working directory. The test checks none of the
# host paths exist afterwards.
import os

targets = os.environ["HOST_WRITE_TARGETS"].split(":")
targets += ["data/planted.txt", os.path.join(os.environ["HOST_PUBLIC_DIR"], "planted.txt"),
            os.path.join(os.path.dirname(os.getcwd()), "planted-" + os.environ["TAG"])]
for t in targets:
    try:
        with open(t, "w") as f:
            f.write("planted")
        print("wrote", t)
    except Exception as e:
        print("denied", t, type(e).__name__)
    try:
        os.mkdir(t + ".d")
        print("mkdir", t)
    except Exception as e:
        print("denied mkdir", t, type(e).__name__)
# A write inside the working dir and /tmp must work.
open("inside.txt", "w").write("ok")
import tempfile
with tempfile.NamedTemporaryFile(dir=os.environ.get("TMPDIR", "/tmp")) as f:
    f.write(b"ok")
print("inside ok")
