#!/usr/bin/python3
"""Write an AMR hierarchy as an AMReX plotfile directory (the "HyperCLaw-V1.1" format that
Nyx, Castro, MAESTROeX, WarpX... write with amrex::WriteMultiLevelPlotfile), pure Python/numpy.

    /usr/bin/python3 datasets/generators/amr_amrex.py [OUTPUT_DIR]   # default build/plt_amr_sample
    /usr/bin/python3 datasets/generators/amr_amrex.py --float32 --nfiles 1 build/plt_f32

By default it writes the hierarchy of the committed AMR sample (amr_sample.py: 32^3 base,
levels 0..3, 179 blocks, cell variable "density"), in Float64 (what AMReX writes by default), with
the FABs of each level spread over 2 data files (as 2 MPI ranks would). Check it with
datasets/generators/check_amrex.py (pvpython). ParaView's reader is "AMReX/BoxLib Grid Reader"
(proxy AMReXGridReader); it matches directory names "plt*" in the file dialog.

Layout written (see amrex/Src/Base/AMReX_PlotFileUtil.cpp WriteGenericPlotfileHeader and
AMReX_VisMF.cpp, and VTK's IO/AMR/vtkAMReXGridReaderInternal.cxx which parses it):

  OUTPUT_DIR/Header
      HyperCLaw-V1.1 / ncomp / names (one per line) / dim / time / finest_level /
      prob_lo (x y z) / prob_hi / ref_ratio per level below the finest /
      domain box of every level "((lo) (hi) (0,0,0))" / level steps / cell size per level (one
      line each) / coord_sys (0 Cartesian) / 0 /
      per level: "level nboxes time", "step", per box and axis "lo_phys hi_phys", "Level_l/Cell"
  OUTPUT_DIR/Level_l/Cell_H        VisMF header, version 1 (Version_v1): how (0), ncomp, nghost
      (0), the BoxArray "(n 0 ((lo) (hi) (0,0,0)) ... )", n "FabOnDisk: Cell_D_0000k offset"
      lines, then per-FAB minima and maxima ("n,ncomp" then "v," per FAB)
  OUTPUT_DIR/Level_l/Cell_D_0000k  FABs one after the other, each
      "FAB ((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))((lo) (hi) (0,0,0)) ncomp\\n"
      followed by ncomp blocks of little-endian reals, x fastest (Fortran order); for float32
      the descriptor is ((8, (32 8 23 0 1 9 0 127)),(4, (4 3 2 1))) (the first number counts
      the 8 entries of the format list, as AMReX writes it).

Box indices are cell indices of the level (hi inclusive), as vtkAMRBox.
"""
import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DESCRIPTORS = {
    8: "((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))",
    4: "((8, (32 8 23 0 1 9 0 127)),(4, (4 3 2 1)))",
}


def _box(lo, dims):
    hi = [lo[d] + dims[d] - 1 for d in range(3)]
    return f"(({lo[0]},{lo[1]},{lo[2]}) ({hi[0]},{hi[1]},{hi[2]}) (0,0,0))"


def _g(v):
    return repr(float(v))


def write_plotfile(h, path, dtype=np.float64, nfiles=2, varname="density", time=0.0):
    """h: an amr_common.Hierarchy (blocks with data). Replaces path if it exists."""
    dtype = np.dtype(dtype).newbyteorder("<")
    if dtype.itemsize not in DESCRIPTORS:
        raise ValueError("float32 or float64 only")
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    nl = h.nlevels
    lines = ["HyperCLaw-V1.1", "1", varname, "3", _g(time), str(nl - 1)]
    prob_lo = h.origin
    prob_hi = [h.origin[d] + h.level0_dims[d] * h.spacing0[d] for d in range(3)]
    lines.append(" ".join(_g(v) for v in prob_lo) + " ")
    lines.append(" ".join(_g(v) for v in prob_hi) + " ")
    lines.append(" ".join("2" for _ in range(nl - 1)) + " ")
    lines.append(" ".join(_box((0, 0, 0), h.level_dims(l)) for l in range(nl)) + " ")
    lines.append(" ".join("0" for _ in range(nl)) + " ")
    for l in range(nl):
        lines.append(" ".join(_g(v) for v in h.spacing(l)) + " ")
    lines.append("0")     # coordinate system: Cartesian
    lines.append("0")     # boundary width
    for l, blocks in enumerate(h.blocks):
        sp = h.spacing(l)
        lines.append(f"{l} {len(blocks)} {_g(time)}")
        lines.append("0")
        for b in blocks:
            for d in range(3):
                lo = h.origin[d] + b.lo[d] * sp[d]
                hi = h.origin[d] + (b.lo[d] + b.dims[d]) * sp[d]
                lines.append(f"{_g(lo)} {_g(hi)}")
        lines.append(f"Level_{l}/Cell")
    with open(os.path.join(path, "Header"), "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")

    for l, blocks in enumerate(h.blocks):
        ldir = os.path.join(path, f"Level_{l}")
        os.makedirs(ldir)
        nf = max(1, min(nfiles, len(blocks)))
        files = [open(os.path.join(ldir, f"Cell_D_{k:05d}"), "wb") for k in range(nf)]
        fod = []
        mins, maxs = [], []
        try:
            for i, b in enumerate(blocks):
                k = i % nf
                f = files[k]
                off = f.tell()
                data = np.ascontiguousarray(b.data, dtype=dtype)
                head = f"FAB {DESCRIPTORS[dtype.itemsize]}{_box(b.lo, b.dims)} 1\n"
                f.write(head.encode("ascii"))
                f.write(data.tobytes())
                fod.append((f"Cell_D_{k:05d}", off))
                mins.append(float(data.min()))
                maxs.append(float(data.max()))
        finally:
            for f in files:
                f.close()
        hl = ["1", "0", "1", "0", f"({len(blocks)} 0"]
        hl += [_box(b.lo, b.dims) for b in blocks]
        hl.append(")")
        hl.append(str(len(blocks)))
        hl += [f"FabOnDisk: {name} {off}" for name, off in fod]
        hl.append("")
        hl.append(f"{len(blocks)},1")
        hl += [f"{v:.16e}," for v in mins]
        hl.append("")
        hl.append(f"{len(blocks)},1")
        hl += [f"{v:.16e}," for v in maxs]
        with open(os.path.join(ldir, "Cell_H"), "w", newline="\n") as f:
            f.write("\n".join(hl) + "\n")


