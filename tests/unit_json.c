/*
 * unit_json.c -- the JSON reader and writer: valid documents, every class of
 * rejection with its byte offset, the depth and size limits, hostile nesting,
 * writer escaping and number formatting, round trips, and out-of-memory at
 * every allocation of a medium document.
 */
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "test.h"

/* Parse a string literal (embedded NULs included); NULL on failure. */
#define PARSE(lit, errbuf) parse_n(lit, sizeof(lit) - 1, errbuf, __LINE__)
/* Expect a literal to be refused with code rc and exactly message msg. */
#define BAD(lit, rc, msg) expect_bad(lit, sizeof(lit) - 1, rc, msg, __LINE__)

static struct json *parse_n(const char *text, size_t len, char *err, int line)
{
	struct json *j = NULL;
	int rc = json_parse(text, len, &j, err, 256);

	CHECK_MSG(rc == CAIRN_OK, "line %d: rc %d for '%.*s': %s", line, rc,
		  (int)len, text, err);
	CHECK_MSG((rc == CAIRN_OK) == (j != NULL), "line %d: result", line);
	return j;
}

static void expect_bad(const char *text, size_t len, int want, const char *msg,
		       int line)
{
	struct json *j = (struct json *)1;
	char err[256];
	int rc;

	memset(err, 'x', sizeof(err));
	rc = json_parse(text, len, &j, err, sizeof(err));
	CHECK_MSG(rc == want, "line %d: rc %d, want %d for '%.*s'", line, rc,
		  want, (int)len, text);
	CHECK_MSG(j == NULL, "line %d: *out not NULL on error", line);
	CHECK_MSG(strcmp(err, msg) == 0, "line %d: \"%s\" != \"%s\"", line, err,
		  msg);
	json_free(rc == CAIRN_OK ? j : NULL);
}

/* Serialise a tree compactly; the caller frees the string. */
static char *dump(const struct json *j)
{
	struct sbuf sb = SBUF_INIT;

	json_add_tree(&sb, j);
	CHECK_INT(sb.err, CAIRN_OK);
	return sbuf_detach(&sb, NULL);
}

/* Parse, serialise and compare with want; then check the output re-parses
 * to the same serialisation. */
static void roundtrip(const char *text, const char *want, int line)
{
	struct json *a = NULL, *b = NULL;
	char err[256] = "", *s1 = NULL, *s2 = NULL;
	int rc;

	rc = json_parse(text, strlen(text), &a, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "line %d: %s", line, err);
	if (rc)
		return;
	s1 = dump(a);
	CHECK_MSG(s1 && strcmp(s1, want) == 0, "line %d: \"%s\" != \"%s\"",
		  line, s1 ? s1 : "(null)", want);
	rc = json_parse(s1, strlen(s1), &b, err, sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "line %d: reparse: %s", line, err);
	if (rc == CAIRN_OK) {
		s2 = dump(b);
		CHECK_STR(s2, s1);
	}
	cairn_free(s1);
	cairn_free(s2);
	json_free(a);
	json_free(b);
}
#define ROUNDTRIP(text, want) roundtrip(text, want, __LINE__)

static void check_num(double v, const char *want, int line)
{
	struct sbuf sb = SBUF_INIT;

	json_add_num(&sb, v);
	CHECK_MSG(sb.err == CAIRN_OK && strcmp(sbuf_str(&sb), want) == 0,
		  "line %d: \"%s\" != \"%s\"", line, sbuf_str(&sb), want);
	sbuf_release(&sb);
}
#define NUM(v, want) check_num(v, want, __LINE__)

/* A string of n '[' followed by n ']'. */
static char *nested(size_t n)
{
	char *s = cairn_malloc(2 * n + 1);

	if (!s)
		return NULL;
	memset(s, '[', n);
	memset(s + n, ']', n);
	s[2 * n] = '\0';
	return s;
}

/* ------------------------------------------------------- valid input */

static void test_scalars(void)
{
	char err[256];
	struct json *j;

	j = PARSE("null", err);
	CHECK(j && j->type == JSON_NULL);
	json_free(j);
	j = PARSE("true", err);
	CHECK(j && j->type == JSON_TRUE);
	json_free(j);
	j = PARSE(" \t\r\nfalse \n", err);
	CHECK(j && j->type == JSON_FALSE);
	json_free(j);
	j = PARSE("\"hi\"", err);
	CHECK(j && j->type == JSON_STRING);
	CHECK_STR(json_str(j), "hi");
	CHECK_INT(j ? j->len : 0, 2);
	CHECK(j && j->key == NULL && j->next == NULL && j->child == NULL);
	json_free(j);
	j = PARSE("\"\"", err);
	CHECK_STR(json_str(j), "");
	CHECK_INT(j ? j->len : 1, 0);
	json_free(j);
}

