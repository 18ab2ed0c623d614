/*
 * table.c: the tables the analysis filters write (kt-bucket, kt-gaps,
 * ...).  A table is a header and rows of text cells, written in one of
 * three forms: TSV under a header line (for awk and for kt's own --merge
 * steps), an aligned text table (for a person at a terminal), or JSON
 * lines (one object per row).  Cells are text the caller formatted from
 * integers, so no floating point enters here either.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kt.h"

__extension__ typedef unsigned __int128 u128;

struct kt_table {
	size_t		 ncols;
	char		**name;		/* column names */
	unsigned char	*num;		/* 1: a number column */
	struct kt_buf	 cells;		/* every cell, NUL-terminated, row by row */
	size_t		 ncells;
	size_t		*off;		/* start of each cell in cells */
	size_t		 offcap;
	size_t		 filled;	/* cells of the row being built */
	int		 flushed;	/* the header and some rows are out */
};

struct kt_table *
kt_table_new(const char *const *cols, size_t ncols)
{
	struct kt_table *t;
	size_t i;

	if (ncols == 0 || (t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->ncols = ncols;
	t->name = calloc(ncols, sizeof(*t->name));
	t->num = calloc(ncols, 1);
	if (t->name == NULL || t->num == NULL) {
		kt_table_free(t);
		return NULL;
	}
	for (i = 0; i < ncols; i++) {
		const char *c = strchr(cols[i], ':');
		size_t n = c != NULL ? (size_t)(c - cols[i]) : strlen(cols[i]);

		if ((t->name[i] = malloc(n + 1)) == NULL) {
			kt_table_free(t);
			return NULL;
		}
		memcpy(t->name[i], cols[i], n);
		t->name[i][n] = '\0';
		t->num[i] = c != NULL && c[1] == 'n';
	}
	return t;
}

struct kt_table *
kt_table_new_like(const struct kt_table *t)
{
	struct kt_table *n;
	size_t i;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->ncols = t->ncols;
	n->name = calloc(t->ncols, sizeof(*n->name));
	n->num = malloc(t->ncols);
	if (n->name == NULL || n->num == NULL) {
		kt_table_free(n);
		return NULL;
	}
	memcpy(n->num, t->num, t->ncols);
	for (i = 0; i < t->ncols; i++)
		if ((n->name[i] = strdup(t->name[i])) == NULL) {
			kt_table_free(n);
			return NULL;
		}
	return n;
}

struct kt_table *
kt_table_head(const struct kt_table *t, size_t rows)
{
	struct kt_table *n;
	size_t k, cells;

	if ((n = kt_table_new_like(t)) == NULL)
		return NULL;
	if (rows > t->ncells / t->ncols)
		rows = t->ncells / t->ncols;
	if ((cells = rows * t->ncols) == 0)
		return n;
	k = cells < t->ncells ? t->off[cells] : t->cells.n;
	if ((n->off = malloc(cells * sizeof(*n->off))) == NULL ||
	    kt_buf_add(&n->cells, t->cells.p, k) == -1 || n->cells.err) {
		kt_table_free(n);
		return NULL;
	}
	memcpy(n->off, t->off, cells * sizeof(*n->off));
	n->offcap = n->ncells = cells;
	return n;
}

void
kt_table_free(struct kt_table *t)
{
	size_t i;

	if (t == NULL)
		return;
	if (t->name != NULL)
		for (i = 0; i < t->ncols; i++)
			free(t->name[i]);
	free(t->name);
	free(t->num);
	free(t->off);
	kt_buf_free(&t->cells);
	free(t);
}

int
kt_table_cell(struct kt_table *t, const char *s)
{
	return kt_table_celln(t, s, strlen(s));
}

int
kt_table_celln(struct kt_table *t, const char *s, size_t n)
{
	char *d;
	size_t i;

	if (t->ncells == t->offcap) {
		size_t cap = t->offcap ? 2 * t->offcap : 256;
		size_t *p = realloc(t->off, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		t->off = p;
		t->offcap = cap;
	}
	t->off[t->ncells] = t->cells.n;
	/* A tab or newline would break the TSV form: make them spaces. */
	if (kt_buf_reserve(&t->cells, n + 1) == -1)
		return -1;
	d = t->cells.p + t->cells.n;
	memcpy(d, s, n);
	/*
	 * Rare: eight bytes at a time are skipped when none is below 14
	 * (the test of "has a byte less than n" on a word), else looked at.
	 */
	for (i = 0; i < n; ) {
		uint64_t x;
		size_t k, e = i + 8 <= n ? i + 8 : n;

		if (e - i == 8) {
			memcpy(&x, d + i, 8);
			if (((x - 0x0e0e0e0e0e0e0e0eULL) & ~x &
			    0x8080808080808080ULL) == 0) {
				i = e;
				continue;
			}
		}
		for (k = i; k < e; k++)
			if (d[k] == '\t' || d[k] == '\n' || d[k] == '\r')
				d[k] = ' ';
			else if (d[k] == '\0') {
				/* The cell ends there, as its C string does. */
				n = k;
				break;
			}
		i = e;
	}
	d[n] = '\0';
	t->cells.n += n + 1;
	t->ncells++;
	if (++t->filled == t->ncols)
		t->filled = 0;
	return 0;
}

int
kt_table_rowid(struct kt_table *t, int kind, uint64_t index)
{
	char b[64];
	const char *k = kt_kind_name((enum kt_kind)kind);
	size_t n = strlen(k);

	if (n > 32)
		n = 32;
	memcpy(b, k, n);
	b[n++] = ':';
	n += kt_int_format((int64_t)index, b + n);
	return kt_table_celln(t, b, n);
}

int
kt_table_cellf(struct kt_table *t, const char *fmt, ...)
{
	char small[256], *big;
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return kt_table_cell(t, small);
	if ((big = malloc((size_t)n + 1)) == NULL)
		return -1;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	r = kt_table_cell(t, big);
	free(big);
	return r;
}

int
kt_table_int(struct kt_table *t, int64_t v)
{
	char b[32];

	return kt_table_celln(t, b, kt_int_format(v, b));
}

int
kt_table_ratio(struct kt_table *t, int64_t num, int64_t den, int decimals)
{
	char b[64];

	kt_ratio_format(num, den, decimals, b);
	return kt_table_cell(t, b);
}

size_t
kt_table_rows(const struct kt_table *t)
{
	return t->ncells / t->ncols;
}

const char *
kt_table_get(const struct kt_table *t, size_t row, size_t col)
{
	size_t i = row * t->ncols + col;

	return i < t->ncells ? t->cells.p + t->off[i] : NULL;
}

/* The length of cell i (it holds no NUL: kt_table_celln). */
static size_t
cell_len(const struct kt_table *t, size_t i)
{
	return (i + 1 < t->ncells ? t->off[i + 1] : t->cells.n) - t->off[i] -
	    1;
}

size_t
kt_table_ncols(const struct kt_table *t)
{
	return t->ncols;
}

const char *
kt_table_colname(const struct kt_table *t, size_t col)
{
	return col < t->ncols ? t->name[col] : NULL;
}

int
kt_table_column(const struct kt_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->name[i], name) == 0)
			return (int)i;
	return -1;
}

/* Split line (NUL-terminated, no newline) at tabs into at most max cells. */
static size_t
split_tabs(char *line, char **cells, size_t max)
{
	size_t n = 0;
	char *p = line;

	while (n < max) {
		cells[n++] = p;
		if ((p = strchr(p, '\t')) == NULL)
			break;
		*p++ = '\0';
	}
	return n;
}

#define LOAD_MAXCOLS	256

struct kt_table *
kt_table_load(const char *path, struct kt_error *err)
{
	struct kt_table *t = NULL;
	char *line = NULL, *cells[LOAD_MAXCOLS + 1];
	size_t cap = 0, n, i;
	ssize_t len;
	long lineno = 0;
	FILE *f;
	int stdinput = strcmp(path, "-") == 0;
	const char *name = stdinput ? "<stdin>" : path;

	if (stdinput)
		f = stdin;
	else if ((f = fopen(path, "r")) == NULL) {
		kt_error_set(err, name, 0, 0, "%s", strerror(errno));
		return NULL;
	}
	while ((len = getline(&line, &cap, f)) != -1) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0 || line[0] == '#')
			continue;
		if (memchr(line, '\0', (size_t)len) != NULL) {
			kt_error_set(err, name, lineno, 1, "a NUL byte: not a "
			    "TSV table");
			goto fail;
		}
		n = split_tabs(line, cells, LOAD_MAXCOLS + 1);
		if (t == NULL) {
			if (n > LOAD_MAXCOLS || n < 2) {
				kt_error_set(err, name, lineno, 1, "not a TSV "
				    "table header (%s columns)", n < 2 ?
				    "fewer than 2" : "too many");
				goto fail;
			}
			if ((t = kt_table_new((const char *const *)cells,
			    n)) == NULL)
				goto nomem;
			continue;
		}
		if (n != t->ncols) {
			kt_error_set(err, name, lineno, 1, "%zu cells, not %zu",
			    n, t->ncols);
			goto fail;
		}
		for (i = 0; i < n; i++)
			if (kt_table_cell(t, cells[i]) == -1)
				goto nomem;
	}
	if (ferror(f)) {
		kt_error_set(err, name, 0, 0, "%s", strerror(errno));
		goto fail;
	}
	if (t == NULL) {
		kt_error_set(err, name, 0, 0, "empty: no TSV header");
		goto fail;
	}
	free(line);
	if (!stdinput)
		fclose(f);
	return t;
