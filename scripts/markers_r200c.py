"""The haloes of the RAMSES sample as spheres of radius R200c at their centres (the Markers
output of the PHEW Clump Finder with the halo properties on), over the particles: the picture
docs/images/markers_r200c.png of docs/gui.md. Run from the repository's root, with a display:

    xvfb-run -a -s "-screen 0 1280x1024x24" pvbatch scripts/markers_r200c.py [OUTPUT.png]
"""
import sys

from paraview.simple import *  # noqa: F401,F403

LoadPlugin("build/lib/PHEW/PHEW.so", remote=False, ns=globals())
view = CreateView("RenderView")  # first: its X connection (see scripts/demo.py)
view.ViewSize = [800, 640]
view.OrientationAxesVisibility = 0
view.UseColorPaletteForBackground = 0
view.Background = [0.02, 0.03, 0.08]

# RAMSES's particles in astronomers' units (Mpc/h, Msun/h, km/s) give the cosmology.
snapshot = RAMSESOutputReader(FileName=["datasets/ramses_cosmo32/output_00003/info_00003.txt"],
                              Units=1)  # noqa: F821 (from the plugin)
particles = OutputPort(snapshot, 1)
finder = PHEWClumpFinder(Input=particles, Mass=["POINTS", "Masses"],  # noqa: F821
                         Velocity=["POINTS", "Velocities"], Id=["POINTS", "ParticleIDs"])

# The glyphs as docs/gui.md shows them: a sphere of radius GlyphRadius (= R200c) per halo.
haloes = ExtractBlock(Input=OutputPort(finder, 6), Selectors=["/Root/HaloCentres"])
spheres = Glyph(Input=haloes, GlyphType="Sphere")
spheres.OrientationArray = ["POINTS", "No orientation array"]
spheres.ScaleArray = ["POINTS", "GlyphRadius"]
spheres.ScaleFactor = 1.0          # after creation: ParaView sets it from the data's size
spheres.GlyphMode = "All Points"   # the default glyphs a sample of the points only
spheres.GlyphType.Radius = 1.0     # ParaView's sphere has radius 0.5
spheres.GlyphType.ThetaResolution = spheres.GlyphType.PhiResolution = 24

dots = Show(particles, view)
dots.SetRepresentationType("Points")
dots.ColorArrayName = ["POINTS", ""]
dots.AmbientColor = dots.DiffuseColor = [0.6, 0.66, 0.78]
dots.PointSize = 1.0
dots.Opacity = 0.8
shown = Show(spheres, view)
ColorBy(shown, ("POINTS", "GlyphRadius"))
shown.LookupTable = GetColorTransferFunction("GlyphRadius")
shown.LookupTable.ApplyPreset("Cool to Warm", True)
bar = GetScalarBar(shown.LookupTable, view)
bar.Title = "R200c (Mpc/h)"
bar.ComponentTitle = ""
shown.SetScalarBarVisibility(view, True)
title = Text(Text="PHEW haloes of the RAMSES sample (a = 1): spheres of radius R200c\n"
                  "at the bound particle of lowest potential; the particles in grey")
label = Show(title, view)
label.FontSize = 14
label.WindowLocation = "Upper Center"

# Along z onto the quarter of the 25 Mpc/h box with the most haloes, so that they are seen.
Render(view)
view.CameraPosition = [8.0, 9.0, 60.0]
view.CameraFocalPoint = [8.0, 9.0, 12.5]
view.CameraViewUp = [0.0, 1.0, 0.0]
view.CameraParallelProjection = 1
view.CameraParallelScale = 7.0
SaveScreenshot(sys.argv[1] if len(sys.argv) > 1 else "output/markers_r200c.png", view,
               ImageResolution=[800, 640], CompressionLevel="9")
