/*
 * scan_fast.h: the AVX2 path's first try at an event, included by scan.c.
 *
 * Most events are plain: no escape, no byte of UTF-8, no control byte in
 * a string, nothing to repair.  For those the byte-by-byte state machine
 * of scan_body.h spends most of its time finding where each token starts
 * and ends.  Here, as in simdjson's first stage, each 64 bytes are
 * classified at once into bit masks (quotes, brackets and separators
 * outside strings, white space, the first byte of each number or literal),
 * and the event is walked from token to token over those bits.
 *
 * The walk accepts only what the full scanner accepts without an edit,
 * and records the same fields (ev->f, sc->nkeys) at the same places; at
 * anything else (a byte it does not take, a grammar it does not check, an
 * event that runs past the data, nesting deeper than 63) it gives up and
 * the full scanner scans the event from its start, so that every repair,
 * error and KT_SCAN_MORE is the full scanner's own.
 */

/* Prefix XOR: bit i is the XOR of bits 0..i of x (a carry-less
 * multiplication by all ones). */
AVX2 static inline ALWAYS uint64_t
prefix_xor(uint64_t x)
{
	return (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(
	    _mm_set_epi64x(0, (long long)x), _mm_set1_epi8((char)0xff), 0));
}

/* Zero ev->f, in vector stores rather than memset's rep stosq. */
AVX2 static inline ALWAYS void
fast_zero(struct kt_event *ev)
{
	unsigned char *f = (unsigned char *)ev->f;
	size_t i;

	_Static_assert(sizeof(ev->f) >= 32 + 16, "ev->f is small");
	for (i = 0; i + 32 <= sizeof(ev->f); i += 32) {
		_mm256_storeu_si256((__m256i *)(void *)(f + i),
		    _mm256_setzero_si256());
		/* Not a memset to the compiler (a rep stosq, slow to start). */
		__asm__("" : "+r"(f));
	}
	if (i < sizeof(ev->f))
		_mm256_storeu_si256((__m256i *)(void *)(f +
		    sizeof(ev->f) - 32), _mm256_setzero_si256());
}

/* One 64-byte block's masks: tok, the bytes the walk visits; bad, those
 * it cannot take (a backslash, a byte >= 0x80, a control byte that is not
 * white space outside a string). */
struct fast_blk {
	uint64_t tok;
	uint64_t bad;
	uint64_t scal;		/* the bytes of numbers and literals */
	uint64_t dig;		/* digits */
};

/* The state carried from block to block: inside a string at its end; its
 * last byte part of a number or literal. */
struct fast_carry {
	uint64_t instr;		/* all ones or zero */
	uint64_t scalar;	/* 1 or 0 */
};

#define EQ32(v, c)	_mm256_cmpeq_epi8((v), _mm256_set1_epi8(c))
#define MASK64(lo, hi)	((uint64_t)(uint32_t)_mm256_movemask_epi8(lo) | \
			 (uint64_t)(uint32_t)_mm256_movemask_epi8(hi) << 32)

AVX2 static inline ALWAYS void
fast_classify(const unsigned char *p, struct fast_carry *cy,
    struct fast_blk *k)
{
	/*
	 * simdjson's tables, looked up by each byte's low four bits (0
	 * for a byte >= 0x80): white space is the byte its entry is, and
	 * an operator the byte with 0x20 set ([ ] as { }).  A control
	 * byte taken for one (0x0c as ',', 0x1a as ':') is bad anyway.
	 */
	const __m256i wst = _mm256_setr_epi8(' ', 100, 100, 100, 17, 100,
	    113, 2, 100, '\t', '\n', 112, 100, '\r', 100, 100,
	    ' ', 100, 100, 100, 17, 100, 113, 2, 100, '\t', '\n', 112, 100,
	    '\r', 100, 100);
	const __m256i opt = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    ':', '{', ',', '}', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    ':', '{', ',', '}', 0, 0);
	__m256i v0 = LOAD32(p), v1 = LOAD32(p + 32);
	uint64_t q, ops, ws, stop, instr, scal;

	q = MASK64(EQ32(v0, '"'), EQ32(v1, '"'));
	ops = MASK64(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(opt, v0),
	    _mm256_or_si256(v0, _mm256_set1_epi8(0x20))),
	    _mm256_cmpeq_epi8(_mm256_shuffle_epi8(opt, v1),
	    _mm256_or_si256(v1, _mm256_set1_epi8(0x20))));
	ws = MASK64(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(wst, v0), v0),
	    _mm256_cmpeq_epi8(_mm256_shuffle_epi8(wst, v1), v1));
	/* A backslash, a control or (signed, below 0x20) a byte >= 0x80. */
	stop = MASK64(_mm256_or_si256(EQ32(v0, '\\'),
	    _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v0)),
	    _mm256_or_si256(EQ32(v1, '\\'),
	    _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v1)));
	k->dig = MASK64(_mm256_and_si256(
	    _mm256_cmpgt_epi8(v0, _mm256_set1_epi8('0' - 1)),
	    _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), v0)),
	    _mm256_and_si256(
	    _mm256_cmpgt_epi8(v1, _mm256_set1_epi8('0' - 1)),
	    _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), v1)));
	/* Inside a string: from its opening quote up to its closing one. */
	instr = prefix_xor(q) ^ cy->instr;
	cy->instr = (uint64_t)((int64_t)instr >> 63);
	scal = ~(instr | q | ops | ws);
	k->tok = (ops & ~instr) | q | (scal & ~(scal << 1 | cy->scalar));
	cy->scalar = scal >> 63;
	k->scal = scal;
	/* White space is white space only outside a string. */
	k->bad = stop & (instr | ~ws);
}

