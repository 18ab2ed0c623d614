/*
 * scan_body.h: the event scanner's string and value loops, included by
 * scan.c once for each of its paths (KT_SCAN) with
 *   SCAN_FN(name)	the path's name for a function (scan_value_avx2),
 *   SCAN_ATTR		its attributes (the target of a run-time choice),
 *   STR_RUN, WS_RUN, DIGIT_RUN	its runs (see scan.c),
 * so that each path's runs are inlined where they are used.  Everything
 * else (tables, edits, keys, the stack) is scan.c's, shared.
 */

/*
 * The rest of a string from b[p], its first byte that is not plain (a
 * quote, an escape, a control or a byte of UTF-8).  Returns the offset
 * just past the closing quote, or 0 with *rc set to KT_SCAN_MORE/ERR.
 */
SCAN_ATTR static size_t __attribute__((noinline))
SCAN_FN(string_rest)(struct kt_scanner *sc, const unsigned char *b, size_t p,
    size_t end, int *rc)
{
	for (;;) {
		p = STR_RUN(b, p, end);
		if (p >= end) {
			*rc = KT_SCAN_MORE;
			return 0;
		}
		if (b[p] == '"')
			return p + 1;
		if (b[p] == '\\') {
			if (p + 1 >= end) {
				*rc = KT_SCAN_MORE;
				return 0;
			}
			switch (b[p + 1]) {
			case '"': case '\\': case '/': case 'b':
			case 'f': case 'n': case 'r': case 't':
				p += 2;
				continue;
			case 'u':
				if (p + 6 > end) {
					*rc = KT_SCAN_MORE;
					return 0;
				}
				if (ishex[b[p + 2]] && ishex[b[p + 3]] &&
				    ishex[b[p + 4]] && ishex[b[p + 5]]) {
					p += 6;
					continue;
				}
				break;
			default:
				break;
			}
			/* An invalid escape: keep the backslash literally. */
			if (sc->strict) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "invalid escape in string";
				return 0;
			}
			if (add_edit(sc, p, 0, "\\", 1, KT_R_ESCAPE) == -1) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "out of memory";
				return 0;
			}
			p += 1;
			continue;
		}
		if (b[p] >= 0x80) {
			int k = utf8_len(b, p, end);

			if (k > 0) {
				p += (size_t)k;
				continue;
			}
			if (k == -1) {
				*rc = KT_SCAN_MORE;
				return 0;
			}
			/* Not UTF-8: each such byte becomes U+FFFD. */
			if (sc->strict) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "invalid UTF-8 in string";
				return 0;
			}
			if (run_edit(sc, p, KT_R_UTF8) == -1) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "out of memory";
				return 0;
			}
			p++;
			continue;
		}
		/* A raw control character. */
		if (b[p] == '\n' || b[p] == '\r') {
			*rc = KT_SCAN_ERR;
			sc->err_off = p;
			sc->err_msg = "line break inside a string "
			    "(unterminated string, or events written into "
			    "each other)";
			return 0;
		}
		if (sc->strict) {
			*rc = KT_SCAN_ERR;
			sc->err_off = p;
			sc->err_msg = "raw control character in string";
			return 0;
		} else {
			if (run_edit(sc, p, KT_R_CONTROL) == -1) {
				*rc = KT_SCAN_ERR;
				sc->err_off = p;
				sc->err_msg = "out of memory";
				return 0;
			}
		}
		p++;
	}
}

/*
 * Scan a string whose opening quote is at b[p]: most are plain bytes to
 * a quote, found here; the rest in string_rest.  Returns the offset just
 * past the closing quote, or 0 with *rc set to KT_SCAN_MORE/ERR.
 */
SCAN_ATTR static inline __attribute__((always_inline)) size_t
SCAN_FN(scan_string)(struct kt_scanner *sc, const unsigned char *b, size_t p,
    size_t end, int *rc)
{
	p = STR_RUN(b, p + 1, end);
	if (p < end && b[p] == '"')
		return p + 1;
	return SCAN_FN(string_rest)(sc, b, p, end, rc);
}