static void test_numbers(void)
{
	static const struct {
		const char *text;
		double v;
	} cases[] = {
		{ "0", 0 },
		{ "-0", 0 },
		{ "7", 7 },
		{ "-123", -123 },
		{ "3.25", 3.25 },
		{ "-0.5", -0.5 },
		{ "1e3", 1000 },
		{ "1E3", 1000 },
		{ "2.5e+2", 250 },
		{ "2.5E-2", 0.025 },
		{ "-1e-2", -0.01 },
		{ "0e0", 0 },
		{ "9007199254740993", 9007199254740992.0 },
		{ "1.7976931348623157e308", 1.7976931348623157e308 },
		{ "1e-400", 0 }, /* underflow is fine, to zero */
	};
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct json *j = NULL;
		int rc = json_parse(cases[i].text, strlen(cases[i].text), &j,
				    err, sizeof(err));

		CHECK_MSG(rc == CAIRN_OK, "%s: %s", cases[i].text, err);
		CHECK_MSG(j && j->type == JSON_NUMBER && j->num == cases[i].v,
			  "%s: %.17g", cases[i].text, j ? j->num : -1.0);
		json_free(j);
	}
}

static void test_long_number(void)
{
	/* longer than the reader's stack buffer */
	char text[400], err[256];
	struct json *j = NULL;
	size_t i;

	text[0] = '1';
	for (i = 1; i < 300; i++)
		text[i] = '0';
	memcpy(text + 300, ".5e-299", 8);
	CHECK_INT(json_parse(text, strlen(text), &j, err, sizeof(err)),
		  CAIRN_OK);
	/* (10^299 + 0.5) * 10^-299 */
	CHECK(j && j->type == JSON_NUMBER && j->num == 1.0);
	json_free(j);
}

static void test_nested(void)
{
	static const char doc[] =
		"{\"name\": \"cairn\", \"n\": 3, \"tags\": [\"a\", [], {}, "
		"[1, [2, [3]]]], \"o\": {\"x\": null, \"y\": true}, "
		"\"e\": {}, \"half\": 0.5}";
	char err[256];
	struct json *j = PARSE(doc, err);
	const struct json *tags, *o, *c;
	double v = 0;

	CHECK(j && j->type == JSON_OBJECT);
	if (!j)
		return;
	CHECK_INT(j->len, 6);
	CHECK_STR(json_get_str(j, "name"), "cairn");
	CHECK(json_get_num(j, "n", &v) == 1 && v == 3);
	CHECK(json_get_num(j, "half", &v) == 1 && v == 0.5);
	CHECK_INT(json_get_num(j, "name", &v), 0);
	CHECK_INT(json_get_num(j, "missing", &v), 0);
	CHECK(json_get_str(j, "n") == NULL);
	CHECK(json_get(j, "missing") == NULL);
	tags = json_get(j, "tags");
	CHECK(tags && tags->type == JSON_ARRAY && tags->len == 4);
	if (tags && tags->child) {
		c = tags->child;
		CHECK_STR(json_str(c), "a");
		CHECK(c->key == NULL);
		c = c->next;
		CHECK(c && c->type == JSON_ARRAY && c->len == 0 && !c->child);
		c = c ? c->next : NULL;
		CHECK(c && c->type == JSON_OBJECT && c->len == 0);
		c = c ? c->next : NULL;
		CHECK(c && c->type == JSON_ARRAY && c->len == 2 && !c->next);
	}
	o = json_get(j, "o");
	CHECK(o && o->type == JSON_OBJECT && o->len == 2);
	CHECK(json_get(o, "x") && json_get(o, "x")->type == JSON_NULL);
	CHECK(json_get(o, "y") && json_get(o, "y")->type == JSON_TRUE);
	CHECK(json_get(o, "y") && json_get(o, "y")->keylen == 1);
	/* lookups on things that are not objects */
	CHECK(json_get(tags, "a") == NULL);
	CHECK(json_get(NULL, "a") == NULL);
	CHECK(json_get(j, NULL) == NULL);
	CHECK(json_str(NULL) == NULL);
	CHECK(json_str(j) == NULL);
	CHECK_INT(json_get_num(NULL, "n", &v), 0);
	json_free(j);
}

static void test_duplicate_keys(void)
{
	char err[256];
	struct json *j = PARSE("{\"a\":1,\"a\":2,\"ab\":3}", err);
	double v = 0;

	CHECK(j && j->len == 3);
	CHECK(json_get_num(j, "a", &v) && v == 1);
	CHECK(json_get_num(j, "ab", &v) && v == 3);
	CHECK(json_get(j, "") == NULL);
	json_free(j);
}

static void test_escapes(void)
{
	char err[256];
	struct json *j = PARSE("\"q\\\"b\\\\s\\/b\\bf\\fn\\nr\\rt\\t\"", err);

	CHECK_STR(json_str(j), "q\"b\\s/b\bf\fn\nr\rt\t");
	CHECK_INT(j ? j->len : 0, 16);
	json_free(j);
}

