/*
 * unit_secret.c -- tests of the secret filter (src/secret*.c).
 *
 * The corpus lives in tests/data/secrets.txt (every line must hit) and
 * tests/data/innocents.txt (no line may hit); both hold only FAKE values.
 * Lines starting with '#' and empty lines are skipped; "\n" in a line is a
 * newline and "\\" a backslash, so multi-line cases (PEM keys) fit on one.
 *
 * Failures print the fixture line, which is fine: it is a fake value. The
 * library itself never prints what it finds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "secret.h"
#include "secret_corpus.h"
#include "test.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

#define MAX_HITS 16

/* A fixture file being read case by case. */
struct cases {
	char *text;    /* whole file */
	size_t len;
	size_t pos;    /* start of the next line */
	size_t lineno; /* line number of the case last returned */
};

/* Open TEST_DATA_DIR/name; 0 on success, else the check has failed. */
static int cases_open(struct cases *c, const char *name)
{
	char path[512], err[256];
	int rc;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%s", TEST_DATA_DIR, name);
	rc = util_read_file(path, (size_t)1 << 24, &c->text, &c->len, err,
			    sizeof(err));
	CHECK_MSG(rc == CAIRN_OK, "%s", err);
	return rc == CAIRN_OK ? 0 : -1;
}

static void cases_close(struct cases *c)
{
	cairn_free(c->text);
	memset(c, 0, sizeof(*c));
}

/*
 * The next case, decoded into an exactly-sized buffer (no NUL slack, so
 * that AddressSanitizer sees any read past the end); caller frees. Returns
 * 0 at the end of the file.
 */
static int cases_next(struct cases *c, char **out, size_t *outlen)
{
	while (c->pos < c->len) {
		size_t start = c->pos, end = start, i, n = 0;
		char *buf;

		while (end < c->len && c->text[end] != '\n')
			end++;
		c->pos = end + 1;
		c->lineno++;
		if (end == start || c->text[start] == '#')
			continue;
		buf = malloc(end - start);
		if (!buf)
			return 0;
		for (i = start; i < end; i++) {
			if (c->text[i] == '\\' && i + 1 < end &&
			    (c->text[i + 1] == 'n' || c->text[i + 1] == '\\')) {
				buf[n++] = c->text[i + 1] == 'n' ? '\n' : '\\';
				i++;
			} else {
				buf[n++] = c->text[i];
			}
		}
		*out = buf;
		*outlen = n;
		return 1;
	}
	return 0;
}

/* Is kind one of the names in the table (the same static string)? */
static int known_kind(const char *kind)
{
	size_t i;

	for (i = 0; secret_kind_name(i); i++)
		if (secret_kind_name(i) == kind)
			return 1;
	return 0;
}

/* Every line of secrets.txt gives at least one hit of a known kind. */
static void test_secrets_detected(void)
{
	struct cases c;
	struct secret_hit hits[MAX_HITS];
	char *text;
	size_t len, n, i, count = 0;

	if (cases_open(&c, "secrets.txt"))
		return;
	while (cases_next(&c, &text, &len)) {
		n = secret_scan(text, len, hits, MAX_HITS);
		CHECK_MSG(n > 0, "secrets.txt:%zu: no hit in: %.*s", c.lineno,
			  (int)len, text);
		for (i = 0; i < n && i < MAX_HITS; i++) {
			CHECK(known_kind(hits[i].kind));
			CHECK(hits[i].start < hits[i].end);
			CHECK(hits[i].end <= len);
			if (i > 0)
				CHECK(hits[i - 1].end <= hits[i].start);
		}
		count++;
		free(text);
	}
	CHECK_MSG(count >= 60, "only %zu secret cases", count);
	cases_close(&c);
}

/* No line of innocents.txt gives a hit. */
static void test_innocents_clean(void)
{
	struct cases c;
	struct secret_hit hits[MAX_HITS];
	char *text;
	size_t len, n, count = 0;

	if (cases_open(&c, "innocents.txt"))
		return;
	while (cases_next(&c, &text, &len)) {
		n = secret_scan(text, len, hits, MAX_HITS);
		CHECK_MSG(n == 0,
			  "innocents.txt:%zu: %s fired on \"%.*s\" in: %.*s",
			  c.lineno, n ? hits[0].kind : "",
			  n ? (int)(hits[0].end - hits[0].start) : 0,
			  n ? text + hits[0].start : "", (int)len, text);
		count++;
		free(text);
	}
	CHECK_MSG(count >= 60, "only %zu innocent cases", count);
	cases_close(&c);
}

