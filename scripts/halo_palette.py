"""The haloes' colours of phew's drawings for scripts (the Catalyst scripts, the pictures of
scripts/): the core's phew_colour_rgb, as the GUI shows them. phew_colour_haloes gives each halo
an index: the ten most massive 0-9, the others sharing 10-17 so that neighbours differ; the
drawings carry it as the array HaloColour. tests/python/test_colours.py checks this copy against
the library."""

HALO_PALETTE = [
    (0.894, 0.102, 0.110), (0.216, 0.494, 0.722), (0.302, 0.686, 0.290), (0.596, 0.306, 0.639),
    (1.000, 0.498, 0.000), (1.000, 1.000, 0.200), (0.651, 0.337, 0.157), (0.969, 0.506, 0.749),
    (0.400, 0.761, 0.647), (0.988, 0.553, 0.384), (0.553, 0.827, 0.780), (1.000, 1.000, 0.702),
    (0.745, 0.729, 0.855), (0.502, 0.694, 0.827), (0.992, 0.706, 0.384), (0.702, 0.871, 0.412),
    (0.988, 0.804, 0.898), (0.737, 0.502, 0.741)]
OWN = 10  # the most massive haloes' own colours
NO_STRUCTURE = (0.75, 0.75, 0.75)


def halo_colours(lut, masses, count):
    """Makes `lut` (a ParaView colour map of HaloColour) the GUI's categorical map for `count`
    haloes: the ten largest named by rank and mass (`masses`: the largest, in decreasing order),
    the shared colours as "smaller haloes" when there are more than ten."""
    names = ["%d   %.1e" % (k + 1, m) for k, m in enumerate(masses[:OWN])]
    names += [""] * (OWN - len(names))
    names += ["smaller haloes" if count > OWN else ""] + [""] * (len(HALO_PALETTE) - OWN - 1)
    lut.InterpretValuesAsCategories = 1
    lut.Annotations = [x for k, name in enumerate(names) for x in (str(k), name)]
    lut.IndexedColors = [c for rgb in HALO_PALETTE for c in rgb]
