#!/usr/bin/env python3
"""The GPU time of a trace, recomputed with the json module, independently
of kt's code, for tests/t/bucket.sh.

    gputime.py TRACE

prints "COUNT TOTAL_NS": the number of GPU activities (ph X events of
cat kernel, gpu_memcpy or gpu_memset, or the 2021 names Kernel, Memcpy,
Memset; MTIA's mtia_ccp_events but its event_record and event_wait,
which are synchronisation) and the sum of their durations in integer ns,
each read from its decimal text (microseconds) without a float.  TRACE
may be gzipped.
"""
import gzip
import json
import sys
from decimal import Decimal

CATS = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset",
        "mtia_ccp_events")
SYNC = ("event_record", "event_wait")


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    doc = json.loads(data.decode("utf-8-sig"), parse_float=Decimal,
                     parse_int=Decimal)
    events = doc if isinstance(doc, list) else doc.get("traceEvents", [])
    n = total = 0
    for e in events:
        if (isinstance(e, dict) and e.get("ph") == "X" and
                e.get("cat") in CATS and e.get("dur") is not None and
                not (e.get("cat") == "mtia_ccp_events" and
                     e.get("name") in SYNC)):
            n += 1
            total += int(Decimal(e["dur"]) * 1000)
    print(n, total)


main()
