# Reports its environment and who it is.
import json
import os

try:
    root = sorted(os.listdir("/"))
except OSError:
    root = []
print(json.dumps({"env": dict(os.environ), "cwd": os.getcwd(), "uid": os.getuid(),
                  "listing": sorted(os.listdir(".")), "root": root}))
