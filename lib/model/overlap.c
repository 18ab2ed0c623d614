/*
 * overlap.c: communication against compute, per collective (kt-overlap
 * and kt views), over the analysis model and the bucket classes.
 *
 * A communication kernel is a GPU activity whose bucket has the
 * communication class.  Its hidden time is the length of its interval
 * [ts, ts+dur) intersected with the union of the compute activities of
 * the same device (any stream); exposed = dur - hidden.  The bandwidths
 * are those of nccl-tests: size = the larger of In and Out msg nelems
 * times the dtype's size (else args.bytes), algbw = size / dur, busbw =
 * algbw times 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
 * reduce-scatter and all-to-all, 1 otherwise, n the group size.  Bytes
 * per ns are GB/s (10^9 bytes per second).
 */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

__extension__ typedef __int128 i128;

struct crow {
	uint32_t	 act;
	int64_t		 hidden;
	int64_t		 bytes;
	int64_t		 skew;		/* -1: no join */
	int64_t		 last_rank;
	int64_t		 nranks;
	int		 by;		/* the key that joined: J_* */
	int64_t		 grp;		/* the join's number, or -1 */
	int64_t		 wait;		/* the join's last start - ts, or -1 */
	int64_t		 lcrank;	/* the join's longest compute_before */
	int64_t		 call;		/* n-th call (order key), or -1 */
	int64_t		 before;	/* compute since the last comm, or -1 */
};

enum { J_NONE, J_SEQ, J_COMMS_ID, J_ORDER };
static const char *const jname[] = { "-", "seq", "comms_id", "order" };

/* The columns of the table and of the summary (kt-overlap(1)). */
static const char *const cols[] = {
	"rank:n", "device", "stream:n", "start_ns:n", "dur_ns:n",
	"exposed_ns:n", "hidden_ns:n", "exposed_pct:n", "verdict",
	"collective", "seq:n", "comms_id:n", "group_size:n", "dtype",
	"bytes:n", "algbw_gbps:n", "busbw_gbps:n", "ranks:n",
	"skew_ns:n", "last_rank:n", "joined_by", "wait_ns:n",
	"longest_compute_rank:n", "step:n", "process_group", "call:n",
	"compute_before_ns:n", "name"
};
#define NCOLS	(sizeof(cols) / sizeof(cols[0]))
/* The columns a merge reads or writes again. */
enum { OC_RANK, OC_DEVICE, OC_STREAM, OC_START, OC_DUR, OC_EXPOSED,
	OC_COLL = 9, OC_SEQ, OC_COMMS_ID, OC_RANKS = 17, OC_SKEW, OC_LAST,
	OC_JOINED, OC_WAIT, OC_LCRANK, OC_STEP, OC_PG, OC_CALL, OC_BEFORE,
	OC_NAME };
static const char *const scols[] = {
	"rank:n", "device", "comm_kernels:n", "comm_kernel_ns:n",
	"comm_ns:n", "comm_exposed_ns:n", "comm_hidden_ns:n",
	"hidden_pct:n", "busy_ns:n", "span_ns:n", "compute_ns:n",
	"comm_pct_of_busy:n",
	"exposed_pct_of_span:n", "verdict"
};
#define NSCOLS	(sizeof(scols) / sizeof(scols[0]))

struct cdev {
	uint32_t	 dev;
	int64_t		 nkern;
	int64_t		 sum, union_len, union_hidden;
	int64_t		 busy, wall, compute;
};

struct kt_overlap {
	const struct kt_model	*m;
	struct crow		*r;
	size_t			 nr;
	struct cdev		*d;
	size_t			 nd;
	int64_t			 ngrp;		/* joins made */
};

enum coll { C_OTHER, C_ALLREDUCE, C_ALLGATHER, C_REDUCESCATTER,
	C_ALLTOALL };

/* The kind of a collective from its name (lower-cased, '_' and '-' dropped). */
static enum coll
coll_kind(const char *s)
{
	char b[128];
	size_t i, n = 0;

	for (i = 0; s[i] != '\0' && n + 1 < sizeof(b); i++)
		if (s[i] != '_' && s[i] != '-' && s[i] != ' ')
			b[n++] = (char)tolower((unsigned char)s[i]);
	b[n] = '\0';
	if (strstr(b, "allreduce") != NULL)
		return C_ALLREDUCE;
	if (strstr(b, "allgather") != NULL)
		return C_ALLGATHER;
	if (strstr(b, "reducescatter") != NULL)
		return C_REDUCESCATTER;
	if (strstr(b, "alltoall") != NULL)
		return C_ALLTOALL;
	return C_OTHER;
}

