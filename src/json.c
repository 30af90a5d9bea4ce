/*
 * json.c -- a strict JSON reader (RFC 8259) that builds a small DOM, and the
 * writer helpers that every module uses to emit JSON.
 *
 * Layer: bottom, beside util (see json.h). Used by import/export, eval, the
 * MCP server and the hook, so it reads untrusted input and must never abort
 * on it: every problem comes back as a return code and a message that ends
 * in " at byte N" (0-based offset into the input).
 *
 * Reader limits and choices:
 *   - exactly one value, surrounded by optional whitespace (space, tab,
 *     newline, carriage return); no comments, no trailing commas, no leading
 *     zeros, no NaN/Infinity, no byte order mark;
 *   - the input must be valid UTF-8 everywhere (overlong forms, encoded
 *     surrogates and code points over U+10FFFF are refused); a byte >= 0x80
 *     outside a string is refused as well;
 *   - inside strings: control characters below 0x20 must be escaped, only
 *     the RFC escapes are accepted, \uXXXX is decoded to UTF-8 with surrogate
 *     pairs joined and lone surrogates refused; \u0000 is accepted and ends
 *     up inside the string (json->len counts bytes, str stays NUL-terminated);
 *   - numbers follow the RFC grammar, checked here, then the slice is handed
 *     to strtod() with '.' swapped for the locale's decimal point, so the
 *     result does not depend on LC_NUMERIC; a number whose magnitude
 *     overflows a double (1e999) is refused rather than turned into infinity,
 *     so that every tree the reader builds can be written back as JSON;
 *   - arrays and objects nest at most JSON_MAX_DEPTH deep; inputs longer
 *     than JSON_MAX_INPUT bytes are CAIRN_TOOBIG; duplicate object keys are
 *     kept (json_get returns the first).
 *
 * Neither the reader nor json_free() recurses: the reader keeps its open
 * containers on a fixed array of JSON_MAX_DEPTH entries, and json_free()
 * rotates the tree into a list as it goes. json_add_tree() also uses a
 * fixed stack of JSON_MAX_DEPTH entries instead of recursion; a hand-built
 * tree nested deeper than that is not written and sets the sticky
 * sb->err to CAIRN_INVALID (trees from the reader never are that deep).
 *
 * Writer: json_add_str() escapes '"', '\\' and control characters and copies
 * all other bytes unchanged (the caller passes UTF-8); json_add_num() writes
 * integers below 2^53 without a decimal point, NaN and infinities as null,
 * and other numbers with the fewest digits (at most 17) that read back to
 * the same double.
 */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* ------------------------------------------------------------- locale */

/* The locale's decimal point, as printf() writes it and strtod() reads it. */
static const char *decimal_point(void)
{
	const struct lconv *lc = localeconv();

	if (!lc || !lc->decimal_point || !lc->decimal_point[0])
		return ".";
	return lc->decimal_point;
}

/* ------------------------------------------------------------- reader */

struct parser {
	const unsigned char *s; /* the input */
	size_t len;             /* its length */
	size_t pos;             /* the next byte to read */
	char *err;              /* message buffer, may be NULL */
	size_t errsize;         /* its size */
};

/* Write "<message> at byte <at>" into the error buffer and return rc. */
static int fail(struct parser *p, int rc, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(struct parser *p, int rc, size_t at, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!p->err || p->errsize == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(p->err, p->errsize, fmt, ap);
	va_end(ap);
	n = strlen(p->err);
	snprintf(p->err + n, p->errsize - n, " at byte %zu", at);
	return rc;
}

static int nomem(struct parser *p)
{
	return fail(p, CAIRN_NOMEM, p->pos, "out of memory");
}

/*
 * Length (1-4) of the valid UTF-8 sequence at s, given avail bytes, or 0 if
 * it is not valid UTF-8 (truncated, overlong, surrogate, over U+10FFFF).
 */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xBF;
	size_t n, k;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0; /* overlong */
		else if (c == 0xED)
			hi = 0x9F; /* U+D800..U+DFFF */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90; /* overlong */
		else if (c == 0xF4)
			hi = 0x8F; /* over U+10FFFF */
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (k = 2; k < n; k++) {
		if ((s[k] & 0xC0) != 0x80)
			return 0;
	}
	return n;
}

/* Encode code point cp (<= U+10FFFF, not a surrogate) as UTF-8 into out. */
static size_t utf8_put(unsigned long cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xC0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xE0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* The byte at i, or -1 past the end. */
static int peek(const struct parser *p, size_t i)
{
	return i < p->len ? p->s[i] : -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		unsigned char c = p->s[p->pos];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		p->pos++;
	}
}

