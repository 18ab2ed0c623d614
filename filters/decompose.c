/*
 * kt-decompose: wall = busy + idle, per step and rank.  For each GPU
 * device: the startup, the steady steps (mean, min, max, spread, the
 * slowest step), a trailing partial step and the trailing part, each
 * with GPU busy (the union over streams), idle, compute, communication
 * (exposed and hidden by compute) and transfer time; --series gives one
 * row per step, --ranks the slowest rank and straggler gap per step.
 * A thin shell over lib/decompose.c, on the analysis model.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-decompose [-jRsSTtV] [-m glob] [-o file] [-r rules] [file]\n"
	    "  -j, --json                JSON lines\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -o, --output FILE         write FILE atomically\n"
	    "  -R, --ranks               per step across ranks: slowest rank, gap\n"
	    "  -r, --rules FILE          bucket rules (bucket<TAB>regex) before\n"
	    "                            the default ones\n"
	    "  -s, --series              one row per step (and startup, trailing)\n"
	    "  -S, --strict              refuse damaged input\n"
	    "  -T, --text                an aligned text table\n"
	    "  -t, --tsv                 TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "output", required_argument, NULL, 'o' },
		{ "ranks", no_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'r' },
		{ "series", no_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_rules *rs;
	struct kt_decompose *dc;
	struct kt_table *t;
	struct kt_error err;
	struct kt_out *out;
	const char *member = NULL, *output = NULL, *rules = NULL;
	unsigned rflags = 0;
	int ch, rc, form = 0, series = 0, ranks = 0;

	kt_cli_init("kt-decompose");
	while ((ch = getopt_long(argc, argv, "hjm:o:Rr:sSTtV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(stdout);
			return 0;
		case 'j':
			form = KT_TABLE_JSON;
			break;
		case 'm':
			member = optarg;
			break;
		case 'o':
			output = optarg;
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
		case 'S':
			rflags |= KT_READ_STRICT;
			break;
		case 'T':
			form = KT_TABLE_TEXT;
			break;
		case 't':
			form = KT_TABLE_TSV;
			break;
		case 'V':
			printf("kt-decompose %s\n", KT_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first)");
		return 2;
	}
	if (series && ranks) {
		kt_cli_warn("choose one of --series and --ranks");
		return 2;
	}
	if (kt_cli_check_output(output, argv, argc) == -1)
		return 2;
	if ((rs = kt_rules_new(1)) == NULL)
		kt_cli_nomem();
	if (rules != NULL && kt_rules_load(rs, rules, 0, &err) == -1)
		kt_cli_die(&err);
	if ((src = kt_source_open(argc ? argv[0] : "-", member, rflags,
	    &err)) == NULL)
		kt_cli_die(&err);
	if ((rc = kt_source_next(src, &rd, &err)) != 1) {
		if (rc == 0)
			kt_error_set(&err, argc ? argv[0] : "<stdin>", 0, 0,
			    "no trace");
		kt_cli_die(&err);
	}
	if ((m = kt_model_load(rd, kt_cli_progress, &err)) == NULL)
		kt_cli_die(&err);
	kt_cli_progress_done();
	if ((dc = kt_decompose_new(m, rs, &err)) == NULL)
		kt_cli_die(&err);
	t = series ? kt_decompose_series(dc) : ranks ?
	    kt_decompose_ranks(dc) : kt_decompose_table(dc);
	if (t == NULL)
		kt_cli_nomem();
	if ((out = kt_out_open(output, -1, &err)) == NULL)
		kt_cli_die(&err);
	kt_cli_set_output(out);
	if (kt_table_write(t, kt_table_form_pick(form, output == NULL ||
	    strcmp(output, "-") == 0 ? STDOUT_FILENO : -1), 1, out) == -1) {
		kt_out_commit(out, &err);
		kt_cli_die(&err);
	}
	if (kt_out_commit(out, &err) == -1)
		kt_cli_die(&err);
	kt_cli_set_output(NULL);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_table_free(t);
	kt_decompose_free(dc);
	kt_model_free(m);
	kt_rules_free(rs);
	kt_reader_free(rd);
	kt_source_close(src);
	return 0;
}