/*
 * Redaction removes every secret byte range, marks each one, has the
 * expected length, and leaves nothing a second scan would find.
 */
static void test_redact_removes_secrets(void)
{
	struct cases c;
	struct secret_hit hits[MAX_HITS];
	char *text, *out;
	size_t len, outlen, n, i, want;

	if (cases_open(&c, "secrets.txt"))
		return;
	while (cases_next(&c, &text, &len)) {
		n = secret_scan(text, len, hits, MAX_HITS);
		out = secret_redact(text, len, &outlen);
		CHECK(out != NULL);
		if (!out) {
			free(text);
			continue;
		}
		CHECK(out[outlen] == '\0');
		CHECK_MSG(strstr(out, "[REDACTED:") != NULL,
			  "secrets.txt:%zu: no marker", c.lineno);
		want = len;
		for (i = 0; i < n && i < MAX_HITS; i++) {
			const char *s = text + hits[i].start;
			size_t sl = hits[i].end - hits[i].start;

			CHECK_MSG(!memmem(out, outlen, s, sl),
				  "secrets.txt:%zu: %s survived redaction",
				  c.lineno, hits[i].kind);
			want = want - sl + strlen("[REDACTED:]") +
			       strlen(hits[i].kind);
		}
		if (n <= MAX_HITS)
			CHECK_INT(outlen, want);
		CHECK_MSG(secret_scan(out, outlen, NULL, 0) == 0,
			  "secrets.txt:%zu: redacted text still hits: %s",
			  c.lineno, out);
		cairn_free(out);
		free(text);
	}
	cases_close(&c);
}

/* Clean text comes back unchanged; NULL text is an empty string. */
static void test_redact_clean_and_empty(void)
{
	static const char clean[] = "nothing to see: password reset flow";
	size_t outlen = 99;
	char *out;

	out = secret_redact(clean, strlen(clean), &outlen);
	CHECK(out != NULL);
	CHECK_INT(outlen, strlen(clean));
	if (out)
		CHECK_STR(out, clean);
	cairn_free(out);
	out = secret_redact(NULL, 0, &outlen);
	CHECK(out != NULL);
	CHECK_INT(outlen, 0);
	if (out)
		CHECK_STR(out, "");
	cairn_free(out);
	out = secret_redact("", 0, NULL);
	CHECK(out != NULL);
	cairn_free(out);
}

/* Every allocation failure inside secret_redact() gives NULL, no leak. */
static void test_redact_nomem(void)
{
	static const char text[] = "user=bob password=hunter22 ok";
	char *out = NULL;
	long k;

	for (k = 1; k < 10; k++) {
		util_fail_alloc_after(k);
		out = secret_redact(text, strlen(text), NULL);
		util_fail_alloc_after(0);
		if (out)
			break;
	}
	CHECK(k > 1); /* the first allocation failing must give NULL */
	CHECK(out != NULL);
	if (out)
		CHECK_STR(out, "user=bob "
			       "password=[REDACTED:password-assignment] ok");
	cairn_free(out);
}

