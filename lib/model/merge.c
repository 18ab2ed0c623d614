/*
 * merge.c: the reduce of per-rank tables.  A table filter writes one
 * TSV table per rank (the map); kt_merge_tables() joins such tables by
 * their key columns into the table the merged trace would have given,
 * each other column by its role (kt.h: struct kt_merge_col): sums add,
 * max and min keep the extreme, ratios and percentages are computed
 * again from merged numerators and denominators, percentiles stay only
 * where one input alone had the row, and a per-file row id cites its
 * file.  The kinds (bucket.c, gaps.c, memory.c, ops.c) give the roles
 * and the order of the rows; this file does the rest.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

/* One merged column of one merged row. */
struct acc {
	int64_t	 v;
	uint32_t file;		/* the input row the cell comes from */
	uint32_t row : 31;
	uint32_t has : 1;	/* a value was seen */
};

/* One merged row while it is built. */
struct mrow {
	size_t	 file, row;	/* the first input row */
	int	 inputs;
	int	 section;
};

/* What one merge holds. */
struct merge {
	const struct kt_merge_spec *sp;
	char *const	*paths;
	size_t		 npaths;
	struct kt_table	**in;		/* the loaded tables */
	size_t		*hdr;		/* the first table's columns: spec index */
	size_t		 nhdr;
	size_t		*at;		/* per spec column: its table column,
					   or SIZE_MAX */
	int		*ia, *ib, *ialt;	/* per spec column: its a, b and
					   alt columns (spec index), or -1 */
	struct kt_intern *keys;
	struct mrow	*rows;
	size_t		 nrows, cap;
	struct acc	*acc;		/* nrows x spec->ncols */
	struct kt_buf	 kb;		/* a key being built */
};

int
kt_merge_int(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno == ERANGE)
		return -1;
	*v = x;
	return 0;
}

int
kt_merge_cmp_cells(const char *a, const char *b)
{
	int64_t x, y;

	if (kt_merge_int(a, &x) == 0 && kt_merge_int(b, &y) == 0)
		return x < y ? -1 : x > y;
	return strcmp(a, b);
}

