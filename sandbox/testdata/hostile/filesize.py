# Writes 64 MiB into one file.
block = b"x" * (1 << 20)
try:
    with open("big.bin", "wb") as f:
        for i in range(64):
            f.write(block)
            f.flush()
    print("wrote all")
except OSError as e:
    print("refused:", e)