/* Offsets and line numbers for a multi-line input. */
static void test_offsets_and_lines(void)
{
	static const char text[] =
		"line one is clean\n"
		"export GITHUB_TOKEN=ghp_Zr4kQ8mN2pX7vB1cL9tY6wE3sA5dF0gH8jK2\n"
		"\n"
		"db: postgres://app:Zq8kLm2vX9@db.internal/app "
		"key AKIAJ3KQ7ZP4XN2WLM5R\n"
		"password: ********\n"
		"-----BEGIN EC PRIVATE KEY-----\n"
		"MHcCAQEEIGq3Yb0Xr8vK2mN5pQ7sT9uW1xZ4aC6dF8hJ0kL2nP4rS6t"
		"V8xZ1aCoAoGCCqGSM49\n"
		"-----END EC PRIVATE KEY-----\n"
		"tail\n";
	struct secret_hit hits[MAX_HITS];
	const char *gh = strstr(text, "ghp_");
	const char *pw = strstr(text, "Zq8kLm2vX9");
	const char *ak = strstr(text, "AKIA");
	const char *pem = strstr(text, "-----BEGIN");
	const char *pem_end = strstr(text, "KEY-----\ntail") + 8;
	size_t n;

	n = secret_scan(text, strlen(text), hits, MAX_HITS);
	CHECK_INT(n, 4);
	if (n != 4)
		return;
	CHECK_STR(hits[0].kind, "github-token");
	CHECK_INT(hits[0].start, gh - text);
	CHECK_INT(hits[0].end, gh - text + 40);
	CHECK_INT(hits[0].line, 2);
	CHECK_STR(hits[1].kind, "password-in-url");
	CHECK_INT(hits[1].start, pw - text);
	CHECK_INT(hits[1].end, pw - text + 10);
	CHECK_INT(hits[1].line, 4);
	CHECK_STR(hits[2].kind, "aws-access-key-id");
	CHECK_INT(hits[2].start, ak - text);
	CHECK_INT(hits[2].end, ak - text + 20);
	CHECK_INT(hits[2].line, 4);
	CHECK_STR(hits[3].kind, "private-key");
	CHECK_INT(hits[3].start, pem - text);
	CHECK_INT(hits[3].end, pem_end - text);
	CHECK_INT(hits[3].line, 6);
}

/* The return value counts every hit even when max is smaller. */
static void test_scan_max(void)
{
	static const char text[] =
		"a=1 password=hunter22 b=2 "
		"token=9f3c1a7e2b4d6f80a1c3e5f7092b4d6f "
		"AKIAJ3KQ7ZP4XN2WLM5R";
	struct secret_hit hits[2];

	memset(hits, 0, sizeof(hits));
	hits[1].kind = "sentinel";
	CHECK_INT(secret_scan(text, strlen(text), hits, 1), 3);
	CHECK_STR(hits[0].kind, "password-assignment");
	CHECK_STR(hits[1].kind, "sentinel");
	CHECK_INT(secret_scan(text, strlen(text), NULL, 0), 3);
	CHECK_INT(secret_scan(NULL, 0, NULL, 0), 0);
	CHECK_INT(secret_scan("", 0, hits, 2), 0);
}

/* The message names kind, line and source, and never the secret. */
static void test_describe(void)
{
	struct secret_hit hit = { "aws-secret-access-key", 10, 50, 3 };
	char buf[256], tiny[10];

	secret_describe(&hit, NULL, buf, sizeof(buf));
	CHECK_STR(buf, "refusing to store a secret: aws-secret-access-key "
		       "on line 3 (use --redact to store it masked)");
	secret_describe(&hit, "notes.md", buf, sizeof(buf));
	CHECK_STR(buf, "refusing to store a secret: aws-secret-access-key "
		       "on line 3 of notes.md "
		       "(use --redact to store it masked)");
	secret_describe(&hit, "", buf, sizeof(buf));
	CHECK(strstr(buf, " of ") == NULL);
	memset(tiny, 'x', sizeof(tiny));
	secret_describe(&hit, "body", tiny, sizeof(tiny));
	CHECK_INT(strlen(tiny), sizeof(tiny) - 1);
	secret_describe(&hit, "body", tiny, 0);
	secret_describe(NULL, NULL, buf, sizeof(buf));
	CHECK(buf[0] != '\0');
}

/* The first hit's message for a real scan leaks no secret bytes. */
static void test_describe_no_leak(void)
{
	static const char text[] = "ok\nok\nDB_PASSWORD=Tr0ub4dor&3\n";
	struct secret_hit hit;
	char buf[256];

	CHECK_INT(secret_scan(text, strlen(text), &hit, 1), 1);
	secret_describe(&hit, "text", buf, sizeof(buf));
	CHECK_STR(buf, "refusing to store a secret: password-assignment on "
		       "line 3 of text (use --redact to store it masked)");
	CHECK(strstr(buf, "Tr0ub4dor") == NULL);
}

