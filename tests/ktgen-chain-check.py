#!/usr/bin/env python3
"""ktgen-chain-check.py TRACE CHAIN: recompute a ktgen --truth-chain file
from the trace JSON by the definitions of tests/ktgen.md and compare.
Exit 0 when every row agrees and no definition is ambiguous."""
import bisect, json, re, sys
from collections import defaultdict
from decimal import Decimal

ACT = {"kernel", "gpu_memcpy", "gpu_memset"}
FRAME = re.compile(r"^(.+)\((\d+)\): (.+)$")
STDLIB = set(getattr(sys, "stdlib_module_names", ())) | {
    "threading", "contextlib", "functools"}

def ns(s):
    return int(Decimal(s) * 1000)

def library(f):
    if f.startswith("torch/") or "/torch/" in f or f.startswith("<"):
        return True
    if "site-packages/" in f or "dist-packages/" in f:
        return True
    if re.search(r"lib/python\d+\.\d+/", f):
        return True
    first = f.split("/")[0]
    if "/" not in f and first.endswith(".py"):
        first = first[:-3]
    return first in STDLIB

def userframe(name):
    m = FRAME.match(name)
    return m is not None and not library(m.group(1))

def main(trace, tsv):
    with open(trace) as fp:
        ev = json.load(fp, parse_float=ns)["traceEvents"]
    lists = defaultdict(list)  # (pid, tid, class) -> [(ts, dur, idx)]
    corr = defaultdict(list)
    for i, e in enumerate(ev):
        if e.get("ph") != "X":
            continue
        c = e.get("cat")
        k = None
        if c == "cpu_op":
            k = "op"
        elif c == "user_annotation":
            k = "step" if re.fullmatch(r"ProfilerStep#\d+", e["name"]) \
                else "ann"
        elif c == "python_function":
            k = "py" if userframe(e["name"]) else None
        elif c in ("cuda_runtime", "cuda_driver"):
            corr[e["args"]["correlation"]].append(i)
        if k is not None:
            lists[(e["pid"], e["tid"], k)].append((e["ts"], e["dur"], i))
    index = {}
    for key, v in lists.items():
        v.sort()
        index[key] = ([x[0] for x in v], max(x[1] for x in v), v)
    amb = []

    def inner(pid, tid, k, t):
        if (pid, tid, k) not in index:
            return "-"
        tss, dmax, v = index[(pid, tid, k)]
        j = bisect.bisect_right(tss, t)
        best = []
        while j > 0 and v[j - 1][0] > t - dmax:
            ts, dur, i = v[j - 1]
            if ts <= t < ts + dur:
                best.append((ts, -dur, i))
            j -= 1
        if not best:
            return "-"
        best.sort()
        if len(best) > 1 and best[-1][:2] == best[-2][:2]:
            amb.append((k, t, best[-1][2], best[-2][2]))
        return str(best[-1][2])

    want = []
    for i, e in enumerate(ev):
        if e.get("ph") != "X" or e.get("cat") not in ACT:
            continue
        cs = corr.get(e["args"]["correlation"], [])
        if len(cs) != 1:
            amb.append(("corr", e["args"]["correlation"], i, len(cs)))
            want.append([str(i)] + ["-"] * 6)
            continue
        c = ev[cs[0]]
        pid, tid, t = c["pid"], c["tid"], c["ts"]
        fr = inner(pid, tid, "py", t)
        want.append([str(i), str(cs[0]), inner(pid, tid, "op", t),
                     inner(pid, tid, "ann", t), inner(pid, tid, "step", t),
                     fr, ev[int(fr)]["name"] if fr != "-" else "-"])
    with open(tsv) as fp:
        rows = [l.rstrip("\n").split("\t") for l in fp]
    hdr = ["row", "launch", "cpu_op", "annotation", "step", "frame_row",
           "frame"]
    ok = rows[0] == hdr
    got = rows[1:]
    agree = [0] * 7
    for a, b in zip(want, got):
        for k in range(7):
            agree[k] += k < len(b) and a[k] == b[k]
    full = sum(a == b for a, b in zip(want, got))
    names = defaultdict(int)
    for a in want:
        names[ev[int(a[1])]["name"] if a[1] != "-" else "-"] += 1
    print("%s: header %s, rows want %d got %d, rows agreeing %d; per "
          "column %s; non-dash: %s; launches %s; ambiguities %d" % (
          trace, "ok" if ok else "BAD", len(want), len(got), full,
          " ".join("%s=%d" % (h, n) for h, n in zip(hdr, agree)),
          " ".join("%s=%d" % (h, sum(r[k] != "-" for r in want))
                   for k, h in enumerate(hdr)),
          dict(names), len(amb)))
    for a in amb[:5]:
        print("  ambiguous:", a)
    bad = [(a, b) for a, b in zip(want, got) if a != b][:5]
    for a, b in bad:
        print("  want", a, "\n  got ", b)
    return 0 if ok and full == len(want) == len(got) and not amb else 1

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: ktgen-chain-check.py TRACE CHAIN")
    sys.exit(main(sys.argv[1], sys.argv[2]))
