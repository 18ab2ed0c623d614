#!/usr/bin/env python3
"""The launch chain of every GPU activity, recomputed from a trace with
the json module, independently of kt's code, for tests/t/correlate.sh.

    correlate.py TRACE > want.tsv

One row per GPU activity (ph X, cat kernel, gpu_memcpy or gpu_memset):

    row  launch  op  annotation  step  frame  frame_row  fwd_op

Each id is the event's index in traceEvents, "-" when the link is
missing; frame is the frame text.  The definitions, in this file's own
terms (kt-correlate(1) states kt's):

- launch: the cuda_runtime or cuda_driver X event with the same
  args.correlation (same args.rank when the trace is merged).
- op, annotation: among the cpu_op, resp. user_annotation (not named
  ProfilerStep#...) X events of the call's (pid, tid) whose interval
  holds the call's interval, the innermost: the latest start, then the
  shortest.
- step: the ProfilerStep#N X event of the rank whose interval holds the
  call's start (several: the latest start); without a call, the one
  that holds the activity's own start (the model's step of kt-gaps(1)).
- frame: among the python_function X events of the call's thread that
  hold the call, and the cpu_op ones whose args."Call stack" (frames
  innermost first, ';'-separated) has a user frame, the innermost; its
  user frame.  A frame "FILE(LINE): FUNC" is the user's unless FILE
  starts with "<", lies in a torch, triton, numpy, tqdm, site-packages,
  dist-packages or lib/pythonX.Y folder, or is a module of the Python
  standard library by sys.stdlib_module_names (first path component,
  with or without .py).
- fwd_op: for a call under an autograd node (the innermost cpu_op
  holding the call whose args."Fwd thread id" is not 0), the forward
  op: of the rank's cpu_ops with that args."Sequence number" and a Fwd
  thread id of 0 (or none), the latest to start, then the shortest (as
  PyTorch's profiler links them); none when they are on two threads.
  Without a Sequence number, a fwdbwd flow: its "f" end's innermost
  cpu_op (at the end's ts, on its thread) links to its "s" end's.  A call without a frame of its own has the
  forward op's: the innermost as above holding the forward op.
"""
import gzip
import json
import re
import sys
from decimal import Decimal

f = sys.argv[1]
with (gzip.open if f.endswith('.gz') else open)(f, 'rt') as fh:
    d = json.load(fh, parse_float=Decimal)
evs = d['traceEvents'] if isinstance(d, dict) else d
# The rank of each pid that names one (kt rank-tag writes none on flows).
pidrank = {}
for e in evs:
    r = (e.get('args') or {}).get('rank') if isinstance(e, dict) else None
    if isinstance(r, int):
        pidrank.setdefault(str(e.get('pid')), r)
# Row ids: the index in traceEvents, or through ktSourceIndex (kt's
# merged and reordered traces keep each event's id in its source).
srcidx = d.get('ktSourceIndex') if isinstance(d, dict) else None
if not isinstance(srcidx, list) or len(srcidx) != len(evs):
    srcidx = list(range(len(evs)))
# The categories, with the 2021 names (Kernel, Runtime, Operator, ...).
ACT = {'kernel', 'gpu_memcpy', 'gpu_memset', 'Kernel', 'Memcpy', 'Memset'}
CALL = {'cuda_runtime', 'cuda_driver', 'Runtime'}
OP = {'cpu_op', 'Operator'}


def ns(x):
    return int(Decimal(x) * 1000)


STD = set(getattr(sys, 'stdlib_module_names', ())) | {
    '_collections_abc', '_weakrefset', '_bootlocale', '_compat_pickle',
    '_sitebuiltins', '_threading_local', '_strptime', 'typing_extensions'}
LIBDIRS = ('torch', 'triton', 'numpy', 'tqdm', 'site-packages',
           'dist-packages')
FRAME = re.compile(r'^(.+?)\((\d+)\): ')


