/*
 * chain.c: the launch chain of every GPU activity.  The model joins an
 * activity to the runtime or driver call that launched it (by
 * correlation) and nests the CPU spans of each thread by time
 * containment; here, in one pass over the spans in their order (a
 * parent before its children), each span learns the innermost cpu_op,
 * user_annotation and user frame at or above it, so that an activity's
 * chain is a few array reads from its launching call.  After
 * kt_chains_new, kt_chain_get and kt_chains_frame_of only read: several
 * threads may ask at once.
 *
 * The user frame is the innermost frame of the Python stack that is the
 * user's own code: a python_function span named "FILE(LINE): FUNC", or
 * a frame of a cpu_op's args."Call stack" (frames innermost first,
 * separated by ';'), whose FILE the skip rule does not match.  Whether
 * a name is a user frame is decided once per distinct name.
 */
#define _POSIX_C_SOURCE 200809L

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "kt.h"

/* A forward op: the earliest cpu_op of its rank with its sequence number. */
struct fwd {
	int64_t		 rank;
	int64_t		 seq;
	uint32_t	 span;		/* KT_NO: on two threads, ambiguous */
};

struct kt_chains {
	const struct kt_model	*m;
	regex_t			 skip;
	uint32_t		*op;	/* per span: innermost cpu_op, or KT_NO */
	uint32_t		*ann;	/* user_annotation, not a step */
	uint32_t		*frame;	/* the span the user frame is in */
	uint8_t			*user;	/* per name: 0 unknown, 1 no, 2 yes */
	uint32_t		*soff;	/* per Call stack name that is 2: its */
	uint32_t		*slen;	/* user frame's offset and length */
	struct fwd		*fw;	/* forward ops by (rank, seq) */
	size_t			 nfw;
	size_t			 nnames;
	struct kt_buf		 file;	/* scratch: a frame's FILE */
};

/*
 * The length of FILE in a frame "FILE(LINE): FUNC" of p[0..n), or 0 when
 * the text is not a frame: the first "(" followed by digits and "): ".
 */
static size_t
frame_file(const char *p, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		if (p[i] != '(')
			continue;
		for (j = i + 1; j < n && p[j] >= '0' && p[j] <= '9'; j++)
			;
		if (j > i + 1 && j + 1 < n && p[j] == ')' && p[j + 1] == ':')
			return i;
	}
	return 0;
}

int
kt_chains_user_frame(struct kt_chains *c, const char *p, size_t n)
{
	size_t f = frame_file(p, n);

	if (f == 0)
		return 0;
	c->file.n = 0;
	if (kt_buf_add(&c->file, p, f) == -1 || kt_buf_addc(&c->file, '\0') ==
	    -1)
		return -1;
	return regexec(&c->skip, c->file.p, 0, NULL, 0) == REG_NOMATCH;
}

/* The first user frame of a "Call stack" text: its offset and length. */
static int
stack_frame(struct kt_chains *c, const char *s, size_t *off, size_t *len)
{
	size_t i = 0, n = strlen(s);

	while (i < n) {
		const char *e = memchr(s + i, ';', n - i);
		size_t fl = e != NULL ? (size_t)(e - (s + i)) : n - i;
		int rc;

		while (fl > 0 && s[i] == ' ') {
			i++;
			fl--;
		}
		if ((rc = kt_chains_user_frame(c, s + i, fl)) == -1)
			return -1;
		if (rc == 1) {
			*off = i;
			*len = fl;
			return 1;
		}
		i += fl + 1;
	}
	return 0;
}

/* The Call stack of span s (a cpu_op), interned, or KT_NO. */
static uint32_t
stack_of(const struct kt_model *m, const struct kt_span *s)
{
	const struct kt_stack *k = kt_model_row(m->stacks, m->nstacks,
	    sizeof(*m->stacks), s->index, m->threads[s->thread].rank);

	return k != NULL ? k->text : KT_NO;
}

/* The autograd link of span s (a cpu_op), or NULL. */
static const struct kt_seq *
seq_of(const struct kt_model *m, const struct kt_span *s)
{
	return kt_model_row(m->seqs, m->nseqs, sizeof(*m->seqs), s->index,
	    m->threads[s->thread].rank);
}

static int
cmp_fwd(const void *a, const void *b, void *ctx)
{
	const struct kt_model *m = ctx;
	const struct fwd *x = a, *y = b;
	const struct kt_span *p, *q;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	p = &m->spans[x->span];
	q = &m->spans[y->span];
	if (p->ts != q->ts)
		return p->ts < q->ts ? -1 : 1;
	if (p->dur != q->dur)
		return p->dur > q->dur ? -1 : 1;
	return x->span < y->span ? -1 : x->span > y->span;
}

/*
 * The forward ops: per (rank, sequence number) of the cpu_ops whose Fwd
 * thread id is 0, the latest to start (then the shortest: the innermost),
 * unless two threads have one.  This is PyTorch's own rule (its
 * profiler's generateForwardBackwardLink, which writes the fwdbwd
 * flows): an op takes the number that the next autograd node will get,
 * so the ops before the one that makes the node (aten::broadcast_tensors
 * before aten::mse_loss) share it.  0 or -1.
 */
