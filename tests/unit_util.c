/*
 * unit_util.c -- the bottom layer's SHA-256 (util.c): digests equal those
 * of an independent implementation (Python's hashlib, run when this test
 * was written: the FIPS 180-2 examples and 1000 x 'a'), and a message
 * hashed in parts equals it hashed whole, at every split of a block edge;
 * and util_add_escaped, which keeps stored control characters off
 * terminals and out of the hook's block.
 */
#include <string.h>

#include "internal.h"
#include "test.h"

static void test_sha256_known(void)
{
	static const struct {
		const char *in;
		const char *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
	};
	char a[1000], hex[65];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		util_sha256_hex(v[i].in, strlen(v[i].in), hex);
		CHECK_STR(hex, v[i].hex);
	}
	memset(a, 'a', sizeof(a));
	util_sha256_hex(a, sizeof(a), hex);
	CHECK_STR(hex, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

static void test_sha256_parts(void)
{
	unsigned char whole[32], parts[32];
	struct util_span sp[3];
	char msg[200];
	size_t i, cut;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (char)(i * 7 + 3);
	sp[0] = (struct util_span){ msg, sizeof(msg) };
	CHECK_INT(util_sha256_parts(sp, 1, whole), 0);
	for (cut = 0; cut <= sizeof(msg); cut += 1) {
		sp[0] = (struct util_span){ msg, cut / 2 };
		sp[1] = (struct util_span){ msg + cut / 2, cut - cut / 2 };
		sp[2] = (struct util_span){ msg + cut, sizeof(msg) - cut };
		CHECK_INT(util_sha256_parts(sp, 3, parts), 0);
		CHECK_MSG(memcmp(whole, parts, 32) == 0, "split at %zu", cut);
	}
}

/* EVIDENCE-OF: C0 (but tab, and newline when kept), DEL and C1
 * written visibly; UTF-8 text, invalid bytes and U+2028 (unless asked)
 * pass as they are */
static void test_escape(void)
{
	static const struct {
		const char *in, *out;
		unsigned flags;
	} cases[] = {
		{ "plain", "plain", 0 },
		{ "a\tb\nc", "a\tb\\u000ac", 0 },
		{ "a\tb\nc", "a\tb\nc", UTIL_ESC_KEEP_NL },
		{ "\x1b[2J\x1b]0;t\x07x\r\x7f", "\\u001b[2J\\u001b]0;t\\u0007x\\u000d\\u007f",
		  UTIL_ESC_KEEP_NL },
		{ "nel\xc2\x85" "csi\xc2\x9b", "nel\\u0085csi\\u009b", 0 },
		{ "\xc2\xa0\xc3\xa9中文", "\xc2\xa0\xc3\xa9中文", 0 },
		{ "bad\xc2", "bad\xc2", 0 },
		{ "ls\xe2\x80\xa8x", "ls\xe2\x80\xa8x", 0 },
		{ "ls\xe2\x80\xa8x\xe2\x80\xaey\xe2\x81\xa6z",
		  "ls\\u2028x\\u202ey\\u2066z", UTIL_ESC_LINESEP },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbuf sb = SBUF_INIT;
		size_t n = strlen(cases[i].in);

		util_add_escaped(&sb, cases[i].in, n, cases[i].flags);
		CHECK_MSG(strcmp(sbuf_str(&sb), cases[i].out) == 0,
			  "case %zu: %s", i, sbuf_str(&sb));
		CHECK_INT(util_needs_escape(cases[i].in, n, cases[i].flags),
			  strcmp(cases[i].in, cases[i].out) != 0);
		sbuf_release(&sb);
	}
}

void unit_util(void)
{
	RUN(test_escape);
	RUN(test_sha256_known);
	RUN(test_sha256_parts);
}