static void test_unicode(void)
{
	char err[256];
	struct json *j;

	j = PARSE("\"\\u00e9\\u20AC\\u0041\"", err);
	CHECK_STR(json_str(j), "\xc3\xa9\xe2\x82\xac" "A");
	json_free(j);
	/* surrogate pair: U+1F600 */
	j = PARSE("\"x\\ud83d\\ude00y\"", err);
	CHECK_STR(json_str(j), "x\xf0\x9f\x98\x80y");
	CHECK_INT(j ? j->len : 0, 6);
	json_free(j);
	/* the highest code point, U+10FFFF */
	j = PARSE("\"\\uDBFF\\uDFFF\"", err);
	CHECK_STR(json_str(j), "\xf4\x8f\xbf\xbf");
	json_free(j);
	/* raw UTF-8 passes through unchanged */
	j = PARSE("\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
		  "\xef\xbf\xbf\"", err);
	CHECK_STR(json_str(j),
		  "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbf");
	json_free(j);
	/* escaped and raw keys */
	j = PARSE("{\"k\\u00e9\": 1, \"\xc3\xa9\": 2}", err);
	CHECK(json_get(j, "k\xc3\xa9") != NULL);
	CHECK(json_get(j, "\xc3\xa9") != NULL);
	json_free(j);
	/* DEL is not a control character in JSON */
	j = PARSE("\"\x7f\"", err);
	CHECK_STR(json_str(j), "\x7f");
	json_free(j);
}

static void test_nul_escape(void)
{
	char err[256];
	struct json *j = PARSE("{\"a\\u0000b\": \"x\\u0000y\"}", err);
	const struct json *c = j ? j->child : NULL;

	CHECK(c != NULL);
	if (!c)
		goto out;
	CHECK_INT(c->keylen, 3);
	CHECK(memcmp(c->key, "a\0b", 4) == 0);
	CHECK_INT(c->len, 3);
	CHECK(memcmp(c->str, "x\0y", 4) == 0);
	/* a C-string key stops at the NUL, so it must not match */
	CHECK(json_get(j, "a") == NULL);
out:
	json_free(j);
}

static void test_empty_containers(void)
{
	ROUNDTRIP("[]", "[]");
	ROUNDTRIP("{}", "{}");
	ROUNDTRIP(" [ ] ", "[]");
	ROUNDTRIP("{ \n}", "{}");
	ROUNDTRIP("[[],{},[[]]]", "[[],{},[[]]]");
}

/* -------------------------------------------------------- rejections */

static void test_reject_empty(void)
{
	struct json *j = NULL;
	char err[64];

	BAD("", CAIRN_INVALID, "unexpected end of input at byte 0");
	BAD("  \n ", CAIRN_INVALID, "unexpected end of input at byte 4");
	CHECK_INT(json_parse(NULL, 0, &j, err, sizeof(err)), CAIRN_INVALID);
	CHECK_STR(err, "unexpected end of input at byte 0");
	CHECK(j == NULL);
}

static void test_reject_trailing(void)
{
	BAD("1 2", CAIRN_INVALID,
	    "unexpected character '2' after the value at byte 2");
	BAD("[1]x", CAIRN_INVALID,
	    "unexpected character 'x' after the value at byte 3");
	BAD("{} {}", CAIRN_INVALID,
	    "unexpected character '{' after the value at byte 3");
	BAD("null\0", CAIRN_INVALID,
	    "unexpected byte 0x00 after the value at byte 4");
	BAD("\"a\"\"b\"", CAIRN_INVALID,
	    "unexpected character '\"' after the value at byte 3");
	BAD("truex", CAIRN_INVALID,
	    "unexpected character 'x' after the value at byte 4");
}

static void test_reject_numbers(void)
{
	BAD("01", CAIRN_INVALID, "leading zero in number at byte 0");
	BAD("-01", CAIRN_INVALID, "leading zero in number at byte 1");
	BAD("[1, 00]", CAIRN_INVALID, "leading zero in number at byte 4");
	BAD("-", CAIRN_INVALID, "invalid number at byte 1");
	BAD("-a", CAIRN_INVALID, "invalid number at byte 1");
	BAD("1.", CAIRN_INVALID, "invalid number at byte 2");
	BAD("1.e5", CAIRN_INVALID, "invalid number at byte 2");
	BAD("1e", CAIRN_INVALID, "invalid number at byte 2");
	BAD("1e+", CAIRN_INVALID, "invalid number at byte 3");
	BAD("[2E-x]", CAIRN_INVALID, "invalid number at byte 4");
	BAD(".5", CAIRN_INVALID, "unexpected character '.' at byte 0");
	BAD("+1", CAIRN_INVALID, "unexpected character '+' at byte 0");
	BAD("0x10", CAIRN_INVALID,
	    "unexpected character 'x' after the value at byte 1");
	BAD("NaN", CAIRN_INVALID, "unexpected character 'N' at byte 0");
	BAD("[Infinity]", CAIRN_INVALID, "unexpected character 'I' at byte 1");
	BAD("-Infinity", CAIRN_INVALID, "invalid number at byte 1");
	BAD("[1e999]", CAIRN_INVALID, "number out of range at byte 1");
	BAD("-1e309", CAIRN_INVALID, "number out of range at byte 0");
}

