/*
 * kt-memory: allocated and reserved memory over time, per device, from
 * the [memory] instants of a trace: a table with one row per device
 * (peaks with their time and step, capacity and headroom), the time
 * series (--series), a self-contained SVG (--svg), or the trace with
 * Perfetto counter tracks added (--counters).  One streaming pass; the
 * memory kept is one small sample per [memory] instant.
 */
#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

struct opts {
	int64_t		 capacity;	/* bytes, or -1 */
	int		 counters;
	int		 drop;
	int		 series;
	size_t		 points;
	int		 tsv_trace;
	const char	*svg;
};

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: kt-memory [-CdjMsSTtV] [-c gb] [-g file] [-l level] [-m glob]\n"
	    "                 [-n points] [-o file] [file ...]\n"
	    "  -c, --capacity-gb GB      device capacity in GB (10^9 bytes)\n"
	    "  -C, --counters            write the trace with counter tracks\n"
	    "  -d, --drop-instants       with --counters: drop the [memory] instants\n"
	    "  -g, --svg FILE            also draw the curves into FILE (SVG)\n"
	    "  -j, --json                JSON lines\n"
	    "  -l, --level N             gzip level 0-9 for a .gz trace output\n"
	    "  -m, --member GLOB         archive members to take\n"
	    "  -M, --merge               merge kt-memory TSV tables (one per rank)\n"
	    "                            into the table of the merged trace\n"
	    "  -n, --points N            series points per device (default 500,\n"
	    "                            0: every sample)\n"
	    "  -o, --output FILE         write FILE atomically\n"
	    "  -s, --series              the time series instead of the table\n"
	    "  -S, --strict              refuse damaged input\n"
	    "  -T, --text                an aligned text table\n"
	    "  -t, --tsv                 TSV (the default unless on a terminal)\n"
	    "  -h, --help, -V, --version\n");
}

