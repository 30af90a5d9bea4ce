/*
 * internal.h -- shared helpers for every module of libcairn.
 *
 * Layer: the bottom. Everything else includes this file; it includes only the
 * public header and the C library.
 *
 * Holds: the allocation wrappers (all allocation goes through them so that a
 * test can fail the N-th one), a growable string buffer with a sticky error
 * and a size limit, small string helpers, time and random helpers, and the
 * ALWAYS()/NEVER() macros for defensive branches.
 *
 * Must never: abort on outside input, or keep global state other than the
 * test-only allocation-failure counter.
 */
#ifndef CAIRN_INTERNAL_H
#define CAIRN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#include "cairn.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * ALWAYS(x) / NEVER(x): conditions believed always true / never true. They
 * keep the defensive branch in release builds and assert in debug builds
 * (SQLite's idiom).
 */
#ifdef NDEBUG
#define ALWAYS(x) (x)
#define NEVER(x) (x)
#else
#include <assert.h>
#define ALWAYS(x) ((x) ? 1 : (assert(0), 0))
#define NEVER(x) ((x) ? (assert(0), 1) : 0)
#endif

/* ---------------------------------------------------------------- memory */

/* cairn_malloc() and cairn_free() are public (cairn.h). These are internal. */
void *util_calloc(size_t n, size_t size);
void *util_realloc(void *p, size_t size);
char *util_strdup(const char *s);
char *util_strndup(const char *s, size_t n);

/*
 * Test hook: make the N-th allocation from now fail (1 = the next one);
 * 0 disables. Used by fault-injection tests only.
 */
void util_fail_alloc_after(long n);
/* Test hook: allocations left before the armed failure (0: it happened or none is armed). */
long util_fail_alloc_pending(void);

/* ----------------------------------------------------------- string buffer */

/*
 * struct sbuf: a growable, always NUL-terminated byte buffer. Any failure
 * (out of memory, growing past `limit`) sets the sticky `err` and turns
 * later appends into no-ops; the builder checks `err` once at the end.
 */
struct sbuf {
	char *buf;    /* the bytes, NUL-terminated; NULL until first append */
	size_t len;   /* bytes used, excluding the terminating NUL */
	size_t cap;   /* bytes allocated */
	size_t limit; /* maximum len; 0 means SBUF_DEFAULT_LIMIT */
	int err;      /* sticky: CAIRN_OK, CAIRN_NOMEM or CAIRN_TOOBIG */
};

#define SBUF_INIT { NULL, 0, 0, 0, 0 }
#define SBUF_DEFAULT_LIMIT ((size_t)1 << 30) /* 1 GiB */

/* The longest JSON Lines line cairn_import_line takes (export.c), and so
 * the most of a line `cairn import` holds (cli.c): one record with history */
#define EXPORT_MAX_LINE ((size_t)8 << 20) /* 8 MiB */

void sbuf_init(struct sbuf *sb, size_t limit);
void sbuf_release(struct sbuf *sb);
void sbuf_reset(struct sbuf *sb);
void sbuf_add(struct sbuf *sb, const void *data, size_t len);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addc(struct sbuf *sb, char c);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap);
/* Returns the buffer (caller frees with cairn_free) and empties sb. */
char *sbuf_detach(struct sbuf *sb, size_t *len);
/* The contents as a C string; "" when empty. Borrowed from sb. */
const char *sbuf_str(const struct sbuf *sb);

/* ------------------------------------------------------------------ misc */

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ" into buf (>= 21 bytes). */
void util_now_iso(char *buf, size_t size);
/* Seconds since the epoch for an ISO date or date-time; -1 if unparseable. */
long long util_parse_iso(const char *s);
/*
 * 1 when s is an ISO-8601 date or date-time a record may hold:
 * YYYY-MM-DD (a real day), optionally [T ]HH:MM[:SS[.fff]] and Z or an
 * offset; 0 otherwise ("garbage", "2026-13-45", "2026-01-01junk").
 */
int util_iso_valid(const char *s);
/* Fill buf with n random bytes from the OS; CAIRN_OK or CAIRN_IO. */
int util_random(void *buf, size_t n);
/* Lower-case hex of n bytes into out (2n+1 bytes). */
void util_hex(const unsigned char *in, size_t n, char *out);
/* SHA-256 of data as 64 lower-case hex characters + NUL into out[65]. */
void util_sha256_hex(const void *data, size_t len, char out[65]);
/* A region of bytes, one of the parts hashed by util_sha256_parts. */
struct util_span {
	const void *p;
	size_t len;
};
/* SHA-256 of n regions one after another into out; 0, or -1 on failure. */
int util_sha256_parts(const struct util_span *parts, size_t n,
		      unsigned char out[32]);
