/*
 * kt-bucket: where the GPU time went.  GPU activities are grouped into
 * buckets (attention, gemm, communication, elementwise, reduction, norm,
 * transfer, other) by regex rules over kernel names, or by name, stream,
 * step, rank or device, and written as a table: count, total, union,
 * share of busy time, mean, p50, p90, max, bytes and GB/s, plus the busy
 * time (union over streams) of every device.  --merge sums such tables.
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
	    "usage: kt-bucket [-jMRStT] [-b keys] [-e name] [-F regex] [-m glob]\n"
	    "                 [-o file] [-r rules] [--step-regex re] [file ...]\n"
	    "  -b, --by KEYS      group by bucket,name,stream,step,rank,device,op,\n"
	    "                     frame (comma-separated, in column order;\n"
	    "                     default bucket)\n"
	    "  -e, --explain NAME say which rule buckets kernel NAME, and why; with\n"
	    "                     a trace, what decided for each of its kernels\n"
	    "  -F, --frame-skip REGEX  files that are not the user's code (--by frame)\n"
	    "  -j, --json         write JSON lines\n"
	    "  -m, --member GLOB  take the archive member matching GLOB\n"
	    "  -M, --merge        sum kt-bucket TSV tables (one per rank) into one\n"
	    "  -o, --output FILE  write FILE atomically\n"
	    "  -r, --rules FILE   rules bucket<TAB>regex, tried before the defaults\n"
	    "  -R, --replace      the --rules file replaces the default rules\n"
	    "  -S, --strict       refuse damaged input instead of repairing it\n"
	    "      --step-regex RE  steps: the spans RE matches, see kt(7)\n"
	    "  -t, --tsv          write TSV (the default when not a terminal)\n"
	    "  -T, --text         write an aligned text table\n"
	    "  -h, --help         this help;  -V, --version  the version\n");
}

static int
has_frame(const struct kt_bucket_opts *bo)
{
	size_t i;

	for (i = 0; i < bo->nby; i++)
		if (bo->by[i] == KT_BY_FRAME)
			return 1;
	return 0;
}

/* One way activities of the explained name were bucketed. */
struct why {
	struct kt_decision	 d;
	uint32_t		 opname;	/* KT_NO: none */
	uint64_t		 count, first;	/* first: a row number */
	int			 kind;
};

/*
 * --explain NAME with a trace: for the activities named NAME, each way
 * their bucket was decided (the rule, the op evidence and the op), how
 * many and the first one's row id.
 */