static int
forward_ops(struct kt_chains *c)
{
	const struct kt_model *m = c->m;
	size_t i, j, k, n = 0;
	struct fwd *f;

	if (m->nseqs == 0)
		return 0;
	if ((f = malloc(m->nseqs * sizeof(*f))) == NULL)
		return -1;
	for (i = 0; i < m->nspans; i++) {
		const struct kt_span *s = &m->spans[i];
		const struct kt_seq *q;

		if (s->kind != KT_CPU_OP || (q = seq_of(m, s)) == NULL ||
		    q->fwd_thread != 0 || n == m->nseqs)
			continue;
		f[n].rank = m->threads[s->thread].rank;
		f[n].seq = q->seq;
		f[n++].span = (uint32_t)i;
	}
	kt_sort_r(f, n, sizeof(*f), cmp_fwd, (void *)m);
	for (i = k = 0; i < n; i = j) {
		uint32_t last = f[i].span;
		int two = 0;

		for (j = i + 1; j < n && f[j].rank == f[i].rank &&
		    f[j].seq == f[i].seq; j++) {
			if (m->spans[f[j].span].thread != m->spans[last].thread)
				two = 1;
			last = f[j].span;
		}
		f[k] = f[i];
		f[k++].span = two ? KT_NO : last;
	}
	c->fw = f;
	c->nfw = k;
	return 0;
}

/* The forward op of (rank, seq), or KT_NO. */
static uint32_t
forward_of(const struct kt_chains *c, int64_t rank, int64_t seq)
{
	size_t lo = 0, hi = c->nfw;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct fwd *f = &c->fw[mid];

		if (f->rank < rank || (f->rank == rank && f->seq < seq))
			lo = mid + 1;
		else if (f->rank == rank && f->seq == seq)
			return f->span;
		else
			hi = mid;
	}
	return KT_NO;
}

/* The forward op that a fwdbwd flow links backward op s to, or KT_NO. */
static uint32_t
fwdbwd_of(const struct kt_model *m, uint32_t s)
{
	size_t lo = 0, hi = m->nfwdbwd;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->fwdbwd[mid].from < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nfwdbwd && m->fwdbwd[lo].from == s ?
	    m->fwdbwd[lo].to : KT_NO;
}

/* Whether name id is a user frame (memoised); 0, 1, or -1. */
static int
name_user(struct kt_chains *c, uint32_t id)
{
	const char *s;
	size_t n;
	int rc;

	if (id >= c->nnames)
		return 0;
	if (c->user[id] != 0)
		return c->user[id] == 2;
	s = kt_intern_get(c->m->names, id, &n);
	if (n > 0 && s[n - 1] == '\0')
		n--;
	if ((rc = kt_chains_user_frame(c, s, n)) == -1)
		return -1;
	c->user[id] = rc ? 2 : 1;
	return rc;
}

/* Same, for a Call stack: whether one of its frames is the user's. */
static int
stack_user(struct kt_chains *c, uint32_t id)
{
	size_t off, len;
	int rc;

	if (id >= c->nnames)
		return 0;
	if (c->user[id] != 0)
		return c->user[id] == 2;
	if ((rc = stack_frame(c, kt_model_str(c->m, id), &off, &len)) == -1)
		return -1;
	if (rc && (off > UINT32_MAX || len > UINT32_MAX))
		rc = 0;		/* a frame past 4 GB into one stack: none */
	if (rc) {
		c->soff[id] = (uint32_t)off;
		c->slen[id] = (uint32_t)len;
	}
	c->user[id] = rc ? 2 : 1;
	return rc;
}

