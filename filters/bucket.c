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
	    "usage: kt-bucket [-jMRStT] [-b keys] [-e name] [-m glob] [-o file]\n"
	    "                 [-r rules] [file ...]\n"
	    "  -b, --by KEYS      group by bucket,name,stream,step,rank,device\n"
	    "                     (comma-separated, in column order; default bucket)\n"
	    "  -e, --explain NAME say which rule buckets kernel NAME, and why\n"
	    "  -j, --json         write JSON lines\n"
	    "  -m, --member GLOB  take the archive member matching GLOB\n"
	    "  -M, --merge        sum kt-bucket TSV tables (one per rank) into one\n"
	    "  -o, --output FILE  write FILE atomically\n"
	    "  -r, --rules FILE   rules bucket<TAB>regex, tried before the defaults\n"
	    "  -R, --replace      the --rules file replaces the default rules\n"
	    "  -S, --strict       refuse damaged input instead of repairing it\n"
	    "  -t, --tsv          write TSV (the default when not a terminal)\n"
	    "  -T, --text         write an aligned text table\n"
	    "  -h, --help         this help;  -V, --version  the version\n");
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "explain", required_argument, NULL, 'e' },
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
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_bucket_opts bo;
	struct kt_rules *rules;
	struct kt_error err;
	struct kt_table *t;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	const char *by = KT_BUCKET_BY_DEFAULT, *explain = NULL, *rulefile = NULL;
	int ch, merge = 0, replace = 0;

	memset(&err, 0, sizeof(err));
	memset(&bo, 0, sizeof(bo));
	kt_cli_init("kt-bucket");
	while ((ch = getopt_long(argc, argv, "b:e:hjm:Mo:r:RStTV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			by = optarg;
			break;
		case 'e':
			explain = optarg;
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
	if (explain != NULL && argc > 0) {
		kt_cli_warn("--explain reads no trace");
		return 2;
	}
	if (!merge && explain == NULL && argc > 1) {
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
		m = kt_cli_model(rd);
		kt_cli_report_repairs(kt_reader_name(rd),
		    kt_reader_repairs(rd));
		kt_cli_one_trace(src, name, "several traces: pick one with "
		    "--member, bucket each and sum the tables with --merge", 0);
		if (m->nact == 0)
			kt_cli_warn("%s: no GPU activity (kernel, gpu_memcpy, "
			    "gpu_memset) in the trace", kt_reader_name(rd));
		if ((t = kt_bucket_table(m, &bo)) == NULL)
			kt_cli_nomem();
		kt_model_free(m);
		kt_reader_free(rd);
		kt_source_close(src);
	}
	kt_cli_write_table(t, co.output, co.form);
	kt_table_free(t);
	kt_rules_free(rules);
	return 0;
}
