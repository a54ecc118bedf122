#!/usr/bin/python3
"""Particles held as arrays (raw little-endian files or numpy .npy files) into a VTK point set
(.vtp, VTK's XML PolyData, binary), which ParaView opens with File > Open: one point and one
vertex per particle, the other arrays as point data.

    /usr/bin/python3 scripts/points_to_vtp.py --positions pos.raw --dtype float32 \\
        [--velocities vel.raw] [--masses m.raw] [--ids ids.raw] [--scale S] [--array NAME=FILE ...] \\
        --output particles.vtp

Raw files hold x, y, z per particle (velocities likewise; masses and --array files one value
per particle) in --dtype; ids are int64. A .npy file says its own type and shape. --scale
multiplies the positions (e.g. 50 for box units of a 50 Mpc/h box). Point arrays are named
velocity, mass and id (the names the docs' examples use). numpy only; no VTK needed.
"""
import argparse
import sys

import numpy as np

VTK_TYPES = {"f4": "Float32", "f8": "Float64", "i1": "Int8", "i2": "Int16", "i4": "Int32", "i8": "Int64",
             "u1": "UInt8", "u2": "UInt16", "u4": "UInt32", "u8": "UInt64"}


def load(path, dtype, components):
    if path.endswith(".npy"):
        values = np.load(path)
    else:
        values = np.fromfile(path, dtype=np.dtype(dtype).newbyteorder("<"))
    values = np.ascontiguousarray(values).reshape(-1, components) if components > 1 else values.reshape(-1)
    return values.astype(values.dtype.newbyteorder("<"), copy=False)


def data_array(values, name, offset):
    kind = VTK_TYPES[values.dtype.str[1:]]
    components = values.shape[1] if values.ndim == 2 else 1
    label = f' Name="{name}"' if name else ""
    return (f'<DataArray type="{kind}"{label} NumberOfComponents="{components}" format="appended" '
            f'offset="{offset}"/>')


def write_vtp(path, points, point_data):
    n = len(points)
    connectivity = np.arange(n, dtype="<i8")
    offsets = np.arange(1, n + 1, dtype="<i8")
    blocks, offset, xml_arrays = [], 0, {}
    for key, name, values in [("points", None, points), ("connectivity", "connectivity", connectivity),
                              ("offsets", "offsets", offsets)] + [("data", k, v) for k, v in point_data.items()]:
        raw = np.ascontiguousarray(values).tobytes()
        xml_arrays.setdefault(key, []).append(data_array(values, name, offset))
        blocks.append(np.uint64(len(raw)).tobytes() + raw)
        offset += 8 + len(raw)
    head = ['<?xml version="1.0"?>',
            '<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" header_type="UInt64">',
            "<PolyData>",
            f'<Piece NumberOfPoints="{n}" NumberOfVerts="{n}" NumberOfLines="0" NumberOfStrips="0" '
            'NumberOfPolys="0">',
            "<PointData>", *xml_arrays.get("data", []), "</PointData>",
            "<Points>", *xml_arrays["points"], "</Points>",
            "<Verts>", *xml_arrays["connectivity"], *xml_arrays["offsets"], "</Verts>",
            "</Piece>", "</PolyData>", '<AppendedData encoding="raw">']
    with open(path, "wb") as f:
        f.write(("\n".join(head) + "\n_").encode())
        for block in blocks:
            f.write(block)
        f.write(b"\n</AppendedData>\n</VTKFile>\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", required=True)
    ap.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    ap.add_argument("--velocities")
    ap.add_argument("--masses")
    ap.add_argument("--ids")
    ap.add_argument("--array", action="append", default=[], metavar="NAME=FILE")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--output", required=True)
    args = ap.parse_args()
    points = load(args.positions, args.dtype, 3)
    if args.scale != 1.0:
        points = (points * args.scale).astype(points.dtype)
    data = {}
    for name, path, dtype, components in (("velocity", args.velocities, args.dtype, 3),
                                          ("mass", args.masses, args.dtype, 1), ("id", args.ids, "int64", 1)):
        if path:
            data[name] = load(path, dtype, components)
    for item in args.array:
        name, _, path = item.partition("=")
        data[name] = load(path, args.dtype, 1)
    for name, values in data.items():
        if len(values) != len(points):
            sys.exit(f"points_to_vtp: {name} has {len(values)} values for {len(points)} particles")
    write_vtp(args.output, points, data)
    print(f"{args.output}: {len(points)} particles, point arrays {sorted(data) or 'none'}")


if __name__ == "__main__":
    main()