SCAN_ATTR static int
SCAN_FN(scan_value)(struct kt_scanner *sc, const char *buf, size_t pos,
    size_t end, size_t *endp, struct kt_event *ev)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t p = pos, depth = 0, vstart[3] = { 0, 0, 0 }, comma = 0;
	int rc = KT_SCAN_OK, kf = -1, pend[3] = { -1, -1, -1 };
	int args_open = 0;
	unsigned char vtype[3] = { 0, 0, 0 }, c;

	sc->nedits = 0;
	sc->nkeys = 0;
	sc->plain_nums = 0;
	if (ev != NULL) {
		memset(ev->f, 0, sizeof(ev->f));
		ev->known = KT_FALL;
		if (b[p] != '{')
			FAIL(p, "expected an event object");
	}
	/*
	 * Each state is a label, entered with c = b[p], the first byte
	 * after white space (NEXT): each place that ends a token jumps to
	 * what must follow it, so that no state is dispatched twice.
	 */
#define NEXT(state) do {						\
	p = WS_RUN(b, p, end);						\
	if (p >= end)							\
		return KT_SCAN_MORE;					\
	c = b[p];							\
	goto state;							\
} while (0)
	NEXT(s_value);
s_value_or_close:
	if (c == ']')
		goto close;
s_value:
	if (c == ']' && comma) {
		REPAIR(comma, 1, "", 0, KT_R_TRAILING_COMMA,
		    "trailing comma");
		goto close;
	}
	comma = 0;
	if (ev != NULL && depth <= 2 && depth >= 1 &&
	    (depth == 1 || args_open)) {
		pend[depth] = kf;
		vstart[depth] = p;
	}
	switch (c) {
	case '{':
		if (ev != NULL && depth == 1)
			args_open = pend[1] == KT_F_ARGS;
		if (push(sc, depth++, 'o') == -1)
			FAIL(p, "out of memory");
		if (depth <= 3)
			vtype[depth - 1] = KT_OBJECT;
		p++;
		NEXT(s_key_or_close);
	case '[':
		if (push(sc, depth++, 'a') == -1)
			FAIL(p, "out of memory");
		if (depth <= 3)
			vtype[depth - 1] = KT_ARRAY;
		p++;
		NEXT(s_value_or_close);
	case '"':
		if ((p = SCAN_FN(scan_string)(sc, b, p, end, &rc)) == 0)
			return rc;
		if (depth < 3)
			vtype[depth] = KT_STRING;
		break;
	case 't':
	case 'f':
	case 'n': {
		const char *w = c == 't' ? "true" :
		    c == 'f' ? "false" : "null";
		int m = matchword(b, p, end, w);

		if (m == -1 && end - p < 8)
			return KT_SCAN_MORE;
		if (m > 0 && (p + (size_t)m >= end ||
		    !((b[p + m] >= 'a' && b[p + m] <= 'z') ||
		    (b[p + m] >= 'A' && b[p + m] <= 'Z')))) {
			if (memcmp(b + p, w, (size_t)m) != 0)
				FAIL(p, "invalid literal");
			if (depth < 3)
				vtype[depth] = c == 't' ?
				    KT_TRUE : c == 'f' ?
				    KT_FALSE : KT_NULL;
			p += (size_t)m;
			break;
		}
		if (c != 'n')
			FAIL(p, "invalid literal");
	}
		/* A word starting with n: maybe nan. */
		/* FALLTHROUGH */
	default: {
		size_t q = p;
		int m = 0;

		if (c == '-' || isdig[c]) {
			if (b[q] == '-')
				q++;
			if (q < end && isdig[b[q]]) {
				q = DIGIT_RUN(b, q, end);
				if (q < end && b[q] == '.') {
					q++;
					if (q < end && !isdig[b[q]])
						FAIL(q, "invalid number");
					q = DIGIT_RUN(b, q, end);
				}
				if (q < end && (b[q] == 'e' ||
				    b[q] == 'E')) {
					q++;
					if (q < end && (b[q] == '+' ||
					    b[q] == '-'))
						q++;
					if (q < end && !isdig[b[q]])
						FAIL(q, "invalid number");
					q = DIGIT_RUN(b, q, end);
				}
				if (q >= end)
					return KT_SCAN_MORE;
				if (depth < 3)
					vtype[depth] = KT_NUMBER;
				p = q;
				break;
			}
			if (q >= end)
				return KT_SCAN_MORE;
		} else if (c == '+')
			q++;
		/* A bare inf, nan, Infinity or NaN? */
		if ((m = matchword(b, q, end, "infinity")) == 8 ||
		    (m >= 0 && (m = matchword(b, q, end,
		    "inf")) == 3) ||
		    (m >= 0 && (m = matchword(b, q, end,
		    "nan")) == 3)) {
			size_t len = q - p + (size_t)m;

			REPAIR(p, len, "null", 4,
			    KT_R_NONFINITE,
			    "non-finite number (inf or nan)");
			if (depth < 3)
				vtype[depth] = KT_NULL;
			p += len;
			break;
		}
		if (m == -1)
			return KT_SCAN_MORE;
		if (c == '}' || c == ']' || c == ',' || c == ':')
			FAIL(p, "expected a value");
		FAIL(p, "unexpected character where a value "
		    "should be");
	}
	}
