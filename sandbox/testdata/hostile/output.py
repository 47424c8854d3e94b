# Prints 1 GiB between a first and a last line, then writes markers to fd 3.
import os
import sys

print("FIRST-LINE")
line = b"y" * 1023 + b"\n"
block = line * 1024  # 1 MiB
out = sys.stdout.buffer
for i in range(1024):
    out.write(block)
out.flush()
print("LAST-LINE")
os.write(3, b"marker-after-flood\n")