/*
 * The collective's name: Collective name; else from an NCCL or RCCL
 * kernel name, the word after "Kernel_" ("ncclDevKernel_AllReduce_Sum_
 * f32_RING_LL(...)": "AllReduce") into buf (64 bytes); else the kernel
 * name.
 */
static const char *
coll_name(const struct kt_model *m, const struct kt_act *a, char *buf)
{
	const char *n, *p;
	size_t k;

	if (a->comm != KT_NO && m->comms[a->comm].coll != KT_NO)
		return kt_model_str(m, m->comms[a->comm].coll);
	n = kt_model_str(m, a->name);
	if (strncmp(n, "nccl", 4) != 0 && strncmp(n, "rccl", 4) != 0)
		return n;
	if ((p = strstr(n, "Kernel_")) == NULL)
		return n;
	p += 7;
	for (k = 0; k < 63 && p[k] != '\0' && p[k] != '_' && p[k] != '(' &&
	    p[k] != '<'; k++)
		buf[k] = p[k];
	buf[k] = '\0';
	return k > 0 ? buf : n;
}

/* The size of a collective in bytes, or -1. */
static int64_t
coll_bytes(const struct kt_model *m, const struct kt_act *a)
{
	const struct kt_comm *c;
	int64_t ne;
	int sz;

	if (a->comm == KT_NO)
		return a->bytes >= 0 ? a->bytes : -1;
	c = &m->comms[a->comm];
	ne = c->in_nelems > c->out_nelems ? c->in_nelems : c->out_nelems;
	if (ne >= 0 && ne < ((int64_t)1 << 50) && c->dtype != KT_NO &&
	    (sz = kt_dtype_size(kt_model_str(m, c->dtype))) > 0)
		return ne * sz;
	return kt_act_bytes(m, a);
}

/* Order: exposed, longest first; then start, then rank. */
static int
cmp_row(const void *a, const void *b, void *ctx)
{
	const struct kt_overlap *sort_ov = ctx;
	const struct crow *x = a, *y = b;
	const struct kt_act *p = &sort_ov->m->act[x->act];
	const struct kt_act *q = &sort_ov->m->act[y->act];
	int64_t ex = p->dur - x->hidden, ey = q->dur - y->hidden;

	if (ex != ey)
		return ex > ey ? -1 : 1;
	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	return (x->act > y->act) - (x->act < y->act);
}

/*
 * Join key of a row: (process group, seq), comms id, or (group, kind,
 * n-th call of the rank).  kind is the collective's name (order only).
 */
struct jkey {
	int64_t	 a, b;
	uint32_t row;
	uint32_t coll;
	int64_t	 rank;		/* order only: for numbering the calls */
	int64_t	 ts;
	const char *kind;
};

static int
cmp_jkey(const void *x, const void *y)
{
	const struct jkey *p = x, *q = y;
	int c;

	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	if (p->coll != q->coll)
		return p->coll < q->coll ? -1 : 1;
	if (p->kind != NULL && (c = strcmp(p->kind, q->kind)) != 0)
		return c;
	return (p->row > q->row) - (p->row < q->row);
}

/* For numbering: rank, group, kind, then start, then row. */
static int
cmp_calls(const void *x, const void *y)
{
	const struct jkey *p = x, *q = y;
	int c;

	if (p->rank != q->rank)
		return p->rank < q->rank ? -1 : 1;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if ((c = strcmp(p->kind, q->kind)) != 0)
		return c;
	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	return (p->row > q->row) - (p->row < q->row);
}

static int
same_key(const struct jkey *p, const struct jkey *q)
{
	return p->a == q->a && p->b == q->b && p->coll == q->coll &&
	    (p->kind == NULL || strcmp(p->kind, q->kind) == 0);
}