/*
 * The end of the number at b[p] and the full scanner's grammar for one:
 * -?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?, or 0 for anything else; *expo
 * set when it has an exponent.
 */
static inline ALWAYS size_t
fast_number(const unsigned char *b, size_t p, size_t end, int *expo)
{
	if (p < end && b[p] == '-')
		p++;
	if (p >= end || !isdig[b[p]])
		return 0;
	while (++p < end && isdig[b[p]])
		;
	if (p < end && b[p] == '.') {
		if (++p >= end || !isdig[b[p]])
			return 0;
		while (++p < end && isdig[b[p]])
			;
	}
	if (p < end && (b[p] == 'e' || b[p] == 'E')) {
		*expo = 1;
		if (++p < end && (b[p] == '+' || b[p] == '-'))
			p++;
		if (p >= end || !isdig[b[p]])
			return 0;
		while (++p < end && isdig[b[p]])
			;
	}
	return p < end ? p : 0;
}

/* Bytes that may follow a number or literal (the walk checks which). */
static const unsigned char fast_after[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [','] = 1, [':'] = 1,
	['{'] = 1, ['}'] = 1, ['['] = 1, [']'] = 1, ['"'] = 1
};

#define FAST_NO	(-1)

/* The walk's blocks: the one at base, and what it carries on. */
struct fast_walk {
	const unsigned char *b;
	size_t end;
	size_t base;
	struct fast_carry cy;
	struct fast_blk k;
};

/*
 * The 64 bytes of the block at w->base (before the data's end): in
 * place, or the data's last bytes padded with spaces in tail.
 */
AVX2 static inline ALWAYS const unsigned char *
fast_bytes(const struct fast_walk *w, unsigned char tail[64])
{
	if (w->base + 64 <= w->end)
		return w->b + w->base;
	memset(tail, ' ', 64);
	memcpy(tail, w->b + w->base, w->end - w->base);
	return tail;
}

/* Classify the block at w->base; -1 when w->base is past the data. */
AVX2 static int __attribute__((noinline))
fast_block(struct fast_walk *w)
{
	unsigned char tail[64];

	if (w->base >= w->end)
		return -1;
	fast_classify(fast_bytes(w, tail), &w->cy, &w->k);
	return 0;
}

/* Start walk w at the event at b[pos], the data ending at end. */
AVX2 static inline ALWAYS void
fast_walk_init(struct fast_walk *w, const unsigned char *b, size_t pos,
    size_t end)
{
	w->b = b;
	w->end = end;
	w->base = pos;
	w->cy.instr = w->cy.scalar = 0;
}

/*
 * The walk's next token t (its byte c), past the blocks with none left
 * (tok: the current block's left); FAST_NO past the data or at a byte
 * the walk does not take.  For the walks below (locals w, tok, t, c, b).
 */
#define TOKEN() do {							\
	while (tok == 0) {						\
		if (w.k.bad != 0)					\
			return FAST_NO;					\
		w.base += 64;						\
		if (fast_block(&w) == -1)				\
			return FAST_NO;					\
		tok = w.k.tok;						\
	}								\
	t = w.base + (size_t)__builtin_ctzll(tok);			\
	tok &= tok - 1;							\
	c = b[t];							\
} while (0)

/*
 * Scan the event at buf[pos] as kt_scan_value does, or return FAST_NO
 * (with ev and sc in no particular state) for the full scanner.
 */
