# script-version: 2
# Test script: loads, then raises at step 1 only.
from paraview.simple import *  # noqa: F401,F403

grid = TrivialProducer(registrationName="grid")


def catalyst_execute(info):
    if info.timestep == 1:
        raise RuntimeError("step 1 fails on purpose")
