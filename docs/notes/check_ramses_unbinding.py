"""Checks the format of RAMSES's unbinding_NNNNN.out* files against its part_ and clump_ files
(docs/notes/ramses-unbinding.md, section 9). A research script for issue 28, not a test.

    /usr/bin/python3 docs/notes/check_ramses_unbinding.py [/work/shared/data/ramses/cosmo32_dm/output_00003]
"""
import numpy as np, glob, os, sys
base = sys.argv[1] if len(sys.argv)>1 else '/work/shared/data/ramses/cosmo32_dm/output_00003'
nout = base[-5:]

def records(fn):
    b = open(fn,'rb').read(); off=0; out=[]
    while off < len(b):
        n = np.frombuffer(b, np.int32, 1, off)[0]
        rec = b[off+4:off+4+n]
        n2 = np.frombuffer(b, np.int32, 1, off+4+n)[0]
        assert n == n2, (fn, off, n, n2)
        out.append(rec); off += 8+n
    return out

def read_part(fn):
    r = records(fn)
    ncpu = np.frombuffer(r[0],np.int32)[0]; ndim=np.frombuffer(r[1],np.int32)[0]
    npart = np.frombuffer(r[2],np.int32)[0]
    # r[3] localseed, r[4] nstar_tot, r[5] mstar_tot, r[6] mstar_lost, r[7] nsink
    x = [np.frombuffer(r[8+i],np.float64) for i in range(3)]
    v = [np.frombuffer(r[11+i],np.float64) for i in range(3)]
    m = np.frombuffer(r[14],np.float64)
    ids = np.frombuffer(r[15],np.int32)
    lev = np.frombuffer(r[16],np.int32)
    fam = np.frombuffer(r[17],np.int8)
    return dict(npart=npart, x=np.array(x).T, v=np.array(v).T, m=m, id=ids, lev=lev, fam=fam, nrec=len(r))

def read_clumps(fn):
    rows=[l.split() for l in open(fn).read().splitlines()[1:] if l.strip()]
    return np.array(rows, float).reshape(-1,12) if rows else np.zeros((0,12))
def read_halos(fn):
    rows=[l.split() for l in open(fn).read().splitlines()[1:] if l.strip()]
    return np.array(rows, float).reshape(-1,7) if rows else np.zeros((0,7))

P=[]; U=[]; C=[]; H=[]
for icpu in (1,2):
    p = read_part(f'{base}/part_{nout}.out{icpu:05d}')
    ur = records(f'{base}/unbinding_{nout}.out{icpu:05d}')
    u = np.frombuffer(ur[0], np.int32)
    sz = os.path.getsize(f'{base}/unbinding_{nout}.out{icpu:05d}')
    print(f'cpu{icpu}: part records={p["nrec"]} npart={p["npart"]} len(x)={len(p["m"])}; unbinding: nrecords={len(ur)} reclen_bytes={len(ur[0])} -> {len(u)} int32 ; filesize={sz} (=4*n+8: {4*len(u)+8==sz})')
    P.append(p); U.append(u)
    C.append(read_clumps(f'{base}/clump_{nout}.txt{icpu:05d}'))
    H.append(read_halos(f'{base}/halo_{nout}.txt{icpu:05d}'))
m = np.concatenate([p['m'] for p in P]); u = np.concatenate(U)
ids = np.concatenate([p['id'] for p in P]); x = np.concatenate([p['x'] for p in P])
C = np.vstack(C); H = np.vstack(H)
print('total particles', len(m), 'unique mass values', np.unique(m), 'min id/max id', ids.min(), ids.max(), 'unique ids', len(np.unique(ids)))
print('unbinding ids: min', u.min(), 'max', u.max(), 'n distinct nonzero', len(np.unique(u[u>0])), 'n zero', (u==0).sum(), 'n negative', (u<0).sum())
mp = m.min()
uid, cnt = np.unique(u[u>0], return_counts=True)
cl = {int(r[0]): r for r in C}; hl = {int(r[0]): r for r in H}
print('clump file rows', len(C), 'halo file rows', len(H))
print('%6s %4s %6s %6s %8s %10s %8s %10s | %7s' % ('id','lev','parent','ncell','npart_u','mass_cl','N=m/mp','halo_mass','in_halo'))
allids = sorted(set(uid.tolist()) | set(cl) | set(hl))
nmatch=0; rows=[]
for i in allids:
    n = cnt[uid==i].sum() if i in uid else 0
    c = cl.get(i); h = hl.get(i)
    mc = c[10] if c is not None else np.nan
    rows.append((i, c[1] if c is not None else -1, c[2] if c is not None else -1, c[3] if c is not None else -1, n, mc, mc/mp, h[6] if h is not None else np.nan, h is not None))
for r in rows:
    print('%6d %4d %6d %6d %8d %10.4e %8.1f %10.4e | %s' % r)
# compare exclusive counts and inclusive sums
par = {int(r[0]): int(r[2]) for r in C}
def halo_of(i):
    seen=0
    while i in par and par[i]!=i and seen<50: i=par[i]; seen+=1
    return i
incl = {}
for i,n in zip(uid,cnt):
    incl[halo_of(int(i))] = incl.get(halo_of(int(i)),0)+n
print('halo checks: halo mass/mp vs sum of unbinding counts over the halo tree')
bad=0
for i,h in hl.items():
    if abs(h[6]/mp - incl.get(i,0))>0.5: bad+=1; print('  mismatch', i, h[6]/mp, incl.get(i,0))
print('  halos with mass == total particles of their tree:', len(hl)-bad, 'of', len(hl))
print('clumps (non-halo) mass_cl/mp vs own unbinding count:')
for i,c in cl.items():
    if int(c[2])!=i:
        print('  clump', i, 'lev', int(c[1]), 'parent', int(c[2]), 'mass/mp', round(c[10]/mp,2), 'own count', int(cnt[uid==i].sum()) if i in uid else 0)
print('ids in unbinding not in clump file:', sorted(set(uid.tolist())-set(cl)))
print('ids in clump file not in unbinding:', sorted(set(cl)-set(uid.tolist())))
print('sum mass in clump file rows', C[:,10].sum(), 'sum over halos', H[:,6].sum(), 'mass of all particles with id>0', m[u>0].sum())
