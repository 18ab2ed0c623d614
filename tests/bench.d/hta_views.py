"""tests/bench.d/hta_views.py: HTA's counterpart of `kt views`, for the
benchmark section tests/bench.d/hta.sh (our own driver, not HTA code).

usage: python3 hta_views.py HTA_CHECKOUT TRACE_DIR OUT_DIR

It imports HolisticTraceAnalysis from HTA_CHECKOUT (a checkout of
github.com/facebookresearch/HolisticTraceAnalysis), loads the rank traces
of TRACE_DIR with TraceAnalysis (HTA's own parser and its defaults), and
computes the breakdowns that correspond to kt's views, on every rank the
folder holds, with no plots (visualize=False):

  kt view                    HTA call
  1_runtime_decomposition    get_temporal_breakdown (idle / compute /
                             non-compute time per rank)
  2_lost_time                get_idle_time_breakdown (idle time per
                             rank and stream: host, kernel, other wait,
                             with the interval statistics)
  3_kernel_table             get_gpu_kernel_breakdown (time per kernel
                             type, and per kernel)
  4_overlap_exposure         get_comm_comp_overlap (communication time
                             overlapped by computation, per rank)
  (launch side of 6_op_table) get_cuda_kernel_launch_stats and
                             get_queue_length_summary

Each table is written to OUT_DIR as CSV, as kt views writes its TSV
twins, so that both ends produce files.  The time of each step goes to
standard error.  Exit status 0 when all ran, 1 when a call failed (the
others still run), 2 on a usage error.
"""

import os
import sys
import time


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: hta_views.py HTA_CHECKOUT TRACE_DIR OUT_DIR\n")
        return 2
    hta_dir, trace_dir, out_dir = argv[1:]
    t0 = time.monotonic()
    sys.path.insert(0, os.path.abspath(hta_dir))
    import pandas as pd  # noqa: F401 (HTA needs it; fail early)
    from hta.trace_analysis import TraceAnalysis

    os.makedirs(out_dir, exist_ok=True)
    t1 = time.monotonic()
    sys.stderr.write("hta_views: import %.2f s\n" % (t1 - t0))
    ta = TraceAnalysis(trace_dir=trace_dir)
    ranks = sorted(ta.t.traces.keys())
    t2 = time.monotonic()
    sys.stderr.write("hta_views: load %.2f s, ranks %s\n" % (t2 - t1, ranks))

    def write(name, df):
        if df is None:
            return
        if isinstance(df, dict):
            for k, v in df.items():
                write("%s_%s" % (name, k), v)
            return
        if isinstance(df, tuple):
            for i, v in enumerate(df):
                write("%s_%d" % (name, i), v)
            return
        df.to_csv(os.path.join(out_dir, name + ".csv"))

    calls = [
        ("temporal_breakdown", lambda: ta.get_temporal_breakdown(visualize=False)),
        (
            "idle_time_breakdown",
            lambda: ta.get_idle_time_breakdown(
                ranks=ranks, visualize=False, show_idle_interval_stats=True
            ),
        ),
        (
            "gpu_kernel_breakdown",
            lambda: ta.get_gpu_kernel_breakdown(visualize=False),
        ),
        ("comm_comp_overlap", lambda: ta.get_comm_comp_overlap(visualize=False)),
        (
            "cuda_kernel_launch_stats",
            lambda: ta.get_cuda_kernel_launch_stats(ranks=ranks, visualize=False),
        ),
        ("queue_length_summary", lambda: ta.get_queue_length_summary(ranks=ranks)),
    ]
    rc = 0
    for name, call in calls:
        t = time.monotonic()
        try:
            write(name, call())
        except Exception as e:  # report, go on with the other views
            sys.stderr.write("hta_views: %s failed: %s: %s\n" % (name, type(e).__name__, e))
            rc = 1
        sys.stderr.write("hta_views: %s %.2f s\n" % (name, time.monotonic() - t))
    sys.stderr.write("hta_views: total %.2f s\n" % (time.monotonic() - t0))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