nomem:
	kt_error_set(err, name, 0, 0, "out of memory");
fail:
	free(line);
	if (!stdinput)
		fclose(f);
	kt_table_free(t);
	return NULL;
}

/*
 * mult x num/den with d decimals, rounded half away from zero; "-" if den
 * is 0.  In 128 bits: no product of int64 values here can overflow.
 */
static size_t
ratio_scaled(int64_t num, int64_t den, unsigned mult, int d, char *out)
{
	u128 q, scale = 1;
	int neg = (num < 0) != (den < 0) && num != 0;
	uint64_t un = num < 0 ? (uint64_t)0 - (uint64_t)num : (uint64_t)num;
	uint64_t ud = den < 0 ? (uint64_t)0 - (uint64_t)den : (uint64_t)den;
	char digits[64];
	size_t n = 0, k, len = 0;
	int i;

	if (den == 0) {
		strcpy(out, "-");
		return 1;
	}
	if (d < 0)
		d = 0;
	if (d > 9)
		d = 9;
	for (i = 0; i < d; i++)
		scale *= 10;
	q = ((u128)un * mult * scale * 2 + ud) / ((u128)ud * 2);
	if (q == 0)
		neg = 0;	/* no "-0.00" */
	do {
		digits[n++] = (char)('0' + (int)(q % 10));
		q /= 10;
	} while (q > 0 || n < (size_t)d + 1);
	if (neg)
		out[len++] = '-';
	for (k = n; k > 0; k--) {
		out[len++] = digits[k - 1];
		if (k - 1 == (size_t)d && d > 0)
			out[len++] = '.';
	}
	out[len] = '\0';
	return len;
}