/* Join the rows of each key of k (sorted): skew, last rank, ranks. */
static void
join_keys(struct kt_overlap *ov, const struct jkey *k, size_t n, int by)
{
	const struct kt_model *m = ov->m;
	size_t i, j;

	for (i = 0; i < n; i = j) {
		int64_t lo = INT64_MAX, hi = INT64_MIN, last = -1, nr;
		int64_t lc = -1, lcb = -1;
		size_t q, r;

		for (j = i; j < n && same_key(&k[j], &k[i]); j++)
			;
		/* Distinct ranks only; one rank alone is no join. */
		for (q = i, nr = 0; q < j; q++) {
			const struct kt_act *a = &m->act[ov->r[k[q].row].act];
			int64_t rk = m->devices[a->dev].rank, ts = a->ts;

			for (r = i; r < q; r++)
				if (m->devices[m->act[ov->r[k[r].row].act].dev]
				    .rank == rk)
					break;
			if (r == q)
				nr++;
			if (ts < lo)
				lo = ts;
			if (ts > hi) {
				hi = ts;
				last = rk;
			}
			if (ov->r[k[q].row].before > lcb) {
				lcb = ov->r[k[q].row].before;
				lc = rk;
			}
		}
		if (nr < 2)
			continue;
		ov->ngrp++;
		for (q = i; q < j; q++) {
			struct crow *w = &ov->r[k[q].row];

			w->grp = ov->ngrp - 1;
			w->skew = hi - lo;
			w->last_rank = last;
			w->nranks = nr;
			w->by = by;
			w->wait = hi - m->act[w->act].ts;
			w->lcrank = lc;
		}
	}
}

/*
 * Join the same collective across ranks: skew and the last rank.  By
 * (process group, Seq), else Comms Id; a row with neither joins by call
 * order, as NCCL has every rank of a group issue its collectives in the
 * same order: the n-th call of a kind (the collective's name) in a
 * group (Process Group Name, else the kernel's stream) of each rank.
 */
static int
join_ranks(struct kt_overlap *ov)
{
	const struct kt_model *m = ov->m;
	struct jkey *k;
	char (*kname)[64] = NULL;
	size_t i, j, n = 0, no = 0;

	if ((k = calloc(ov->nr + 1, sizeof(*k))) == NULL ||
	    (kname = calloc(ov->nr + 1, sizeof(*kname))) == NULL) {
		free(k);
		return -1;
	}
	for (i = 0; i < ov->nr; i++) {
		const struct kt_act *a = &m->act[ov->r[i].act];
		const struct kt_comm *c = a->comm != KT_NO ?
		    &m->comms[a->comm] : NULL;
		const char *cn;

		ov->r[i].skew = -1;
		ov->r[i].last_rank = -1;
		ov->r[i].nranks = 1;
		ov->r[i].by = J_NONE;
		ov->r[i].grp = -1;
		ov->r[i].wait = -1;
		ov->r[i].lcrank = -1;
		ov->r[i].call = -1;
		if (c != NULL && c->seq >= 0) {
			k[n].a = c->pg == KT_NO ? 1 : 2 + (int64_t)c->pg;
			k[n].b = c->seq;
		} else if (c != NULL && c->comms_id >= 0) {
			k[n].a = 0;
			k[n].b = c->comms_id;
		} else
			continue;
		/* The collective as the table writes it (a merge's key). */
		cn = coll_name(m, a, kname[i]);
		if (cn != kname[i])
			snprintf(kname[i], sizeof(kname[i]), "%s", cn);
		k[n].kind = kname[i];
		k[n].coll = 0;
		k[n++].row = (uint32_t)i;
	}
	qsort(k, n, sizeof(*k), cmp_jkey);
	/* Seq first, then Comms Id: both sort by a (0: Comms Id). */
	for (i = 0; i < n && k[i].a == 0; i++)
		;
	join_keys(ov, k, i, J_COMMS_ID);
	join_keys(ov, k + i, n - i, J_SEQ);
	/* The rest by call order. */
	for (i = 0; i < ov->nr; i++) {
		const struct kt_act *a = &m->act[ov->r[i].act];
		const struct kt_comm *c = a->comm != KT_NO ?
		    &m->comms[a->comm] : NULL;
		const char *cn;

		if (c != NULL && (c->seq >= 0 || c->comms_id >= 0))
			continue;
		cn = coll_name(m, a, kname[i]);
		if (cn != kname[i])
			snprintf(kname[i], sizeof(kname[i]), "%s", cn);
		k[no].kind = kname[i];
		if (c != NULL && c->pg != KT_NO)
			k[no].a = INT64_MIN + (int64_t)c->pg;
		else
			k[no].a = a->stream < 0 ? -1 : a->stream;
		k[no].coll = 0;
		k[no].rank = m->devices[a->dev].rank;
		k[no].ts = a->ts;
		k[no++].row = (uint32_t)i;
	}
	qsort(k, no, sizeof(*k), cmp_calls);
	for (i = 0; i < no; i = j) {
		for (j = i; j < no && k[j].rank == k[i].rank &&
		    k[j].a == k[i].a && strcmp(k[j].kind, k[i].kind) == 0; j++)
			ov->r[k[j].row].call = k[j].b = (int64_t)(j - i);
	}
	qsort(k, no, sizeof(*k), cmp_jkey);
	join_keys(ov, k, no, J_ORDER);
	free(kname);
	free(k);
	return 0;
}

