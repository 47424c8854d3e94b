"""digits.py writes scikit-learn's bundled 8x8 digits as PNG files.

usage: /usr/bin/python3 digits.py OUTDIR

Writes OUTDIR/digits/labels.csv (index,digit) and OUTDIR/digits/<index>.png.
The files are named by the original index; the Go build renames them to
shuffled ids, because the original order follows the labels (0, 1, 2, ...).
"""

import csv
import os
import sys

import numpy as np
from PIL import Image
from sklearn.datasets import load_digits


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: digits.py OUTDIR")
    out = os.path.join(argv[1], "digits")
    os.makedirs(out, exist_ok=True)
    digits = load_digits()
    # Pixel values are 0..16; spread them over the 8-bit gray range.
    pixels = np.rint(digits.images * (255.0 / 16.0)).astype(np.uint8)
    with open(os.path.join(out, "labels.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["index", "digit"])
        for i, (img, label) in enumerate(zip(pixels, digits.target)):
            Image.fromarray(img, mode="L").save(os.path.join(out, "%d.png" % i), format="PNG")
            w.writerow([i, int(label)])


if __name__ == "__main__":
    main(sys.argv)
