"""The haloes' colours outside the library: the scripts' copy of the palette
(scripts/halo_palette.py, HALO_PALETTE, read without ParaView; the Catalyst scripts and the
pictures use it) is the library's phew_colour_rgb, colour for colour."""
import ast
import os

from phew._ffi import ffi, lib

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "halo_palette.py")


def script_palette():
    tree = ast.parse(open(SCRIPT).read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "HALO_PALETTE" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("no HALO_PALETTE in %s" % SCRIPT)


def test_scripts_palette_is_the_library_palette():
    palette = script_palette()
    rgb = ffi.new("double[3]")
    lib.phew_colour_rgb(len(palette), rgb)  # one past the last: the grey of no structure
    assert len(palette) == 18 and tuple(rgb) == (0.75, 0.75, 0.75)
    for k, colour in enumerate(palette):
        lib.phew_colour_rgb(k, rgb)
        assert tuple(rgb) == colour, "colour %d: library %s, script %s" % (k, tuple(rgb), colour)
    lib.phew_colour_rgb(-1, rgb)
    assert tuple(rgb) == (0.75, 0.75, 0.75)