AVX2 static int
fast_event_avx2(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	const unsigned char *b = (const unsigned char *)buf;
	struct fast_walk w;
	size_t t, e, vstart[3] = { 0, 0, 0 };
	uint64_t stack = 0, tok;	/* bit d: level d+1 is an array */
	unsigned depth = 0;
	int kf = -1, pend[3] = { -1, -1, -1 }, args_open = 0;
	unsigned char c;

	if (b[pos] != '{')
		return FAST_NO;
	fast_zero(ev);
	ev->known = KT_FALL;
	sc->nedits = 0;
	sc->nkeys = 0;
	sc->plain_nums = 1;

	fast_walk_init(&w, b, pos, end);
	if (fast_block(&w) == -1)
		return FAST_NO;
	tok = w.k.tok;
	TOKEN();		/* the event's { */
	goto value_here;

value_or_close:
	TOKEN();
	if (c == ']')
		goto close;
	goto value_here;
value:
	TOKEN();
value_here:
	if (depth - 1 < 2 && (depth == 1 || args_open)) {
		pend[depth] = kf;
		vstart[depth] = t;
	}
	switch (c) {
	case '{':
		if (depth == 1)
			args_open = pend[1] == KT_F_ARGS;
		if (depth >= 63)
			return FAST_NO;
		stack &= ~((uint64_t)1 << depth);
		depth++;
		goto key_or_close;
	case '[':
		if (depth >= 63)
			return FAST_NO;
		stack |= (uint64_t)1 << depth;
		depth++;
		goto value_or_close;
	case '"':
		TOKEN();	/* the closing quote */
		e = t + 1;
		c = KT_STRING;
		break;
	case 't':
	case 'f':
	case 'n': {
		const char *lit = c == 't' ? "true" : c == 'f' ? "false" :
		    "null";
		size_t m = c == 'f' ? 5 : 4;

		if (t + m >= end || memcmp(b + t, lit, m) != 0 ||
		    !fast_after[b[t + m]])
			return FAST_NO;
		e = t + m;
		c = c == 't' ? KT_TRUE : c == 'f' ? KT_FALSE : KT_NULL;
		break;
	}
	default: {
		/*
		 * A number: most are digits with a '-' before them or one
		 * '.' among them, all in this block, told by its masks; the
		 * rest byte by byte.
		 */
		unsigned o = (unsigned)(t - w.base), s = o, x;
		uint64_t nx = ~w.k.scal & (~(uint64_t)0 << o), nd;
		int expo;

		c = KT_NUMBER;
		if (nx != 0) {
			x = (unsigned)__builtin_ctzll(nx);
			nd = ~w.k.dig & (((uint64_t)1 << x) - 1) &
			    (~(uint64_t)0 << o);
			if (b[t] == '-') {
				nd &= nd - 1;
				s++;
			}
			if (s < x && (nd == 0 || ((nd & (nd - 1)) == 0 &&
			    b[w.base + (unsigned)__builtin_ctzll(nd)] == '.' &&
			    nd > (uint64_t)1 << s && nd < (uint64_t)1 << (x - 1)))) {
				e = w.base + x;
				break;
			}
		}
		expo = 0;
		if ((e = fast_number(b, t, end, &expo)) == 0 ||
		    !fast_after[b[e]])
			return FAST_NO;
		if (expo)
			sc->plain_nums = 0;
		break;
	}
	}
	goto complete;

close:
	depth--;
	if (depth == 1)
		args_open = 0;
	e = t + 1;
	c = (stack >> depth & 1) ? KT_ARRAY : KT_OBJECT;
complete:
	/* A value of type c ended at e, at depth. */
	if (depth == 0) {
		/* The rest of the block is the next event's. */
		if ((w.k.bad & (((uint64_t)2 << (t - w.base)) - 1)) != 0)
			return FAST_NO;
		*endp = e;
		return KT_SCAN_OK;
	}
	if (depth <= 2 && pend[depth] >= 0 && (depth == 1 || args_open)) {
		struct kt_val *v = &ev->f[pend[depth]];

		v->off = (uint32_t)(vstart[depth] - pos);
		v->len = (uint32_t)(e - vstart[depth]);
		v->type = c;
	}
	TOKEN();
	if (c == ',') {
		if ((stack >> (depth - 1) & 1) == 0)
			goto key;
		goto value;
	}
	if (c == ((stack >> (depth - 1) & 1) ? ']' : '}'))
		goto close;
	return FAST_NO;

key_or_close:
	TOKEN();
	if (c == '}')
		goto close;
	goto key_here;
key:
	TOKEN();
key_here: {
	size_t ks = t;

	if (c != '"')
		return FAST_NO;
	TOKEN();	/* the closing quote */
	kf = -1;
	if (depth == 1) {
		kf = top_field(b + ks + 1, t - ks - 1);
		sc->nkeys++;
	} else if (depth == 2 && args_open)
		kf = arg_field(b + ks + 1, t - ks - 1);
	TOKEN();
	if (c != ':')
		return FAST_NO;
	goto value;
}
}