static void test_reject_literals(void)
{
	BAD("tru", CAIRN_INVALID, "unexpected end of input at byte 3");
	BAD("nul", CAIRN_INVALID, "unexpected end of input at byte 3");
	BAD("nulx", CAIRN_INVALID, "unexpected character 'x' at byte 3");
	BAD("[fals]", CAIRN_INVALID, "unexpected character ']' at byte 5");
	BAD("True", CAIRN_INVALID, "unexpected character 'T' at byte 0");
	BAD("undefined", CAIRN_INVALID, "unexpected character 'u' at byte 0");
}

static void test_reject_structure(void)
{
	BAD("[1,]", CAIRN_INVALID, "trailing comma before ']' at byte 3");
	BAD("[1, \n]", CAIRN_INVALID, "trailing comma before ']' at byte 5");
	BAD("{\"a\":1,}", CAIRN_INVALID, "trailing comma before '}' at byte 7");
	BAD("[1,,2]", CAIRN_INVALID, "unexpected character ',' at byte 3");
	BAD("[,1]", CAIRN_INVALID, "unexpected character ',' at byte 1");
	BAD("[1 2]", CAIRN_INVALID, "unexpected character '2' at byte 3");
	BAD("[1}", CAIRN_INVALID, "unexpected character '}' at byte 2");
	BAD("{\"a\":1]", CAIRN_INVALID, "unexpected character ']' at byte 6");
	BAD("[1", CAIRN_INVALID, "unexpected end of input at byte 2");
	BAD("[1,", CAIRN_INVALID, "unexpected end of input at byte 3");
	BAD("{", CAIRN_INVALID, "unexpected end of input at byte 1");
	BAD("{\"a\"", CAIRN_INVALID, "unexpected end of input at byte 4");
	BAD("{\"a\":", CAIRN_INVALID, "unexpected end of input at byte 5");
	BAD("{\"a\" 1}", CAIRN_INVALID, "unexpected character '1' at byte 5");
	BAD("{1:2}", CAIRN_INVALID, "unexpected character '1' at byte 1");
	BAD("{a:1}", CAIRN_INVALID, "unexpected character 'a' at byte 1");
	BAD("{'a':1}", CAIRN_INVALID, "unexpected character ''' at byte 1");
	BAD("{\"a\":1,,}", CAIRN_INVALID, "unexpected character ',' at byte 7");
	BAD("]", CAIRN_INVALID, "unexpected character ']' at byte 0");
	BAD("[1] // c", CAIRN_INVALID,
	    "unexpected character '/' after the value at byte 4");
	BAD("\x0c" "1", CAIRN_INVALID, "unexpected byte 0x0c at byte 0");
	BAD("\xef\xbb\xbf" "1", CAIRN_INVALID,
	    "unexpected byte 0xef at byte 0");
}

static void test_reject_strings(void)
{
	BAD("\"abc", CAIRN_INVALID, "unterminated string at byte 0");
	BAD("[\"abc", CAIRN_INVALID, "unterminated string at byte 1");
	BAD("\"ab\\", CAIRN_INVALID, "unterminated string at byte 0");
	BAD("\"\\u12", CAIRN_INVALID, "unterminated string at byte 0");
	BAD("\"\\ud83d", CAIRN_INVALID, "unterminated string at byte 0");
	BAD("\"a\nb\"", CAIRN_INVALID,
	    "unescaped control character 0x0a in string at byte 2");
	BAD("\"\t\"", CAIRN_INVALID,
	    "unescaped control character 0x09 in string at byte 1");
	BAD("\"a\0\"", CAIRN_INVALID,
	    "unescaped control character 0x00 in string at byte 2");
	BAD("{\"k\x1f\":1}", CAIRN_INVALID,
	    "unescaped control character 0x1f in string at byte 3");
	BAD("\"\\x\"", CAIRN_INVALID, "invalid escape '\\x' at byte 1");
	BAD("\"ab\\'\"", CAIRN_INVALID, "invalid escape '\\'' at byte 3");
	BAD("\"\\U0041\"", CAIRN_INVALID, "invalid escape '\\U' at byte 1");
	BAD("\"\\\x01\"", CAIRN_INVALID, "invalid escape at byte 1");
	BAD("\"\\u12g4\"", CAIRN_INVALID, "invalid \\u escape at byte 1");
	BAD("\"\\u-123\"", CAIRN_INVALID, "invalid \\u escape at byte 1");
	BAD("\"xy\\u12\"", CAIRN_INVALID, "invalid \\u escape at byte 3");
}

