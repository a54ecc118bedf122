#!/usr/bin/python3
"""Write the hand-made fuzz inputs: seeds (tests/fuzz/corpus/seed-*) and the cases of issue 7
that broke the core (tests/fuzz/regressions/issue7-*). The encoding mirrors decode() in
fuzz_find_clumps.c:

    dims-1 (3 bytes, mod 12) | flags | shift (3) | seed (2) | scale | threshold | relevance |
    saddle threshold | mass threshold | spacing (1 or 3 values) | origin (1 or 3 values) |
    encoding | densities | (cell u16, special index) overrides

A value is one selector byte; selector 240..255 is followed by the 8 bytes of a double.
flags: bits 0-2 periodic x/y/z, 0x80 all periodic, 0x08 float32, 0x10 saddle merging,
0x20 three spacings, 0x40 three origins. Encoding 2 gives raw densities of the input type.

    /usr/bin/python3 tests/fuzz/make_inputs.py    # rewrites the files it owns, nothing else
"""
import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
PERIODIC, F32, SADDLE, SPACINGS, ORIGINS = 0x80, 0x08, 0x10, 0x20, 0x40


def exact(x):
    """A value selector giving exactly x."""
    return bytes([240]) + struct.pack("<d", x)


DEFAULT = bytes([0])  # the parameter's default: scale 1, threshold 0, relevance 2, saddle 0, mass 0, spacing 1, origin 0


def case(dims, densities, flags=0, threshold=DEFAULT, relevance=DEFAULT, saddle=DEFAULT, mass=DEFAULT,
         spacing=(DEFAULT,), origin=(DEFAULT,), shift=(1, 1, 1), seed=7):
    assert len(densities) == dims[0] * dims[1] * dims[2]
    if len(spacing) == 3:
        flags |= SPACINGS
    if len(origin) == 3:
        flags |= ORIGINS
    out = bytes(d - 1 for d in dims) + bytes([flags]) + bytes(shift) + struct.pack("<H", seed)
    out += DEFAULT  # scale 1
    out += threshold + relevance + saddle + mass + b"".join(spacing) + b"".join(origin)
    out += bytes([2])  # raw densities
    fmt = "<f" if flags & F32 else "<d"
    out += b"".join(struct.pack(fmt, v) for v in densities)
    return out


def smooth(n, rng, periodic):
    """A smooth positive random field on an n^3 grid: a few Gaussian blobs."""
    blobs = [(rng.uniform(0, n), rng.uniform(0, n), rng.uniform(0, n), rng.uniform(1, 10)) for _ in range(5)]
    out = []
    for z in range(n):
        for y in range(n):
            for x in range(n):
                v = 0.1
                for bx, by, bz, a in blobs:
                    d = [x - bx, y - by, z - bz]
                    if periodic:
                        d = [c - n * round(c / n) for c in d]
                    v += a * math.exp(-(d[0] ** 2 + d[1] ** 2 + d[2] ** 2) / 4.0)
                out.append(v + 1e-6 * rng.random())  # distinct values
    return out


def main():
    rng = random.Random(7)
    seeds = {
        # smooth periodic field, distinct values: every oracle applies, saddle merging on
        "seed-periodic-smooth": case((8, 8, 8), smooth(8, rng, True), flags=PERIODIC | SADDLE, threshold=exact(1.0),
                                     relevance=exact(1.5), saddle=exact(2.0), shift=(3, 5, 2)),
        # the same kind of field open, float32, with a mass threshold and odd spacings
        "seed-open-float32": case((7, 5, 6), smooth(7, rng, False)[:210], flags=F32 | SADDLE,
                                  threshold=exact(0.5), saddle=exact(0.5), mass=exact(3.0),
                                  spacing=(exact(0.5), exact(0.25), exact(2.0)),
                                  origin=(exact(-1.0), exact(3.0), exact(0.5))),
        # plateaus and exact ties (ties broken by global id)
        "seed-plateaus": case((6, 6, 1), [float((i * 7) % 4) for i in range(36)], flags=0x03,
                              threshold=exact(0.0), relevance=exact(1.0)),
        # bad input: a NaN and a negative density must fail cleanly
        "seed-nan": case((4, 1, 1), [1.0, float("nan"), 2.0, 0.5]),
        "seed-negative": case((2, 2, 1), [1.0, -1.0, 2.0, 0.5]),
    }
    # issue 7, case 2: dendrogram leaf masses with shift exponents above 127 (hierarchy.c)
    row = [1e10, 1e-36, 1e-31, 1e-30, 1e-31, 0.0]
    decades = [1e10, 1e-16, 1e-11, 1e-10, 1e-11, 0.0]
    # issue 7, case 3: one DBL_MAX (or 1e-300) cell, and extreme spacings
    cube = [0.0] * 512
    big, tiny = list(cube), list(cube)
    big[200] = 1.7976931348623157e308
    tiny[200] = 1e-300
    blob = smooth(8, random.Random(3), False)
    regressions = {
        "issue7-dendrogram-shift-133": case((6, 1, 1), row, flags=SADDLE, threshold=exact(0.0), saddle=exact(0.0)),
        "issue7-dendrogram-20-decades": case((6, 1, 1), decades, flags=SADDLE, threshold=exact(0.0),
                                             saddle=exact(0.0)),
        "issue7-dbl-max-cell": case((8, 8, 8), big, threshold=exact(0.0)),
        "issue7-1e-300-cell": case((8, 8, 8), tiny, threshold=exact(0.0)),
        "issue7-spacing-1e-200": case((8, 8, 8), blob, threshold=exact(1.0), spacing=(exact(1e-200),) * 3),
        "issue7-spacing-1e200": case((8, 8, 8), blob, threshold=exact(1.0), spacing=(exact(1e200),) * 3),
    }
    for folder, files in (("corpus", seeds), ("regressions", regressions)):
        os.makedirs(os.path.join(HERE, folder), exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(HERE, folder, name), "wb") as f:
                f.write(data)
            print(f"{folder}/{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