complete:
	/* A value ended (a scalar, or a container closed) at depth. */
	if (depth == 0)
		goto done;
	if (ev != NULL && depth <= 2 && pend[depth] >= 0 &&
	    (depth == 1 || args_open)) {
		struct kt_val *v = &ev->f[pend[depth]];

		v->off = (uint32_t)(vstart[depth] - pos);
		v->len = (uint32_t)(p - vstart[depth]);
		v->type = vtype[depth];
	}
	NEXT(s_after);
s_after:
	if (c == ',') {
		comma = p++;
		if (STACK(sc)[depth - 1] == 'o')
			NEXT(s_key);
		NEXT(s_value);
	}
	if ((c == '}' && STACK(sc)[depth - 1] == 'o') ||
	    (c == ']' && STACK(sc)[depth - 1] == 'a'))
		goto close;
	if (STACK(sc)[depth - 1] == 'o')
		FAIL(p, "expected ',' or '}' after a value");
	FAIL(p, "expected ',' or ']' after a value");
s_key_or_close:
	if (c == '}')
		goto close;
s_key: {
	size_t ks = p;

	if (c == '}' && comma) {
		REPAIR(comma, 1, "", 0, KT_R_TRAILING_COMMA,
		    "trailing comma");
		goto close;
	}
	comma = 0;
	if (c != '"')
		FAIL(p, "expected a key string");
	if ((p = SCAN_FN(scan_string)(sc, b, p, end, &rc)) == 0)
		return rc;
	kf = -1;
	if (ev != NULL) {
		if (depth == 1) {
			kf = top_field(b + ks + 1, p - ks - 2);
			sc->nkeys++;
		} else if (depth == 2 && args_open)
			kf = arg_field(b + ks + 1, p - ks - 2);
	}
	/* The colon, most often right after the key. */
	if (p < end && b[p] == ':') {
		p++;
		NEXT(s_value);
	}
	NEXT(s_colon);
}
s_colon:
	if (c != ':')
		FAIL(p, "expected ':' after a key");
	p++;
	NEXT(s_value);
close:
	/* c closes the container on top of the stack. */
	if (c == '}' ? STACK(sc)[depth - 1] != 'o' :
	    STACK(sc)[depth - 1] != 'a')
		FAIL(p, "mismatched bracket");
	p++;
	comma = 0;
	depth--;
	if (depth == 1)
		args_open = 0;
	goto complete;
#undef NEXT
done:
	*endp = p;
	return KT_SCAN_OK;
}