/*
 * The survey's skim of the event at buf[pos] (KT_READ_SKIM): its
 * top-level fields as skim_value finds them (a string with its quotes,
 * an object or array whole, a scalar's bytes up to the separator less
 * white space, each typed by its first byte, nothing checked inside),
 * walking the same bit masks but stepping over every nested value by its
 * brackets alone.  FAST_NO for anything but a plain event (a byte the
 * masks flag: an escape, UTF-8, a control byte; a key, separator or
 * value out of place; past the data), which skim_value then reads.
 */
AVX2 static int
skim_event_avx2(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	const unsigned char *b = (const unsigned char *)buf;
	struct fast_walk w;
	size_t t, e, vstart, ks, d;
	uint64_t tok;
	int kf, type;
	unsigned char c;

	if (b[pos] != '{')
		return FAST_NO;
	fast_zero(ev);
	ev->known = KT_FBIT(KT_F_FIRSTARG) - 1;
	sc->nedits = 0;
	sc->nkeys = 0;
	sc->plain_nums = 0;
	fast_walk_init(&w, b, pos, end);
	if (fast_block(&w) == -1)
		return FAST_NO;
	tok = w.k.tok;
	TOKEN();		/* the event's { */
	TOKEN();
	if (c == '}')
		goto done;
	for (;;) {
		/* A key, its colon, its value. */
		if (c != '"')
			return FAST_NO;
		ks = t;
		TOKEN();	/* the closing quote */
		kf = top_field(b + ks + 1, t - ks - 1);
		sc->nkeys++;
		TOKEN();
		if (c != ':')
			return FAST_NO;
		TOKEN();
		vstart = t;
		switch (c) {
		case '"':
			TOKEN();
			e = t + 1;
			type = KT_STRING;
			TOKEN();
			break;
		case '{':
		case '[':
			/*
			 * Over what it holds: its brackets counted, a block's at
			 * once (those outside strings are among its tokens, and
			 * the rest of its tokens need no look).
			 */
			for (d = 1;;) {
				unsigned char tail[64];
				const unsigned char *q = fast_bytes(&w, tail);
				__m256i v0 = LOAD32(q), v1 = LOAD32(q + 32);
				uint64_t op, br;

				op = MASK64(_mm256_or_si256(EQ32(v0, '{'),
				    EQ32(v0, '[')), _mm256_or_si256(EQ32(v1, '{'),
				    EQ32(v1, '['))) & tok;
				br = op | (MASK64(_mm256_or_si256(EQ32(v0, '}'),
				    EQ32(v0, ']')), _mm256_or_si256(EQ32(v1, '}'),
				    EQ32(v1, ']'))) & tok);
				for (; br != 0; br &= br - 1)
					if ((op & br & (0 - br)) != 0)
						d++;
					else if (--d == 0)
						break;
				if (d == 0) {
					t = w.base + (size_t)__builtin_ctzll(br);
					/* The tokens after it. */
					tok &= ~(br ^ (br - 1));
					break;
				}
				/* As TOKEN() leaves a block. */
				if (w.k.bad != 0)
					return FAST_NO;
				w.base += 64;
				if (fast_block(&w) == -1)
					return FAST_NO;
				tok = w.k.tok;
			}
			e = t + 1;
			type = b[vstart] == '{' ? KT_OBJECT : KT_ARRAY;
			TOKEN();
			break;
		case ',':
		case ':':
		case '}':
		case ']':
			return FAST_NO;
		default:
			/* A scalar, up to the separator after it. */
			TOKEN();
			for (e = t; e > vstart && kt_ws[b[e - 1]]; e--)
				;
			type = b[vstart] == 't' ? KT_TRUE : b[vstart] == 'f' ?
			    KT_FALSE : b[vstart] == 'n' ? KT_NULL : KT_NUMBER;
			break;
		}
		if (kf >= 0) {
			ev->f[kf].off = (uint32_t)(vstart - pos);
			ev->f[kf].len = (uint32_t)(e - vstart);
			ev->f[kf].type = (uint8_t)type;
		}
		if (c == '}')
			break;
		if (c != ',')
			return FAST_NO;
		TOKEN();
	}
done:
	/* The rest of the block is the next event's. */
	if ((w.k.bad & (((uint64_t)2 << (t - w.base)) - 1)) != 0)
		return FAST_NO;
	*endp = t + 1;
	return KT_SCAN_OK;
}

#undef TOKEN
#undef EQ32
#undef MASK64