static void test_reject_surrogates(void)
{
	BAD("\"\\ud800\"", CAIRN_INVALID, "lone surrogate \\ud800 at byte 1");
	BAD("\"ab\\uDBFF\"", CAIRN_INVALID, "lone surrogate \\udbff at byte 3");
	BAD("\"\\udc00\"", CAIRN_INVALID, "lone surrogate \\udc00 at byte 1");
	BAD("\"\\ude00\\ud83d\"", CAIRN_INVALID,
	    "lone surrogate \\ude00 at byte 1");
	BAD("\"\\ud800\\u0041\"", CAIRN_INVALID,
	    "lone surrogate \\ud800 at byte 1");
	BAD("\"\\ud800\\ud800\"", CAIRN_INVALID,
	    "lone surrogate \\ud800 at byte 1");
	BAD("\"\\ud800x\"", CAIRN_INVALID, "lone surrogate \\ud800 at byte 1");
	BAD("\"\\ud800\\n\"", CAIRN_INVALID,
	    "lone surrogate \\ud800 at byte 1");
	BAD("\"\\ud800\\uzzzz\"", CAIRN_INVALID,
	    "invalid \\u escape at byte 7");
	BAD("{\"\\udfff\":1}", CAIRN_INVALID,
	    "lone surrogate \\udfff at byte 2");
}