size_t
kt_ratio_format(int64_t num, int64_t den, int d, char *out)
{
	return ratio_scaled(num, den, 1, d, out);
}

size_t
kt_pct_format(int64_t num, int64_t den, char *out)
{
	return ratio_scaled(num, den, 100, 1, out);
}

enum kt_table_form
kt_table_form_pick(int forced, int fd)
{
	if (forced == KT_TABLE_TSV || forced == KT_TABLE_TEXT ||
	    forced == KT_TABLE_JSON)
		return (enum kt_table_form)forced;
	return isatty(fd) ? KT_TABLE_TEXT : KT_TABLE_TSV;
}

/* Is s[0..) the text of a JSON number? */
static int
json_number(const char *s)
{
	const char *p = s;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return 0;
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

/* The display width of UTF-8 text: one column per code point. */
static size_t
width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static int
pad(struct kt_buf *b, size_t n)
{
	while (n-- > 0)
		if (kt_buf_addc(b, ' ') == -1)
			return -1;
	return 0;
}

/*
 * Row r of the TSV form: its cells lie one after the other, each ending
 * in a NUL, so the row is one copy with the NULs made tabs and the last
 * a newline.
 */
static int
tsv_row(const struct kt_table *t, size_t r, struct kt_buf *b)
{
	size_t first = r * t->ncols, c, start = t->off[first];
	size_t end = first + t->ncols < t->ncells ? t->off[first + t->ncols] :
	    t->cells.n;
	char *d;

	if (kt_buf_reserve(b, end - start) == -1)
		return -1;
	d = b->p + b->n;
	memcpy(d, t->cells.p + start, end - start);
	for (c = 1; c < t->ncols; c++)
		d[t->off[first + c] - 1 - start] = '\t';
	d[end - 1 - start] = '\n';
	b->n += end - start;
	return 0;
}

/*
 * The JSON form's keys, '"name": ' escaped, one after the other in keys,
 * key c at koff[c] (koff has ncols + 1 entries).
 */
static int
json_keys(const struct kt_table *t, struct kt_buf *keys, size_t *koff)
{
	size_t c;

	for (c = 0; c < t->ncols; c++) {
		koff[c] = keys->n;
		if (kt_buf_addc(keys, '"') == -1 || kt_json_escape(keys,
		    t->name[c], strlen(t->name[c])) == -1 ||
		    kt_buf_adds(keys, "\": ") == -1)
			return -1;
	}
	koff[t->ncols] = keys->n;
	return 0;
}

/* Row r of the JSON form, with json_keys' keys. */
static int
json_row(const struct kt_table *t, size_t r, const struct kt_buf *keys,
    const size_t *koff, struct kt_buf *b)
{
	size_t c;

	if (kt_buf_addc(b, '{') == -1)
		return -1;
	for (c = 0; c < t->ncols; c++) {
		size_t i = r * t->ncols + c, n = cell_len(t, i);
		const char *s = t->cells.p + t->off[i];

		if ((c > 0 && kt_buf_add(b, ", ", 2) == -1) ||
		    kt_buf_add(b, keys->p + koff[c], koff[c + 1] - koff[c]) ==
		    -1)
			return -1;
		if (t->num[c] && json_number(s)) {
			if (kt_buf_add(b, s, n) == -1)
				return -1;
		} else if (t->num[c] && (n == 0 || strcmp(s, "-") == 0 ||
		    strcmp(s, "unknown") == 0)) {
			if (kt_buf_add(b, "null", 4) == -1)
				return -1;
		} else if (kt_buf_addc(b, '"') == -1 ||
		    kt_json_escape(b, s, n) == -1 || kt_buf_addc(b, '"') == -1)
			return -1;
	}
	return kt_buf_add(b, "}\n", 2);
}

/* Append row r (SIZE_MAX: the header) in the text form to b. */
static int
text_row(const struct kt_table *t, size_t r, const size_t *w, struct kt_buf *b)
{
	size_t c;

	for (c = 0; c < t->ncols; c++) {
		const char *s = r == SIZE_MAX ? t->name[c] : kt_table_get(t, r, c);
		size_t sw = width(s);

		if (c > 0 && kt_buf_adds(b, "  ") == -1)
			return -1;
		if (t->num[c] && pad(b, w[c] - sw) == -1)
			return -1;
		if (kt_buf_adds(b, s) == -1)
			return -1;
		if (!t->num[c] && c + 1 < t->ncols && pad(b, w[c] - sw) == -1)
			return -1;
	}
	while (b->n > 0 && b->p[b->n - 1] == ' ')	/* no trailing blanks */
		b->n--;
	return kt_buf_addc(b, '\n');
}

/* The TSV header line. */
static int
tsv_header(const struct kt_table *t, struct kt_buf *b)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if ((c > 0 && kt_buf_addc(b, '\t') == -1) ||
		    kt_buf_adds(b, t->name[c]) == -1)
			return -1;
	return kt_buf_addc(b, '\n');
}

