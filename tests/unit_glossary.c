/*
 * unit_glossary.c -- the built-in engineering glossary (src/text/glossary.c):
 * the table's invariants (unique keys of two or more Han characters, valid
 * UTF-8; values of lower-case ASCII words with single spaces) and lookups
 * bounded by the given length. Its use by recall is tests/contract/
 * glossary.t (killed by the NO_GLOSSARY mutant, tests/mutate).
 */
#include <string.h>

#include "glossary.h"
#include "internal.h"
#include "test.h"

/* Number of code points of s if every one is a CJK unified ideograph, else 0. */
static size_t han_only(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		unsigned cp;

		if ((p[0] & 0xF0) != 0xE0 || (p[1] & 0xC0) != 0x80 ||
		    (p[2] & 0xC0) != 0x80)
			return 0;
		cp = ((unsigned)(p[0] & 0x0F) << 12) |
		     ((unsigned)(p[1] & 0x3F) << 6) | (unsigned)(p[2] & 0x3F);
		if (cp < 0x4E00 || cp > 0x9FFF)
			return 0;
		p += 3;
		n++;
	}
	return n;
}

static int words_ok(const char *en)
{
	const char *p;

	if (!*en || en[0] == ' ' || en[strlen(en) - 1] == ' ')
		return 0;
	for (p = en; *p; p++) {
		if (*p == ' ' && p[1] == ' ')
			return 0;
		if (!(*p == ' ' || *p == '-' || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9')))
			return 0;
	}
	return 1;
}

static void test_table(void)
{
	const char *zh, *en, *zh2, *en2;
	size_t i, j, n = 0;

	for (i = 0; glossary_entry(i, &zh, &en); i++) {
		n++;
		CHECK_MSG(util_utf8_invalid_at(zh, strlen(zh)) < 0, "%s", zh);
		CHECK_MSG(han_only(zh) >= 2, "key '%s': two Han characters or more", zh);
		CHECK_MSG(words_ok(en), "value of %s: '%s'", zh, en);
		for (j = i + 1; glossary_entry(j, &zh2, &en2); j++)
			CHECK_MSG(strcmp(zh, zh2) != 0, "key %s twice", zh);
		/* every entry is found by its own key */
		CHECK(glossary_lookup(zh, strlen(zh)) == en);
	}
	CHECK_MSG(n >= 200, "%zu entries", n);
}

static void test_lookup(void)
{
	const char *s = "明文存储";

	CHECK_STR(glossary_lookup("明文", strlen("明文")), "plaintext plain");
	/* the length bounds the key: a prefix of a longer text */
	CHECK_STR(glossary_lookup(s, 6), "plaintext plain");
	CHECK(glossary_lookup(s, 3) == NULL);       /* one character */
	CHECK(glossary_lookup("明", 3) == NULL);
	CHECK(glossary_lookup("明文x", 7) == NULL);
	CHECK(glossary_lookup("", 0) == NULL);
	CHECK(glossary_lookup(NULL, 4) == NULL);
	CHECK_STR(glossary_lookup("正式环境", strlen("正式环境")), "production");
}

void unit_glossary(void)
{
	RUN(test_table);
	RUN(test_lookup);
}
