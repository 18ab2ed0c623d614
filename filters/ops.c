/*
 * kt-ops: the key_averages() table of a trace.  One row per CPU op name
 * (optionally also per input shapes, user frame or rank): calls, total
 * and self CPU time, total and self GPU time of the activities it
 * launched, averages and shares, the longest call's row id.
 * The table is lib/model/ops.c's (kt views writes it too); this file
 * is the options and the messages.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

#define OPT_TOTALS	0x100

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-ops [-jMStTV] [-b keys] [-F regex] [-k kinds] "
	    "[-m glob] [-n count]\n"
	    "              [-o file] [-s column] [--step-regex re] [--totals]\n"
	    "              [file ...]\n"
	    "  -b, --by LIST           also group by shape, frame, rank\n"
	    "  -F, --frame-skip REGEX  files that are not the user's code\n"
	    "  -k, --kind LIST         rows of these kinds (default cpu_op,\n"
	    "                          user_annotation, step, cuda_runtime,\n"
	    "                          cuda_driver)\n"
	    "  -j, --json              JSON lines\n"
	    "  -m, --member GLOB       archive members to take\n"
	    "  -M, --merge             merge kt-ops TSV tables (one per rank) into\n"
	    "                          the table of the merged trace\n"
	    "  -n, --limit N           the first N rows\n"
	    "  -o, --output FILE       write FILE atomically\n"
	    "  -s, --sort COLUMN       sort by it (default gpu_total_ns)\n"
	    "  -S, --strict            refuse damaged input\n"
	    "      --step-regex RE     steps: the spans RE matches, see kt(7)\n"
	    "  -T, --text              an aligned text table\n"
	    "      --totals            a last row 'total': the wholes of the shares\n"
	    "                          (what --merge needs to compute them again)\n"
	    "  -t, --tsv               TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* Parse a comma list into bits: each item one of names[] (bit vals[]). */
static unsigned
parse_list(const char *opt, const char *arg, const char *const *names,
    const unsigned *vals, size_t n)
{
	const char *p = arg;
	unsigned bits = 0;

	for (;;) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < n; i++)
			if (strlen(names[i]) == len &&
			    strncmp(names[i], p, len) == 0)
				break;
		if (i == n) {
			kt_cli_warn("%s: no '%.*s' (%s%s%s%s%s%s%s%s%s)", opt,
			    (int)len, p, names[0], n > 1 ? ", " : "",
			    n > 1 ? names[1] : "", n > 2 ? ", " : "",
			    n > 2 ? names[2] : "", n > 3 ? ", " : "",
			    n > 3 ? names[3] : "", n > 4 ? ", " : "",
			    n > 4 ? names[4] : "");
			exit(2);
		}
		bits |= vals[i];
		p += len;
		if (*p == '\0')
			return bits;
		p++;
	}
}

