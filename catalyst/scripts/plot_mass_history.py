"""The mass history of the largest halo, from the merger trees written in situ (clumps.py's
halo_tree.csv, haloes.py's fof_tree.csv, or the direct path's direct_halo_tree.csv).

    /usr/bin/python3 catalyst/scripts/plot_mass_history.py OUTPUT_DIR [--out mass_history.png]
                     [--trees halo_tree.csv fof_tree.csv]

For each tree: the structure with the largest mass at the last step, then its main progenitor
step by step back (the link with MainProgenitor 1), as long as it has one. Mergers on the way
(NumberOfProgenitors 2 or more) are marked. One panel per tree; masses as the tree gives them
(cells: density times volume, in units of the box's total mass for phew_pm; particles: their
Mass array, or their number without one).
"""
import argparse
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {"halo_tree.csv": "PHEW halo (density grid)", "direct_halo_tree.csv": "PHEW halo (density grid, direct)",
          "clump_tree.csv": "PHEW clump (density grid)", "fof_tree.csv": "FoF halo (particles)",
          "hop_tree.csv": "HOP halo (particles)", "pclumps_tree.csv": "PHEW clump (particles)"}


def main_branch(rows):
    """[(time, mass, merger)] of the largest structure of the last step, back in time."""
    steps = sorted({int(r["TimeStep"]) for r in rows})
    by_step = {s: [r for r in rows if int(r["TimeStep"]) == s] for s in steps}
    last = [r for r in by_step[steps[-1]] if int(r["DescendantId"]) >= 0]
    if not last:
        return []
    best = max(last, key=lambda r: (float(r["DescendantMass"]), -int(r["DescendantId"])))
    current, history = int(best["DescendantId"]), []
    for s in reversed(steps):
        links = [r for r in by_step[s] if int(r["DescendantId"]) == current]
        if not links:
            break
        merger = int(links[0]["NumberOfProgenitors"]) >= 2
        history.append((float(links[0]["Time"]), float(links[0]["DescendantMass"]), merger))
        main = [r for r in links if r["MainProgenitor"] == "1"]
        if not main:
            break
        current = int(main[0]["ProgenitorId"])
    return history[::-1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output", help="the folder phew_pm wrote (--output)")
    parser.add_argument("--trees", nargs="+", default=["halo_tree.csv", "fof_tree.csv"])
    parser.add_argument("--out", default=None, help="the PNG (default OUTPUT/mass_history.png)")
    args = parser.parse_args(argv)
    trees = [t for t in args.trees if os.path.exists(os.path.join(args.output, t))]
    if not trees:
        raise SystemExit("no merger tree (%s) in %s" % (", ".join(args.trees), args.output))
    figure, axes = plt.subplots(1, len(trees), figsize=(5.5 * len(trees), 4.2), squeeze=False)
    for ax, tree in zip(axes[0], trees):
        with open(os.path.join(args.output, tree)) as f:
            history = main_branch(list(csv.DictReader(f)))
        ax.set_title(TITLES.get(tree, tree))
        ax.set_xlabel("time")
        particles = "fof" in tree or "hop" in tree or "pclumps" in tree
        ax.set_ylabel("mass (particles)" if particles else "mass (density x volume)")
        if not history:
            ax.text(0.5, 0.5, "no structure at the last step", ha="center", transform=ax.transAxes)
            continue
        times, masses, mergers = zip(*history)
        ax.plot(times, masses, "o-", color="#0067A5", markersize=4, label="largest at the end, and its main progenitors")
        merged = [(t, m) for t, m, x in history if x]
        if merged:
            ax.plot(*zip(*merged), "s", color="#BE0032", markersize=8, fillstyle="none", label="mergers")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    out = args.out or os.path.join(args.output, "mass_history.png")
    figure.savefig(out, dpi=110)
    print("wrote %s" % out)
    return out


if __name__ == "__main__":
    main()
