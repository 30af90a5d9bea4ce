/*
 * test.h -- the tiny unit-test harness (after Redis's testhelp.h and LMDB's
 * CHECK). Checks print `file:line: expr: message` and never vanish under
 * NDEBUG. A test case is a function; it passes when none of its checks fail.
 * unit_main.c runs every module's cases and ends with `N passed, N failed`.
 */
#ifndef CAIRN_TEST_H
#define CAIRN_TEST_H

#include <stdio.h>
#include <string.h>

extern int test_case_failed;   /* set by a failing check in the current case */
extern int test_case_skipped;  /* set by test_skip() in the current case */
extern const char *test_tmpdir; /* a fresh private directory for this run */

#define CHECK(expr)                                                        \
	do {                                                               \
		if (!(expr)) {                                             \
			fprintf(stderr, "%s:%d: %s: check failed\n",       \
				__FILE__, __LINE__, #expr);                \
			test_case_failed = 1;                              \
		}                                                          \
	} while (0)

#define CHECK_MSG(expr, ...)                                               \
	do {                                                               \
		if (!(expr)) {                                             \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, \
				#expr);                                    \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
			test_case_failed = 1;                              \
		}                                                          \
	} while (0)

#define CHECK_INT(a, b)                                                    \
	do {                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);        \
		CHECK_MSG(a_ == b_, "%lld != %lld", a_, b_);              \
	} while (0)

#define CHECK_STR(a, b)                                                    \
	do {                                                               \
		const char *a_ = (a), *b_ = (b);                           \
		CHECK_MSG(a_ && b_ && strcmp(a_, b_) == 0,                 \
			  "\"%s\" != \"%s\"", a_ ? a_ : "(null)",          \
			  b_ ? b_ : "(null)");                             \
	} while (0)

/*
 * Open (creating) a store in a workspace test_tmpdir/NAME, without the
 * global store; the workspace root goes to root (if not NULL). A failure
 * fails the current case and returns the handle for cairn_errmsg().
 */
struct cairn_db;
struct cairn_db *test_store(const char *name, char *root, size_t rootsize);

/*
 * Write text to the file ROOT/REL, making the folders of REL below ROOT;
 * the full path goes to path, which holds 1024 bytes. A failure fails the
 * current case.
 */
void test_write_file(const char *root, const char *rel, const char *text,
		     char *path);

/*
 * Write one record with these fields (any may be NULL; confidence unset)
 * and return its id (free with cairn_free), or NULL after failing the
 * current case.
 */
char *test_write_record(struct cairn_db *db, const char *kind,
			const char *status, const char *origin,
			const char *key, const char *title, const char *body);

/*
 * Mark the current case skipped (what it needs is absent) and print
 * "skipped: CASE: why" on stdout; the caller returns. A skipped case is
 * counted as skipped, not passed, unless one of its checks failed.
 */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Run one case: RUN(test_fn). Counts it as passed or failed. */
void test_run(const char *name, void (*fn)(void));
#define RUN(fn) test_run(#fn, fn)

#endif /* CAIRN_TEST_H */