struct kt_overlap *
kt_overlap_new(const struct kt_model *m, const struct kt_rules *rs,
    struct kt_error *err)
{
	return kt_overlap_new_with(m, rs, NULL, err);
}

struct kt_overlap *
kt_overlap_new_with(const struct kt_model *m, const struct kt_rules *rs,
    const uint32_t *classes, struct kt_error *err)
{
	struct kt_overlap *ov;
	uint32_t *own = NULL;
	const uint32_t *bucket = classes;
	struct kt_iv *comp = NULL, *comm = NULL, *all = NULL;
	int64_t prev;
	size_t i, k, nrows = 0;

	if ((ov = calloc(1, sizeof(*ov))) == NULL)
		goto nomem;
	ov->m = m;
	if (bucket == NULL &&
	    (bucket = own = kt_rules_classify(rs, m)) == NULL)
		goto nomem;
	/* A row a communication kernel, every field of it set below. */
	for (i = 0; i < m->ndevices; i++)
		for (k = m->devices[i].first; k < (size_t)m->devices[i].first +
		    m->devices[i].nact; k++)
			if (m->act[k].kind == KT_KERNEL &&
			    kt_rules_class(rs, bucket[k]) == KT_CLASS_COMM)
				nrows++;
	if ((ov->r = malloc((nrows + 1) * sizeof(*ov->r))) == NULL ||
	    (ov->d = calloc(m->ndevices + 1, sizeof(*ov->d))) == NULL)
		goto nomem;
	for (i = 0; i < m->ndevices; i++) {
		const struct kt_device *d = &m->devices[i];
		size_t nc = 0, nm = 0, na = 0;
		struct cdev *cd = &ov->d[ov->nd++];

		cd->dev = (uint32_t)i;
		free(comp);
		free(comm);
		free(all);
		comp = malloc((d->nact + 1) * sizeof(*comp));
		comm = malloc((d->nact + 1) * sizeof(*comm));
		all = malloc((d->nact + 1) * sizeof(*all));
		if (comp == NULL || comm == NULL || all == NULL)
			goto nomem;
		/* In order of start: the unions built as they come. */
		for (k = d->first; k < (size_t)d->first + d->nact; k++) {
			const struct kt_act *a = &m->act[k];

			kt_iv_add(all, &na, a->ts, a->ts + a->dur);
			switch (kt_rules_class(rs, bucket[k])) {
			case KT_CLASS_COMPUTE:
				kt_iv_add(comp, &nc, a->ts, a->ts + a->dur);
				break;
			case KT_CLASS_COMM:
				kt_iv_add(comm, &nm, a->ts, a->ts + a->dur);
				break;
			default:
				break;
			}
		}
		prev = INT64_MIN;
		for (k = d->first; k < (size_t)d->first + d->nact; k++) {
			const struct kt_act *a = &m->act[k];
			struct crow *r;

			if (kt_rules_class(rs, bucket[k]) != KT_CLASS_COMM ||
			    a->kind != KT_KERNEL)
				continue;
			r = &ov->r[ov->nr++];
			r->act = (uint32_t)k;
			r->hidden = kt_iv_clip_length(comp, nc, a->ts,
			    a->ts + a->dur);
			r->bytes = coll_bytes(m, a);
			/* Compute since the latest end of the ones before. */
			r->before = prev == INT64_MIN ? -1 : a->ts <= prev ? 0 :
			    kt_iv_clip_length(comp, nc, prev, a->ts);
			if (a->ts + a->dur > prev)
				prev = a->ts + a->dur;
			cd->nkern++;
			cd->sum += a->dur;
		}
		cd->union_len = kt_iv_length(comm, nm);
		cd->union_hidden = kt_iv_overlap(comm, nm, comp, nc);
		cd->busy = kt_iv_length(all, na);
		cd->compute = kt_iv_length(comp, nc);
		cd->wall = na ? all[na - 1].end - all[0].start : 0;
	}
	if (join_ranks(ov) == -1)
		goto nomem;
	kt_sort_r(ov->r, ov->nr, sizeof(*ov->r), cmp_row, ov);
	free(own);
	free(comp);
	free(comm);
	free(all);
	return ov;
nomem:
	free(own);
	free(comp);
	free(comm);
	free(all);
	kt_overlap_free(ov);
	kt_error_set(err, "", 0, 0, "out of memory");
	return NULL;
}