static void test_reject_utf8(void)
{
	BAD("\"a\xff\"", CAIRN_INVALID, "invalid UTF-8 at byte 2");
	BAD("\"\x80\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	/* overlong '/' and overlong 3- and 4-byte forms */
	BAD("\"\xc0\xaf\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	BAD("\"\xe0\x80\xaf\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	BAD("\"\xf0\x80\x80\xaf\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	/* an encoded surrogate, and a code point over U+10FFFF */
	BAD("\"ok\xed\xa0\x80\"", CAIRN_INVALID, "invalid UTF-8 at byte 3");
	BAD("\"\xf4\x90\x80\x80\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	BAD("\"\xf5\x80\x80\x80\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	/* truncated sequences, inside and at the end of the input */
	BAD("\"\xe2\x82\"", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	BAD("\"\xe2\x82", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	BAD("\"\xc3", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	/* in a key, and outside strings */
	BAD("{\"\xfe\":1}", CAIRN_INVALID, "invalid UTF-8 at byte 2");
	BAD("[1]\xff", CAIRN_INVALID, "invalid UTF-8 at byte 3");
	BAD("[\x80]", CAIRN_INVALID, "invalid UTF-8 at byte 1");
	BAD("\xc3\xa9", CAIRN_INVALID, "unexpected byte 0xc3 at byte 0");
}

static void test_too_big(void)
{
	/* the length check comes before any read: ASan would catch one */
	static const char tiny[] = "[1]";
	struct json *j = NULL;
	char err[128];

	CHECK_INT(json_parse(tiny, JSON_MAX_INPUT + 1, &j, err, sizeof(err)),
		  CAIRN_TOOBIG);
	CHECK_STR(err, "input longer than 67108864 bytes at byte 67108864");
	CHECK(j == NULL);
}

static void test_depth_limit(void)
{
	char err[256];
	char *s64 = nested(JSON_MAX_DEPTH), *s65 = nested(JSON_MAX_DEPTH + 1);
	struct json *j = NULL;
	const struct json *c;
	int depth = 0;

	CHECK(s64 && s65);
	if (!s64 || !s65)
		goto out;
	CHECK_INT(json_parse(s64, strlen(s64), &j, err, sizeof(err)), CAIRN_OK);
	for (c = j; c; c = c->child)
		depth++;
	CHECK_INT(depth, JSON_MAX_DEPTH);
	json_free(j);
	j = NULL;
	CHECK_INT(json_parse(s65, strlen(s65), &j, err, sizeof(err)),
		  CAIRN_INVALID);
	CHECK_STR(err, "nesting deeper than 64 at byte 64");
	CHECK(j == NULL);
out:
	cairn_free(s64);
	cairn_free(s65);
}

static void test_depth_objects(void)
{
	struct sbuf sb = SBUF_INIT;
	struct json *j = NULL;
	char err[256];
	int i;

	/* 63 objects around one array is 64 levels; one more is too deep */
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		sbuf_adds(&sb, "{\"k\": ");
	sbuf_adds(&sb, "[]");
	for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
		sbuf_addc(&sb, '}');
	CHECK_INT(sb.err, CAIRN_OK);
	CHECK_INT(json_parse(sb.buf, sb.len, &j, err, sizeof(err)), CAIRN_OK);
	json_free(j);
	j = NULL;
	sbuf_reset(&sb);
	sbuf_adds(&sb, "[1, ");
	for (i = 0; i < JSON_MAX_DEPTH; i++)
		sbuf_adds(&sb, "{\"k\":");
	sbuf_adds(&sb, "0");
	CHECK_INT(json_parse(sb.buf, sb.len, &j, err, sizeof(err)),
		  CAIRN_INVALID);
	/* the 64th '{' opens level 65: at 4 + 63 * 5 */
	CHECK_STR(err, "nesting deeper than 64 at byte 319");
	sbuf_release(&sb);
}

static void test_hostile_nesting(void)
{
	size_t n = 100000, i;
	char *s = cairn_malloc(n);
	struct json *j = NULL;
	char err[256];

	CHECK(s != NULL);
	if (!s)
		return;
	memset(s, '[', n);
	CHECK_INT(json_parse(s, n, &j, err, sizeof(err)), CAIRN_INVALID);
	CHECK_STR(err, "nesting deeper than 64 at byte 64");
	CHECK(j == NULL);
	/* the same with objects: {"a":{"a":... */
	for (i = 0; i + 5 <= n; i += 5)
		memcpy(s + i, "{\"a\":", 5);
	CHECK_INT(json_parse(s, n, &j, err, sizeof(err)), CAIRN_INVALID);
	CHECK_STR(err, "nesting deeper than 64 at byte 320");
	CHECK(j == NULL);
	cairn_free(s);
}

/* json_free() and json_add_tree() on a hand-built tree deeper than any
 * parse: no recursion, and the writer refuses rather than overflow. */
static void test_hand_built_deep_tree(void)
{
	struct json *root = NULL, **link = &root;
	struct sbuf sb = SBUF_INIT;
	int i;

	for (i = 0; i < 200000; i++) {
		struct json *n = util_calloc(1, sizeof(*n));

		CHECK(n != NULL);
		if (!n)
			break;
		n->type = i % 2 ? JSON_OBJECT : JSON_ARRAY;
		n->len = 1;
		*link = n; /* the only child of the node before it */
		link = &n->child;
	}
	json_add_tree(&sb, root);
	CHECK_INT(sb.err, CAIRN_INVALID);
	sbuf_release(&sb);
	json_free(root);
	json_free(NULL);
}

static void test_wide_tree(void)
{
	struct sbuf sb = SBUF_INIT;
	struct json *j = NULL;
	char err[256], *out = NULL;
	int i;

	sbuf_addc(&sb, '[');
	for (i = 0; i < 100000; i++)
		sbuf_adds(&sb, i ? ",[0]" : "[0]");
	sbuf_addc(&sb, ']');
	CHECK_INT(json_parse(sb.buf, sb.len, &j, err, sizeof(err)), CAIRN_OK);
	CHECK(j && j->len == 100000);
	out = dump(j);
	CHECK_STR(out, sb.buf);
	cairn_free(out);
	json_free(j);
	sbuf_release(&sb);
}

static void test_err_buffer(void)
{
	struct json *j = NULL;
	char small[8];

	/* no buffer at all */
	CHECK_INT(json_parse("x", 1, &j, NULL, 0), CAIRN_INVALID);
	CHECK(j == NULL);
	/* a short buffer gets a truncated, terminated message */
	memset(small, 'x', sizeof(small));
	CHECK_INT(json_parse("[1,]", 4, &j, small, sizeof(small)),
		  CAIRN_INVALID);
	CHECK_STR(small, "trailin");
	/* success clears the message */
	memset(small, 'x', sizeof(small));
	CHECK_INT(json_parse("1", 1, &j, small, sizeof(small)), CAIRN_OK);
	CHECK_STR(small, "");
	json_free(j);
	/* misuse is refused, not a crash */
	CHECK_INT(json_parse("1", 1, NULL, small, sizeof(small)),
		  CAIRN_INVALID);
	CHECK_INT(json_parse(NULL, 3, &j, small, sizeof(small)),
		  CAIRN_INVALID);
	CHECK(j == NULL);
	/* the input need not be NUL-terminated */
	CHECK_INT(json_parse("[12]garbage", 4, &j, small, sizeof(small)),
		  CAIRN_OK);
	CHECK(j && j->child && j->child->num == 12);
	json_free(j);
}

/* ------------------------------------------------------------ writer */

static void test_write_strings(void)
{
	struct sbuf sb = SBUF_INIT;

	json_add_str(&sb, "plain", 5);
	sbuf_addc(&sb, ' ');
	json_add_str(&sb, "q\"b\\n\nr\rt\tb\bf\f", 14);
	sbuf_addc(&sb, ' ');
	json_add_str(&sb, "\x01\x1f\x7f/", 4);
	sbuf_addc(&sb, ' ');
	json_add_str(&sb, "a\0b", 3);
	sbuf_addc(&sb, ' ');
	json_add_str(&sb, "h\xc3\xa9\xf0\x9f\x98\x80", 7);
	sbuf_addc(&sb, ' ');
	json_add_strz(&sb, "z\"");
	sbuf_addc(&sb, ' ');
	json_add_strz(&sb, NULL);
	sbuf_addc(&sb, ' ');
	json_add_str(&sb, "", 0);
	CHECK_INT(sb.err, CAIRN_OK);
	CHECK_STR(sbuf_str(&sb),
		  "\"plain\" \"q\\\"b\\\\n\\nr\\rt\\tb\\bf\\f\" "
		  "\"\\u0001\\u001f\x7f/\" \"a\\u0000b\" "
		  "\"h\xc3\xa9\xf0\x9f\x98\x80\" \"z\\\"\" null \"\"");
	sbuf_release(&sb);
}

static void test_write_numbers(void)
{
	NUM(0, "0");
	NUM(-0.0, "0");
	NUM(1, "1");
	NUM(-42, "-42");
	NUM(1e15, "1000000000000000");
	NUM(9007199254740991.0, "9007199254740991");
	NUM(-9007199254740991.0, "-9007199254740991");
	NUM(9007199254740992.0, "9007199254740992");
	NUM(1e300, "1e+300");
	NUM(0.5, "0.5");
	NUM(-2.25, "-2.25");
	NUM(0.1, "0.1");
	NUM(0.1 + 0.2, "0.30000000000000004");
	NUM(1.0 / 3.0, "0.3333333333333333");
	NUM(123.456, "123.456");
	NUM(1e-7, "1e-07");
	NUM(2.5e-8, "2.5e-08");
	NUM(5e-324, "4.94065645841247e-324");
	NUM(1.7976931348623157e308, "1.7976931348623157e+308");
	NUM(NAN, "null");
	NUM(INFINITY, "null");
	NUM(-INFINITY, "null");
}

static void test_write_numbers_reparse(void)
{
	static const double vals[] = { 0.1, 1.0 / 3.0, 1e-7, 2.5e-8, 5e-324,
				       123456.789e10, -1.5e-300, 6.02214076e23,
				       9007199254740993.0, 4503599627370495.5 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		struct sbuf sb = SBUF_INIT;
		struct json *j = NULL;
		char err[256];

		json_add_num(&sb, vals[i]);
		CHECK_INT(json_parse(sb.buf, sb.len, &j, err, sizeof(err)),
			  CAIRN_OK);
		CHECK_MSG(j && j->num == vals[i], "%s", sbuf_str(&sb));
		json_free(j);
		sbuf_release(&sb);
	}
}

/* With a comma decimal point, numbers still read and write with '.'. */
static void test_locale_numbers(void)
{
	static const char *names[] = { "de_DE.UTF-8", "de_DE.utf8",
				       "fr_FR.UTF-8", "fr_FR.utf8" };
	struct json *j = NULL;
	char err[256];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (setlocale(LC_NUMERIC, names[i]))
			break;
	}
	if (i == ARRAY_SIZE(names))
		return; /* no such locale here: nothing to check */
	CHECK_INT(json_parse("[1.5, 2.25e1]", 13, &j, err, sizeof(err)),
		  CAIRN_OK);
	CHECK(j && j->child && j->child->num == 1.5);
	CHECK(j && j->child && j->child->next && j->child->next->num == 22.5);
	json_free(j);
	NUM(0.5, "0.5");
	NUM(-1.25e-10, "-1.25e-10");
	setlocale(LC_NUMERIC, "C");
}

static void test_write_tree(void)
{
	ROUNDTRIP(" { \"a\" : [ 1 , 2.5 , -3e2 ] , \"b\" : { } , \"c\" : null ,"
		  " \"d\" : true , \"e\" : false , \"f\" : \"x\\ny\" } ",
		  "{\"a\":[1,2.5,-300],\"b\":{},\"c\":null,\"d\":true,"
		  "\"e\":false,\"f\":\"x\\ny\"}");
	ROUNDTRIP("\"\\u00e9\\ud83d\\ude00\\u0001\\/\"",
		  "\"\xc3\xa9\xf0\x9f\x98\x80\\u0001/\"");
	ROUNDTRIP("{\"k\\u0000\":\"\\u0000\"}", "{\"k\\u0000\":\"\\u0000\"}");
	ROUNDTRIP("[[[[{\"a\":[[]]}]]]]", "[[[[{\"a\":[[]]}]]]]");
	ROUNDTRIP("[1E2,0.10,-0,1e-400]", "[100,0.1,0,0]");
	ROUNDTRIP("{\"a\":1,\"a\":2}", "{\"a\":1,\"a\":2}");
	ROUNDTRIP("12", "12");
	/* an integer over 2^53 (a JSON-RPC id) is written back exactly */
	ROUNDTRIP("[12345678901234567890,-9007199254740993,9007199254740993.5]",
		  "[12345678901234567890,-9007199254740993,9007199254740994]");
	ROUNDTRIP("\"\"", "\"\"");
}

static void test_write_hand_built(void)
{
	struct json str = { JSON_STRING, NULL, 0, NULL, 0, 0, NULL, NULL };
	struct json num = { JSON_NUMBER, NULL, 0, NULL, 0, NAN, NULL, &str };
	struct json obj = { JSON_OBJECT, NULL, 0, NULL, 2, 0, &num, NULL };
	char *s;

	/* no keys, no string, a NaN: still valid JSON */
	s = dump(&obj);
	CHECK_STR(s, "{\"\":null,\"\":null}");
	cairn_free(s);
}

static void test_write_subtree(void)
{
	char err[256], *s;
	struct json *j = PARSE("{\"a\":[1,{\"b\":2}],\"c\":3}", err);
	const struct json *a = json_get(j, "a");

	/* a member is written as a value: no key, no siblings */
	s = dump(a);
	CHECK_STR(s, "[1,{\"b\":2}]");
	cairn_free(s);
	s = dump(NULL);
	CHECK_STR(s, "null");
	cairn_free(s);
	json_free(j);
}

static void test_free_subtree(void)
{
	char err[256], *s;
	struct json *j = PARSE("[[1,2],[3],4]", err);
	struct json *first;

	if (!j)
		return;
	/* json_free frees a node and its children, not its siblings */
	first = j->child;
	j->child = first->next;
	j->len--;
	first->next = NULL;
	json_free(first);
	s = dump(j);
	CHECK_STR(s, "[[3],4]");
	cairn_free(s);
	json_free(j);
}

/* ----------------------------------------------------- out of memory */

static void test_out_of_memory(void)
{
	static const char doc[] =
		"{\"name\": \"caf\\u00e9\", \"list\": [1, 2.5, \"x\\ny\", null,"
		" {\"deep\": [[true], {\"k\": false}]}], \"empty\": {},"
		" \"big\": 1000000000000000000000000000000000000000000000000000"
		"00000000000000000000000000000000000000000000000000000000000000"
		"00000000000000000000000000000000000000000000000000000000000.5,"
		" \"\\ud83d\\ude00\": \"plain\"}";
	char *want = NULL;
	char err[256];
	struct json *j = NULL;
	int n, oks = 0, fails = 0;

	j = PARSE(doc, err);
	want = dump(j);
	json_free(j);
	for (n = 1; n <= 60; n++) {
		struct sbuf sb = SBUF_INIT;
		int rc;

		j = NULL;
		util_fail_alloc_after(n);
		rc = json_parse(doc, sizeof(doc) - 1, &j, err, sizeof(err));
		CHECK_MSG(rc == CAIRN_OK || rc == CAIRN_NOMEM, "n=%d rc=%d %s",
			  n, rc, err);
		if (rc == CAIRN_NOMEM) {
			CHECK(j == NULL);
			CHECK_MSG(strncmp(err, "out of memory at byte ",
					  22) == 0, "n=%d: %s", n, err);
			fails++;
			continue;
		}
		/* the countdown may still fire inside the writer */
		json_add_tree(&sb, j);
		CHECK(sb.err == CAIRN_OK || sb.err == CAIRN_NOMEM);
		if (sb.err == CAIRN_OK) {
			CHECK_STR(sbuf_str(&sb), want);
			oks++;
		}
		sbuf_release(&sb);
		json_free(j);
	}
	util_fail_alloc_after(0);
	CHECK(fails > 0);
	CHECK(oks > 0);
	cairn_free(want);
}

void unit_json(void)
{
	RUN(test_scalars);
	RUN(test_numbers);
	RUN(test_long_number);
	RUN(test_nested);
	RUN(test_duplicate_keys);
	RUN(test_escapes);
	RUN(test_unicode);
	RUN(test_nul_escape);
	RUN(test_empty_containers);
	RUN(test_reject_empty);
	RUN(test_reject_trailing);
	RUN(test_reject_numbers);
	RUN(test_reject_literals);
	RUN(test_reject_structure);
	RUN(test_reject_strings);
	RUN(test_reject_surrogates);
	RUN(test_reject_utf8);
	RUN(test_too_big);
	RUN(test_depth_limit);
	RUN(test_depth_objects);
	RUN(test_hostile_nesting);
	RUN(test_hand_built_deep_tree);
	RUN(test_wide_tree);
	RUN(test_err_buffer);
	RUN(test_write_strings);
	RUN(test_write_numbers);
	RUN(test_write_numbers_reparse);
	RUN(test_locale_numbers);
	RUN(test_write_tree);
	RUN(test_write_hand_built);
	RUN(test_write_subtree);
	RUN(test_free_subtree);
	RUN(test_out_of_memory);
	util_fail_alloc_after(0);
}