/* xorshift64: a fixed pseudo-random stream, the same on every run. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static double seconds_since(clock_t t0)
{
	return (double)(clock() - t0) / CLOCKS_PER_SEC;
}

/* Scan and redact one buffer; check the scan took linear-looking time. */
static void scan_big(const char *what, const char *buf, size_t len)
{
	struct secret_hit hits[MAX_HITS];
	clock_t t0 = clock();
	size_t n, outlen = 0;
	char *out;

	n = secret_scan(buf, len, hits, MAX_HITS);
	out = secret_redact(buf, len, &outlen);
	CHECK_MSG(out != NULL, "%s: redact failed", what);
	CHECK_MSG(n > 0 || outlen == len, "%s: clean text changed", what);
	cairn_free(out);
	CHECK_MSG(seconds_since(t0) < 10.0, "%s: %.1f s for %zu bytes", what,
		  seconds_since(t0), len);
}

/* 1 MB inputs: random bytes, random token-like text, pathological repeats. */
static void test_big_inputs(void)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		"=:_-/.@ \n\"'+$<>{}";
	static const char *const repeats[] = {
		"sk-", "eyJhbGciOiJIUzI1NiJ9.", "password=", "token: ",
		"-----BEGIN PRIVATE KEY-----\n", "a://", "AKIA", "x://u:",
		"ghp_", "aws secret ", "password",
		"\xe5\xaf\x86\xe7\xa0\x81\xef\xbc\x9a", /* 密码： */
		"-----BEGIN RSA PRIVATE KEY-----\nAAAA", "a=",
		"MIIEvQIBADANBgkqhkiG",
		/* the command-line, Basic, view and shape matchers */
		"curl -u a:", "sshpass -p ", "mysql -p", "%41", "%25",
		"password: abc ", "the password is ", "Basic QUJD",
		"ab1_cd\n", "QUJDREVGR0g", "AccountKey=", "eyJrIjoi", "M",
		"AAAA", "\xe2\x80\x8b", "\xef\xbc\xa1", "1/", "sk-or-",
		"PuTTY-User-Key-File-2\nPrivate-Lines: 9\n", "&sig=",
		/* glued prefixes, quoted and literal-split key bodies */
		"x_ghp_", "key_AKIA", "_", "-----BEGIN RSA PRIVATE KEY-----\n> ",
		"> ", "\"\\n\" +\n    \"", "\n> AAAA",
	};
	const size_t len = (size_t)1 << 20;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	char *buf = malloc(len);
	size_t i, r;

	CHECK(buf != NULL);
	if (!buf)
		return;
	for (i = 0; i < len; i++)
		buf[i] = (char)(rng_next(&seed) & 0xff);
	scan_big("random bytes", buf, len);
	for (i = 0; i < len; i++)
		buf[i] = alphabet[rng_next(&seed) % (sizeof(alphabet) - 1)];
	scan_big("random tokens", buf, len);
	/* the repeats at 256 KB: enough to show a quadratic matcher within
	 * the bound, and the suite stays fast */
	for (r = 0; r < ARRAY_SIZE(repeats); r++) {
		size_t pl = strlen(repeats[r]);

		for (i = 0; i < len / 4; i++)
			buf[i] = repeats[r][i % pl];
		scan_big(repeats[r], buf, len / 4);
	}
	/* one long run of base64: PEM body and JWT part bounds */
	memcpy(buf, "-----BEGIN PRIVATE KEY-----\n", 28);
	for (i = 28; i < len; i++)
		buf[i] = alphabet[rng_next(&seed) % 62];
	scan_big("endless pem body", buf, len);
	free(buf);
}

/*
 * Invalid UTF-8 and NULs are tolerated, and every prefix of every secret
 * case scans cleanly within its exact-sized buffer (ASan checks bounds).
 */
static void test_invalid_utf8_and_truncation(void)
{
	static const char bad[] =
		"\xff\xfe password=hunter22\xc3 \xe5\xaf \xed\xa0\x80 "
		"\xc0\xaf \xe5\xaf\x86\xe7\xa0\x81\xef\xbc\x9a\xff\xfe\xfd "
		"\xf4\x90\x80\x80 sk-\x80\x81 AKIA\xff";
	static const char nul[] =
		"token\0=\0ghp_Zr4kQ8mN2pX7vB1cL9tY6wE3sA5dF0gH8jK2";
	struct secret_hit hits[MAX_HITS];
	struct cases c;
	char *text, *copy;
	size_t len, n, k;

	n = secret_scan(bad, sizeof(bad) - 1, hits, MAX_HITS);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK_STR(hits[0].kind, "password-assignment");
	n = secret_scan(nul, sizeof(nul) - 1, hits, MAX_HITS);
	CHECK_INT(n, 1);
	if (cases_open(&c, "secrets.txt"))
		return;
	while (cases_next(&c, &text, &len)) {
		for (k = 0; k <= len; k++) {
			copy = malloc(k ? k : 1);
			if (!copy)
				break;
			memcpy(copy, text, k);
			(void)secret_scan(copy, k, hits, MAX_HITS);
			free(copy);
		}
		free(text);
	}
	cases_close(&c);
}

