/*
 * kt-decompose: wall = busy + idle, per step and rank.  For each GPU
 * device: the startup, the steady steps (mean, min, max, spread, the
 * slowest step), a trailing partial step and the trailing part, each
 * with GPU busy (the union over streams), idle, compute, communication
 * (exposed and hidden by compute) and transfer time; --series gives one
 * row per step, --ranks the slowest rank and straggler gap per step.
 * --merge makes those tables from per-rank tables instead of a trace.
 * A thin shell over lib/decompose.c, on the analysis model.
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
	    "usage: kt-decompose [-jRsSTtV] [-m glob] [-o file] [-r rules]\n"
	    "                    [--step-regex re] [file]\n"
	    "       kt-decompose -M [-jRsTtV] [-o file] [table ...]\n"
	    "  -j, --json                JSON lines\n"
	    "  -M, --merge               merge per-rank tables (--ranks: of\n"
	    "                            --series and kt-overlap) into one\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -o, --output FILE         write FILE atomically\n"
	    "  -R, --ranks               per step across ranks: slowest rank, gap\n"
	    "  -r, --rules FILE          bucket rules (bucket<TAB>regex) before\n"
	    "                            the default ones\n"
	    "  -s, --series              one row per step (and startup, trailing)\n"
	    "  -S, --strict              refuse damaged input\n"
	    "      --step-regex RE       steps: the spans RE matches, see kt(7)\n"
	    "  -T, --text                an aligned text table\n"
	    "  -t, --tsv                 TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* --merge: the table of the merged ranks from their tables. */
static int
merge_tables(char **argv, int argc, int series, int ranks,
    const char *rules, const struct kt_cli_opts *co)
{
	struct kt_error err;
	char **in;
	size_t n;

	if (rules != NULL || co->member != NULL) {
		kt_cli_warn("--merge takes tables: no --rules or --member");
		return 2;
	}
	if ((in = kt_cli_merge_inputs(argv, argc, co, &n)) == NULL)
		return 2;
	return kt_cli_merge_write(series ? kt_decompose_series_merge(in, n,
	    &err) : ranks ? kt_decompose_ranks_merge(in, n, &err) :
	    kt_decompose_merge(in, n, &err), &err, co);
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
		{ "ranks", no_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'r' },
		{ "series", no_argument, NULL, 's' },
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
	struct kt_decompose *dc;
	uint32_t *classes;
	struct kt_overlap *ov = NULL;
	struct kt_table *t;
	struct kt_error err;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	const char *rules = NULL;
	int ch, series = 0, ranks = 0, merge = 0, rc;

	kt_cli_init("kt-decompose");
	while ((ch = getopt_long(argc, argv, "hjMm:o:Rr:sSTtV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'M':
			merge = 1;
			break;
		case 'R':
			ranks = 1;
			break;
		case 'r':
			rules = optarg;
			break;
		case 's':
			series = 1;
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (series && ranks) {
		kt_cli_warn("choose one of --series and --ranks");
		return 2;
	}
	if (merge)
		return merge_tables(argv, argc, series, ranks, rules, &co);
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
	if ((classes = kt_rules_classify(rs, m)) == NULL)
		kt_cli_nomem();
	if ((dc = kt_decompose_new_with(m, rs, classes, &err)) == NULL)
		kt_cli_die(&err);
	/* Across ranks, the collectives joined as kt-overlap joins them. */
	if (ranks && (ov = kt_overlap_new_with(m, rs, classes, &err)) == NULL)
		kt_cli_die(&err);
	free(classes);
	t = series ? kt_decompose_series(dc) : ranks ?
	    kt_decompose_ranks(dc, ov) : kt_decompose_table(dc);
	if (t == NULL)
		kt_cli_nomem();
	kt_cli_write_table(t, co.output, co.form);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	rc = kt_cli_no_device(rd, m);
	kt_table_free(t);
	kt_decompose_free(dc);
	kt_overlap_free(ov);
	kt_model_free(m);
	kt_rules_free(rs);
	kt_reader_free(rd);
	kt_source_close(src);
	return rc;
}