/* write(2) all n bytes, again after EINTR and short writes; 0 or -1. */
int util_write_all(int fd, const void *p, size_t n);
/* The same on a socket: a peer that has gone is EPIPE, never SIGPIPE. */
int util_send_all(int fd, const void *p, size_t n);
/*
 * The whole regular file open on fd (NUL-terminated, *len bytes; caller
 * frees), or NULL when it is empty, larger than limit or unreadable.
 */
char *util_read_fd(int fd, size_t limit, size_t *len);
/*
 * Remove the temporary files "<file>.<pid>.tmp" in dir of writers that
 * died before renaming theirs (a hook killed at its deadline): their
 * process is gone. A live one's, or one whose pid was reused, is left.
 * file may be a path; its last component is what is matched.
 */
void util_sweep_tmp(const char *dir, const char *file);
/* Milliseconds on the monotonic clock (for durations only). */
double util_now_ms(void);

/*
 * dlopen() lib and resolve names[i] into *slots[i] for i < n: 0, or -1
 * with why set ("cannot load LIB (install PKG): ..." or "LIB has no
 * NAME"). The handle stays open for the rest of the process. For the
 * libraries loaded only when first needed (OpenCC, libcurl, OpenBLAS).
 */
int util_dl_syms(const char *lib, const char *pkg, const char *const *names,
		 void **const *slots, size_t n, char *why, size_t whysize);
/*
 * mkdir -p: make path and every missing folder above it with mode. 0, or
 * -1 with errno (ENAMETOOLONG past PATH_MAX).
 */
int util_mkdir_p(const char *path, unsigned mode);
/* Read a whole file; limit caps its size. Caller frees *out. */
int util_read_file(const char *path, size_t limit, char **out, size_t *len,
		   char *err, size_t errsize);
/*
 * The cache directory of compiled tables and digests: override if not NULL,
 * else $CAIRN_CACHE_DIR, else $XDG_CACHE_HOME/cairn, else ~/.cache/cairn.
 * An empty override or $CAIRN_CACHE_DIR turns caching off. 1 when buf holds
 * a directory, 0 when there is none (or it does not fit).
 */
int util_cache_dir(const char *override, char *buf, size_t size);
/*
 * A record's provenance in one line, into sb: "path:line @commit >
 * heading", "session S, tool", or the origin. (CLI, MCP.)
 */
void util_source_text(struct sbuf *sb, const cairn_record *r);
/* Byte length of the UTF-8 sequence whose lead byte is c (1 for a bad byte). */
size_t util_u8len(unsigned char c);
/* Validate UTF-8; returns -1 if valid, else the offset of the first bad byte. */
long util_utf8_invalid_at(const char *s, size_t len);
/* Case-sensitive string equality that tolerates NULL (NULL == NULL). */
int util_streq(const char *a, const char *b);

enum util_esc_flags {
	UTIL_ESC_KEEP_NL = 1 << 0,  /* newline passes (tab always does) */
	UTIL_ESC_LINESEP = 1 << 1,  /* also U+2028, U+2029 and the bidi
				     * controls U+202A..E, U+2066..9 */
};
/*
 * Append s[0..len) to sb with every C0 control byte but tab (and newline
 * with UTIL_ESC_KEEP_NL), DEL and every C1 control (U+0080..U+009F)
 * written visibly as "\uHHHH" (ESC: \u001b). ESC,
 * OSC, BEL, CR and backspace then reach a terminal (or a model) as text,
 * never as commands; inside a JSON string the escape means the same
 * character. Other bytes, invalid UTF-8 included, pass as they are.
 */
void util_add_escaped(struct sbuf *sb, const char *s, size_t len,
		      unsigned flags);
/* 1 when s[0..len) holds a byte or code point util_add_escaped changes. */
int util_needs_escape(const char *s, size_t len, unsigned flags);

/*
 * The first member of an object that a lower layer keeps for an upper one
 * and releases without knowing its type (struct bil, bilingual.h: recall
 * loads it into the store's handle, cairn_db_close frees it). The object's
 * constructor sets release; util_owned_free(p) calls it (p may be NULL).
 */
struct util_owned {
	void (*release)(void *self);
};
void util_owned_free(void *p);

#endif /* CAIRN_INTERNAL_H */