/* Compile the frame skip regex into re: 0, or -1 with err. */
static int
skip_compile(regex_t *re, const char *skip, struct kt_error *err)
{
	char why[160];
	int rc;

	if (kt_regex_check(skip, why, sizeof(why)) == -1) {
		kt_error_set(err, NULL, 0, 0, "frame skip regex '%s': %s",
		    skip, why);
		return -1;
	}
	if ((rc = regcomp(re, skip, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, re, why, sizeof(why));
		kt_error_set(err, NULL, 0, 0, "frame skip regex '%s': %s",
		    skip, why);
		return -1;
	}
	return 0;
}

int
kt_chains_check(const char *skip, struct kt_error *err)
{
	regex_t re;

	if (skip_compile(&re, skip, err) == -1)
		return -1;
	regfree(&re);
	return 0;
}

struct kt_chains *
kt_chains_new(const struct kt_model *m, const char *skip,
    struct kt_error *err)
{
	struct kt_chains *c;
	size_t i, n = m->nspans ? m->nspans : 1;

	if (skip == NULL)
		skip = KT_FRAME_SKIP;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto nomem;
	c->m = m;
	if (skip_compile(&c->skip, skip, err) == -1) {
		free(c);
		return NULL;
	}
	c->nnames = kt_intern_count(m->names);
	if ((c->op = malloc(n * sizeof(*c->op))) == NULL ||
	    (c->ann = malloc(n * sizeof(*c->ann))) == NULL ||
	    (c->frame = malloc(n * sizeof(*c->frame))) == NULL ||
	    (c->user = kt_zalloc(c->nnames ? c->nnames : 1, 1)) == NULL)
		goto nomem_c;
	if (m->nstacks > 0 && ((c->soff = malloc((c->nnames ? c->nnames : 1) *
	    sizeof(*c->soff))) == NULL || (c->slen = malloc((c->nnames ?
	    c->nnames : 1) * sizeof(*c->slen))) == NULL))
		goto nomem_c;
	for (i = 0; i < m->nspans; i++) {
		const struct kt_span *s = &m->spans[i];
		uint32_t p = s->parent, st;
		int u = 0;

		c->op[i] = s->kind == KT_CPU_OP ? (uint32_t)i :
		    p != KT_NO ? c->op[p] : KT_NO;
		c->ann[i] = s->kind == KT_USER_ANNOTATION ? (uint32_t)i :
		    p != KT_NO ? c->ann[p] : KT_NO;
		if (s->kind == KT_PYTHON_FUNCTION)
			u = name_user(c, s->name);
		else if (s->kind == KT_CPU_OP && m->nstacks > 0 &&
		    (st = stack_of(m, s)) != KT_NO)
			u = stack_user(c, st);
		if (u == -1)
			goto nomem_c;
		c->frame[i] = u ? (uint32_t)i : p != KT_NO ? c->frame[p] :
		    KT_NO;
	}
	if (forward_ops(c) == -1)
		goto nomem_c;
	return c;
nomem_c:
	kt_chains_free(c);
nomem:
	kt_error_set(err, NULL, 0, 0, "out of memory");
	return NULL;
}

void
kt_chains_free(struct kt_chains *c)
{
	if (c == NULL)
		return;
	regfree(&c->skip);
	free(c->op);
	free(c->ann);
	free(c->frame);
	free(c->user);
	free(c->soff);
	free(c->slen);
	free(c->fw);
	kt_buf_free(&c->file);
	free(c);
}

uint32_t
kt_chains_frame_of(const struct kt_chains *c, uint32_t span,
    const char **text, size_t *len)
{
	const struct kt_model *m = c->m;
	const struct kt_span *s;
	uint32_t f, id;

	*text = NULL;
	*len = 0;
	if (span == KT_NO || (f = c->frame[span]) == KT_NO)
		return KT_NO;
	s = &m->spans[f];
	if (s->kind == KT_PYTHON_FUNCTION) {
		*text = kt_model_str(m, s->name);
		*len = strlen(*text);
		return f;
	}
	/* A cpu_op's Call stack: its frame was found by kt_chains_new. */
	id = stack_of(m, s);
	if (id == KT_NO || id >= c->nnames || c->user[id] != 2)
		return KT_NO;
	*text = kt_model_str(m, id) + c->soff[id];
	*len = c->slen[id];
	return f;
}

int
kt_chain_get(const struct kt_chains *c, uint32_t act, struct kt_chain *ch)
{
	const struct kt_model *m = c->m;
	const struct kt_act *a = &m->act[act];
	uint32_t l = a->launch, p, s;

	memset(ch, 0, sizeof(*ch));
	ch->launch = l;
	ch->step = a->step;
	ch->op = ch->ann = ch->frame = ch->fwd = KT_NO;
	if (l == KT_NO)
		return 0;
	/* The launching call itself is no op or annotation: its parent's. */
	if ((p = m->spans[l].parent) == KT_NO)
		return 0;
	ch->op = c->op[p];
	ch->ann = c->ann[p];
	ch->frame = kt_chains_frame_of(c, p, &ch->frame_text, &ch->frame_len);
	/*
	 * A backward call: the innermost op above it that is an autograd
	 * node (Fwd thread id not 0) names its forward op by sequence
	 * number; without a frame of its own, the call has the forward
	 * op's, the line that made the node.
	 */
	for (s = ch->op; s != KT_NO && (c->nfw > 0 || m->nfwdbwd > 0); ) {
		const struct kt_seq *q = seq_of(m, &m->spans[s]);

		if (q != NULL && q->fwd_thread != 0) {
			ch->fwd = forward_of(c,
			    m->threads[m->spans[s].thread].rank, q->seq);
			if (ch->fwd == KT_NO)
				ch->fwd = fwdbwd_of(m, s);
			break;
		}
		if ((ch->fwd = fwdbwd_of(m, s)) != KT_NO)
			break;
		s = m->spans[s].parent;
		s = s != KT_NO ? c->op[s] : KT_NO;
	}
	if (ch->frame == KT_NO && ch->fwd != KT_NO)
		ch->frame = kt_chains_frame_of(c, ch->fwd, &ch->frame_text,
		    &ch->frame_len);
	return 0;
}