def user(frame):
    m = FRAME.match(frame)
    if not m:
        return False
    path = m.group(1)
    if path.startswith('<'):
        return False
    parts = path.split('/')
    if any(p in LIBDIRS for p in parts[:-1]):
        return False
    if re.search(r'(^|/)lib/python[0-9.]*/', path):
        return False
    first = parts[0]
    if first.endswith('.py'):
        first = first[:-3]
    if first in STD and (len(parts) > 1 or parts[0].endswith('.py')):
        return False
    return True


def stack_user(st):
    for fr in st.split(';'):
        fr = fr.lstrip(' ')
        if user(fr):
            return fr
    return None


def rank(e):
    a = e.get('args') or {}
    r = a.get('rank')
    if isinstance(r, int):
        return r
    # A flow of a merged trace carries no args: its pid's rank.
    return pidrank.get(str(e.get('pid')))


def tkey(e):
    return (rank(e), str(e.get('pid')), str(e.get('tid')))


def seqinfo(e):
    a = e.get('args') or {}
    q = a.get('Sequence number')
    if isinstance(q, bool) or not isinstance(q, int) or q < 0:
        return None
    f = a.get('Fwd thread id', 0)
    if isinstance(f, bool) or not isinstance(f, int):
        f = 0
    return (q, f)


fwds = {}       # (rank, seq) -> [(ts, -dur, index, thread)]
nocorr = {}     # thread -> [(ts, end, index)]: calls without correlation
calls = {}
spans = {}      # thread -> list of (ts, end, index, kind, event)
steps = {}      # rank -> list of (ts, end, index)
acts = []
for i, e in enumerate(evs):
    if not isinstance(e, dict) or e.get('ph') != 'X' or 'ts' not in e:
        continue
    cat = e.get('cat')
    ts = ns(e['ts'])
    dur = ns(e['dur']) if 'dur' in e else 0
    dur = max(dur, 0)
    args = e.get('args') or {}
    if cat in ACT:
        acts.append((i, e))
    elif cat in CALL:
        c = args.get('correlation')
        if isinstance(c, int):
            calls.setdefault((rank(e), c), i)
        else:
            nocorr.setdefault(tkey(e), []).append((ts, ts + dur, i))
    name = e.get('name', '')
    if (cat in OP or cat in ('user_annotation', None)) and \
            isinstance(name, str) and name.startswith('ProfilerStep#'):
        steps.setdefault(rank(e), []).append((ts, ts + dur, i))
        continue
    if cat in OP:
        cat = 'cpu_op'
        q = seqinfo(e)
        if q is not None and q[1] == 0:
            fwds.setdefault((rank(e), q[0]), []).append(
                (ts, -dur, i, tkey(e)))
    if cat in ('cpu_op', 'user_annotation', 'python_function'):
        spans.setdefault(tkey(e), []).append((ts, ts + dur, i, cat, e))


def innermost(cands):
    best = None
    for c in cands:
        if best is None or c[0] > best[0] or \
                (c[0] == best[0] and c[1] < best[1]):
            best = c
    return best


# The flows.  ac2g (or "async"): an "s" end gives its id to the
# innermost call without a correlation on its thread that starts at or
# holds its ts; an "f" end to the activity without one that starts at
# (or holds) its ts on its (pid, tid).  fwdbwd: the innermost cpu_op at
# the "f" end's ts on its thread links to the one at the "s" end's.
def holding(lst, t):
    return innermost([x for x in lst if x[0] == t or x[0] <= t < x[1]])


actflow = {}    # (rank, pid, tid) -> [(ts, id)]
fb_s, fb_f = {}, []
for e in evs:
    if not isinstance(e, dict) or e.get('ph') not in ('s', 'f') or \
            'ts' not in e:
        continue
    fid, cat = e.get('id'), e.get('cat')
    if isinstance(fid, bool) or not isinstance(fid, int) or fid < 0:
        continue
    t = ns(e['ts'])
    if cat in ('ac2g', 'async') and e['ph'] == 's':
        c = holding(nocorr.get(tkey(e), ()), t)
        if c is not None:
            calls.setdefault((rank(e), fid), c[2])
    elif cat in ('ac2g', 'async'):
        actflow.setdefault(tkey(e), []).append((t, fid))
    elif cat == 'fwdbwd':
        o = holding([x for x in spans.get(tkey(e), ()) if x[3] == 'cpu_op'],
                    t)
        if o is None:
            continue
        if e['ph'] == 's':
            fb_s.setdefault((rank(e), fid), o[2])
        else:
            fb_f.append(((rank(e), fid), o[2]))
