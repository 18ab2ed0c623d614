/*
 * ranks.c: what the merges of per-rank tables share (kt-decompose and
 * kt-overlap --merge, kt views --merge): the check of a loaded table's
 * header, integer cells, the (rank, device) order of the model's
 * devices, and the merge of tables whose rows are per device: each
 * device's rows are those of one rank, so the table of the merged trace
 * is every input's rows in (rank, device) order.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

int
kt_ranks_header(const struct kt_table *t, const char *const *cols,
    size_t ncols)
{
	size_t i;

	if (kt_table_ncols(t) != ncols)
		return 0;
	for (i = 0; i < ncols; i++) {
		const char *c = cols[i], *n = kt_table_colname(t, i);
		size_t l = strcspn(c, ":");

		if (n == NULL || strlen(n) != l || strncmp(n, c, l) != 0)
			return 0;
	}
	return 1;
}

int
kt_ranks_int(const char *s, int64_t *v)
{
	char *end;
	long long x;

	if (strcmp(s, "-") == 0)
		return 1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno == ERANGE)
		return -1;
	*v = x;
	return 0;
}

/* A rank or device cell as the model orders it: "-" and "pid:P" first. */
static int64_t
order_int(const char *s)
{
	int64_t v;

	return kt_ranks_int(s, &v) == 0 ? v : -1;
}

int
kt_ranks_cmp_device(const char *ra, const char *da, const char *rb,
    const char *db)
{
	int64_t x = order_int(ra), y = order_int(rb);

	if (x != y)
		return x < y ? -1 : 1;
	x = order_int(da);
	y = order_int(db);
	if (x != y)
		return x < y ? -1 : 1;
	return strcmp(da, db);
}

/* A row of one of the inputs. */
struct cref {
	const struct kt_table	*t;
	size_t			 row;
	size_t			 pos;		/* its place among all rows */
};

static int
cmp_cref(const void *a, const void *b)
{
	const struct cref *x = a, *y = b;
	int c;

	if ((c = kt_ranks_cmp_device(kt_table_get(x->t, x->row, 0),
	    kt_table_get(x->t, x->row, 1), kt_table_get(y->t, y->row, 0),
	    kt_table_get(y->t, y->row, 1))) != 0)
		return c;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

struct kt_table **
kt_ranks_load(char *const *paths, size_t npaths, const char *const *cols,
    size_t ncols, const char *what, struct kt_error *err)
{
	struct kt_table **t;
	size_t i;

	if ((t = calloc(npaths + 1, sizeof(*t))) == NULL) {
		kt_error_set(err, "", 0, 0, "out of memory");
		return NULL;
	}
	for (i = 0; i < npaths; i++) {
		if ((t[i] = kt_table_load(paths[i], err)) == NULL)
			goto fail;
		if (!kt_ranks_header(t[i], cols, ncols)) {
			kt_error_set(err, strcmp(paths[i], "-") == 0 ?
			    "<stdin>" : paths[i], 1, 1, "not a %s table "
			    "(TSV with its header)", what);
			goto fail;
		}
	}
	return t;
fail:
	kt_ranks_free(t, npaths);
	return NULL;
}

void
kt_ranks_free(struct kt_table **t, size_t n)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < n; i++)
		kt_table_free(t[i]);
	free(t);
}

struct kt_table *
kt_ranks_concat(char *const *paths, size_t npaths, const char *const *cols,
    size_t ncols, const char *what, struct kt_error *err)
{
	struct kt_table **in, *t = NULL;
	struct cref *r = NULL, nodev;
	size_t i, k, c, n = 0, tot = 0;
	int rc = 0;

	if ((in = kt_ranks_load(paths, npaths, cols, ncols, what, err)) ==
	    NULL)
		return NULL;
	for (i = 0; i < npaths; i++)
		tot += kt_table_rows(in[i]);
	if ((r = calloc(tot + 1, sizeof(*r))) == NULL ||
	    (t = kt_table_new(cols, ncols)) == NULL)
		goto nomem;
	nodev.t = NULL;
	for (i = 0; i < npaths; i++)
		for (k = 0; k < kt_table_rows(in[i]); k++) {
			/* A rank without device activity adds no row. */
			if (strcmp(kt_table_get(in[i], k, 1),
			    "no device activity") == 0) {
				if (nodev.t == NULL) {
					nodev.t = in[i];
					nodev.row = k;
				}
				continue;
			}
			r[n].t = in[i];
			r[n].row = k;
			r[n].pos = n;
			n++;
		}
	kt_qsort(r, n, sizeof(*r), cmp_cref);
	if (n == 0 && nodev.t != NULL) {
		r[0] = nodev;
		n = 1;
	}
	for (i = 0; i < n && rc == 0; i++)
		for (c = 0; c < ncols; c++)
			rc |= kt_table_cell(t, kt_table_get(r[i].t, r[i].row,
			    c));
	if (rc != 0)
		goto nomem;
	free(r);
	kt_ranks_free(in, npaths);
	return t;
nomem:
	kt_error_set(err, "", 0, 0, "out of memory");
	free(r);
	kt_table_free(t);
	kt_ranks_free(in, npaths);
	return NULL;
}