int
kt_table_write(const struct kt_table *t, enum kt_table_form f, int header,
    struct kt_out *out)
{
	struct kt_buf b = KT_BUF_INIT, keys = KT_BUF_INIT;
	size_t *w = NULL, *koff = NULL, r, c, rows = kt_table_rows(t);
	int rc = -1;

	if (f == KT_TABLE_TEXT) {
		if ((w = calloc(t->ncols, sizeof(*w))) == NULL)
			return -1;
		for (c = 0; c < t->ncols; c++)
			w[c] = width(t->name[c]);
		for (r = 0; r < rows; r++)
			for (c = 0; c < t->ncols; c++)
				if (width(kt_table_get(t, r, c)) > w[c])
					w[c] = width(kt_table_get(t, r, c));
	} else if (f == KT_TABLE_JSON) {
		if ((koff = calloc(t->ncols + 1, sizeof(*koff))) == NULL ||
		    json_keys(t, &keys, koff) == -1)
			goto done;
	}
	if (header && !t->flushed && f != KT_TABLE_JSON &&
	    (f == KT_TABLE_TEXT ? text_row(t, SIZE_MAX, w, &b) :
	    tsv_header(t, &b)) == -1)
		goto done;
	for (r = 0; r < rows; r++) {
		if ((f == KT_TABLE_TSV ? tsv_row(t, r, &b) :
		    f == KT_TABLE_JSON ? json_row(t, r, &keys, koff, &b) :
		    text_row(t, r, w, &b)) == -1)
			goto done;
		if (b.n >= 1 << 16) {
			if (kt_out_write(out, b.p, b.n) == -1)
				goto done;
			b.n = 0;
		}
	}
	if (b.n > 0 && kt_out_write(out, b.p, b.n) == -1)
		goto done;
	rc = 0;
done:
	free(w);
	free(koff);
	kt_buf_free(&keys);
	kt_buf_free(&b);
	return rc;
}

int
kt_table_flush(struct kt_table *t, enum kt_table_form f, int header,
    struct kt_out *out)
{
	if (f == KT_TABLE_TEXT || t->filled != 0)
		return 0;
	if (kt_table_write(t, f, header, out) == -1)
		return -1;
	t->flushed = 1;
	t->cells.n = 0;
	t->ncells = 0;
	return 0;
}

int
kt_table_pct(struct kt_table *t, int64_t num, int64_t den)
{
	char b[64];

	kt_pct_format(num, den, b);
	return kt_table_cell(t, b);
}
