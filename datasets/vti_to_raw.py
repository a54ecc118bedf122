#!/usr/bin/python3
"""Decode a VTK XML ImageData file (.vti) with inline data into a raw little-endian cube (x
fastest), so the command-line tool can run on the same data as ParaView:

    /usr/bin/python3 datasets/vti_to_raw.py datasets/sample.vti /tmp/sample.raw [--array density]
                                               [--type float32|float64]

Prints the dimensions (cells), the scalar type, spacing and origin, and a matching `phew`
command line. Pure Python + numpy. Reads the files our generator writes: one Piece, data in
format="binary" (base64, UInt32 or UInt64 header, no compression; header and data either as two
base64 blocks, as VTK writes them, or as one) or format="ascii". Appended data and compressed
files are refused with an explanation.
"""
import argparse
import base64
import re
import sys
import xml.etree.ElementTree as ET

import numpy as np

VTK_TYPES = {
    "Int8": "i1", "UInt8": "u1", "Int16": "i2", "UInt16": "u2", "Int32": "i4", "UInt32": "u4",
    "Int64": "i8", "UInt64": "u8", "Float32": "f4", "Float64": "f8",
}


def _decode_binary(text, header_type, little):
    """Inline base64 data: returns the raw bytes of the array."""
    text = re.sub(r"\s+", "", text)
    hb = 8 if header_type == "UInt64" else 4
    hfmt = ("<" if little else ">") + ("u8" if hb == 8 else "u4")
    enc = 4 * ((hb + 2) // 3)  # characters of a separately encoded header
    if "=" in text[:enc]:
        # two blocks: base64(header) base64(data)
        nbytes = int(np.frombuffer(base64.b64decode(text[:enc]), dtype=hfmt)[0])
        data = base64.b64decode(text[enc:])
    else:
        # one block: base64(header + data)
        raw = base64.b64decode(text)
        nbytes = int(np.frombuffer(raw[:hb], dtype=hfmt)[0])
        data = raw[hb:]
    if len(data) < nbytes:
        raise ValueError(f"truncated data: header says {nbytes} bytes, found {len(data)}")
    return data[:nbytes]


def read_vti(path, array=None):
    """Returns (values as a 3D numpy array indexed [z, y, x], spacing, origin, association)."""
    root = ET.parse(path).getroot()
    if root.tag != "VTKFile" or root.get("type") != "ImageData":
        raise ValueError(f"{path}: not a VTK XML ImageData file")
    little = root.get("byte_order", "LittleEndian") == "LittleEndian"
    header_type = root.get("header_type", "UInt32")
    image = root.find("ImageData")
    ext = [int(v) for v in image.get("WholeExtent").split()]
    spacing = [float(v) for v in image.get("Spacing", "1 1 1").split()]
    origin = [float(v) for v in image.get("Origin", "0 0 0").split()]
    pieces = image.findall("Piece")
    if len(pieces) != 1:
        raise ValueError(f"{path}: {len(pieces)} pieces; only single-piece files are supported")
    pext = [int(v) for v in pieces[0].get("Extent").split()]
    if pext != ext:
        raise ValueError(f"{path}: the piece does not cover the whole extent")
    points = [ext[1] - ext[0] + 1, ext[3] - ext[2] + 1, ext[5] - ext[4] + 1]
    found = None
    for assoc in ("CellData", "PointData"):
        node = pieces[0].find(assoc)
        if node is None:
            continue
        for da in node.findall("DataArray"):
            if (array is None and assoc == "CellData") or da.get("Name") == array:
                found = (assoc, da)
                break
        if found:
            break
    if found is None:
        raise ValueError(f"{path}: no array {array!r}" if array else f"{path}: no cell data array")
    assoc, da = found
    if int(da.get("NumberOfComponents", "1")) != 1:
        raise ValueError(f"{path}: array {da.get('Name')!r} is not a scalar")
    dims = [max(p - 1, 1) for p in points] if assoc == "CellData" else points
    dtype = np.dtype(("<" if little else ">") + VTK_TYPES[da.get("type")])
    fmt = da.get("format", "ascii")
    if fmt == "binary":
        if root.get("compressor"):
            raise ValueError(f"{path}: compressed data ({root.get('compressor')}) is not "
                             "supported; save the file without compression")
        values = np.frombuffer(_decode_binary(da.text or "", header_type, little), dtype=dtype)
    elif fmt == "ascii":
        values = np.array((da.text or "").split(), dtype=dtype)
    else:
        raise ValueError(f"{path}: format={fmt!r} (appended data) is not supported; "
                         "save the file with inline binary or ascii data")
    n = dims[0] * dims[1] * dims[2]
    if values.size != n:
        raise ValueError(f"{path}: {values.size} values for {dims[0]}x{dims[1]}x{dims[2]} cells")
    return values.reshape(dims[2], dims[1], dims[0]), spacing, origin, assoc, da.get("Name")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Decode a .vti (inline data) into a raw cube.")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--array", help="array name (default: the first cell data array)")
    ap.add_argument("--type", choices=("float32", "float64"),
                    help="output scalar type (default: the array's own, Float32 or Float64)")
    args = ap.parse_args(argv)
    try:
        values, spacing, origin, assoc, name = read_vti(args.input, args.array)
    except (ValueError, OSError, ET.ParseError) as e:
        print(f"vti_to_raw: error: {e}", file=sys.stderr)
        return 1
    kind = args.type or ("float64" if values.dtype.itemsize == 8 and values.dtype.kind == "f"
                         else "float32")
    out = values.astype("<f8" if kind == "float64" else "<f4")
    out.tofile(args.output)
    nz, ny, nx = values.shape
    print(f"array {name} ({assoc})")
    print(f"dims {nx} {ny} {nz}")
    print(f"type {kind}")
    print(f"spacing {spacing[0]!r} {spacing[1]!r} {spacing[2]!r}")
    print(f"origin {origin[0]!r} {origin[1]!r} {origin[2]!r}")
    print(f"range {float(out.min())!r} {float(out.max())!r}")
    print(f"command phew --input {args.output} --dims {nx} {ny} {nz} --type {kind} "
          f"--spacing {spacing[0]!r} {spacing[1]!r} {spacing[2]!r} "
          f"--origin {origin[0]!r} {origin[1]!r} {origin[2]!r} --threshold T --output PREFIX")
    return 0


if __name__ == "__main__":
    sys.exit(main())