fwdbwd = {}     # backward op index -> forward op index
for k, b in fb_f:
    if k in fb_s:
        fwdbwd.setdefault(b, fb_s[k])


def act_corr(e):
    c = (e.get('args') or {}).get('correlation')
    if isinstance(c, int):
        return c
    t, d = ns(e['ts']), max(ns(e['dur']) if 'dur' in e else 0, 0)
    for ft, fid in sorted(actflow.get(tkey(e), ())):
        if ft == t or t <= ft < t + d:
            return fid
    return None


def forward(r, seq):
    c = fwds.get((r, seq))
    if not c or len({x[3] for x in c}) > 1:
        return None
    return max(c, key=lambda x: (x[0], x[1], x[2]))[2]


def frame_holding(thread, ts, end):
    hold = [s for s in spans.get(thread, ()) if s[0] <= ts and end <= s[1]]
    return innermost([s for s in hold if
                      (s[3] == 'python_function' and user(s[4]['name']))
                      or (s[3] == 'cpu_op' and isinstance(
                          (s[4].get('args') or {}).get('Call stack'), str)
                          and stack_user(s[4]['args']['Call stack']))])


def frame_text(fr):
    if fr[3] == 'python_function':
        return fr[4]['name']
    return stack_user(fr[4]['args']['Call stack'])


print('row\tlaunch\top\tannotation\tstep\tframe\tframe_row\tfwd_op')
for i, e in acts:
    c = act_corr(e)
    li = calls.get((rank(e), c)) if c is not None else None
    out = [i, '-', '-', '-', '-', '-', '-', '-']
    if li is None:
        at = ns(e['ts'])
        st = innermost([s for s in steps.get(rank(e), ())
                        if s[0] <= at < s[1]])
        if st:
            out[4] = str(st[2])
    if li is not None:
        call = evs[li]
        cts = ns(call['ts'])
        cend = cts + max(ns(call['dur']) if 'dur' in call else 0, 0)
        out[1] = str(li)
        hold = [s for s in spans.get(tkey(call), ())
                if s[0] <= cts and cend <= s[1]]
        op = innermost([s for s in hold if s[3] == 'cpu_op'])
        ann = innermost([s for s in hold if s[3] == 'user_annotation'])
        fr = innermost([s for s in hold if
                        (s[3] == 'python_function' and user(s[4]['name']))
                        or (s[3] == 'cpu_op' and isinstance(
                            (s[4].get('args') or {}).get('Call stack'), str)
                            and stack_user(s[4]['args']['Call stack']))])
        if op:
            out[2] = str(op[2])
        if ann:
            out[3] = str(ann[2])
        # The autograd node: innermost first among the ops holding it.
        for o in sorted((s for s in hold if s[3] == 'cpu_op'),
                        key=lambda s: (-s[0], s[1])):
            q = seqinfo(o[4])
            fo = None
            if q is not None and q[1] != 0:
                fo = forward(rank(call), q[0])
                if fo is None:
                    fo = fwdbwd.get(o[2])
            elif o[2] in fwdbwd:
                fo = fwdbwd[o[2]]
            else:
                continue
            if fo is not None:
                out[7] = str(fo)
                if not fr:
                    fe = evs[fo]
                    fts = ns(fe['ts'])
                    fend = fts + max(ns(fe['dur']) if 'dur' in fe
                                     else 0, 0)
                    fr = frame_holding(tkey(fe), fts, fend)
            break
        if fr:
            out[5] = frame_text(fr)
            out[6] = str(fr[2])
        st = innermost([s for s in steps.get(rank(call), ())
                        if s[0] <= cts < s[1]])
        if st:
            out[4] = str(st[2])
    for k in (0, 1, 2, 3, 4, 6, 7):
        if isinstance(out[k], int) or out[k].isdigit():
            out[k] = str(srcidx[int(out[k])])
    print('\t'.join(out))
