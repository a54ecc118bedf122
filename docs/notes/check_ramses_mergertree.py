"""Checks phew's merger trees by most-bound particles (docs/merger-trees.md, `phew link`) against
RAMSES's own merger tree on the real RAMSES run cosmo32_dm (../shared/data/ramses/README.md).
A research script, not a test.

What it does
------------
1. For output_00002 (aexp 0.667) and output_00003 (aexp 1.035) it reads, in numpy only (Fortran
   records walked marker by marker), the part files (identity field = particle id), RAMSES's
   unbinding_*.out* (the clump every particle is bound to itself after RAMSES's unbinding, part-file
   order, 0 = none) and clump_*.txt* (index, level, parent; parent == own id for a halo).
2. It gives RAMSES's own grouping to phew: labels = RAMSES clump ids mapped to 0..n-1 (sorted
   RAMSES ids; the mapping is kept), -1 for id 0; parents.csv `Id,ParentId` (a top-level clump,
   parent == own id, gets -1). Then
       phew --snapshot output_0000N --units astro --groups labels.raw --parents parents.csv
            --no-unbind --most-bound 200 --hdf5 WORK/catN.h5 --output WORK/runN
   --no-unbind keeps RAMSES's bound sets exactly (every given member bound), so the comparison tests
   the linking only; phew picks its own 200 most-bound tracers (its own potential and energies).
   It checks that phew's BoundParticleIds of every structure are RAMSES's members (by identity).
3. phew link --output WORK/tree WORK/cat2.h5 WORK/cat3.h5
4. Compares the tree's rows of Step 1 with RAMSES's mergertree_00003.txt*:
   - RAMSES main links: rows clump > 0, progenitor > 0, prog_outputnr 2;
     phew main links: DIRECT rows with MainProgenitorByTracers == 1, and REFOUND rows
     (both sides in RAMSES ids);
   - RAMSES merged progenitors (rows clump < 0: progenitor merged into |clump|) vs phew's
     ORPHAN rows (progenitor lost, HostId = the descendant holding most of its tracers);
   - RAMSES new clumps (progenitor 0) vs phew's descendants with no main progenitor.

How to run
----------
    /usr/bin/python3 docs/notes/check_ramses_mergertree.py [--phew build/bin/phew]
        [--data /work/shared/data/ramses/cosmo32_dm] [--work /tmp/rmt] [--unbind]
(--unbind: let phew re-unbind RAMSES's groups instead of --no-unbind.) Serial, a few seconds.

What it prints
--------------
The counts per output (particles, clumps, whether phew's bound sets are RAMSES's by identity);
phew's tracers of output 2 against RAMSES's own (output_00002/progenitor_data.dat: same sets,
overlap, rank of RAMSES's galaxy particle in phew's list); the tree masses (RAMSES's desc_npart vs
the own bound counts); then the agreement: number of RAMSES main
links, how many phew reproduces exactly (same progenitor -> same descendant), how many differ
(with both sides' exclusive masses in particles, the tracer counts, and RAMSES's merit
n_shared / (1 - M_big/M_small)^2 of pm/merger_tree.f90 find_main_prog/find_main_desc for both
candidates), the merged-progenitor / orphan comparison
and the new-clump / no-main-progenitor comparison.
"""
import argparse
import csv
import glob
import os
import subprocess
import sys

import numpy as np

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--phew", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                               "..", "..", "build", "bin", "phew"))
ap.add_argument("--data", default="/work/shared/data/ramses/cosmo32_dm")
ap.add_argument("--work", default="/tmp/rmt")
ap.add_argument("--unbind", action="store_true", help="let phew unbind (default: --no-unbind)")
args = ap.parse_args()
os.makedirs(args.work, exist_ok=True)


def records(path):
    data = open(path, "rb").read()
    out, at = [], 0
    while at < len(data):
        n = int(np.frombuffer(data, "<i4", 1, at)[0])
        assert int(np.frombuffer(data, "<i4", 1, at + 4 + n)[0]) == n, (path, at)
        out.append(data[at + 4: at + 4 + n])
        at += 8 + n
    return out


def ncpu_of(folder, nout):
    for line in open(os.path.join(folder, f"info_{nout:05d}.txt")):
        if line.startswith("ncpu"):
            return int(line.split("=")[1])


