# Allocates far more than its limit, touching every page.
import numpy as np

chunks = []
for i in range(64):
    chunks.append(np.ones(64 << 20, dtype=np.uint8))  # 64 MiB each, 4 GiB in all
    print("allocated", (i + 1) * 64, "MiB", flush=True)
