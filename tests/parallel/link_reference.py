"""An independent re-implementation of docs/merger-trees.md and of the links by shared mass
(docs/insitu.md), on plain Python dicts: the rows phew link must write."""
import math

NAN = float("nan")


def shared_links(earlier, later):
    """earlier, later: dict particle id -> label (>= 0). Rows by shared count, as dicts."""
    pm, dm, shared = {}, {}, {}
    for i, p in earlier.items():
        pm[p] = pm.get(p, 0) + 1
    for i, d in later.items():
        dm[d] = dm.get(d, 0) + 1
    for i, p in earlier.items():
        if i in later:
            key = (p, later[i])
            shared[key] = shared.get(key, 0) + 1
    main_d, main_p = {}, {}
    for (p, d), s in sorted(shared.items()):
        if p not in main_d or s > shared[(p, main_d[p])]:
            main_d[p] = d
        if d not in main_p or s > shared[(main_p[d], d)]:
            main_p[d] = p
    rows = []
    for (p, d), s in shared.items():
        rows.append(dict(ProgenitorId=p, DescendantId=d, ProgenitorMass=pm[p], DescendantMass=dm[d],
                         SharedMassEarlier=s, SharedMassLater=s, ProgenitorFraction=s / pm[p],
                         DescendantFraction=s / dm[d], MainProgenitor=int(main_p[d] == p),
                         MainDescendant=int(main_d[p] == d),
                         NumberOfProgenitors=sum(1 for q in main_d if main_d[q] == d),
                         NumberOfDescendants=sum(1 for e in main_p if main_p[e] == p)))
    for p in pm:
        if p not in main_d:
            rows.append(dict(ProgenitorId=p, DescendantId=-1, ProgenitorMass=pm[p], DescendantMass=0.0))
    for d in dm:
        if d not in main_p:
            rows.append(dict(ProgenitorId=-1, DescendantId=d, ProgenitorMass=0.0, DescendantMass=dm[d]))
    for r in rows:
        for k in ("SharedMassEarlier", "SharedMassLater", "ProgenitorFraction", "DescendantFraction",
                  "MainProgenitor", "MainDescendant", "NumberOfProgenitors", "NumberOfDescendants"):
            r.setdefault(k, 0)
        r.update(ProgenitorStep=-1, Kind=0, OrphanSteps=0, NumberOfTracers=0, SharedTracers=0,
                 MainProgenitorByTracers=0, MainDescendantByTracers=0, HostId=-1)
    return rows, dm


class Entry:
    def __init__(self, id, step, age, mass, tracers):
        self.id, self.step, self.age, self.mass, self.tracers = id, step, age, mass, list(tracers)


def link(earlier, later, entries, max_orphan_steps):
    """One step: (rows, orphans carried on). entries: the earlier step's Entry list."""
    rows, later_mass = shared_links(earlier, later)
    counts, best = {}, {}
    for e, x in enumerate(entries):
        c = {}
        for j, t in enumerate(x.tracers):
            d = later.get(t, -1)
            if d >= 0:
                n, first = c.get(d, (0, j))
                c[d] = (n + 1, first)
        counts[e] = c
        if c:
            best[e] = min(c, key=lambda d: (-c[d][0], c[d][1]))
    main, found = {}, {}
    key = lambda e, d: (counts[e][d][0], entries[e].step, entries[e].mass, -entries[e].id)
    for e in best:
        if entries[e].age == 0:
            d = best[e]
            if d not in main or key(e, d) > key(main[d], d):
                main[d] = e
    for e in best:
        if entries[e].age > 0:
            d = best[e]
            if d not in main and (d not in found or key(e, d) > key(found[d], d)):
                found[d] = e
    live = {x.id: e for e, x in enumerate(entries) if x.age == 0}
    seen = set()
    for r in rows:
        e = live.get(r["ProgenitorId"]) if r["ProgenitorId"] >= 0 else None
        if e is None:
            continue
        r["ProgenitorStep"], r["NumberOfTracers"] = entries[e].step, len(entries[e].tracers)
        d = r["DescendantId"]
        if d < 0:
            continue
        r["SharedTracers"] = counts[e].get(d, (0, 0))[0]
        r["MainDescendantByTracers"] = int(best.get(e) == d)
        r["MainProgenitorByTracers"] = int(main.get(d) == e)
        if best.get(e) == d:
            seen.add(e)

    def tracer_row(e, kind, age):
        x, d = entries[e], best.get(e, -1)
        return dict(ProgenitorId=x.id, DescendantId=d if kind == 2 else -1, ProgenitorMass=x.mass,
                    DescendantMass=later_mass[d] if kind == 2 else NAN, SharedMassEarlier=NAN, SharedMassLater=NAN,
                    ProgenitorFraction=NAN, DescendantFraction=NAN, MainProgenitor=0, MainDescendant=0,
                    NumberOfProgenitors=0, NumberOfDescendants=0, ProgenitorStep=x.step, Kind=kind,
                    OrphanSteps=age, NumberOfTracers=len(x.tracers),
                    SharedTracers=counts[e][d][0] if d >= 0 else 0, MainProgenitorByTracers=int(kind == 2),
                    MainDescendantByTracers=int(kind == 2), HostId=d if kind == 1 else -1)

    carried = []
    for e, x in enumerate(entries):
        d = best.get(e, -1)
        if x.age == 0:
            if d >= 0 and e not in seen:
                raise AssertionError("a tracer pair without shared particles: not expected in these tests")
            if (d < 0 or main.get(d) != e) and max_orphan_steps >= 1 and x.tracers:
                rows.append(tracer_row(e, 1, 1))
                carried.append(Entry(x.id, x.step, 1, x.mass, x.tracers))
        elif d >= 0 and found.get(d) == e:
            rows.append(tracer_row(e, 2, x.age))
        elif x.age + 1 <= max_orphan_steps:
            rows.append(tracer_row(e, 1, x.age + 1))
            carried.append(Entry(x.id, x.step, x.age + 1, x.mass, x.tracers))
    rows.sort(key=lambda r: (r["DescendantId"] < 0, r["DescendantId"], r["Kind"], r["ProgenitorStep"],
                             r["ProgenitorId"]))
    carried.sort(key=lambda x: (x.step, x.id))
    return rows, carried


def tree(labels, tracers, max_orphan_steps):
    """labels: per step dict id -> label; tracers: per step list of Entry (the step's own).
    Rows of every step with their Step."""
    out, entries = [], tracers[0]
    for s in range(1, len(labels)):
        rows, carried = link(labels[s - 1], labels[s], entries, max_orphan_steps)
        for r in rows:
            r["Step"] = s
        out += rows
        entries = tracers[s] + carried
    return out


def same(a, b):
    if isinstance(b, float) and math.isnan(b):
        return isinstance(a, float) and math.isnan(a)
    return abs(a - b) <= 1e-12 * max(1.0, abs(b))
