#!/usr/bin/env python3
# tests/oracles/select.py: which events kt-select keeps, recomputed from
# the definitions of kt-select(1) with the json module, not kt's code.
#
#   select.py TRACE [--kind K,..] [--drop K,..] [--name RE] [--cat C]
#       [--rank N,..] [--device N,..] [--stream N,..] [--comm S]
#       [--min-dur NS] [--from NS] [--to NS] [--id N,..] [--limit N]
#       [--links] [--extra POS,..] [--count]
#
# Prints the positions (in traceEvents) of the events kept, one a line,
# or with --count their number, metadata aside.  Times are whole ns.
# --links takes the chain of a GPU activity from --extra (the positions
# a truth file gives: ktgen -C, kt-correlate); it computes the rest
# itself: a runtime call's activities (same args.correlation) and the
# slices at the other ends of a match's flows.
import sys, json, gzip, re
from decimal import Decimal

argv = sys.argv[1:]
path = argv.pop(0)
opt = {}
multi = ('--kind', '--drop', '--name', '--cat', '--rank', '--device',
         '--stream', '--comm', '--id', '--extra')
while argv:
    a = argv.pop(0)
    if a in ('--links', '--count'):
        opt[a] = True
    elif a in multi:
        v = argv.pop(0)
        opt.setdefault(a, [])
        if a in ('--name', '--cat', '--comm'):
            opt[a].append(v)
        else:
            opt[a] += v.split(',')
    else:
        opt[a] = int(argv.pop(0))

with (gzip.open if path.endswith('.gz') else open)(path, 'rt') as fh:
    d = json.load(fh, parse_float=Decimal)
evs = d if isinstance(d, list) else d['traceEvents']
si = None if isinstance(d, list) else d.get('ktSourceIndex')
trank = -1
if isinstance(d, dict) and isinstance(d.get('distributedInfo'), dict):
    r = d['distributedInfo'].get('rank')
    if isinstance(r, int) and r >= 0:
        trank = r

CATS = {'kernel': 'kernel', 'cpu_op': 'cpu_op', 'cuda_runtime': 'cuda_runtime',
        'python_function': 'python_function',
        'user_annotation': 'user_annotation',
        'gpu_user_annotation': 'gpu_user_annotation',
        'cuda_driver': 'cuda_driver', 'gpu_memcpy': 'gpu_memcpy',
        'gpu_memset': 'gpu_memset', 'Kernel': 'kernel', 'Operator': 'cpu_op',
        'Runtime': 'cuda_runtime', 'Memcpy': 'gpu_memcpy',
        'Memset': 'gpu_memset'}


def kind(e):
    ph = e.get('ph')
    if ph == 'M':
        return 'metadata'
    if ph == 'C':
        return 'counter'
    if ph in ('s', 't', 'f'):
        return 'flow'
    if ph in ('i', 'I'):
        return 'memory' if e.get('name') == '[memory]' else 'instant'
    k = CATS.get(e.get('cat'), 'other') if isinstance(e.get('cat'), str) \
        else 'other'
    if (k in ('user_annotation', 'cpu_op') or (k == 'other' and 'cat' not in e)) \
            and isinstance(e.get('name'), str) \
            and e['name'].startswith('ProfilerStep#'):
        return 'step'
    return k


def num(x):
    return isinstance(x, (int, Decimal)) and not isinstance(x, bool)


def ns(x):
    return int(Decimal(x) * 1000)


def toint(x):
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    if isinstance(x, str) and re.fullmatch(r'-?[0-9]+', x):
        return int(x)
    return None


ACT = ('kernel', 'gpu_memcpy', 'gpu_memset')


