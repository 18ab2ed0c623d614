#!/usr/bin/env python3
"""The op table of a trace, recomputed with the json module,
independently of kt's code, for tests/t/ops.sh.

    ops.py TRACE [shape] > want.tsv

One row per (kind, name), or with "shape" per (kind, name, shapes),
sorted:

    kind name [shapes] calls cpu_total cpu_self gpu_self gpu_total launches
    longest longest_row

Times in ns (exact, from the decimal text); longest_row is kind:INDEX
of the longest call (the first in the thread's time order on a tie).
The definitions, in this file's own terms (kt-ops(1) states kt's):

- The calls: X events of category cpu_op (2021 traces: Operator),
  user_annotation, cuda_runtime (Runtime) and cuda_driver.  One named
  ProfilerStep#N (of cpu_op or user_annotation) is a step, all steps
  one row named "ProfilerStep#*".  python_function events are no call.
- The parent of a call is, among the calls of its (rank, pid, tid) that
  contain it, the innermost: P contains C when P starts no later, ends
  no earlier, and C starts before P ends (or P has no duration); the
  innermost is the one starting latest, then the shortest, then the
  later in the file.
- Self CPU: the duration less the children's durations, at least 0.
- A GPU activity (kernel, gpu_memcpy, gpu_memset; 2021: Kernel, Memcpy,
  Memset) belongs to the call with its args.correlation (cuda_runtime or
  cuda_driver, same args.rank), or rather to that call's innermost
  ancestor that is a cpu_op, user_annotation or step, when it has one.
  Self GPU: the durations of the activities it owns; total GPU: with
  those of its descendants.
- shapes: a cpu_op's args."Input Dims" as compact JSON ("[[8,16],[]]"),
  else "-".
"""
import gzip
import json
import sys
from decimal import Decimal

f = sys.argv[1]
by_shape = sys.argv[2:] == ['shape']
with (gzip.open if f.endswith('.gz') else open)(f, 'rt') as fh:
    d = json.load(fh, parse_float=Decimal)
evs = d['traceEvents'] if isinstance(d, dict) else d
srcidx = d.get('ktSourceIndex') if isinstance(d, dict) else None
if not isinstance(srcidx, list) or len(srcidx) != len(evs):
    srcidx = list(range(len(evs)))

ACT = {'kernel', 'gpu_memcpy', 'gpu_memset', 'Kernel', 'Memcpy', 'Memset'}
KIND = {'cpu_op': 'cpu_op', 'Operator': 'cpu_op',
        'user_annotation': 'user_annotation',
        'cuda_runtime': 'cuda_runtime', 'Runtime': 'cuda_runtime',
        'cuda_driver': 'cuda_driver'}
OWNER = {'cpu_op', 'user_annotation', 'step'}


def ns(x):
    return int(Decimal(str(x)) * 1000)


def rank(e):
    r = (e.get('args') or {}).get('rank')
    return r if isinstance(r, int) and not isinstance(r, bool) else None


calls = []          # [ts, dur, i, kind, name, thread]
bythread = {}
corr = {}
acts = []
for i, e in enumerate(evs):
    if not isinstance(e, dict) or e.get('ph') != 'X' or 'ts' not in e:
        continue
    cat = e.get('cat')
    ts = ns(e['ts'])
    dur = max(ns(e['dur']), 0) if 'dur' in e else 0
    if cat in ACT:
        acts.append((dur, e))
        continue
    if cat not in KIND:
        continue
    kind = KIND[cat]
    name = e.get('name', '')
    if kind in ('cpu_op', 'user_annotation') and isinstance(name, str) \
            and name.startswith('ProfilerStep#'):
        kind, name = 'step', 'ProfilerStep#*'
    th = (rank(e), str(e.get('pid')), str(e.get('tid')))
    dims = (e.get('args') or {}).get('Input Dims')
    shp = json.dumps(dims, separators=(',', ':')) \
        if kind == 'cpu_op' and isinstance(dims, list) else '-'
    c = [ts, dur, i, kind, name, th, shp]
    calls.append(c)
    bythread.setdefault(th, []).append(c)
    if kind in ('cuda_runtime', 'cuda_driver'):
        k = (e.get('args') or {}).get('correlation')
        if isinstance(k, int):
            corr.setdefault((rank(e), k), c)

parent = {}
for th, cs in bythread.items():
    # Start order, the longest first: every container of a call comes
    # before it; the open containers form a chain.
    cs.sort(key=lambda c: (c[0], -c[1], c[2]))
    chain = []
    for c in cs:
        while chain:
            p = chain[-1]
            if p[0] <= c[0] and c[0] + c[1] <= p[0] + p[1] and \
                    (c[0] < p[0] + p[1] or p[1] == 0):
                break
            chain.pop()
        parent[c[2]] = chain[-1] if chain else None
        chain.append(c)

kids = {}
for c in calls:
    p = parent[c[2]]
    if p is not None:
        kids[p[2]] = kids.get(p[2], 0) + c[1]
gself = {}
for dur, e in acts:
    k = (e.get('args') or {}).get('correlation')
    c = corr.get((rank(e), k)) if isinstance(k, int) else None
    if c is None:
        continue
    own = c
    p = parent[c[2]]
    while p is not None:
        if p[3] in OWNER:
            own = p
            break
        p = parent[p[2]]
    g = gself.setdefault(own[2], [0, 0])
    g[0] += dur
    g[1] += 1
gtotal = {}
# Children end after their parents start: the latest starts first.
for c in sorted(calls, key=lambda c: (c[0], -c[1], c[2]), reverse=True):
    t = gtotal.get(c[2], 0) + gself.get(c[2], [0, 0])[0]
    gtotal[c[2]] = t
    p = parent[c[2]]
    if p is not None:
        gtotal[p[2]] = gtotal.get(p[2], 0) + t

rows = {}
order = sorted(calls, key=lambda c: (c[5], c[0], -c[1], c[2]))
for c in order:
    key = (c[3], c[4], c[6]) if by_shape else (c[3], c[4])
    r = rows.setdefault(key, [0, 0, 0, 0, 0, 0, -1, None])
    r[0] += 1
    r[1] += c[1]
    r[2] += max(c[1] - kids.get(c[2], 0), 0)
    g = gself.get(c[2], [0, 0])
    r[3] += g[0]
    r[4] += gtotal[c[2]]
    r[5] += g[1]
    if c[1] > r[6]:
        r[6] = c[1]
        r[7] = '%s:%d' % (c[3], srcidx[c[2]])
for key, r in sorted(rows.items()):
    print('\t'.join(list(key) + [str(x) for x in r]))
