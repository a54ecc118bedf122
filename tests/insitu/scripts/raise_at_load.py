# script-version: 2
# Test script: fails while it loads.
from paraview.simple import *  # noqa: F401,F403

grid = TrivialProducer(registrationName="grid")
raise ValueError("this script is broken on purpose")
