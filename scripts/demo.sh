#!/usr/bin/env bash
# Install what is missing, build, and run the PHEW Clump Finder through ParaView (pvbatch)
# on the bundled samples. Writes output/: clumps.csv, haloes.csv, dendrogram.csv,
# labelled.vti and clumps.png; output/amr/: the same for the AMR sample (labelled.vthb);
# output/particles/: the same for the particle sample (labelled.vtp).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
out=${1:-output}
mkdir -p "$out"
plugin=$(find build/lib -name PHEW.so | head -n 1)
timeout 600 xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \
  pvbatch scripts/demo.py --plugin "$plugin" --input datasets/sample.vti --output "$out"
# the same on an AMR hierarchy (datasets/amr_sample.vthb, 4 levels)
timeout 600 xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \
  pvbatch scripts/demo_amr.py --plugin "$plugin" --input datasets/amr_sample.vthb --output "$out/amr"
# the same on particles (datasets/particles_sample: 20000 particles, periodic unit box)
timeout 600 xvfb-run -a -s "-screen 0 1280x1024x24 -noreset" \
  pvbatch scripts/demo_particles.py --plugin "$plugin" --input datasets/particles_sample --output "$out/particles"
echo "phew demo: results in $out/"
ls -l "$out"
