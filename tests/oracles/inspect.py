#!/usr/bin/env python3
# tests/oracles/inspect.py: an independent judge of kt-inspect --json
# (the json module, from the definitions of kt-inspect(1), not kt's code).
#   inspect.py pick TRACE          row ids worth inspecting, one a line
#   inspect.py judge TRACE OUT [TRUTH]
#                                  check each object of OUT; print one
#                                  line "ok N" or "FAIL ..." per check
import signal
import sys, json, gzip
from decimal import Decimal

# A reader that stops early (head) ends the oracle quietly.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

def load(f):
    with (gzip.open if f.endswith('.gz') else open)(f, 'rt') as fh:
        d = json.load(fh, parse_float=Decimal)
    return d if isinstance(d, list) else d['traceEvents']

def ns(x):
    return int(Decimal(x) * 1000) if not isinstance(x, int) else x * 1000

GPU = ('kernel', 'gpu_memcpy', 'gpu_memset')
CPU = ('cpu_op', 'user_annotation', 'cuda_runtime', 'cuda_driver',
       'python_function')

def is_x(e):
    return (isinstance(e, dict) and e.get('ph') == 'X' and
            isinstance(e.get('ts'), (int, Decimal)) and
            isinstance(e.get('dur'), (int, Decimal)))

def spans(ev):
    """CPU spans by thread: (ts, end, pos)."""
    t = {}
    for i, e in enumerate(ev):
        if is_x(e) and e.get('cat') in CPU:
            a = ns(e['ts'])
            t.setdefault((str(e.get('pid')), str(e.get('tid'))), []).append(
                (a, a + ns(e['dur']), i))
    return t

def parent(th, s):
    """The innermost span of the thread that contains span s."""
    best = None
    for c in th:
        if c[2] == s[2] or not (c[0] <= s[0] and s[1] <= c[1]):
            continue
        if c[0] == s[0] and c[1] == s[1] and c[2] > s[2]:
            continue    # of two equal spans the earlier holds the later
        if best is None or (c[0], -c[1], c[2]) > (best[0], -best[1], best[2]):
            best = c
    return best

def key(e):
    return (str(e.get('pid')), str(e.get('tid')))