size_t
kt_overlap_count(const struct kt_overlap *ov)
{
	return ov->nr;
}

int64_t
kt_overlap_join(const struct kt_overlap *ov, size_t i, uint32_t *act)
{
	*act = ov->r[i].act;
	return ov->r[i].grp;
}

int64_t
kt_overlap_before(const struct kt_overlap *ov, size_t i)
{
	return ov->r[i].before;
}

void
kt_overlap_free(struct kt_overlap *ov)
{
	if (ov == NULL)
		return;
	free(ov->r);
	free(ov->d);
	free(ov);
}

static void
int_or_dash(struct kt_table *t, int64_t v, int *rc)
{
	*rc |= v >= 0 ? kt_table_int(t, v) : kt_table_cell(t, "-");
}

struct kt_table *
kt_overlap_table(const struct kt_overlap *ov, size_t top)
{
	const struct kt_model *m = ov->m;
	struct kt_table *t;
	size_t i;
	int rc = 0;

	if ((t = kt_table_new(cols, NCOLS)) == NULL)
		return NULL;
	for (i = 0; i < ov->nr && (top == 0 || i < top) && rc == 0; i++) {
		const struct crow *r = &ov->r[i];
		const struct kt_act *a = &m->act[r->act];
		const struct kt_comm *c = a->comm != KT_NO ?
		    &m->comms[a->comm] : NULL;
		char cbuf[64];
		const char *cn = coll_name(m, a, cbuf);
		int64_t ex = a->dur - r->hidden, n = c ? c->group_size : -1;

		rc |= kt_model_device_cells(t, m, a->dev);
		rc |= kt_table_int(t, a->stream);
		rc |= kt_table_int(t, a->ts);
		rc |= kt_table_int(t, a->dur);
		rc |= kt_table_int(t, ex);
		rc |= kt_table_int(t, r->hidden);
		rc |= kt_table_pct(t, ex, a->dur);
		rc |= kt_table_cell(t, ex == 0 ? "hidden" : r->hidden == 0 ?
		    "exposed" : "partly exposed");
		rc |= kt_table_cell(t, cn);
		int_or_dash(t, c ? c->seq : -1, &rc);
		int_or_dash(t, c ? c->comms_id : -1, &rc);
		int_or_dash(t, n, &rc);
		rc |= kt_table_cell(t, c && c->dtype != KT_NO ?
		    kt_model_str(m, c->dtype) : "-");
		int_or_dash(t, r->bytes, &rc);
		/* Sizes beyond reason (bad input) get no bandwidth. */
		if (r->bytes >= 0 && r->bytes < ((int64_t)1 << 53) &&
		    a->dur > 0 && a->dur < ((int64_t)1 << 50) && n < 1000000) {
			enum coll k = coll_kind(cn);

			rc |= kt_table_ratio(t, r->bytes, a->dur, 2);
			if (k == C_OTHER)
				rc |= kt_table_ratio(t, r->bytes, a->dur, 2);
			else if (n >= 1)
				rc |= kt_table_ratio(t, r->bytes *
				    (k == C_ALLREDUCE ? 2 : 1) * (n - 1),
				    a->dur * n, 2);
			else
				rc |= kt_table_cell(t, "-");
		} else {
			rc |= kt_table_cell(t, "-");
			rc |= kt_table_cell(t, "-");
		}
		rc |= kt_table_int(t, r->nranks);
		int_or_dash(t, r->skew, &rc);
		int_or_dash(t, r->last_rank, &rc);
		rc |= kt_table_cell(t, jname[r->by]);
		int_or_dash(t, r->wait, &rc);
		int_or_dash(t, r->lcrank, &rc);
		int_or_dash(t, a->step != KT_NO ? m->steps[a->step].number : -1,
		    &rc);
		rc |= kt_table_cell(t, c && c->pg != KT_NO ?
		    kt_model_str(m, c->pg) : "-");
		int_or_dash(t, r->call, &rc);
		int_or_dash(t, r->before, &rc);
		rc |= kt_table_cell(t, kt_model_str(m, a->name));
	}
	if (rc != 0) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

struct kt_table *
kt_overlap_summary(const struct kt_overlap *ov, int64_t threshold_pct)
{
	const size_t ncols = NSCOLS;
	struct kt_table *t;
	size_t i, k;
	int rc = 0;

	if ((t = kt_table_new(scols, ncols)) == NULL)
		return NULL;
	if (ov->nd == 0) {
		rc |= kt_table_cell(t, "-");
		rc |= kt_table_cell(t, "no device activity");
		for (k = 2; k < ncols; k++)
			rc |= kt_table_cell(t, "-");
	}
	for (i = 0; i < ov->nd && rc == 0; i++) {
		const struct cdev *d = &ov->d[i];
		int64_t ex = d->union_len - d->union_hidden;
		char v[128];

		rc |= kt_model_device_cells(t, ov->m, d->dev);
		rc |= kt_table_int(t, d->nkern);
		rc |= kt_table_int(t, d->sum);
		rc |= kt_table_int(t, d->union_len);
		rc |= kt_table_int(t, ex);
		rc |= kt_table_int(t, d->union_hidden);
		rc |= kt_table_pct(t, d->union_hidden, d->union_len);
		rc |= kt_table_int(t, d->busy);
		rc |= kt_table_int(t, d->wall);
		rc |= kt_table_int(t, d->compute);
		rc |= kt_table_pct(t, d->union_len, d->busy);
		rc |= kt_table_pct(t, ex, d->wall);
		if (d->nkern == 0)
			snprintf(v, sizeof(v), "no communication");
		else if (ex == 0)
			snprintf(v, sizeof(v), "fully hidden: not a finding");
		else if ((i128)100 * ex < (i128)threshold_pct * d->wall)
			snprintf(v, sizeof(v), "exposed below %lld%% of the "
			    "span: not a finding", (long long)threshold_pct);
		else
			snprintf(v, sizeof(v), "exposed: a finding");
		rc |= kt_table_cell(t, v);
	}
	if (rc != 0) {
		kt_table_free(t);
		return NULL;
	}
	return t;
}

/* ------------------------------------------------------------------ */
/* The merge of per-rank tables: the joins again, from the rows. */

int
kt_overlap_is_table(const struct kt_table *t)
{
	return kt_ranks_header(t, cols, NCOLS);
}

/* A row of a kt-overlap table, for the merge. */
struct mrow {
	const struct kt_table	*t;
	size_t			 row, pos;
	const char		*rank, *dev, *coll, *pg;
	int64_t			 rk, ts, exposed, seq, comms_id, call;
	int64_t			 before, step, stream;
	int			 cls;		/* J_*: the key it joins by */
	/* Of its join: */
	int			 by;
	int64_t			 grp, skew, last, nranks, wait, lcrank;
};

/* The join key, then the order of the rows in the trace (act order). */
static int
cmp_mkey(const void *a, const void *b)
{
	const struct mrow *x = *(struct mrow *const *)a;
	const struct mrow *y = *(struct mrow *const *)b;
	int c, px, py;

	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	switch (x->cls) {
	case J_SEQ:
		if ((c = strcmp(x->pg, y->pg)) != 0)
			return c;
		if (x->seq != y->seq)
			return x->seq < y->seq ? -1 : 1;
		break;
	case J_COMMS_ID:
		if (x->comms_id != y->comms_id)
			return x->comms_id < y->comms_id ? -1 : 1;
		break;
	case J_ORDER:
		/* The group: Process Group Name, else the stream. */
		px = strcmp(x->pg, "-") != 0;
		py = strcmp(y->pg, "-") != 0;
		if (px != py)
			return px - py;
		if (px && (c = strcmp(x->pg, y->pg)) != 0)
			return c;
		if (!px && x->stream != y->stream)
			return x->stream < y->stream ? -1 : 1;
		if (x->call != y->call)
			return x->call < y->call ? -1 : 1;
		break;
	default:
		break;
	}
	if ((c = strcmp(x->coll, y->coll)) != 0)
		return c;
	if ((c = kt_ranks_cmp_device(x->rank, x->dev, y->rank, y->dev)) != 0)
		return c;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

static int
same_mkey(const struct mrow *x, const struct mrow *y)
{
	if (x->cls != y->cls || x->cls == J_NONE || strcmp(x->coll, y->coll))
		return 0;
	switch (x->cls) {
	case J_SEQ:
		return strcmp(x->pg, y->pg) == 0 && x->seq == y->seq;
	case J_COMMS_ID:
		return x->comms_id == y->comms_id;
	default:
		return strcmp(x->pg, y->pg) == 0 && x->call == y->call &&
		    (strcmp(x->pg, "-") != 0 || x->stream == y->stream);
	}
}

/* A cell that is an integer, or "-" (-1); 0, or -1 with err set. */
static int
mcell(const struct mrow *r, size_t col, int dash, int64_t *v,
    const char *name, struct kt_error *err)
{
	const char *s = kt_table_get(r->t, r->row, col);
	int k = kt_ranks_int(s, v);

	if (k == 1 && dash) {
		*v = -1;
		return 0;
	}
	if (k == 0 && (!dash || *v >= 0))
		return 0;
	kt_error_set(err, name, (long)r->row + 2, (long)col + 1, "%s: not a "
	    "whole number%s", kt_table_colname(r->t, col), dash ? " or -" :
	    "");
	return -1;
}

/*
 * The rows of the tables, each with its join's figures, in the tables'
 * order.  0, or -1 with err set.
 */
static int
merge_rows(struct kt_table *const *in, size_t nin, char *const *names,
    struct mrow **out, size_t *nout, struct kt_error *err)
{
	struct mrow *r, **p = NULL;
	size_t i, j, k, n = 0, tot = 0;
	int64_t ngrp = 0;

	for (i = 0; i < nin; i++)
		tot += kt_table_rows(in[i]);
	if ((r = kt_zalloc(tot + 1, sizeof(*r))) == NULL ||
	    (p = kt_zalloc(tot + 1, sizeof(*p))) == NULL) {
		free(r);
		kt_error_set(err, "", 0, 0, "out of memory");
		return -1;
	}
	for (i = 0; i < nin; i++) {
		const char *name = names == NULL ? "" :
		    strcmp(names[i], "-") == 0 ? "<stdin>" : names[i];

		for (k = 0; k < kt_table_rows(in[i]); k++, n++) {
			struct mrow *w = &r[n];

			w->t = in[i];
			w->row = k;
			w->pos = n;
			w->rank = kt_table_get(in[i], k, OC_RANK);
			w->dev = kt_table_get(in[i], k, OC_DEVICE);
			w->coll = kt_table_get(in[i], k, OC_COLL);
			w->pg = kt_table_get(in[i], k, OC_PG);
			if (mcell(w, OC_RANK, 1, &w->rk, name, err) == -1 ||
			    mcell(w, OC_STREAM, 0, &w->stream, name, err) ==
			    -1 || mcell(w, OC_START, 0, &w->ts, name, err) ==
			    -1 || mcell(w, OC_EXPOSED, 0, &w->exposed, name,
			    err) == -1 || mcell(w, OC_SEQ, 1, &w->seq, name,
			    err) == -1 || mcell(w, OC_COMMS_ID, 1, &w->comms_id,
			    name, err) == -1 || mcell(w, OC_CALL, 1, &w->call,
			    name, err) == -1 || mcell(w, OC_BEFORE, 1,
			    &w->before, name, err) == -1 || mcell(w, OC_STEP,
			    1, &w->step, name, err) == -1) {
				free(r);
				free(p);
				return -1;
			}
			if (w->stream < 0)
				w->stream = -1;
			w->cls = w->seq >= 0 ? J_SEQ : w->comms_id >= 0 ?
			    J_COMMS_ID : w->call >= 0 ? J_ORDER : J_NONE;
			w->by = J_NONE;
			w->grp = w->skew = w->last = w->wait = w->lcrank = -1;
			w->nranks = 1;
			p[n] = w;
		}
	}
	kt_qsort(p, n, sizeof(*p), cmp_mkey);
	/* As join_keys: distinct ranks; the first latest start is last. */
	for (i = 0; i < n; i = j) {
		int64_t lo = INT64_MAX, hi = INT64_MIN, last = -1, nr = 0;
		int64_t lc = -1, lcb = -1;

		for (j = i; j < n && same_mkey(p[j], p[i]); j++) {
			if (j == i || strcmp(p[j]->rank, p[j - 1]->rank) != 0)
				nr++;
			if (p[j]->ts < lo)
				lo = p[j]->ts;
			if (p[j]->ts > hi) {
				hi = p[j]->ts;
				last = p[j]->rk;
			}
			if (p[j]->before > lcb) {
				lcb = p[j]->before;
				lc = p[j]->rk;
			}
		}
		if (j == i)
			j++;
		if (nr < 2)
			continue;
		for (k = i; k < j; k++) {
			p[k]->by = p[k]->cls;
			p[k]->grp = ngrp;
			p[k]->skew = hi - lo;
			p[k]->last = last;
			p[k]->nranks = nr;
			p[k]->wait = hi - p[k]->ts;
			p[k]->lcrank = lc;
		}
		ngrp++;
	}
	free(p);
	*out = r;
	*nout = n;
	return 0;
}

int
kt_overlap_tables_join(struct kt_table *const *in, size_t nin,
    char *const *names, struct kt_join_row **out, size_t *nout,
    struct kt_error *err)
{
	struct mrow *r;
	struct kt_join_row *j;
	size_t i, n;

	if (merge_rows(in, nin, names, &r, &n, err) == -1)
		return -1;
	if ((j = kt_zalloc(n + 1, sizeof(*j))) == NULL) {
		free(r);
		kt_error_set(err, "", 0, 0, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		j[i].grp = r[i].grp;
		j[i].rank = r[i].rk;
		j[i].ts = r[i].ts;
		j[i].step = r[i].step;
		j[i].before = r[i].before;
	}
	free(r);
	*out = j;
	*nout = n;
	return 0;
}

/* The table's order: exposed, longest first; start; the trace's order. */
static int
cmp_mout(const void *a, const void *b)
{
	const struct mrow *x = *(struct mrow *const *)a;
	const struct mrow *y = *(struct mrow *const *)b;
	int c;

	if (x->exposed != y->exposed)
		return x->exposed > y->exposed ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if ((c = kt_ranks_cmp_device(x->rank, x->dev, y->rank, y->dev)) != 0)
		return c;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

struct kt_table *
kt_overlap_merge_top(char *const *paths, size_t npaths, size_t top,
    struct kt_error *err)
{
	struct kt_table **in, *t = NULL;
	struct mrow *r = NULL, **p = NULL;
	size_t i, c, n;
	int rc = 0;

	if ((in = kt_ranks_load(paths, npaths, cols, NCOLS, "kt-overlap",
	    err)) == NULL)
		return NULL;
	if (merge_rows(in, npaths, paths, &r, &n, err) == -1) {
		kt_ranks_free(in, npaths);
		return NULL;
	}
	if ((p = kt_zalloc(n + 1, sizeof(*p))) == NULL ||
	    (t = kt_table_new(cols, NCOLS)) == NULL)
		goto nomem;
	for (i = 0; i < n; i++)
		p[i] = &r[i];
	kt_qsort(p, n, sizeof(*p), cmp_mout);
	for (i = 0; i < n && (top == 0 || i < top) && rc == 0; i++) {
		const struct mrow *w = p[i];

		for (c = 0; c < NCOLS; c++)
			switch (c) {
			case OC_RANKS:
				rc |= kt_table_int(t, w->nranks);
				break;
			case OC_SKEW:
				int_or_dash(t, w->skew, &rc);
				break;
			case OC_LAST:
				int_or_dash(t, w->last, &rc);
				break;
			case OC_JOINED:
				rc |= kt_table_cell(t, jname[w->by]);
				break;
			case OC_WAIT:
				int_or_dash(t, w->wait, &rc);
				break;
			case OC_LCRANK:
				int_or_dash(t, w->lcrank, &rc);
				break;
			default:
				rc |= kt_table_cell(t, kt_table_get(w->t, w->row,
				    c));
			}
	}
	if (rc != 0)
		goto nomem;
	free(p);
	free(r);
	kt_ranks_free(in, npaths);
	return t;
nomem:
	kt_error_set(err, "", 0, 0, "out of memory");
	kt_table_free(t);
	free(p);
	free(r);
	kt_ranks_free(in, npaths);
	return NULL;
}

struct kt_table *
kt_overlap_merge(char *const *paths, size_t npaths, struct kt_error *err)
{
	return kt_overlap_merge_top(paths, npaths, 0, err);
}

struct kt_table *
kt_overlap_summary_merge(char *const *paths, size_t npaths,
    struct kt_error *err)
{
	return kt_ranks_concat(paths, npaths, scols, NSCOLS,
	    "kt-overlap --summary", err);
}
