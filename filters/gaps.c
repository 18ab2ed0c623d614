/*
 * kt-gaps: lost GPU time, ranked.  Per device the union of all streams
 * is busy; every idle gap of at least --min-gap inside a step's window,
 * and every run of tiny kernels, is a row with the kernels around it and
 * what the launching CPU thread was doing instead.  A summary per step
 * (wall = busy + idle) goes to stderr, or into the table with --summary;
 * --fail-above exits 1 when idle exceeds a share of the wall.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

__extension__ typedef __int128 i128;

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-gaps [-jMsStT] [-b cause] [-f pct] [-g dur] [-k n] [-m glob]\n"
	    "               [-n n] [-o file] [-z dur] [--step-regex re] [file ...]\n"
	    "  -b, --by cause        fold the rows by the CPU op and user frame\n"
	    "                        that were running\n"
	    "  -f, --fail-above PCT  exit 1 when idle is over PCT%% of the wall\n"
	    "  -g, --min-gap DUR     smallest idle gap reported (default 10us)\n"
	    "  -j, --json            write JSON lines\n"
	    "  -k, --top K           keep the K costliest rows\n"
	    "  -m, --member GLOB     take the archive member matching GLOB\n"
	    "  -M, --merge           merge kt-gaps TSV tables (one per rank) into\n"
	    "                        the table of the merged trace (with -k)\n"
	    "  -n, --run-min N       tiny kernels in a run, at least (default 8)\n"
	    "  -o, --output FILE     write FILE atomically\n"
	    "  -S, --strict          refuse damaged input instead of repairing it\n"
	    "  -s, --summary         step and total rows in the table, not stderr\n"
	    "      --step-regex RE   steps: the spans RE matches, see kt(7)\n"
	    "  -t, --tsv             write TSV (the default when not a terminal)\n"
	    "  -T, --text            write an aligned text table\n"
	    "  -z, --tiny DUR        a tiny kernel is shorter (default 5us)\n"
	    "  -h, --help            this help;  -V, --version  the version\n"
	    "DUR is a number with a unit (ns, us, ms, s), or whole ns.\n");
}

/* A percentage with up to three decimals, in thousandths. */
static int64_t
percent(const char *s)
{
	int64_t v = 0;
	int dec = -1;
	const char *p;

	for (p = s; *p != '\0'; p++) {
		if (*p == '.' && dec == -1) {
			dec = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || dec == 3 || v > 100000000)
			goto bad;
		v = v * 10 + (*p - '0');
		if (dec >= 0)
			dec++;
	}
	if (p == s || (dec == 0 && p - s == 1))
		goto bad;
	for (; dec < 3; dec = dec < 0 ? 1 : dec + 1)
		v *= 10;
	if (v > 100000)
		goto bad;
	return v;
bad:
	kt_cli_warn("--fail-above: '%s' is not a percentage from 0 to 100 "
	    "(up to three decimals)", s);
	exit(2);
}

/* The per-step summary on stderr. */
static void
summary(const struct kt_table *st)
{
	size_t r;

	for (r = 0; r < kt_table_rows(st); r++) {
		const char *kind = kt_table_get(st, r, 3);

		fprintf(stderr, "%s: rank %s device %s %s%s: wall %s ns = "
		    "busy %s + idle %s (idle %s%%)\n", kt_cli_name(),
		    kt_table_get(st, r, 0), kt_table_get(st, r, 1),
		    strcmp(kind, "total") == 0 ? "total" : "step ",
		    strcmp(kind, "total") == 0 ? "" : kt_table_get(st, r, 2),
		    kt_table_get(st, r, 6), kt_table_get(st, r, 7),
		    kt_table_get(st, r, 8), kt_table_get(st, r, 9));
	}
}

/*
 * --merge: per-rank tables into the table of the merged trace, its top
 * within the union of theirs.
 */
static int
merge_tables(char **argv, int argc, int64_t top, int other,
    const struct kt_cli_opts *co)
{
	struct kt_error err;
	char **in;
	size_t n;

	if (other) {
		kt_cli_warn("--merge takes tables: only -k, -o and the forms");
		return 2;
	}
	if ((in = kt_cli_merge_inputs(argv, argc, co, &n)) == NULL)
		return 2;
	return kt_cli_merge_write(kt_gaps_merge_top(in, n, top, &err), &err,
	    co);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "fail-above", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "member", required_argument, NULL, 'm' },
		{ "merge", no_argument, NULL, 'M' },
		{ "min-gap", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "run-min", required_argument, NULL, 'n' },
		{ "strict", no_argument, NULL, 'S' },
		{ "summary", no_argument, NULL, 's' },
		{ "text", no_argument, NULL, 'T' },
		{ "tiny", required_argument, NULL, 'z' },
		{ "top", required_argument, NULL, 'k' },
		{ "tsv", no_argument, NULL, 't' },
		{ "step-regex", required_argument, NULL, KT_CLI_STEP_REGEX },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct kt_gaps_opts go = KT_GAPS_OPTS_INIT;
	struct kt_gaps_total tot;
	struct kt_table *t, *st = NULL;
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_model *m;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	const char *fail_text = NULL;
	int64_t fail = -1;
	int ch, rc, merge = 0, other = 0;

	kt_cli_init("kt-gaps");
	while ((ch = getopt_long(argc, argv, "b:f:g:hjk:Mm:n:o:sStTVz:",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			other = 1;
			if (strcmp(optarg, "cause") != 0) {
				kt_cli_warn("--by: '%s': only cause", optarg);
				return 2;
			}
			go.by_cause = 1;
			break;
		case 'f':
			fail = percent(optarg);
			fail_text = optarg;
			break;
		case 'g':
			other = 1;
			go.min_gap = kt_cli_duration("--min-gap", optarg);
			break;
		case 'k':
			go.top = kt_cli_int("--top", optarg, 1, INT64_MAX);
			break;
		case 'M':
			merge = 1;
			break;
		case 'n':
			other = 1;
			go.run_min = kt_cli_int("--run-min", optarg, 1,
			    INT32_MAX);
			break;
		case 's':
			other = 1;
			go.summary = 1;
			break;
		case 'z':
			other = 1;
			go.tiny = kt_cli_duration("--tiny", optarg);
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (merge)
		return merge_tables(argv, argc, go.top, other || fail >= 0 ||
		    co.member != NULL, &co);
	if (argc > 1) {
		kt_cli_warn("one trace at a time");
		return 2;
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1)
		return 2;
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    co.member, co.rflags, &src);
	m = kt_cli_model(rd);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	kt_cli_one_trace(src, argc ? argv[0] : "<stdin>", "several traces: "
	    "pick one with --member", 0);
	if ((t = kt_gaps_table(m, &go, go.summary ? NULL : &st, &tot)) ==
	    NULL)
		kt_cli_nomem();
	kt_cli_write_table(t, co.output, co.form);
	if (st != NULL)
		summary(st);
	/* No device activity is a data condition: --fail-above fails. */
	rc = kt_cli_no_device(rd, m);
	if (fail >= 0 && tot.wall > 0 &&
	    (i128)tot.idle * 100000 > (i128)fail * tot.wall) {
		char pct[64];

		kt_pct_format(tot.idle, tot.wall, pct);
		kt_cli_warn("%s: idle is %s%% of the wall, over %s%%",
		    kt_reader_name(rd), pct, fail_text);
		rc = 1;
	}
	kt_table_free(t);
	kt_table_free(st);
	kt_model_free(m);
	kt_reader_free(rd);
	kt_source_close(src);
	return rc;
}
