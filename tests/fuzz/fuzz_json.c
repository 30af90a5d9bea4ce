/*
 * fuzz_json.c -- libFuzzer target for the JSON reader and writer.
 *
 * Any input: json_parse() must return, never crash or leak. On success the
 * input must have been valid UTF-8; the tree is written with
 * json_add_tree(), that text must parse again and write back byte for byte
 * the same. On failure the message must name a byte offset within the input.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *     -DCAIRN_BUILD -Iinclude -Isrc tests/fuzz/fuzz_json.c src/json.c \
 *     src/util.c -lcrypto -o /tmp/fuzz_json
 *   /tmp/fuzz_json -dict=tests/fuzz/json.dict tests/fuzz/corpus/json
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* The message ends in " at byte N" with N <= size, and starts lower-case. */
static void check_message(const char *err, size_t size)
{
	const char *at = strstr(err, " at byte ");
	const char *last = NULL;
	unsigned long long n;
	char *end = NULL;

	while (at) {
		last = at;
		at = strstr(at + 1, " at byte ");
	}
	if (!last || err[0] < 'a' || err[0] > 'z')
		abort();
	n = strtoull(last + 9, &end, 10);
	if (end == last + 9 || *end != '\0' || n > size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbuf s1 = SBUF_INIT, s2 = SBUF_INIT;
	struct json *a = NULL, *b = NULL;
	char err[256];
	int rc;

	rc = json_parse((const char *)data, size, &a, err, sizeof(err));
	if (rc != CAIRN_OK) {
		if (a || (rc != CAIRN_INVALID && rc != CAIRN_TOOBIG))
			abort();
		check_message(err, size);
		return 0;
	}
	if (!a || util_utf8_invalid_at((const char *)data, size) != -1)
		abort();

	/* exercise the lookups on whatever came back */
	if (a->type == JSON_OBJECT && a->child && a->child->key) {
		const struct json *m = json_get(a, a->child->key);
		double v;

		/* a key with a NUL inside cannot be looked up as a C string */
		if (strlen(a->child->key) == a->child->keylen && !m)
			abort();
		(void)json_get_str(a, a->child->key);
		(void)json_get_num(a, a->child->key, &v);
	}

	json_add_tree(&s1, a);
	if (s1.err != CAIRN_OK)
		abort();
	rc = json_parse(sbuf_str(&s1), s1.len, &b, err, sizeof(err));
	if (rc != CAIRN_OK) {
		fprintf(stderr, "reparse failed: %s\n%s\n", err, sbuf_str(&s1));
		abort();
	}
	json_add_tree(&s2, b);
	if (s2.err != CAIRN_OK || s1.len != s2.len ||
	    memcmp(sbuf_str(&s1), sbuf_str(&s2), s1.len) != 0) {
		fprintf(stderr, "not stable:\n%s\n%s\n", sbuf_str(&s1),
			sbuf_str(&s2));
		abort();
	}
	sbuf_release(&s1);
	sbuf_release(&s2);
	json_free(a);
	json_free(b);
	return 0;
}