/* Report the byte at `at` as out of place; suffix qualifies the message. */
static int unexpected(struct parser *p, size_t at, const char *suffix)
{
	unsigned c;

	if (at >= p->len)
		return fail(p, CAIRN_INVALID, at, "unexpected end of input");
	c = p->s[at];
	if (c >= 0x80 && utf8_seq(p->s + at, p->len - at) == 0)
		return fail(p, CAIRN_INVALID, at, "invalid UTF-8");
	if (c > 0x20 && c < 0x7F)
		return fail(p, CAIRN_INVALID, at, "unexpected character '%c'%s",
			    (char)c, suffix);
	return fail(p, CAIRN_INVALID, at, "unexpected byte 0x%02x%s", c,
		    suffix);
}

/* Read the four hex digits of the \u escape whose backslash is at i. */
static int read_u_escape(struct parser *p, size_t start, size_t i,
			 unsigned long *cp)
{
	unsigned long v = 0;
	size_t k;

	for (k = i + 2; k < i + 6; k++) {
		unsigned char c;

		if (k >= p->len)
			return fail(p, CAIRN_INVALID, start,
				    "unterminated string");
		c = p->s[k];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned long)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned long)(c - 'A' + 10);
		else
			return fail(p, CAIRN_INVALID, i, "invalid \\u escape");
	}
	*cp = v;
	return CAIRN_OK;
}

/*
 * Decode the \u escape at *i (and the low half that must follow a high
 * surrogate) into the code point *cp; move *i past what was read.
 */
static int read_code_point(struct parser *p, size_t start, size_t *i,
			   unsigned long *cp)
{
	size_t at = *i;
	unsigned long lo = 0;
	int rc;

	rc = read_u_escape(p, start, at, cp);
	if (rc)
		return rc;
	if (*cp >= 0xDC00 && *cp <= 0xDFFF)
		return fail(p, CAIRN_INVALID, at, "lone surrogate \\u%04lx",
			    *cp);
	if (*cp < 0xD800 || *cp > 0xDBFF) {
		*i = at + 6;
		return CAIRN_OK;
	}
	if (peek(p, at + 6) == '\\' && peek(p, at + 7) == 'u') {
		rc = read_u_escape(p, start, at + 6, &lo);
		if (rc)
			return rc;
	} else if (at + 6 >= p->len) {
		return fail(p, CAIRN_INVALID, start, "unterminated string");
	}
	if (lo < 0xDC00 || lo > 0xDFFF)
		return fail(p, CAIRN_INVALID, at, "lone surrogate \\u%04lx",
			    *cp);
	*cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
	*i = at + 12;
	return CAIRN_OK;
}

/*
 * Check the string whose opening quote is at `start`. Sets *outlen to the
 * decoded length in bytes, *end to the offset just past the closing quote
 * and *escaped when it holds any escape. When dst is not NULL the decoded
 * bytes are also written there (dst must hold *outlen bytes from a previous
 * call without dst).
 */
