/*
 * kt-overlap: per communication kernel, how much ran alongside compute
 * on the same device (hidden) or alone (exposed), with the collective,
 * Seq/Comms Id, bytes, algorithm and bus bandwidth, ranked by exposed
 * time; on a merged trace, the start skew of each collective across
 * ranks and the last rank to arrive.  --summary gives one row per
 * device with a verdict.  --merge makes those tables from per-rank
 * tables, joining the collectives again.  A thin shell over
 * lib/overlap.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-overlap [-jsSTtV] [-m glob] [-n top] [-o file] [-r rules]\n"
	    "                  [-x pct] [--step-regex re] [file]\n"
	    "       kt-overlap -M [-jsTtV] [-n top] [-o file] [table ...]\n"
	    "  -j, --json                JSON lines\n"
	    "  -M, --merge               merge per-rank tables into one, the\n"
	    "                            collectives joined across ranks\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -n, --top N               only the N most exposed kernels\n"
	    "  -o, --output FILE         write FILE atomically\n"
	    "  -r, --rules FILE          bucket rules (bucket<TAB>regex) before\n"
	    "                            the default ones\n"
	    "  -s, --summary             one row per device, with a verdict\n"
	    "  -x, --threshold PCT       exposed under PCT%% of the span is no\n"
	    "                            finding (default 1)\n"
	    "  -S, --strict              refuse damaged input\n"
	    "      --step-regex RE       steps: the spans RE matches, see kt(7)\n"
	    "  -T, --text                an aligned text table\n"
	    "  -t, --tsv                 TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* --merge: the table of the merged ranks from their tables. */
static int
merge_tables(char **argv, int argc, int summary, size_t top,
    const struct kt_cli_opts *co)
{
	struct kt_error err;
	char **in;
	size_t n;

	if ((in = kt_cli_merge_inputs(argv, argc, co, &n)) == NULL)
		return 2;
	return kt_cli_merge_write(summary ? kt_overlap_summary_merge(in, n,
	    &err) : kt_overlap_merge_top(in, n, top, &err), &err, co);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "merge", no_argument, NULL, 'M' },
		{ "output", required_argument, NULL, 'o' },
		{ "rules", required_argument, NULL, 'r' },
		{ "summary", no_argument, NULL, 's' },
		{ "threshold", required_argument, NULL, 'x' },
		{ "top", required_argument, NULL, 'n' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "step-regex", required_argument, NULL, KT_CLI_STEP_REGEX },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_rules *rs;
	struct kt_overlap *ov;
	struct kt_table *t;
	struct kt_error err;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	const char *rules = NULL;
	int ch, summary = 0, merge = 0, thr = 0, rc;
	size_t top = 0;
	int64_t threshold = KT_OVERLAP_THRESHOLD;

	kt_cli_init("kt-overlap");
	while ((ch = getopt_long(argc, argv, "hjMm:n:o:r:sSTtVx:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'M':
			merge = 1;
			break;
		case 'n':
			top = (size_t)kt_cli_int("--top", optarg, 0, INT32_MAX);
			break;
		case 'r':
			rules = optarg;
			break;
		case 's':
			summary = 1;
			break;
		case 'x':
			threshold = kt_cli_int("--threshold", optarg, 0, 100);
			thr = 1;
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (merge) {
		if (rules != NULL || co.member != NULL || thr) {
			kt_cli_warn("--merge takes tables: no --rules, "
			    "--member or --threshold");
			return 2;
		}
		return merge_tables(argv, argc, summary, top, &co);
	}
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first, or merge their tables with --merge)");
		return 2;
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1)
		return 2;
	if ((rs = kt_rules_new(1)) == NULL)
		kt_cli_nomem();
	if (rules != NULL && kt_rules_load(rs, rules, 0, &err) == -1)
		kt_cli_die(&err);
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    co.member, co.rflags, &src);
	m = kt_cli_model(rd);
	if ((ov = kt_overlap_new(m, rs, &err)) == NULL)
		kt_cli_die(&err);
	t = summary ? kt_overlap_summary(ov, threshold) :
	    kt_overlap_table(ov, top);
	if (t == NULL)
		kt_cli_nomem();
	kt_cli_write_table(t, co.output, co.form);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	rc = kt_cli_no_device(rd, m);
	kt_table_free(t);
	kt_overlap_free(ov);
	kt_model_free(m);
	kt_rules_free(rs);
	kt_reader_free(rd);
	kt_source_close(src);
	return rc;
}