def read_plotfile(path):
    """Independent minimal parser (3D, cell data, Version_v1 headers): returns
    (header dict, {varname: [per level: list of (lo, dims, array [z, y, x])]})."""
    tok = open(os.path.join(path, "Header")).read().split()
    it = iter(tok)
    hd = {"version": next(it)}
    ncomp = int(next(it))
    names = [next(it) for _ in range(ncomp)]
    dim = int(next(it))
    assert dim == 3
    hd["time"] = float(next(it))
    finest = int(next(it))
    hd["prob_lo"] = [float(next(it)) for _ in range(3)]
    hd["prob_hi"] = [float(next(it)) for _ in range(3)]
    hd["ref_ratio"] = [int(next(it)) for _ in range(finest)]
    hd["domains"] = [next(it) + next(it) + next(it) for _ in range(finest + 1)]
    hd["steps"] = [int(next(it)) for _ in range(finest + 1)]
    hd["cell_size"] = [[float(next(it)) for _ in range(3)] for _ in range(finest + 1)]
    hd["coord"] = int(next(it))
    next(it)
    prefixes = []
    for l in range(finest + 1):
        assert int(next(it)) == l
        nb = int(next(it))
        next(it)
        next(it)
        for _ in range(nb * 6):
            next(it)
        prefixes.append(next(it))
    out = {n: [] for n in names}
    for l, pre in enumerate(prefixes):
        ldir, mf = os.path.split(pre)
        htxt = open(os.path.join(path, pre + "_H")).read()
        htok = htxt.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split()
        lv = {n: [] for n in names}
        # FabOnDisk entries
        words = htxt.split()
        fods = [(words[i + 1], int(words[i + 2])) for i, w in enumerate(words) if w == "FabOnDisk:"]
        for fname, off in fods:
            with open(os.path.join(path, ldir, fname), "rb") as f:
                f.seek(off)
                line = b""
                while not line.endswith(b"\n"):
                    line += f.read(1)
                s = line.decode("ascii")
                assert s.startswith("FAB ")
                nbytes = 8 if "(8, (64 " in s else 4
                box = s[s.rindex("((") + 2:]
                lo = [int(v) for v in box[:box.index(")")].split(",")]
                rest = box[box.index("(") + 1:]
                hi = [int(v) for v in rest[:rest.index(")")].split(",")]
                nc = int(s.split()[-1])
                dims = [hi[d] - lo[d] + 1 for d in range(3)]
                n = dims[0] * dims[1] * dims[2]
                raw = np.frombuffer(f.read(n * nc * nbytes), dtype="<f8" if nbytes == 8 else "<f4")
                for c in range(nc):
                    lv[names[c]].append((tuple(lo), tuple(dims),
                                         raw[c * n:(c + 1) * n].reshape(dims[2], dims[1], dims[0])))
        for n in names:
            out[n].append(lv[n])
        del htok
    return hd, out


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", nargs="?", default=os.path.join(repo, "build", "plt_amr_sample"))
    ap.add_argument("--float32", action="store_true", help="write Float32 FABs (default Float64)")
    ap.add_argument("--nfiles", type=int, default=2, help="data files per level (default 2)")
    args = ap.parse_args(argv)
    import amr_sample
    h = amr_sample.sample_hierarchy()
    write_plotfile(h, args.output, np.float32 if args.float32 else np.float64, args.nfiles)
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(args.output) for f in fs)
    print(f"wrote {args.output}: AMReX plotfile, {h.nlevels} levels, "
          f"{sum(len(b) for b in h.blocks)} boxes, {sum(b.ncells for b in h.all_blocks())} cells, "
          f"{'Float32' if args.float32 else 'Float64'}, {size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
