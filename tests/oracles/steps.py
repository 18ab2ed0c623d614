#!/usr/bin/env python3
"""tests/oracles/steps.py: the step windows of kt(7) "Step windows",
computed from the trace alone (json with Decimal times, integer ns),
without kt, to judge every view's per-step figures.

usage: steps.py TRACE [REGEX]

Prints one line per step window of each GPU device, in step order:
    pid step start_ns end_ns wall_ns busy_ns idle_ns cpu_start_ns
A step is a CPU X event named ProfilerStep#N (or, with REGEX, a
user_annotation, cpu_op or ProfilerStep X event whose name REGEX
matches: its number is the first group when that is all digits, else
the first digits of the name).  An activity (kernel, gpu_memcpy,
gpu_memset) belongs to the step whose span contains the start of its
launching runtime call (same correlation), else to the step whose span
contains its own start.  On a device, a step's window ends at the last
end of its activities and starts where the window of the step before
it ended (the first at its first activity's start); busy is the union
of all the device's activities inside it.
"""
import json
import re
import sys
from decimal import Decimal

ACT = ('kernel', 'gpu_memcpy', 'gpu_memset')
RUNTIME = ('cuda_runtime', 'cuda_driver')


def ns(v):
    return int(Decimal(v) * 1000)


def number(name, m):
    if m is not None and m.lastindex and m.group(1) and m.group(1).isdigit():
        return int(m.group(1))
    d = re.search(r'[0-9]+', name)
    return int(d.group(0)) if d else -1


def main():
    d = json.load(open(sys.argv[1]), parse_float=Decimal, parse_int=Decimal)
    rx = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
    ev = d['traceEvents'] if isinstance(d, dict) else d
    steps, launch, acts = [], {}, []
    for e in ev:
        if e.get('ph') != 'X' or 'ts' not in e:
            continue
        cat, name = e.get('cat', ''), e.get('name', '')
        ts, dur = ns(e['ts']), ns(e.get('dur', 0))
        args = e.get('args') or {}
        if cat in ACT:
            acts.append((ts, ts + dur, e['pid'], args.get('correlation')))
        elif cat in RUNTIME and 'correlation' in args:
            launch[int(args['correlation'])] = ts
        if rx is None:
            m = re.fullmatch(r'ProfilerStep#([0-9]+)', name)
            if m and cat != 'gpu_user_annotation':
                steps.append((ts, ts + dur, int(m.group(1))))
        elif cat in ('user_annotation', 'cpu_op') and rx.search(name):
            steps.append((ts, ts + dur, number(name, rx.search(name))))
    steps.sort()

    def step_of(t):
        for i in range(len(steps) - 1, -1, -1):
            if steps[i][0] <= t < steps[i][1]:
                return i
        return None

    out = []
    for pid in sorted({a[2] for a in acts}):
        mine = sorted(a for a in acts if a[2] == pid)
        first, last = {}, {}
        for s, e, _, corr in mine:
            k = None
            if corr is not None and int(corr) in launch:
                k = step_of(launch[int(corr)])
            if k is None:
                k = step_of(s)
            if k is None:
                continue
            first[k] = min(first.get(k, s), s)
            last[k] = max(last.get(k, e), e)
        prev = None
        for k in sorted(first):
            start = first[k] if prev is None else prev
            end = max(last[k], start)
            busy, reach = 0, None
            for s, e, _, _ in mine:
                s, e = max(s, start), min(e, end)
                if e <= s:
                    continue
                if reach is not None and s < reach:
                    s = reach
                if e > s:
                    busy += e - s
                reach = e if reach is None else max(reach, e)
            out.append((pid, steps[k][2], start, end, end - start, busy,
                        end - start - busy, steps[k][0]))
            prev = end
    for r in out:
        print(' '.join(str(x) for x in r))


main()