/* A case of the generated corpus (fixed seed), for test_each_kind_needed. */
struct gen_case {
	char *text;
	size_t len;
};

/* Every credential case of the generated corpus with a fixed seed. */
static size_t gen_cases(struct gen_case *out, size_t max)
{
	static char buf[16384];
	uint64_t s = 20261201;
	size_t f, k, n = 0, len;

	for (f = 0; f < ARRAY_SIZE(corpus_secrets); f++) {
		for (k = 0; k < 3 && n < max; k++) {
			len = corpus_render(&corpus_secrets[f], &s, buf,
					    sizeof(buf));
			out[n].text = malloc(len ? len : 1);
			if (!out[n].text)
				return n;
			memcpy(out[n].text, buf, len);
			out[n].len = len;
			n++;
		}
	}
	return n;
}

/*
 * Each kind is load-bearing: some case of secrets.txt or of the generated
 * corpus is reported under that kind, and with that kind's matcher off
 * some case goes undetected.
 */
static void test_each_kind_needed(void)
{
	static struct gen_case gen[1024];
	struct secret_hit hits[MAX_HITS];
	struct cases c;
	size_t k, i, g, ngen = gen_cases(gen, ARRAY_SIZE(gen));

	for (k = 0; secret_kind_name(k); k++) {
		const char *kind = secret_kind_name(k);
		size_t seen = 0, missed = 0, len, n;
		char *text;

		if (cases_open(&c, "secrets.txt"))
			return;
		while (cases_next(&c, &text, &len)) {
			if (!seen) {
				n = secret_scan(text, len, hits, MAX_HITS);
				for (i = 0; i < n && i < MAX_HITS; i++)
					if (strcmp(hits[i].kind, kind) == 0)
						seen++;
			}
			if (!missed) {
				secret_disable_kind_for_test(kind);
				if (secret_scan(text, len, NULL, 0) == 0)
					missed++;
				secret_disable_kind_for_test(NULL);
			}
			free(text);
		}
		cases_close(&c);
		for (g = 0; g < ngen && !(seen && missed); g++) {
			n = secret_scan(gen[g].text, gen[g].len, hits, MAX_HITS);
			for (i = 0; i < n && i < MAX_HITS; i++)
				if (strcmp(hits[i].kind, kind) == 0)
					seen++;
			if (i == 0 || !seen)
				continue;
			secret_disable_kind_for_test(kind);
			if (secret_scan(gen[g].text, gen[g].len, NULL, 0) == 0)
				missed++;
			secret_disable_kind_for_test(NULL);
		}
		CHECK_MSG(seen > 0, "no case is reported as %s", kind);
		CHECK_MSG(missed > 0,
			  "disabling %s loses no case: it is not load-bearing",
			  kind);
	}
	for (g = 0; g < ngen; g++)
		free(gen[g].text);
	/* unknown names change nothing; NULL re-enables everything */
	secret_disable_kind_for_test("no-such-kind");
	CHECK_INT(secret_scan("password=hunter22", 17, NULL, 0), 1);
	secret_disable_kind_for_test("password-assignment");
	CHECK_INT(secret_scan("password=hunter22", 17, NULL, 0), 0);
	secret_disable_kind_for_test(NULL);
	CHECK_INT(secret_scan("password=hunter22", 17, NULL, 0), 1);
}