/* Write the SVG of m to path. */
static void
write_svg(const struct kt_memory *m, const char *path, const char *title,
    size_t points)
{
	struct kt_error err;
	struct kt_out *out;
	struct kt_buf b = { 0 };

	if (kt_memory_svg(m, points == 0 ? KT_MEMORY_SVG_POINTS : points, title, &b) == -1)
		kt_cli_nomem();
	out = kt_cli_out_open(path, -1);
	kt_error_set(&err, path, 0, 0, "cannot write");
	kt_cli_out_commit(out, kt_out_write(out, b.p, b.n) == -1, &err);
	kt_buf_free(&b);
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
	return kt_cli_merge_write(kt_memory_merge(in, n, &err), &err, co);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "capacity-gb", required_argument, NULL, 'c' },
		{ "counters", no_argument, NULL, 'C' },
		{ "drop-instants", no_argument, NULL, 'd' },
		{ "svg", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "level", required_argument, NULL, 'l' },
		{ "member", required_argument, NULL, 'm' },
		{ "merge", no_argument, NULL, 'M' },
		{ "points", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "series", no_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "text", no_argument, NULL, 'T' },
		{ "tsv", no_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o;
	struct kt_cli_opts co = KT_CLI_OPTS_INIT;
	struct kt_source *src;
	struct kt_reader *rd;
	struct kt_memory *mem;
	struct kt_error err;
	struct kt_event ev;
	struct kt_out *out = NULL;
	struct kt_writer *w = NULL;
	const struct kt_meta *m;
	uint64_t *rows = NULL, nin = 0, nrows = 0, caprows = 0;
	size_t nm;
	int ch, rc, dropped = 0, merge = 0;

	memset(&o, 0, sizeof(o));
	o.capacity = -1;
	o.points = 500;
	kt_cli_init("kt-memory");
	while ((ch = getopt_long(argc, argv, "c:Cdg:hjl:Mm:n:o:sSTtV",
	    longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o.capacity = kt_cli_gb("--capacity-gb", optarg);
			break;
		case 'C':
			o.counters = 1;
			break;
		case 'd':
			o.drop = 1;
			break;
		case 'M':
			merge = 1;
			break;
		case 'g':
			o.svg = optarg;
			break;
		case 'n':
			o.points = (size_t)kt_cli_int("--points", optarg, 0,
			    100000000);
			break;
		case 's':
			o.series = 1;
			break;
		case 't':
			co.form = KT_TABLE_TSV;
			o.tsv_trace = 1;
			break;
		default:
			kt_cli_opt(&co, ch, optarg, usage);
		}
	}
	argc -= optind;
	argv += optind;
	if (merge)
		return merge_tables(argv, argc, o.counters || o.drop ||
		    o.series || o.svg != NULL || o.capacity >= 0 ||
		    co.member != NULL, &co);
	if (argc > 1) {
		kt_cli_warn("one input at a time (merge ranks with kt "
		    "rank-tag first, or tables with --merge)");
		return 2;
	}
	if (o.drop && !o.counters) {
		kt_cli_warn("--drop-instants is for --counters");
		return 2;
	}
	if (o.counters && (o.series || co.form == KT_TABLE_JSON ||
	    co.form == KT_TABLE_TEXT)) {
		kt_cli_warn("--counters writes a trace, not a table");
		return 2;
	}
	kt_cli_inputs(argv, argc);
	if (kt_cli_check_output(co.output, argv, argc) == -1 ||
	    (o.svg != NULL && kt_cli_check_output(o.svg, argv, argc) == -1))
		return 2;
	rd = kt_cli_open_one(argc ? argv[0] : "-", argc ? argv[0] : "<stdin>",
	    co.member, co.rflags, &src);
	if ((mem = kt_memory_new()) == NULL)
		kt_cli_nomem();
	if (o.counters) {
		out = kt_cli_out_open(co.output, co.level);
		if ((w = kt_writer_new(out, o.tsv_trace ? KT_WRITE_TSV :
		    0)) == NULL)
			kt_cli_nomem();
	}
	while ((rc = kt_reader_next(rd, &ev, &err)) == 1) {
		if (kt_memory_add(mem, &ev) == -1)
			kt_cli_nomem();
		if (w != NULL) {
			if (nin++ == 0) {
				m = kt_reader_metas(rd, &nm);
				(void)kt_cli_keep_rank(w, rd);
				if (kt_writer_begin(w, m, nm, NULL, 0) == -1)
					goto werr;
			}
			if (o.drop && ev.kind == KT_MEMORY) {
				dropped = 1;
				continue;
			}
			if (nrows == caprows) {
				uint64_t *t;

				caprows = caprows ? 2 * caprows : 4096;
				if ((t = realloc(rows, caprows *
				    sizeof(*t))) == NULL)
					kt_cli_nomem();
				rows = t;
			}
			rows[nrows++] = ev.index;
			if (kt_writer_event(w, &ev) == -1)
				goto werr;
		}
		if ((ev.index & 0xffff) == 0)
			kt_cli_progress(rd);
	}
	if (rc == -1)
		kt_cli_die(&err);
	kt_cli_progress_done();
	m = kt_reader_metas(rd, &nm);
	if (kt_memory_finish(mem, m, nm, o.capacity,
	    kt_reader_rank(rd)) == -1)
		kt_cli_nomem();
	if (w != NULL) {
		struct kt_buf b = { 0 };
		struct kt_event cev;
		struct kt_rows si;
		size_t k, n = kt_memory_counter_count(mem), nc = 0;
		uint64_t next = nin;
		int applied, mapped, sr, got;

		if (nin == 0) {
			(void)kt_cli_keep_rank(w, rd);
			if (kt_writer_begin(w, m, nm, NULL, 0) == -1)
				goto werr;
		}
		/* Row numbers: map positions through the input's. */
		mapped = kt_reader_rows(rd, &si, &applied) && !applied;
		if (mapped)
			for (k = 0; k < nrows; k++)
				if (rows[k] < si.n)
					rows[k] = kt_rows_at(&si, rows[k]);
		for (k = 0; k < nrows; k++)
			if (rows[k] >= next)
				next = rows[k] + 1;
		for (k = 0; k < n; k++)
			for (sr = 0; sr < KT_MEMORY_SERIES; sr++) {
				b.n = 0;
				if ((got = kt_memory_counter_event(mem, k, sr,
				    &b)) == 1)
					continue;
				if (got == -1)
					kt_cli_nomem();
				memset(&cev, 0, sizeof(cev));
				if (kt_event_scan(b.p, b.n, &cev, &err) == -1)
					kt_cli_die(&err);
				cev.index = next + nc;
				cev.kind = KT_COUNTER;
				if (kt_writer_event(w, &cev) == -1)
					goto werr;
				nc++;
			}
		/* Counters get new row numbers after the input's. */
		if (dropped || mapped) {
			for (k = 0; k < nc; k++) {
				if (nrows == caprows) {
					uint64_t *t;

					caprows = caprows ? 2 * caprows : 4096;
					if ((t = realloc(rows, caprows *
					    sizeof(*t))) == NULL)
						kt_cli_nomem();
					rows = t;
				}
				rows[nrows++] = next + k;
			}
		}
		if (kt_writer_end_index(w, m, nm, dropped || mapped ? rows :
		    NULL, dropped || mapped ? nrows : 0) == -1)
			goto werr;
		kt_writer_free(w);
		kt_cli_out_commit(out, 0, &err);
		kt_buf_free(&b);
	} else {
		struct kt_table *t = o.series ? kt_memory_series(mem,
		    o.points) : kt_memory_table(mem);

		if (t == NULL)
			kt_cli_nomem();
		kt_cli_write_table(t, co.output, co.form);
		kt_table_free(t);
	}
	if (o.svg != NULL)
		write_svg(mem, o.svg, kt_reader_name(rd), o.points);
	kt_cli_report_repairs(kt_reader_name(rd), kt_reader_repairs(rd));
	free(rows);
	kt_memory_free(mem);
	kt_reader_free(rd);
	kt_source_close(src);
	return 0;
werr:
	kt_cli_out_commit(out, 1, NULL);
	return 2;
}