int
kt_merge_spec_col(const struct kt_merge_spec *sp, const char *name)
{
	size_t i;

	for (i = 0; i < sp->ncols; i++)
		if (strcmp(sp->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const char *
input_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/*
 * Whether t's header is one of the kind's: its first column, only the
 * kind's columns (each once) and all of those it needs.
 */
static int
of_kind(const struct kt_merge_spec *sp, const struct kt_table *t)
{
	size_t c, d, n = kt_table_ncols(t);
	int k;

	if (strcmp(kt_table_colname(t, 0), sp->first) != 0)
		return 0;
	for (c = 0; c < n; c++) {
		if ((k = kt_merge_spec_col(sp, kt_table_colname(t, c))) == -1)
			return 0;
		for (d = 0; d < c; d++)
			if (strcmp(kt_table_colname(t, d),
			    kt_table_colname(t, c)) == 0)
				return 0;
	}
	for (k = 0; k < (int)sp->ncols; k++)
		if (sp->cols[k].need && kt_table_column(t, sp->cols[k].name) < 0)
			return 0;
	return 1;
}

/* Load input i and check its header against the kind and input 0. */
static int
load(struct merge *mg, size_t i, struct kt_error *err)
{
	const struct kt_merge_spec *sp = mg->sp;
	const char *name = input_name(mg->paths[i]);
	struct kt_table *t;
	size_t c, n;
	int k;

	if ((t = kt_table_load(mg->paths[i], err)) == NULL) {
		/* Not a table at all: say which kind was wanted. */
		if (strncmp(err->msg, "not a TSV", 9) == 0 ||
		    strncmp(err->msg, "a NUL byte", 10) == 0)
			kt_error_set(err, name, err->line, 1, "not a %s table "
			    "(TSV with its header)", sp->kind);
		else if (strncmp(err->msg, "empty", 5) == 0)
			kt_error_set(err, name, 0, 0, "empty: not a %s table",
			    sp->kind);
		return -1;
	}
	mg->in[i] = t;
	if (kt_table_rows(t) >= (size_t)1 << 31) {
		kt_error_set(err, name, 0, 0, "too many rows to merge (2^31)");
		return -1;
	}
	n = kt_table_ncols(t);
	if (!of_kind(sp, t))
		goto notone;
	if (i == 0) {
		if ((mg->hdr = calloc(n, sizeof(*mg->hdr))) == NULL)
			goto nomem;
		mg->nhdr = n;
		for (c = 0; c < sp->ncols; c++)
			mg->at[c] = SIZE_MAX;
		for (c = 0; c < n; c++) {
			k = kt_merge_spec_col(sp, kt_table_colname(t, c));
			mg->hdr[c] = (size_t)k;
			mg->at[k] = c;
		}
		return 0;
	}
	if (n != mg->nhdr)
		goto differ;
	for (c = 0; c < n; c++)
		if (strcmp(kt_table_colname(t, c),
		    kt_table_colname(mg->in[0], c)) != 0)
			goto differ;
	return 0;
notone:
	kt_error_set(err, name, 1, 1, "not a %s table (TSV with its header)",
	    sp->kind);
	return -1;
differ:
	kt_error_set(err, name, 1, 1, "its columns differ from those of %s",
	    input_name(mg->paths[0]));
	return -1;
nomem:
	kt_error_set(err, name, 0, 0, "out of memory");
	return -1;
}

/* Whether row r of t is the kind's row of no data (none_col). */
static int
none_row(const struct merge *mg, const struct kt_table *t, size_t r)
{
	const struct kt_merge_spec *sp = mg->sp;
	int k;

	return sp->none_col != NULL &&
	    (k = kt_merge_spec_col(sp, sp->none_col)) >= 0 &&
	    mg->at[k] != SIZE_MAX &&
	    strcmp(kt_table_get(t, r, mg->at[k]), sp->none_val) == 0;
}

/* Add row r of input i to its merged row. */
static int
add_row(struct merge *mg, size_t i, size_t r, struct kt_error *err)
{
	const struct kt_merge_spec *sp = mg->sp;
	const struct kt_table *t = mg->in[i];
	const char *name = input_name(mg->paths[i]);
	long line = (long)r + 2;	/* after the header */
	struct mrow *mr;
	struct acc *a;
	size_t c, j;
	int64_t id, v;

	kt_buf_clear(&mg->kb);
	for (c = 0; c < mg->nhdr; c++)
		if (sp->cols[mg->hdr[c]].role == KT_MERGE_KEY) {
			kt_buf_adds(&mg->kb, kt_table_get(t, r, c));
			kt_buf_addc(&mg->kb, '\t');
		}
	if (kt_buf_addc(&mg->kb, '\0') == -1 ||
	    (id = kt_intern_put(mg->keys, mg->kb.p, mg->kb.n)) == -1)
		goto nomem;
	if ((size_t)id == mg->nrows) {
		if (mg->nrows == mg->cap) {
			size_t ncap = mg->cap ? mg->cap * 2 : 64;
			struct mrow *p = realloc(mg->rows, ncap * sizeof(*p));
			struct acc *q;

			if (p == NULL)
				goto nomem;
			mg->rows = p;
			if ((q = realloc(mg->acc, ncap * sp->ncols *
			    sizeof(*q))) == NULL)
				goto nomem;
			mg->acc = q;
			mg->cap = ncap;
		}
		mr = &mg->rows[mg->nrows];
		memset(mr, 0, sizeof(*mr));
		mr->file = i;
		mr->row = r;
		a = &mg->acc[mg->nrows * sp->ncols];
		for (j = 0; j < sp->ncols; j++) {
			memset(&a[j], 0, sizeof(a[j]));
			a[j].file = (uint32_t)i;
			a[j].row = (uint32_t)r;
		}
		mg->nrows++;
	} else if (sp->unique && !none_row(mg, t, r)) {
		size_t k;

		for (k = 0; k + 1 < mg->kb.n && k < 200; k++)
			if (mg->kb.p[k] == '\t')
				mg->kb.p[k] = ' ';
		if (k > 0)
			mg->kb.p[k - 1] = '\0';
		kt_error_set(err, name, line, 1, "the row of %s is also in "
		    "%s: one table per rank", mg->kb.p,
		    input_name(mg->paths[mg->rows[id].file]));
		return -1;
	}
	mr = &mg->rows[id];
	mr->inputs++;
	a = &mg->acc[(size_t)id * sp->ncols];
	for (c = 0; c < mg->nhdr; c++) {
		const struct kt_merge_col *mc = &sp->cols[mg->hdr[c]];
		const char *s = kt_table_get(t, r, c);
		struct acc *d = &a[mg->hdr[c]];
		int better;

		if (mc->role != KT_MERGE_SUM && mc->role != KT_MERGE_MAX &&
		    mc->role != KT_MERGE_MIN)
			continue;
		if (strcmp(s, "-") == 0)
			continue;
		if (kt_merge_int(s, &v) == -1) {
			kt_error_set(err, name, line, (long)c + 1, "%s: '%.40s' "
			    "is not an integer", mc->name, s);
			return -1;
		}
		if (mc->role == KT_MERGE_SUM) {
			if (__builtin_add_overflow(d->has ? d->v : 0, v,
			    &d->v)) {
				kt_error_set(err, name, line, (long)c + 1,
				    "merged totals out of range (past 2^63)");
				return -1;
			}
			d->has = 1;
			continue;
		}
		better = !d->has || (mc->role == KT_MERGE_MAX ? v > d->v :
		    v < d->v);
		if (better) {
			d->v = v;
			d->has = 1;
			d->file = (uint32_t)i;
			d->row = (uint32_t)r;
		}
	}
	return 0;
nomem:
	kt_error_set(err, name, 0, 0, "out of memory");
	return -1;
}

/* The input cell of spec column j from the input row of acc d. */
static const char *
src_cell(const struct merge *mg, const struct acc *d, size_t j)
{
	return kt_table_get(mg->in[d->file], d->row, mg->at[j]);
}

/* Write merged row k's cells into tmp (the first table's order). */
static int
put_cells(const struct merge *mg, size_t k, const int64_t *den,
    struct kt_table *tmp, struct kt_buf *b)
{
	const struct kt_merge_spec *sp = mg->sp;
	const struct mrow *mr = &mg->rows[k];
	const struct acc *a = &mg->acc[k * sp->ncols];
	const char *first = kt_table_get(mg->in[mr->file], mr->row, 0);
	size_t c, j;
	int rc = 0;

	for (c = 0; c < mg->nhdr; c++) {
		const struct kt_merge_col *mc = &sp->cols[j = mg->hdr[c]];
		const struct acc *x, *y;
		const char *s;
		int ka, kb2;

		switch (mc->role) {
		case KT_MERGE_SUM:
		case KT_MERGE_MAX:
		case KT_MERGE_MIN:
			rc |= a[j].has ? kt_table_int(tmp, a[j].v) :
			    kt_table_cell(tmp, "-");
			break;
		case KT_MERGE_RATIO:
			ka = mg->ia[j];
			kb2 = mg->ib[j];
			x = ka >= 0 ? &a[ka] : NULL;
			y = kb2 >= 0 ? &a[kb2] : NULL;
			if (x == NULL || y == NULL || !x->has || !y->has)
				rc |= kt_table_cell(tmp, "-");
			else
				rc |= kt_table_ratio(tmp, x->v, y->v,
				    mc->decimals);
			break;
		case KT_MERGE_PCT:
			ka = mc->alt != NULL && strcmp(first, mc->alt_row) == 0 ?
			    mg->ialt[j] : mg->ia[j];
			x = ka >= 0 ? &a[ka] : NULL;
			if (x == NULL || !x->has)
				rc |= kt_table_cell(tmp, "-");
			else
				rc |= kt_table_pct(tmp, x->v, den[j]);
			break;
		case KT_MERGE_PCTL:
			rc |= kt_table_cell(tmp, mr->inputs == 1 ?
			    src_cell(mg, &a[j], j) : "-");
			break;
		case KT_MERGE_ROWID:
			ka = mg->ia[j];
			if (ka < 0 || !a[ka].has) {
				rc |= kt_table_cell(tmp, "-");
				break;
			}
			s = src_cell(mg, &a[ka], j);
			/* kind:index gets its file; FILE:kind:index has it. */
			if (strcmp(s, "-") == 0 || strchr(s, ':') == NULL ||
			    strchr(strchr(s, ':') + 1, ':') != NULL) {
				rc |= kt_table_cell(tmp, s);
				break;
			}
			kt_buf_clear(b);
			kt_buf_adds(b, input_name(mg->paths[a[ka].file]));
			kt_buf_addc(b, ':');
			kt_buf_adds(b, s);
			rc |= kt_buf_addc(b, '\0') == -1 ? -1 :
			    kt_table_cell(tmp, b->p);
			break;
		default:	/* KEY, FIRST */
			rc |= kt_table_cell(tmp, src_cell(mg, &a[j], j));
		}
	}
	return rc ? -1 : 0;
}

struct order {
	struct kt_merge_row	 r;
	const char		**cell;
	int			 section;
};

static int
cmp_order(const void *x, const void *y, void *ctx)
{
	const struct kt_merge_spec *sp = ctx;
	const struct order *a = x, *b = y;
	int c;

	if (a->section != b->section)
		return a->section < b->section ? -1 : 1;
	if (sp->cmp != NULL && (c = sp->cmp(&a->r, &b->r, sp, sp->ctx)) != 0)
		return c;
	return a->r.first < b->r.first ? -1 : a->r.first > b->r.first;
}

/* The merged rows, ordered, cut, into a new table. */
static struct kt_table *
output(struct merge *mg, int64_t top, struct kt_error *err)
{
	const struct kt_merge_spec *sp = mg->sp;
	struct kt_table *tmp = NULL, *t = NULL;
	struct kt_buf b = KT_BUF_INIT;
	struct order *ord = NULL;
	const char **cells = NULL, **names = NULL;
	char **owned = NULL;
	int64_t *den = NULL;
	size_t i, j, c, nreal = 0, kept = 0;
	int nc = -1, none = -1;

	if ((den = calloc(sp->ncols, sizeof(*den))) == NULL ||
	    (names = calloc(mg->nhdr, sizeof(*names))) == NULL ||
	    (owned = calloc(mg->nhdr, sizeof(*owned))) == NULL)
		goto nomem;
	/* The wholes of the percentages. */
	if (sp->den_col != NULL)
		nc = kt_merge_spec_col(sp, sp->den_col);
	for (j = 0; j < sp->ncols; j++) {
		int bj, any = 0;

		if (sp->cols[j].role != KT_MERGE_PCT || mg->at[j] == SIZE_MAX ||
		    (bj = mg->ib[j]) < 0)
			continue;
		for (i = 0; nc >= 0 && mg->at[nc] != SIZE_MAX && i < mg->nrows;
		    i++)
			if (strcmp(src_cell(mg, &mg->acc[i * sp->ncols + nc],
			    (size_t)nc), sp->den_row) == 0)
				any = 1;
		for (i = 0; i < mg->nrows; i++) {
			const struct acc *d = &mg->acc[i * sp->ncols + bj];

			if (any && strcmp(src_cell(mg, &mg->acc[i * sp->ncols +
			    nc], (size_t)nc), sp->den_row) != 0)
				continue;
			if (d->has && __builtin_add_overflow(den[j], d->v,
			    &den[j])) {
				kt_error_set(err, input_name(mg->paths[0]), 0,
				    0, "merged totals out of range (past "
				    "2^63)");
				goto fail;
			}
		}
	}
	for (c = 0; c < mg->nhdr; c++) {
		const struct kt_merge_col *mc = &sp->cols[mg->hdr[c]];

		if ((owned[c] = malloc(strlen(mc->name) + 3)) == NULL)
			goto nomem;
		snprintf(owned[c], strlen(mc->name) + 3, "%s%s", mc->name,
		    mc->num ? ":n" : "");
		names[c] = owned[c];
	}
	if ((tmp = kt_table_new(names, mg->nhdr)) == NULL ||
	    (t = kt_table_new(names, mg->nhdr)) == NULL)
		goto nomem;
	for (i = 0; i < mg->nrows; i++)
		if (put_cells(mg, i, den, tmp, &b) == -1)
			goto nomem;
	/* The inputs and the sums are in tmp now: free them before the
	   sorted copy, so that the peak is not all three. */
	for (i = 0; i < mg->npaths; i++) {
		kt_table_free(mg->in[i]);
		mg->in[i] = NULL;
	}
	free(mg->acc);
	mg->acc = NULL;
	if ((ord = calloc(mg->nrows ? mg->nrows : 1, sizeof(*ord))) == NULL ||
	    (cells = calloc((mg->nrows ? mg->nrows : 1) * sp->ncols,
	    sizeof(*cells))) == NULL)
		goto nomem;
	if (sp->none_col != NULL)
		none = kt_merge_spec_col(sp, sp->none_col);
	for (i = 0; i < mg->nrows; i++) {
		struct order *o = &ord[i];

		o->cell = &cells[i * sp->ncols];
		for (c = 0; c < mg->nhdr; c++)
			o->cell[mg->hdr[c]] = kt_table_get(tmp, i, c);
		o->r.cell = o->cell;
		o->r.hdr = mg->hdr;
		o->r.nhdr = mg->nhdr;
		o->r.key = kt_intern_get(mg->keys, (uint32_t)i, &j);
		o->r.first = i;
		o->r.inputs = mg->rows[i].inputs;
		o->section = sp->section != NULL ? sp->section(&o->r, sp) : 0;
		if (none < 0 || o->cell[none] == NULL ||
		    strcmp(o->cell[none], sp->none_val) != 0)
			nreal++;
	}
	kt_sort_r(ord, mg->nrows, sizeof(*ord), cmp_order, (void *)sp);
	for (i = 0; i < mg->nrows; i++) {
		const struct order *o = &ord[i];

		if (nreal > 0 && none >= 0 && o->cell[none] != NULL &&
		    strcmp(o->cell[none], sp->none_val) == 0)
			continue;
		if (o->section == 0 && top > 0 && (int64_t)kept++ >= top)
			continue;
		for (c = 0; c < mg->nhdr; c++)
			if (kt_table_cell(t, o->cell[mg->hdr[c]]) == -1)
				goto nomem;
	}
	goto done;
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
fail:
	kt_table_free(t);
	t = NULL;
done:
	if (owned != NULL)
		for (c = 0; c < mg->nhdr; c++)
			free(owned[c]);
	free(owned);
	free(names);
	free(den);
	free(ord);
	free(cells);
	kt_buf_free(&b);
	kt_table_free(tmp);
	return t;
}

struct kt_table *
kt_merge_tables(const struct kt_merge_spec *sp, char *const *paths,
    size_t npaths, int64_t top, struct kt_error *err)
{
	struct merge mg;
	struct kt_table *t = NULL;
	size_t i, r;

	memset(&mg, 0, sizeof(mg));
	mg.sp = sp;
	mg.paths = paths;
	mg.npaths = npaths;
	if (npaths == 0 || npaths > UINT32_MAX) {
		kt_error_set(err, NULL, 0, 0, npaths ? "too many %s tables to "
		    "merge (2^32)" : "no %s tables to merge", sp->kind);
		return NULL;
	}
	if ((mg.in = calloc(npaths, sizeof(*mg.in))) == NULL ||
	    (mg.at = calloc(sp->ncols, sizeof(*mg.at))) == NULL ||
	    (mg.ia = calloc(sp->ncols, sizeof(*mg.ia))) == NULL ||
	    (mg.ib = calloc(sp->ncols, sizeof(*mg.ib))) == NULL ||
	    (mg.ialt = calloc(sp->ncols, sizeof(*mg.ialt))) == NULL ||
	    (mg.keys = kt_intern_new()) == NULL) {
		kt_error_set(err, NULL, 0, 0, "out of memory");
		goto done;
	}
	/* The columns each role reads, found once. */
	for (i = 0; i < sp->ncols; i++) {
		const struct kt_merge_col *mc = &sp->cols[i];

		mg.ia[i] = mc->a != NULL ? kt_merge_spec_col(sp, mc->a) : -1;
		mg.ib[i] = mc->b != NULL ? kt_merge_spec_col(sp, mc->b) : -1;
		mg.ialt[i] = mc->alt != NULL ? kt_merge_spec_col(sp, mc->alt) :
		    -1;
	}
	for (i = 0; i < npaths; i++) {
		if (load(&mg, i, err) == -1)
			goto done;
		for (r = 0; r < kt_table_rows(mg.in[i]); r++)
			if (add_row(&mg, i, r, err) == -1)
				goto done;
	}
	t = output(&mg, top, err);
done:
	if (mg.in != NULL)
		for (i = 0; i < npaths; i++)
			kt_table_free(mg.in[i]);
	free(mg.in);
	free(mg.hdr);
	free(mg.at);
	free(mg.ia);
	free(mg.ib);
	free(mg.ialt);
	free(mg.rows);
	free(mg.acc);
	kt_intern_free(mg.keys);
	kt_buf_free(&mg.kb);
	return t;
}