def pick(f):
    ev = load(f)
    out = []
    kinds = {}
    for i, e in enumerate(ev):
        if not is_x(e):
            continue
        c = e.get('cat')
        kinds.setdefault(c, []).append(i)
    for c in GPU + CPU:
        v = kinds.get(c, [])
        out += v[:1] + v[len(v) // 2:len(v) // 2 + 1] + v[-1:]
    print('\n'.join(str(x) for x in sorted(set(out))))

def num(r):
    return int(r.split(':')[1]) if r is not None else None

def judge(f, outf, truthf):
    ev = load(f)
    th = spans(ev)
    truth = {}
    if truthf:
        with open(truthf) as fh:
            h = fh.readline().rstrip('\n').split('\t')
            for line in fh:
                r = dict(zip(h, line.rstrip('\n').split('\t')))
                truth[int(r['row'])] = r
    flows = {}
    for i, e in enumerate(ev):
        if isinstance(e, dict) and e.get('ph') in ('s', 't', 'f'):
            flows.setdefault(json.dumps([e.get('cat'), e.get('name'),
                                         e.get('id')], default=str), []).append(i)
    n = 0
    with open(outf) as fh:
        lines = fh.readlines()
    for line in lines:
        o = json.loads(line, parse_float=Decimal)
        p = o['position']
        e = ev[p]
        what = o['row']
        bad = []
        if num(o['row']) != p:
            bad.append('row %s at position %d' % (o['row'], p))
        if o['event'] != e:
            bad.append('event differs')
        for k in ('name', 'cat', 'ph', 'pid', 'tid'):
            if o[k] != e.get(k):
                bad.append('%s %r != %r' % (k, o[k], e.get(k)))
        if isinstance(e.get('ts'), (int, Decimal)) and o['ts_ns'] != ns(e['ts']):
            bad.append('ts_ns')
        if isinstance(e.get('dur'), (int, Decimal)) and o['dur_ns'] != ns(e['dur']):
            bad.append('dur_ns')
        if is_x(e) and o['end_ns'] != ns(e['ts']) + ns(e['dur']):
            bad.append('end_ns')
        cat = e.get('cat')
        if is_x(e) and cat in CPU:
            t = th[key(e)]
            s = (ns(e['ts']), ns(e['ts']) + ns(e['dur']), p)
            pa = parent(t, s)
            got = num(o['parents'][0]['row']) if o['parents'] else None
            if (pa[2] if pa else None) != got:
                bad.append('parent %s, want %s' % (got, pa and pa[2]))
            kids = [c for c in t if c[2] != p and parent(t, c) == s]
            if o['children']['count'] != len(kids):
                bad.append('%d children, want %d' %
                           (o['children']['count'], len(kids)))
            fk = [num(x['row']) for x in o['children']['first']]
            if fk != [c[2] for c in sorted(kids)][:len(fk)]:
                bad.append('children %s' % fk[:3])
        if is_x(e) and cat in ('cuda_runtime', 'cuda_driver') and \
                'correlation' in e.get('args', {}):
            c = e['args']['correlation']
            want = [i for i, x in enumerate(ev) if is_x(x) and
                    x.get('cat') in GPU and
                    x.get('args', {}).get('correlation') == c]
            got = [num(x['row']) for x in o['launched']['first']]
            if o['launched']['count'] != len(want):
                bad.append('launched %d, want %d' %
                           (o['launched']['count'], len(want)))
            elif sorted(got) != sorted(want)[:len(got)] and \
                    set(got) - set(want):
                bad.append('launched rows %s' % got[:3])
            elif len(got) == len(want) and sorted(got) != sorted(want):
                bad.append('launched rows differ')
            d = sum(ns(ev[i]['dur']) for i in want)
            if o['launched']['dur_ns'] != d:
                bad.append('launched_ns %s, want %d' %
                           (o['launched']['dur_ns'], d))
        for fl in o['flows']:
            k = json.dumps([fl['cat'], fl['name'], fl['id']], default=str)
            got = [num(x['row']) for x in fl['ends']]
            if got != flows.get(k):
                bad.append('flow %s ends %s, want %s' % (k, got, flows.get(k)))
        if isinstance(e, dict) and e.get('ph') in ('s', 't', 'f') and \
                not any(p in [num(x['row']) for x in fl['ends']]
                        for fl in o['flows']):
            bad.append('its own flow missing')
        if cat in GPU and is_x(e) and 'correlation' in e.get('args', {}):
            k = json.dumps(['ac2g', 'ac2g', e['args']['correlation']],
                           default=str)
            if k in flows and not o['flows']:
                bad.append('no ac2g flow')
        if p in truth:
            r = truth[p]
            c = o['chain']
            got = {'launch': num(c['launch'] and c['launch']['row']),
                   'cpu_op': num(c['op'] and c['op']['row']),
                   'annotation': num(c['annotation'] and
                                     c['annotation']['row']),
                   'frame_row': num(c['frame'] and c['frame']['row']),
                   'fwd_op': num(c['fwd_op'] and c['fwd_op']['row']),
                   'step': num(c['step'] and c['step']['row'])}
            for k2, v in got.items():
                w = None if r[k2] == '-' else int(r[k2])
                if v != w:
                    bad.append('chain %s %s, want %s' % (k2, v, w))
            if (c['frame'] and c['frame']['name']) != \
                    (None if r['frame'] == '-' else r['frame']):
                bad.append('chain frame text')
            sn = o['step'] and num(o['step']['row'])
            if r['step'] != '-' and sn != int(r['step']):
                bad.append('step %s, want %s' % (sn, r['step']))
        n += 1
        print(('FAIL %s: %s' % (what, '; '.join(bad))) if bad else
              'ok %s' % what)
    if n == 0:
        print('FAIL no rows')

if sys.argv[1] == 'pick':
    pick(sys.argv[2])
else:
    judge(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