def read_output(nout):
    """ids, masses, RAMSES clump of each particle (part-file order), {clump: parent}."""
    folder = os.path.join(args.data, f"output_{nout:05d}")
    ids, mass, clump, fam, parent = [], [], [], [], {}
    for cpu in range(1, ncpu_of(folder, nout) + 1):
        r = records(os.path.join(folder, f"part_{nout:05d}.out{cpu:05d}"))
        npart = int(np.frombuffer(r[2], "<i4")[0])
        # part_file_descriptor: x y z vx vy vz mass(d) identity(i) levelp(i) family(b) tag(b)
        mass.append(np.frombuffer(r[14], "<f8"))
        ids.append(np.frombuffer(r[15], "<i4").astype(np.int64))
        fam.append(np.frombuffer(r[17], "<i1"))
        u = np.frombuffer(records(os.path.join(folder, f"unbinding_{nout:05d}.out{cpu:05d}"))[0], "<i4")
        assert len(u) == npart == len(mass[-1])
        clump.append(u.astype(np.int64))
        for line in open(os.path.join(folder, f"clump_{nout:05d}.txt{cpu:05d}")).read().splitlines()[1:]:
            if line.strip():
                w = line.split()
                parent[int(w[0])] = int(w[2])
    fam = np.concatenate(fam)
    assert np.all(fam == 1), "not all particles are DM: phew --snapshot reads family DM only"
    return folder, np.concatenate(ids), np.concatenate(mass), np.concatenate(clump), parent


def read_ramses_tree(nout):
    rows = []
    for path in sorted(glob.glob(os.path.join(args.data, f"output_{nout:05d}", f"mergertree_{nout:05d}.txt*"))):
        for line in open(path).read().splitlines()[1:]:
            if line.strip():
                w = line.split()
                rows.append((int(w[0]), int(w[1]), int(w[2]), float(w[3]), float(w[4])))
    return rows


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p


cat = {}
for nout in (2, 3):
    folder, ids, mass, clump, parent = read_output(nout)
    rids = sorted(set(np.unique(clump[clump > 0]).tolist()))
    empty = sorted(set(parent) - set(rids))      # clumps listed with no particle after unbinding
    missing = sorted(set(rids) - set(parent))
    assert not missing, f"unbinding ids not in clump files: {missing}"
    to_phew = {r: k for k, r in enumerate(rids)}
    labels = np.array([to_phew.get(int(c), -1) for c in clump], dtype="<i8")
    labels.tofile(os.path.join(args.work, f"labels{nout}.raw"))
    with open(os.path.join(args.work, f"parents{nout}.csv"), "w") as f:
        f.write("Id,ParentId\n")
        for r in rids:
            p = parent[r]
            if p != r and p not in to_phew:   # parent without particles: climb up
                while p != parent.get(p, p) and p not in to_phew:
                    p = parent[p]
            f.write(f"{to_phew[r]},{-1 if (p == r or p not in to_phew) else to_phew[p]}\n")
    h5 = os.path.join(args.work, f"cat{nout}.h5")
    cmd = [args.phew, "--snapshot", folder, "--units", "astro", "--groups", os.path.join(args.work, f"labels{nout}.raw"),
           "--parents", os.path.join(args.work, f"parents{nout}.csv"), "--most-bound", "200",
           "--hdf5", h5, "--output", os.path.join(args.work, f"run{nout}")]
    if not args.unbind:
        cmd.insert(-2, "--no-unbind")
    if os.path.exists(h5):
        os.remove(h5)
    run(cmd)
    import h5py
    with h5py.File(h5, "r") as f:
        g = f["Structures"]
        sid = g["StructureId"][...]
        off, nown = g["BoundOffset"][...], g["NumberOfBoundParticles"][...]
        bids = g["BoundParticleIds"][...]
        same = 0
        counts = {}
        for k, s in enumerate(sid):
            own = np.sort(bids[off[k]: off[k] + nown[k]])
            ref = np.sort(ids[clump == rids[s]])
            same += np.array_equal(own, ref)
            counts[rids[s]] = len(own)
        mb = g["MostBound"]
        ntr = mb["Count"][...]
        tracers = {rids[int(k)]: mb["ParticleIds"][o: o + n] for k, o, n in
                   zip(mb["StructureId"][...], mb["Offset"][...], ntr)}
    nsub = sum(1 for r in rids if parent[r] != r)
    print(f"output_{nout:05d}: {len(ids)} particles, ids {ids.min()}..{ids.max()} unique {len(np.unique(ids)) == len(ids)}; "
          f"RAMSES clumps with bound particles {len(rids)} ({nsub} subclumps), listed without particles {empty}; "
          f"phew structures {len(sid)}, own bound sets equal to RAMSES's (by identity): {same}/{len(sid)}; "
          f"tracers per structure {ntr.min()}..{ntr.max()}")
    cat[nout] = dict(rids=rids, counts=counts, parent=parent, tracers=tracers, ids=ids, clump=clump,
                     mp=float(mass.min()))