/* Placeholders and references named in the design never count. */
static void test_placeholders(void)
{
	static const char *const clean[] = {
		"password=${DB_PASSWORD}", "token: <your-token>",
		"api_key = os.environ[\"KEY\"]", "password: ********",
		"secret=xxx", "password=", "token = None", "token = null",
		"token = \"\"", "password = %(db_password)s",
		"PASSWORD=$DB_PASSWORD", "https://u:$PASS@h.example",
		"https://u:%s@h.example", "password: [REDACTED]",
	};
	static const char *const dirty[] = {
		"password=hunter2", "password = 'hunter22'",
		"token = \"9f3c1a7e2b4d6f80a1c3e5f7092b4d6f\"",
		"https://u:hunter22@h.example",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(clean); i++)
		CHECK_MSG(secret_scan(clean[i], strlen(clean[i]), NULL, 0) == 0,
			  "flagged: %s", clean[i]);
	for (i = 0; i < ARRAY_SIZE(dirty); i++)
		CHECK_MSG(secret_scan(dirty[i], strlen(dirty[i]), NULL, 0) == 1,
			  "missed: %s", dirty[i]);
}


#define CORPUS_PER_FAMILY 3

static const char *const variant_names[] = { "bare", "glued", "quoted",
					     "literals" };

/* Does family f get variant v (see corpus_render_variant())? */
static int variant_applies(const struct corpus_family *f, int v)
{
	switch (v) {
	case VAR_BARE:
	case VAR_QUOTED:
		return 1;
	case VAR_GLUED:
		return f->glue != GL_NONE;
	case VAR_LITERALS:
		return corpus_has_pem(f);
	}
	return 0;
}

/*
 * One pass over the generated corpus (tests/secret_corpus.h) with seed:
 * every case of every credential family must be found, no look-alike may
 * be. Each family is rendered CORPUS_PER_FAMILY times as written, then
 * once quoted as Markdown, once glued to an identifier (FG/FW families)
 * and once split into string literals (private keys): the per-family
 * detection report. With report, one line per family goes to stderr.
 * Returns the number of failures (misses plus false positives).
 */
static size_t corpus_pass(uint64_t seed, int report)
{
	static char buf[16384];
	struct secret_hit hits[MAX_HITS];
	size_t f, k, n, len, cases = 0, found = 0, looks = 0, fp = 0;
	size_t vcases[4] = { 0 }, vfound[4] = { 0 };
	uint64_t s = seed ? seed : 1;
	int v;

	for (f = 0; f < ARRAY_SIZE(corpus_secrets); f++) {
		const struct corpus_family *fam = &corpus_secrets[f];
		const char *kind = "-";
		char line[256];
		size_t used = 0;

		line[0] = '\0';
		for (v = VAR_BARE; v <= VAR_LITERALS; v++) {
			size_t hit = 0, tries;

			if (!variant_applies(fam, v))
				continue;
			tries = v == VAR_BARE ? CORPUS_PER_FAMILY : 1;
			for (k = 0; k < tries; k++) {
				len = corpus_render_variant(fam, &s, v, buf,
							    sizeof(buf));
				CHECK_MSG(len > 0, "%s: case did not render",
					  fam->name);
				n = secret_scan(buf, len, hits, MAX_HITS);
				cases++;
				vcases[v]++;
				if (n > 0) {
					hit++;
					kind = hits[0].kind;
				} else {
					CHECK_MSG(0, "seed %llu: %s (%s): missed: %s",
						  (unsigned long long)seed,
						  fam->name, variant_names[v],
						  buf);
				}
			}
			found += hit;
			vfound[v] += hit;
			if (used < sizeof(line))
				used += (size_t)snprintf(line + used,
							 sizeof(line) - used,
							 " %s %zu/%zu",
							 variant_names[v], hit,
							 tries);
		}
		if (report)
			fprintf(stderr, "  %-28s%s  %s\n", fam->name, line, kind);
	}
	for (f = 0; f < ARRAY_SIZE(corpus_innocents); f++) {
		const struct corpus_family *fam = &corpus_innocents[f];
		size_t bad = 0, tried = 0;

		for (v = VAR_BARE; v <= VAR_LITERALS; v++) {
			size_t tries;

			if (!variant_applies(fam, v))
				continue;
			tries = v == VAR_BARE ? CORPUS_PER_FAMILY : 1;
			for (k = 0; k < tries; k++) {
				len = corpus_render_variant(fam, &s, v, buf,
							    sizeof(buf));
				CHECK_MSG(len > 0, "%s: case did not render",
					  fam->name);
				n = secret_scan(buf, len, hits, MAX_HITS);
				looks++;
				tried++;
				if (n > 0) {
					bad++;
					CHECK_MSG(0,
						  "seed %llu: %s (%s): %s fired on \"%.*s\" in: %s",
						  (unsigned long long)seed,
						  fam->name, variant_names[v],
						  hits[0].kind,
						  (int)(hits[0].end - hits[0].start),
						  buf + hits[0].start, buf);
				}
			}
		}
		fp += bad;
		if (report)
			fprintf(stderr, "  look-alike %-28s %zu/%zu flagged\n",
				fam->name, bad, tried);
	}
	fprintf(stderr,
		"secret corpus (seed %llu): %zu credentials in %zu families, "
		"%zu detected (%.1f%%; bare %zu/%zu, glued %zu/%zu, quoted "
		"%zu/%zu, literals %zu/%zu); %zu look-alikes in %zu families, "
		"%zu false positives\n",
		(unsigned long long)seed, cases, ARRAY_SIZE(corpus_secrets),
		found, cases ? 100.0 * (double)found / (double)cases : 0.0,
		vfound[VAR_BARE], vcases[VAR_BARE], vfound[VAR_GLUED],
		vcases[VAR_GLUED], vfound[VAR_QUOTED], vcases[VAR_QUOTED],
		vfound[VAR_LITERALS], vcases[VAR_LITERALS], looks,
		ARRAY_SIZE(corpus_innocents), fp);
	/* every variant is exercised, or the report proves nothing */
	CHECK(vcases[VAR_GLUED] >= 100);
	CHECK(vcases[VAR_QUOTED] >= ARRAY_SIZE(corpus_secrets));
	CHECK(vcases[VAR_LITERALS] >= 5);
	return (cases - found) + fp;
}