def passes(e, k):
    args = e.get('args') if isinstance(e.get('args'), dict) else {}
    if '--kind' in opt and k not in opt['--kind']:
        return False
    ts = ns(e['ts']) if num(e.get('ts')) else None
    dur = ns(e['dur']) if num(e.get('dur')) else None
    if '--min-dur' in opt and (dur is None or dur < opt['--min-dur']):
        return False
    if '--from' in opt or '--to' in opt:
        if ts is None:
            return False
        end = ts + (dur if dur is not None and dur > 0 else 0)
        if '--to' in opt and ts > opt['--to']:
            return False
        if '--from' in opt and end < opt['--from']:
            return False
    for o, f, alt in (('--device', 'device', 'pid'),
                      ('--stream', 'stream', 'tid')):
        if o in opt:
            v = toint(args[f]) if f in args else toint(e.get(alt))
            if k not in ACT or v is None or \
                    v not in [int(x) for x in opt[o]]:
                return False
    if '--rank' in opt:
        r = toint(args['rank']) if 'rank' in args else trank
        if r is None or r < 0 or r not in [int(x) for x in opt['--rank']]:
            return False
    if '--cat' in opt and e.get('cat') not in opt['--cat']:
        return False
    if '--name' in opt:
        if not isinstance(e.get('name'), str) or \
                not any(re.search(p, e['name']) for p in opt['--name']):
            return False
    if '--comm' in opt:
        vals = [args.get(a) for a in ('Process Group Name',
                'Process Group Description', 'Collective name')]
        if not any(isinstance(v, str) and v in opt['--comm'] for v in vals):
            return False
    return True


def thread(e):
    return (json.dumps(e.get('pid')), json.dumps(e.get('tid')))


# The X slices of each thread, and each flow end's slice.
slices = {}
for p, e in enumerate(evs):
    if e.get('ph') == 'X' and num(e.get('ts')) and num(e.get('dur')):
        t, dd = ns(e['ts']), ns(e['dur'])
        slices.setdefault(thread(e), []).append((t, t + max(dd, 0), p))
anchor = {}
groups = {}
for p, e in enumerate(evs):
    if kind(e) != 'flow':
        continue
    groups.setdefault((json.dumps(e.get('cat')), json.dumps(e.get('name')),
                       json.dumps(e.get('id'))), []).append(p)
    anchor[p] = None
    if not num(e.get('ts')):
        continue
    t = ns(e['ts'])
    cand = slices.get(thread(e), [])
    if e.get('ph') == 'f' and e.get('bp') != 'e':
        c = [s for s in cand if s[0] >= t]
        if c:
            anchor[p] = min(c, key=lambda s: (s[0], -s[1], s[2]))[2]
    else:
        c = [s for s in cand if s[0] <= t <= s[1]]
        if c:
            anchor[p] = max(c, key=lambda s: (s[0], -s[1], s[2]))[2]

drop = set(opt.get('--drop', []))
ids = set(int(x.split(':')[-1]) for x in opt.get('--id', []))
kinds = [kind(e) for e in evs]
hit = set()
for p, e in enumerate(evs):
    k = kinds[p]
    if k == 'metadata' or k in drop:
        continue
    if k == 'flow' and anchor[p] is not None:
        continue
    row = si[p] if si is not None and p < len(si) else p
    if ids and row not in ids:
        continue
    if not passes(e, k):
        continue
    if '--limit' in opt and len(hit) >= opt['--limit']:
        continue
    hit.add(p)

keep = set(hit)


def add(p):
    if kinds[p] not in drop:
        keep.add(p)


if '--links' in opt:
    for x in opt.get('--extra', []):
        add(int(x))
    corr = {}
    for p in hit:
        if kinds[p] in ('cuda_runtime', 'cuda_driver'):
            c = evs[p].get('args', {}).get('correlation')
            if c is not None:
                corr[c] = 1
    for p, e in enumerate(evs):
        if kinds[p] in ACT and e.get('ph') == 'X' and \
                isinstance(e.get('args'), dict) and \
                e['args'].get('correlation') in corr:
            add(p)
    for g in groups.values():
        if any(anchor[p] in hit for p in g if anchor[p] is not None):
            for p in g:
                if anchor[p] is not None:
                    add(anchor[p])
for p in range(len(evs)):
    if kinds[p] == 'metadata':
        keep.add(p)
for g in groups.values():
    if all(kinds[p] not in drop and
           (anchor[p] in keep if anchor[p] is not None else p in hit)
           for p in g):
        keep.update(g)
if '--count' in opt:
    print(sum(1 for p in keep if kinds[p] != 'metadata'))
else:
    for p in sorted(keep):
        print(p)