def ramses_tracers(nout):
    """RAMSES's own tracers of output nout's clumps (progenitor_data.dat, MPI_FILE_WRITE_ORDERED:
    each array rank after rank; 32-bit ids (no LONGINT), the galaxy particle negative): {clump: ids
    most bound first, the CPUs' pieces one after the other}, {clump: mass written (exclusive, code
    units)}, {clump: its galaxy particle (the most bound)}."""
    folder = os.path.join(args.data, f"output_{nout:05d}")
    nprogs, nh, npart, npast = np.frombuffer(records(os.path.join(folder, "progenitorcount.dat"))[0], "<i4")
    b = open(os.path.join(folder, "progenitor_data.dat"), "rb").read()
    pid = np.frombuffer(b, "<i4", nh, 0)
    cnt = np.frombuffer(b, "<i4", nh, 4 * nh)
    plist = np.frombuffer(b, "<i4", npart, 8 * nh)
    mass = np.frombuffer(b, "<f8", nh, 8 * nh + 4 * npart)
    out, m, gal, at = {}, {}, {}, 0
    for c, n, mm in zip(pid, cnt, mass):
        out.setdefault(int(c), []).extend(np.abs(plist[at: at + n]).tolist())
        for i in plist[at: at + n][plist[at: at + n] < 0]:
            gal[int(c)] = -int(i)
        m[int(c)] = mm
        at += n
    return out, m, gal


def excl_mass(nout, c):
    """RAMSES's tree mass (use_exclusive_mass), in particles: the clump's own bound particles. Its
    wiki says haloes count their substructure too, but the desc_npart it wrote for the one halo
    with a subclump here (clump 7 at output 3) is its own count (checked below), so own counts."""
    return cat[nout]["counts"].get(c, 0)


def incl_mass(nout, c):
    cc, kids, grow = cat[nout], {c}, True
    while grow:
        new = {k for k, p in cc["parent"].items() if p in kids and k not in kids}
        grow = bool(new)
        kids |= new
    return sum(cc["counts"].get(k, 0) for k in kids)


rtr, rmass, rgal = ramses_tracers(2)
ptr = cat[2]["tracers"]
same_set = sum(1 for c in ptr if set(ptr[c].tolist()) == set(rtr.get(c, [])))
frac = [len(set(ptr[c].tolist()) & set(rtr.get(c, []))) / max(len(ptr[c]), 1) for c in ptr]
gal_rank = [ptr[c].tolist().index(rgal[c]) if rgal.get(c) in ptr[c].tolist() else -1 for c in ptr]
mass_ok = sum(1 for c in ptr if round(rmass.get(c, -1) / cat[2]["mp"]) == excl_mass(2, c))
print(f"tracers of output 2 (RAMSES's progenitor_data.dat vs phew's MostBound): {len(rtr)} RAMSES clumps, "
      f"{len(ptr)} phew; same set {same_set}/{len(ptr)}; share of phew's tracers among RAMSES's: mean "
      f"{100 * np.mean(frac):.1f}%, min {100 * np.min(frac):.1f}%; RAMSES's most-bound (galaxy) particle is phew's most "
      f"bound for {gal_rank.count(0)}/{len(ptr)}, its rank in phew's list: median {int(np.median(gal_rank))}, max "
      f"{max(gal_rank)} (-1: absent: {gal_rank.count(-1)}); RAMSES's tree mass = exclusive count for {mass_ok}/{len(ptr)}")
lab3 = dict(zip(cat[3]["ids"].tolist(), cat[3]["clump"].tolist()))


def ramses_shared(p, d):
    return sum(1 for i in rtr.get(p, []) if lab3[i] == d)

tree = os.path.join(args.work, "tree")
run([args.phew, "link", "--output", tree, os.path.join(args.work, "cat2.h5"), os.path.join(args.work, "cat3.h5")])
rows = [r for r in csv.DictReader(open(tree + "-tree.csv")) if int(r["Step"]) == 1]
r2, r3 = cat[2]["rids"], cat[3]["rids"]
P = lambda i: r2[int(i)] if int(i) >= 0 else -1
D = lambda i: r3[int(i)] if int(i) >= 0 else -1

phew_main = {}      # RAMSES descendant id -> RAMSES progenitor id
phew_orphan = {}    # progenitor -> host
shared = {}         # (prog, desc) -> shared tracers
ntracers = {}
for r in rows:
    kind = int(r["Kind"])
    p = P(r["ProgenitorId"])
    ntracers[p] = int(r["NumberOfTracers"])
    if kind == 0:
        shared[(p, D(r["DescendantId"]))] = int(r["SharedTracers"])
        if int(r["MainProgenitorByTracers"]) == 1:
            phew_main[D(r["DescendantId"])] = p
    elif kind == 2:
        phew_main[D(r["DescendantId"])] = p
    elif kind == 1:
        phew_orphan[p] = D(r["HostId"])