static int scan_string(struct parser *p, size_t start, unsigned char *dst,
		       size_t *outlen, size_t *end, int *escaped)
{
	const unsigned char *s = p->s;
	size_t i = start + 1, n = 0;
	int rc;

	*escaped = 0;
	for (;;) {
		unsigned char c, e;
		unsigned long cp;
		unsigned char tmp[4];
		size_t k;

		if (i >= p->len)
			return fail(p, CAIRN_INVALID, start,
				    "unterminated string");
		c = s[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return fail(p, CAIRN_INVALID, i,
				    "unescaped control character 0x%02x "
				    "in string", c);
		if (c >= 0x80) {
			k = utf8_seq(s + i, p->len - i);
			if (k == 0)
				return fail(p, CAIRN_INVALID, i,
					    "invalid UTF-8");
			if (dst)
				memcpy(dst + n, s + i, k);
			n += k;
			i += k;
			continue;
		}
		if (c != '\\') {
			if (dst)
				dst[n] = c;
			n++;
			i++;
			continue;
		}
		*escaped = 1;
		if (i + 1 >= p->len)
			return fail(p, CAIRN_INVALID, start,
				    "unterminated string");
		e = s[i + 1];
		switch (e) {
		case '"':
		case '\\':
		case '/':
			break;
		case 'b':
			e = '\b';
			break;
		case 'f':
			e = '\f';
			break;
		case 'n':
			e = '\n';
			break;
		case 'r':
			e = '\r';
			break;
		case 't':
			e = '\t';
			break;
		case 'u':
			rc = read_code_point(p, start, &i, &cp);
			if (rc)
				return rc;
			k = utf8_put(cp, tmp);
			if (dst)
				memcpy(dst + n, tmp, k);
			n += k;
			continue;
		default:
			if (e > 0x20 && e < 0x7F)
				return fail(p, CAIRN_INVALID, i,
					    "invalid escape '\\%c'", (char)e);
			return fail(p, CAIRN_INVALID, i, "invalid escape");
		}
		if (dst)
			dst[n] = e;
		n++;
		i += 2;
	}
	*outlen = n;
	*end = i + 1;
	return CAIRN_OK;
}

/* Parse the string at p->pos into a new NUL-terminated buffer. */
static int parse_string(struct parser *p, char **out, size_t *outlen)
{
	size_t start = p->pos, n = 0, end = 0;
	int escaped = 0, rc;
	char *str;

	rc = scan_string(p, start, NULL, &n, &end, &escaped);
	if (rc)
		return rc;
	if (!escaped) {
		str = util_strndup((const char *)p->s + start + 1, n);
		if (!str)
			return nomem(p);
	} else {
		str = cairn_malloc(n + 1);
		if (!str)
			return nomem(p);
		/* the second pass sees the same bytes and cannot fail */
		rc = scan_string(p, start, (unsigned char *)str, &n, &end,
				 &escaped);
		if (NEVER(rc)) {
			cairn_free(str);
			return rc;
		}
		str[n] = '\0';
	}
	*out = str;
	*outlen = n;
	p->pos = end;
	return CAIRN_OK;
}

/* Parse the number at p->pos (grammar of RFC 8259 section 6). */
static int parse_number(struct parser *p, double *out)
{
	const char *dp = decimal_point();
	size_t dplen = strlen(dp);
	size_t start = p->pos, i = p->pos, n, k, j;
	char small[128], *buf = small, *endp = NULL;
	int rc = CAIRN_OK;
	double v;

	if (peek(p, i) == '-')
		i++;
	if (peek(p, i) == '0') {
		i++;
		if (is_digit(peek(p, i)))
			return fail(p, CAIRN_INVALID, i - 1,
				    "leading zero in number");
	} else if (is_digit(peek(p, i))) {
		while (is_digit(peek(p, i)))
			i++;
	} else {
		return fail(p, CAIRN_INVALID, i, "invalid number");
	}
	if (peek(p, i) == '.') {
		i++;
		if (!is_digit(peek(p, i)))
			return fail(p, CAIRN_INVALID, i, "invalid number");
		while (is_digit(peek(p, i)))
			i++;
	}
	if (peek(p, i) == 'e' || peek(p, i) == 'E') {
		i++;
		if (peek(p, i) == '+' || peek(p, i) == '-')
			i++;
		if (!is_digit(peek(p, i)))
			return fail(p, CAIRN_INVALID, i, "invalid number");
		while (is_digit(peek(p, i)))
			i++;
	}

	/* copy the checked slice, with the locale's decimal point */
	n = i - start;
	if (n + dplen + 1 > sizeof(small)) {
		buf = cairn_malloc(n + dplen + 1);
		if (!buf)
			return nomem(p);
	}
	for (k = start, j = 0; k < i; k++) {
		if (p->s[k] == '.') {
			memcpy(buf + j, dp, dplen);
			j += dplen;
		} else {
			buf[j++] = (char)p->s[k];
		}
	}
	buf[j] = '\0';
	v = strtod(buf, &endp);
	if (NEVER(endp != buf + j)) {
		rc = fail(p, CAIRN_INVALID, start, "invalid number");
		goto out;
	}
	if (isinf(v)) {
		rc = fail(p, CAIRN_INVALID, start, "number out of range");
		goto out;
	}
	*out = v;
	p->pos = i;
out:
	if (buf != small)
		cairn_free(buf);
	return rc;
}

/* Match the literal word at p->pos. */
static int parse_literal(struct parser *p, const char *word)
{
	size_t k;

	for (k = 0; word[k]; k++) {
		if (peek(p, p->pos + k) != (unsigned char)word[k])
			return unexpected(p, p->pos + k, "");
	}
	p->pos += k;
	return CAIRN_OK;
}

enum parse_state {
	WANT_VALUE, /* a value must come next */
	WANT_KEY,   /* an object member's key must come next */
	AFTER_VALUE /* a value ended: ',' or a closing bracket, or the end */
};

/* The parse in progress: the containers still open and the pending key. */
struct build {
	struct json *stack[JSON_MAX_DEPTH]; /* containers not yet closed */
	struct json *tail[JSON_MAX_DEPTH];  /* their last child so far */
	struct json *root;                  /* the top value, once started */
	char *key;                          /* the next member's key, or NULL */
	size_t keylen;                      /* its length */
	int depth;                          /* containers open */
	enum parse_state state;             /* what the next byte must be */
};

/* WANT_KEY: an object member's key and its ':'. */
static int want_key(struct parser *p, struct build *b, int c)
{
	int rc;

	if (c != '"')
		return unexpected(p, p->pos, "");
	rc = parse_string(p, &b->key, &b->keylen);
	if (rc)
		return rc;
	skip_ws(p);
	if (peek(p, p->pos) != ':')
		return unexpected(p, p->pos, "");
	p->pos++;
	b->state = WANT_VALUE;
	return CAIRN_OK;
}

/* AFTER_VALUE: a ',' or the closing bracket of the open container, or
 * (at depth 0) the end of the input, which sets *done. */
static int after_value(struct parser *p, struct build *b, int c, int *done)
{
	struct json *top;
	int closer;

	if (b->depth == 0) {
		if (c != -1)
			return unexpected(p, p->pos, " after the value");
		*done = 1;
		return CAIRN_OK;
	}
	top = b->stack[b->depth - 1];
	closer = top->type == JSON_OBJECT ? '}' : ']';
	if (c == closer) {
		p->pos++;
		b->depth--;
		return CAIRN_OK;
	}
	if (c != ',')
		return unexpected(p, p->pos, "");
	p->pos++;
	skip_ws(p);
	if (peek(p, p->pos) == closer)
		return fail(p, CAIRN_INVALID, p->pos,
			    "trailing comma before '%c'", (char)closer);
	b->state = closer == '}' ? WANT_KEY : WANT_VALUE;
	return CAIRN_OK;
}

/* A new node for the value starting with c, given the pending key and
 * linked in at once (as the root or the open container's last child), so
 * that an error below frees it. */
static int new_node(struct parser *p, struct build *b, int c,
		    struct json **out)
{
	struct json *node;

	/* check the first byte before allocating */
	if (c != '{' && c != '[' && c != '"' && c != '-' && !is_digit(c) &&
	    c != 't' && c != 'f' && c != 'n')
		return unexpected(p, p->pos, "");
	if ((c == '{' || c == '[') && b->depth == JSON_MAX_DEPTH)
		return fail(p, CAIRN_INVALID, p->pos, "nesting deeper than %d",
			    JSON_MAX_DEPTH);
	node = util_calloc(1, sizeof(*node));
	if (!node)
		return nomem(p);
	node->key = b->key;
	node->keylen = b->keylen;
	b->key = NULL;
	b->keylen = 0;
	if (b->depth == 0) {
		b->root = node;
	} else {
		if (b->tail[b->depth - 1])
			b->tail[b->depth - 1]->next = node;
		else
			b->stack[b->depth - 1]->child = node;
		b->tail[b->depth - 1] = node;
		b->stack[b->depth - 1]->len++;
	}
	*out = node;
	return CAIRN_OK;
}

/* A number into node; an integer a double cannot hold exactly (a JSON-RPC
 * id) keeps its text as well, to be written back. */
static int parse_number_node(struct parser *p, struct json *node)
{
	size_t from = p->pos;
	int rc;

	node->type = JSON_NUMBER;
	rc = parse_number(p, &node->num);
	if (rc == CAIRN_OK && fabs(node->num) >= 9007199254740992.0 &&
	    !memchr(p->s + from, '.', p->pos - from) &&
	    !memchr(p->s + from, 'e', p->pos - from) &&
	    !memchr(p->s + from, 'E', p->pos - from)) {
		node->len = p->pos - from;
		node->str = util_strndup((const char *)p->s + from, node->len);
		if (!node->str)
			rc = fail(p, CAIRN_NOMEM, p->pos, "out of memory");
	}
	return rc;
}

/* WANT_VALUE: one value, or the opening of a container (which it pushes). */
static int want_value(struct parser *p, struct build *b, int c)
{
	struct json *node = NULL;
	int rc = new_node(p, b, c, &node);

	if (rc)
		return rc;
	b->state = AFTER_VALUE;
	switch (c) {
	case '{':
	case '[':
		node->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
		b->stack[b->depth] = node;
		b->tail[b->depth] = NULL;
		b->depth++;
		p->pos++;
		skip_ws(p);
		if (peek(p, p->pos) == (c == '{' ? '}' : ']')) {
			p->pos++;
			b->depth--;
		} else {
			b->state = c == '{' ? WANT_KEY : WANT_VALUE;
		}
		return CAIRN_OK;
	case '"':
		node->type = JSON_STRING;
		return parse_string(p, &node->str, &node->len);
	case 't':
		node->type = JSON_TRUE;
		return parse_literal(p, "true");
	case 'f':
		node->type = JSON_FALSE;
		return parse_literal(p, "false");
	case 'n':
		node->type = JSON_NULL;
		return parse_literal(p, "null");
	default:
		return parse_number_node(p, node);
	}
}

int json_parse(const char *text, size_t len, struct json **out, char *err,
	       size_t errsize)
{
	struct parser p;
	struct build b;
	int rc = CAIRN_OK, done = 0, c;

	if (err && errsize > 0)
		err[0] = '\0';
	p.s = (const unsigned char *)(text ? text : "");
	p.len = text ? len : 0;
	p.pos = 0;
	p.err = err;
	p.errsize = errsize;
	if (!out)
		return fail(&p, CAIRN_INVALID, 0, "no result pointer");
	*out = NULL;
	if (!text && len > 0)
		return fail(&p, CAIRN_INVALID, 0, "no input text");
	if (len > JSON_MAX_INPUT)
		return fail(&p, CAIRN_TOOBIG, JSON_MAX_INPUT,
			    "input longer than %zu bytes", JSON_MAX_INPUT);
	b.root = NULL;
	b.key = NULL;
	b.keylen = 0;
	b.depth = 0;
	b.state = WANT_VALUE;
	while (!done) {
		skip_ws(&p);
		c = peek(&p, p.pos);
		if (b.state == WANT_KEY)
			rc = want_key(&p, &b, c);
		else if (b.state == AFTER_VALUE)
			rc = after_value(&p, &b, c, &done);
		else
			rc = want_value(&p, &b, c);
		if (rc)
			goto out;
	}
	*out = b.root;
	b.root = NULL;
out:
	cairn_free(b.key);
	json_free(b.root);
	return rc;
}

void json_free(struct json *j)
{
	struct json *end, *next;

	if (!j)
		return;
	/*
	 * Free j and everything below it, but not j's siblings. A node with
	 * children hands its first child to the front of the walk and links
	 * that child back to itself, so the walk needs no stack.
	 */
	end = j->next;
	while (j != end) {
		if (j->child) {
			struct json *c = j->child;

			j->child = c->next;
			c->next = j;
			j = c;
			continue;
		}
		next = j->next;
		cairn_free(j->key);
		cairn_free(j->str);
		cairn_free(j);
		j = next;
	}
}

/* ------------------------------------------------------------ lookups */

const struct json *json_get(const struct json *obj, const char *key)
{
	const struct json *c;
	size_t n;

	if (!obj || obj->type != JSON_OBJECT || !key)
		return NULL;
	n = strlen(key);
	for (c = obj->child; c; c = c->next) {
		if (c->key && c->keylen == n && memcmp(c->key, key, n) == 0)
			return c;
	}
	return NULL;
}

const char *json_str(const struct json *j)
{
	return j && j->type == JSON_STRING ? j->str : NULL;
}

const char *json_get_str(const struct json *obj, const char *key)
{
	return json_str(json_get(obj, key));
}

int json_get_num(const struct json *obj, const char *key, double *out)
{
	const struct json *j = json_get(obj, key);

	if (!j || j->type != JSON_NUMBER)
		return 0;
	if (out)
		*out = j->num;
	return 1;
}

/* ------------------------------------------------------------- writer */

void json_add_str(struct sbuf *sb, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i, run = 0;

	if (!s)
		len = 0;
	sbuf_addc(sb, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = u[i];
		char esc[7];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		/* flush the plain bytes before this one */
		sbuf_add(sb, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			sbuf_add(sb, esc, 6);
			continue;
		}
		sbuf_add(sb, esc, 2);
	}
	if (len > run)
		sbuf_add(sb, s + run, len - run);
	sbuf_addc(sb, '"');
}

void json_add_strz(struct sbuf *sb, const char *s)
{
	if (!s)
		sbuf_adds(sb, "null");
	else
		json_add_str(sb, s, strlen(s));
}

void json_add_num(struct sbuf *sb, double v)
{
	const char *dp;
	char buf[64], *at;
	size_t dplen;
	int prec;

	if (!isfinite(v)) {
		sbuf_adds(sb, "null");
		return;
	}
	if (fabs(v) < 9007199254740992.0 && v == trunc(v)) {
		sbuf_addf(sb, "%lld", (long long)v);
		return;
	}
	/* the fewest digits that read back as the same double */
	for (prec = 15; prec < 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, sizeof(buf), "%.17g", v);
	/* JSON wants '.', whatever LC_NUMERIC says */
	dp = decimal_point();
	dplen = strlen(dp);
	if (strcmp(dp, ".") != 0) {
		at = strstr(buf, dp);
		if (at) {
			*at = '.';
			memmove(at + 1, at + dplen, strlen(at + dplen) + 1);
		}
	}
	sbuf_adds(sb, buf);
}

/* Write a node that has no children. */
/*
 * A number written as an integer too large for a double to hold exactly
 * (over 2^53: a JSON-RPC id, a settings value): written back as its text.
 */
static int big_integer(const struct json *j)
{
	size_t i;

	if (!j->str || j->len == 0 || !(fabs(j->num) >= 9007199254740992.0))
		return 0;
	for (i = j->str[0] == '-'; i < j->len; i++)
		if (j->str[i] < '0' || j->str[i] > '9')
			return 0;
	return 1;
}

static void add_scalar(struct sbuf *sb, const struct json *j)
{
	switch (j->type) {
	case JSON_FALSE:
		sbuf_adds(sb, "false");
		break;
	case JSON_TRUE:
		sbuf_adds(sb, "true");
		break;
	case JSON_NUMBER:
		if (big_integer(j)) /* as written: 12345678901234567890 stays */
			sbuf_add(sb, j->str, j->len);
		else
			json_add_num(sb, j->num);
		break;
	case JSON_STRING:
		if (j->str)
			json_add_str(sb, j->str, j->len);
		else
			sbuf_adds(sb, "null");
		break;
	default:
		sbuf_adds(sb, "null");
		break;
	}
}

/* The bracket that ends container j. */
static char close_char(const struct json *j)
{
	return j->type == JSON_ARRAY ? ']' : '}';
}

void json_add_tree(struct sbuf *sb, const struct json *j)
{
	const struct json *stack[JSON_MAX_DEPTH]; /* containers being written */
	const struct json *next[JSON_MAX_DEPTH]; /* their next child */
	int depth = 0;

	if (!j) {
		sbuf_adds(sb, "null");
		return;
	}
	for (;;) {
		if (sb->err)
			return;
		/* write j, or open it */
		if (j->type == JSON_ARRAY || j->type == JSON_OBJECT) {
			if (depth == JSON_MAX_DEPTH) {
				/* only a hand-built tree gets here */
				sb->err = CAIRN_INVALID;
				return;
			}
			sbuf_addc(sb, j->type == JSON_ARRAY ? '[' : '{');
			stack[depth] = j;
			next[depth] = j->child;
			depth++;
		} else {
			add_scalar(sb, j);
		}
		/* find the next node to write, closing finished containers */
		for (;;) {
			const struct json *top, *c;

			if (depth == 0)
				return;
			top = stack[depth - 1];
			c = next[depth - 1];
			if (!c) {
				/* top is done */
				sbuf_addc(sb, close_char(top));
				depth--;
				continue;
			}
			if (c != top->child)
				sbuf_addc(sb, ',');
			next[depth - 1] = c->next;
			if (top->type == JSON_OBJECT) {
				json_add_str(sb, c->key,
					     c->key ? c->keylen : 0);
				sbuf_addc(sb, ':');
			}
			j = c;
			break;
		}
	}
}

void json_add_source(struct sbuf *sb, const cairn_record *r)
{
	sbuf_adds(sb, "{\"path\":");
	json_add_strz(sb, r->src_path);
	sbuf_adds(sb, ",\"heading\":");
	json_add_strz(sb, r->src_heading);
	sbuf_adds(sb, ",\"line\":");
	if (r->src_line > 0)
		sbuf_addf(sb, "%ld", r->src_line);
	else
		sbuf_adds(sb, "null");
	sbuf_adds(sb, ",\"commit\":");
	json_add_strz(sb, r->src_commit);
	sbuf_adds(sb, ",\"session\":");
	json_add_strz(sb, r->src_session);
	sbuf_adds(sb, ",\"tool\":");
	json_add_strz(sb, r->src_tool);
	sbuf_addc(sb, '}');
}