/*
 * The generated corpus: at least 300 credentials over 80 families and 100
 * look-alikes, every family fully detected, no false positive. It runs
 * with five fixed seeds (the same verdict everywhere); CAIRN_SECRET_SEEDS=N
 * runs N more from the clock (printed, so a failure can be replayed with
 * CAIRN_SECRET_SEED=N).
 * CAIRN_SECRET_REPORT=1 prints the per-family table.
 */
static void test_generated_corpus(void)
{
	const char *env = getenv("CAIRN_SECRET_SEED");
	const char *many = getenv("CAIRN_SECRET_SEEDS");
	int report = getenv("CAIRN_SECRET_REPORT") != NULL;
	uint64_t seed = env ? strtoull(env, NULL, 10) : 20261201;
	/*
	 * make check's extra seeds are fixed too, so that a run gives the
	 * same verdict on every machine; CAIRN_SECRET_SEEDS=N draws N from
	 * the clock instead (each printed on a failure) to look for misses.
	 * 500 clock seeds found "the staging password is r8_ostdxmjx7 for
	 * now" missed (seed 4767781525683187373: the prose rule took any
	 * snake_case value for a name); that seed is now one of the fixed.
	 */
	static const uint64_t fixed[] = { 7, 1234567, 20250101, 4242424242ULL,
					  4767781525683187373ULL };
	long extra = many ? strtol(many, NULL, 10) : 0, i;

	CHECK(ARRAY_SIZE(corpus_secrets) * CORPUS_PER_FAMILY >= 300);
	CHECK(ARRAY_SIZE(corpus_secrets) >= 80);
	CHECK(ARRAY_SIZE(corpus_innocents) * CORPUS_PER_FAMILY >= 100);
	CHECK_INT(corpus_pass(seed, report), 0);
	if (env)
		return;
	for (i = 0; i < (long)ARRAY_SIZE(fixed); i++)
		CHECK_INT(corpus_pass(fixed[i], 0), 0);
	for (i = 0; i < extra; i++) {
		uint64_t s2 = (uint64_t)time(NULL) * 2654435761u + (uint64_t)i;

		CHECK_INT(corpus_pass(s2, 0), 0);
	}
}

/* Runs every case of the secret filter. */
void unit_secret(void)
{
	RUN(test_secrets_detected);
	RUN(test_innocents_clean);
	RUN(test_redact_removes_secrets);
	RUN(test_redact_clean_and_empty);
	RUN(test_redact_nomem);
	RUN(test_offsets_and_lines);
	RUN(test_scan_max);
	RUN(test_describe);
	RUN(test_describe_no_leak);
	RUN(test_big_inputs);
	RUN(test_invalid_utf8_and_truncation);
	RUN(test_each_kind_needed);
	RUN(test_placeholders);
	RUN(test_generated_corpus);
}