rt = read_ramses_tree(3)
r_main = {c: p for c, p, o, m, n in rt if c > 0 and p > 0 and o == 2}
r_other = {c: (p, o) for c, p, o, m, n in rt if c > 0 and p < 0}
r_new = sorted(c for c, p, o, m, n in rt if c > 0 and p == 0)
r_merged = {p: -c for c, p, o, m, n in rt if c < 0}
r_npart = {c: n for c, p, o, m, n in rt if c > 0}
m2, m3 = cat[2]["counts"], cat[3]["counts"]


def merit(p, d):
    a, b = excl_mass(2, p), excl_mass(3, d)
    x = abs(1 - max(a, b) / max(min(a, b), 1))
    return shared.get((p, d), 0) / max(x, 1e-100) ** 2


print()
print(f"descendants at output 3 in RAMSES's tree: {len(r_npart)}; its desc_npart equal to the exclusive count "
      f"used here: {sum(1 for c, n in r_npart.items() if excl_mass(3, c) == n)}/{len(r_npart)} "
      f"differ: {[(c, n, excl_mass(3, c)) for c, n in r_npart.items() if excl_mass(3, c) != n]}; "
      f"haloes with substructure (clump, own, inclusive, desc_npart): "
      f"{[(c, excl_mass(3, c), incl_mass(3, c), r_npart.get(c)) for c in r3 if incl_mass(3, c) != excl_mass(3, c)]}")
print(f"RAMSES main links (clump>0, progenitor>0 from output 2): {len(r_main)}")
exact = [c for c, p in r_main.items() if phew_main.get(c) == p]
print(f"  phew reproduces exactly: {len(exact)}/{len(r_main)} ({100.0 * len(exact) / max(len(r_main), 1):.1f}%)")
differ = [c for c in r_main if c not in exact]
print(f"  differ: {len(differ)}")
for c in differ:
    p = r_main[c]
    q = phew_main.get(c, -1)
    print(f"    desc {c} (M {excl_mass(3, c)}): RAMSES prog {p} (M {excl_mass(2, p)}, shared tracers {shared.get((p, c), 0)}"
          f"/{ntracers.get(p)}, merit {merit(p, c):.3g}); phew prog {q}"
          + (f" (M {excl_mass(2, q)}, shared {shared.get((q, c), 0)}/{ntracers.get(q)}, merit {merit(q, c):.3g})" if q >= 0 else "")
          + f"; with RAMSES's tracers: shared {ramses_shared(p, c)} and {ramses_shared(q, c) if q >= 0 else '-'}"
          + f"; RAMSES prog {p}'s tracers by phew's descendant: {sorted(((n, d) for (x, d), n in shared.items() if x == p), reverse=True)}"
          + f"; merit of {p} -> its phew descendant(s): {[(d, round(merit(p, d), 3)) for (x, d) in shared if x == p]}"
          + (f"; RAMSES prog {p} in phew: " + ("orphan, host %d" % phew_orphan[p] if p in phew_orphan
                                                 else "main prog of %s" % [d for d, x in phew_main.items() if x == p])))
extra = {c: p for c, p in phew_main.items() if c not in r_main}
print(f"phew main links whose descendant has no RAMSES main link from output 2: {len(extra)} {sorted(extra.items())}")
print(f"RAMSES links to older outputs (progenitor<0): {r_other}")
print()
print(f"RAMSES merged progenitors (clump<0 rows): {len(r_merged)} {sorted(r_merged.items())} (progenitor: into)")
print(f"phew ORPHAN rows (progenitors lost): {len(phew_orphan)} {sorted(phew_orphan.items())} (progenitor: host)")
both = set(r_merged) & set(phew_orphan)
print(f"  lost on both sides: {len(both)}; same host as RAMSES's 'into': {sum(1 for p in both if phew_orphan[p] == r_merged[p])}")
print(f"  RAMSES merged, phew not orphan: {sorted(set(r_merged) - both)}; phew orphan, not RAMSES-merged: {sorted(set(phew_orphan) - both)}")
gone = sorted(set(r2) - set(r_main.values()) - set(r_merged) - {p for p, o in r_other.values()})
print(f"  output-2 clumps neither main progenitor nor merged in RAMSES's tree: {gone}")
print()
phew_new = sorted(set(r3) - set(phew_main))
print(f"RAMSES new clumps (progenitor 0): {len(r_new)} {r_new}")
print(f"phew descendants without a main progenitor: {len(phew_new)} {phew_new}")
print(f"  in both: {len(set(r_new) & set(phew_new))}")