/* --merge: per-rank tables into the table of the merged trace. */
static int
merge_tables(char **argv, int argc, int other, const struct kt_cli_opts *co)
{
	struct kt_error err;
	char **in;
	size_t n;

	if (other) {
		kt_cli_warn("--merge takes tables: only -o and the forms");
		return 2;
	}
	if ((in = kt_cli_merge_inputs(argv, argc, co, &n)) == NULL)
		return 2;
	return kt_cli_merge_write(kt_ops_merge(in, n, &err), &err, co);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "frame-skip", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "kind", required_argument, NULL, 'k' },
		{ "limit", required_argument, NULL, 'n' },
		{ "member", required_argument, NULL, 'm' },
		{ "merge", no_argument, NULL, 'M' },
		{ "output", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "totals", no_argument, NULL, OPT_TOTALS },
		{ "tsv", no_argument, NULL, 't' },
		{ "step-regex", required_argument, NULL, KT_CLI_STEP_REGEX },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const bynames[] = { "shape", "frame", "rank" };
	static const unsigned byvals[] = { KT_OPS_BY_SHAPE, KT_OPS_BY_FRAME,
	    KT_OPS_BY_RANK };
	static const char *const kindnames[] = { "cpu_op", "user_annotation",
	    "step", "cuda_runtime", "cuda_driver" };
	static const unsigned kindvals[] = { 1u << KT_CPU_OP,
	    1u << KT_USER_ANNOTATION, 1u << KT_STEP, 1u << KT_CUDA_RUNTIME,
	    1u << KT_CUDA_DRIVER };
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_table *t;
	struct kt_error err;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	struct kt_ops_opts oo = KT_OPS_OPTS_INIT;
	struct kt_ops_totals tot;
	struct kt_model *m;
	const char *skip = NULL;
	int ch, c, rc = 0, merge = 0;

	kt_cli_init("kt-ops");
	while ((ch = getopt_long(argc, argv, "b:F:hjk:Mm:n:o:s:STtV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			oo.by |= parse_list("--by", optarg, bynames, byvals, 3);
			break;
		case 'F':
			skip = optarg;
			break;
		case 'k':
			oo.kinds = parse_list("--kind", optarg, kindnames,
			    kindvals, 5);
			break;
		case 'n':
			oo.limit = kt_cli_int("--limit", optarg, 0, 1ll << 40);
			break;
		case 's':
			oo.sort = optarg;
			break;
		case 'M':
			merge = 1;
			break;
		case OPT_TOTALS:
			oo.totals = 1;
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (merge)
		return merge_tables(argv, argc, oo.by != 0 || oo.kinds != 0 ||
		    oo.limit >= 0 || oo.sort != NULL || oo.totals ||
		    skip != NULL || co.member != NULL, &co);
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first, or tables with --merge)");
		exit(2);
	}
	if (oo.sort != NULL && (c = kt_ops_column(oo.sort, oo.by)) < 0) {
		if (c == -1)
			kt_cli_warn("--sort: no column '%s'", oo.sort);
		else
			kt_cli_warn("--sort: column '%s' needs --by %s",
			    oo.sort, strcmp(oo.sort, "shapes") == 0 ? "shape" :
			    oo.sort);
		exit(2);
	}
	if (skip != NULL && kt_chains_check(skip, &err) == -1) {
		kt_cli_warn("%s", err.msg);
		exit(2);
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1)
		exit(2);
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    co.member, co.rflags, &src);
	m = kt_cli_model_with(rd, (oo.by & KT_OPS_BY_SHAPE) ?
	    KT_MODEL_SHAPES : 0);
	if ((oo.by & KT_OPS_BY_FRAME) &&
	    (oo.chains = kt_chains_new(m, skip, &err)) == NULL)
		kt_cli_die(&err);
	if ((t = kt_ops_table(m, &oo, &tot, &err)) == NULL) {
		char msg[sizeof(err.msg)];

		snprintf(msg, sizeof(msg), "%s", err.msg);
		kt_error_set(&err, kt_reader_name(rd), 0, 0, "%s", msg);
		kt_cli_die(&err);
	}
	kt_cli_write_table(t, co.output, co.form);
	if (tot.calls == 0) {
		kt_cli_warn("%s: no CPU op (cpu_op, user_annotation, "
		    "ProfilerStep#, cuda_runtime, cuda_driver) in the trace",
		    kt_reader_name(rd));
		rc = 1;
	}
	if (tot.lost > 0)
		kt_cli_warn("%llu GPU activities (%lld ns) without a "
		    "launching call are in no row",
		    (unsigned long long)tot.lost, (long long)tot.lost_ns);
	if (tot.clamped > 0)
		kt_cli_warn("%llu calls whose children overlap and add up to "
		    "more than the call: self CPU time 0",
		    (unsigned long long)tot.clamped);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_table_free(t);
	kt_chains_free(oo.chains);
	kt_model_free(m);
	kt_reader_free(rd);
	kt_source_close(src);
	return rc;
}