static int
explain_trace(const struct kt_rules *rules, const char *name,
    const char *path, const struct kt_cli_opts *co)
{
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_buf b = KT_BUF_INIT;
	struct why *w = NULL;
	size_t nw = 0, i, j;
	uint64_t n = 0;

	rd = kt_cli_open_one(path, path, co->member, co->rflags, &src);
	m = kt_cli_model(rd);
	for (i = 0; i < m->nact; i++) {
		struct kt_decision d;
		uint32_t on;

		if (strcmp(kt_model_str(m, m->act[i].name), name) != 0)
			continue;
		n++;
		kt_rules_decide(rules, m, (uint32_t)i, &d);
		on = d.op != KT_NO ? m->spans[d.op].name : KT_NO;
		for (j = 0; j < nw; j++)
			if (w[j].d.how == d.how && w[j].d.rule == d.rule &&
			    w[j].d.bucket == d.bucket && w[j].opname == on)
				break;
		if (j == nw) {
			struct why *nwp = realloc(w, (nw + 1) * sizeof(*w));

			if (nwp == NULL)
				kt_cli_nomem();
			w = nwp;
			w[nw].d = d;
			w[nw].opname = on;
			w[nw].count = 0;
			w[nw].first = m->act[i].index;
			w[nw].kind = m->act[i].kind;
			nw++;
		}
		w[j].count++;
		if (m->act[i].index < w[j].first)
			w[j].first = m->act[i].index;
	}
	kt_buf_printf(&b, "%s: %llu activities in the trace\n", name,
	    (unsigned long long)n);
	for (j = 0; j < nw; j++) {
		kt_buf_printf(&b, "%llu (first %s:%llu): bucket %s: ",
		    (unsigned long long)w[j].count,
		    kt_kind_name((enum kt_kind)w[j].kind),
		    (unsigned long long)w[j].first,
		    kt_rules_bucket_name(rules, w[j].d.bucket));
		kt_rules_describe(rules, m, &w[j].d, &b);
		kt_buf_addc(&b, '\n');
	}
	if (b.err)
		kt_cli_nomem();
	fwrite(b.p, 1, b.n, stdout);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_buf_free(&b);
	free(w);
	kt_model_free(m);
	kt_reader_free(rd);
	kt_source_close(src);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		kt_cli_warn("<stdout>: write error");
		return 2;
	}
	if (n == 0) {
		kt_cli_warn("%s: no GPU activity named '%s'", path, name);
		return 1;
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "explain", required_argument, NULL, 'e' },
		{ "frame-skip", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "merge", no_argument, NULL, 'M' },
		{ "output", required_argument, NULL, 'o' },
		{ "replace", no_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'r' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "step-regex", required_argument, NULL, KT_CLI_STEP_REGEX },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_bucket_opts bo;
	struct kt_rules *rules;
	struct kt_error err;
	struct kt_table *t;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	const char *by = KT_BUCKET_BY_DEFAULT, *explain = NULL, *rulefile = NULL;
	const char *skip = NULL;
	int ch, merge = 0, replace = 0, nodev = 0;

	memset(&err, 0, sizeof(err));
	memset(&bo, 0, sizeof(bo));
	kt_cli_init("kt-bucket");
	while ((ch = getopt_long(argc, argv, "b:e:F:hjm:Mo:r:RStTV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			by = optarg;
			break;
		case 'e':
			explain = optarg;
			break;
		case 'F':
			skip = optarg;
			break;
		case 'M':
			merge = 1;
			break;
		case 'r':
			rulefile = optarg;
			break;
		case 'R':
			replace = 1;
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (replace && rulefile == NULL) {
		kt_cli_warn("--replace needs --rules FILE");
		return 2;
	}
	if (kt_bucket_by_parse(&bo, by) == -1) {
		kt_cli_warn("--by: '%s' is not a list of bucket, name, stream, "
		    "step, rank, device (each once)", by);
		return 2;
	}
	if (merge && (rulefile != NULL || explain != NULL ||
	    strcmp(by, KT_BUCKET_BY_DEFAULT) != 0)) {
		kt_cli_warn("--merge takes tables: no --rules, --explain or "
		    "--by");
		return 2;
	}
	if (skip != NULL && kt_chains_check(skip, &err) == -1) {
		kt_cli_warn("%s", err.msg);
		return 2;
	}
	if (!merge && argc > 1) {
		kt_cli_warn("one trace at a time: bucket each and sum the "
		    "tables with --merge");
		return 2;
	}
	kt_cli_inputs(argv, argc);
	if (explain == NULL && kt_cli_check_output(co.output, argv, argc) ==
	    -1)
		return 2;
	if ((rules = kt_rules_new(1)) == NULL)
		kt_cli_nomem();
	if (rulefile != NULL && kt_rules_load(rules, rulefile, replace,
	    &err) == -1)
		kt_cli_die(&err);
	bo.rules = rules;
	if (explain != NULL && argc > 0) {
		ch = explain_trace(rules, explain, argv[0], &co);
		kt_rules_free(rules);
		return ch;
	}
	if (explain != NULL) {
		struct kt_buf b = KT_BUF_INIT;

		if (kt_rules_explain(rules, KT_KERNEL, explain, &b) == KT_NO)
			kt_cli_nomem();
		fwrite(b.p, 1, b.n, stdout);
		kt_buf_free(&b);
		kt_rules_free(rules);
		if (fflush(stdout) == EOF || ferror(stdout)) {
			kt_cli_warn("<stdout>: write error");
			return 2;
		}
		return 0;
	}
	if (merge) {
		char *dash[] = { (char *)"-" };

		if ((t = kt_bucket_merge(argc ? argv : dash,
		    argc ? (size_t)argc : 1, &err)) == NULL)
			kt_cli_die(&err);
	} else {
		struct kt_source *src;
		struct kt_reader *rd;
		struct kt_model *m;
		const char *name = argc ? argv[0] : "<stdin>";

		rd = kt_cli_open_one(argc ? argv[0] : "-", name, co.member,
		    co.rflags, &src);
		m = kt_cli_model_with(rd, has_frame(&bo) ? KT_MODEL_SEQ : 0);
		if (has_frame(&bo) &&
		    (bo.chains = kt_chains_new(m, skip, &err)) == NULL)
			kt_cli_die(&err);
		kt_cli_report_repairs(kt_reader_name(rd),
		    kt_reader_repairs(rd));
		kt_cli_one_trace(src, name, "several traces: pick one with "
		    "--member, bucket each and sum the tables with --merge", 0);
		nodev = kt_cli_no_device(rd, m);
		if ((t = kt_bucket_table(m, &bo)) == NULL)
			kt_cli_nomem();
		kt_chains_free(bo.chains);
		kt_model_free(m);
		kt_reader_free(rd);
		kt_source_close(src);
	}
	kt_cli_write_table(t, co.output, co.form);
	kt_table_free(t);
	kt_rules_free(rules);
	return nodev;
}
