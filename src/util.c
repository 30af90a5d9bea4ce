/*
 * util.c -- allocation wrappers, string buffer, time, hashing, random,
 * whole-file reads and writes, libraries opened when first needed.
 *
 * Layer: bottom (see internal.h). No SQLite.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * SHA256_Init/Update/Final: deprecated by OpenSSL 3 but present, and
 * accelerated as the rest. The one-shot SHA256() and the EVP interface
 * load the provider configuration on first use: ~5 M instructions (~2 ms)
 * in every process, the hook's included.
 */
#define OPENSSL_API_COMPAT 10101
#include <openssl/sha.h>

#include "internal.h"

/* ---------------------------------------------------------------- memory */

/*
 * Fault injection counter: when positive, counts down on every allocation
 * and fails the one that brings it to zero. Test-only; 0 means off.
 */
static long fail_countdown;

void util_fail_alloc_after(long n)
{
	fail_countdown = n;
}

/*
 * Allocations still to go before the injected failure (0: it happened, or
 * injection is off). Test-only (tests/unit_faults.c): a run that ends with
 * this above 0 never reached its N-th allocation.
 */
long util_fail_alloc_pending(void)
{
	return fail_countdown;
}

static int should_fail(void)
{
	if (fail_countdown <= 0)
		return 0;
	fail_countdown--;
	return fail_countdown == 0;
}

void *cairn_malloc(size_t n)
{
	if (should_fail())
		return NULL;
	return malloc(n ? n : 1);
}

void cairn_free(void *p)
{
	free(p);
}

void *util_calloc(size_t n, size_t size)
{
	if (should_fail())
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *util_realloc(void *p, size_t size)
{
	if (should_fail())
		return NULL;
	return realloc(p, size ? size : 1);
}

char *util_strndup(const char *s, size_t n)
{
	char *p;

	if (!s)
		return NULL;
	p = cairn_malloc(n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *util_strdup(const char *s)
{
	return s ? util_strndup(s, strlen(s)) : NULL;
}

/* ----------------------------------------------------------- string buffer */

void sbuf_init(struct sbuf *sb, size_t limit)
{
	memset(sb, 0, sizeof(*sb));
	sb->limit = limit;
}

void sbuf_release(struct sbuf *sb)
{
	cairn_free(sb->buf);
	memset(sb, 0, sizeof(*sb));
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
	sb->err = CAIRN_OK;
}

static int sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t limit = sb->limit ? sb->limit : SBUF_DEFAULT_LIMIT;
	size_t need, cap;
	char *p;

	if (sb->err)
		return -1;
	if (extra > limit || sb->len > limit - extra) {
		sb->err = CAIRN_TOOBIG;
		return -1;
	}
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return 0;
	cap = sb->cap ? sb->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = util_realloc(sb->buf, cap);
	if (!p) {
		sb->err = CAIRN_NOMEM;
		return -1;
	}
	sb->buf = p;
	sb->cap = cap;
	return 0;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t len)
{
	if (sbuf_grow(sb, len))
		return;
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addc(struct sbuf *sb, char c)
{
	sbuf_add(sb, &c, 1);
}

void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (sb->err)
		return;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0) {
		sb->err = CAIRN_INVALID;
		return;
	}
	if (sbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

char *sbuf_detach(struct sbuf *sb, size_t *len)
{
	char *p = sb->buf;

	if (!p)
		p = util_strdup("");
	if (len)
		*len = sb->len;
	memset(sb, 0, sizeof(*sb));
	return p;
}

const char *sbuf_str(const struct sbuf *sb)
{
	return sb->buf ? sb->buf : "";
}

/* ------------------------------------------------------------------ misc */

void util_now_iso(char *buf, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

long long util_parse_iso(const char *s)
{
	struct tm tm;
	int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;

	if (!s)
		return -1;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -1;
	if (s[10] == 'T' || s[10] == ' ')
		sscanf(s + 11, "%2d:%2d:%2d", &h, &mi, &sec);
	if (mo < 1 || mo > 12 || d < 1 || d > 31)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return (long long)timegm(&tm);
}

/* The n digits at s as a number, or -1 when any is not a digit. */
static int iso_digits(const char *s, int n)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int util_iso_valid(const char *s)
{
	static const int mdays[12] = { 31, 29, 31, 30, 31, 30,
				       31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec;

	if (!s)
		return 0;
	y = iso_digits(s, 4);
	if (y < 0 || s[4] != '-')
		return 0;
	mo = iso_digits(s + 5, 2);
	if (mo < 0 || s[7] != '-')
		return 0;
	d = iso_digits(s + 8, 2);
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1])
		return 0;
	if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return 0;
	s += 10;
	if (*s == '\0')
		return 1;
	if (*s != 'T' && *s != ' ')
		return 0;
	h = iso_digits(s + 1, 2);
	if (h < 0 || h > 23 || s[3] != ':')
		return 0;
	mi = iso_digits(s + 4, 2);
	if (mi < 0 || mi > 59)
		return 0;
	s += 6;
	if (*s == ':') {
		sec = iso_digits(s + 1, 2);
		if (sec < 0 || sec > 60)
			return 0;
		s += 3;
		if (*s == '.' || *s == ',') {
			if (s[1] < '0' || s[1] > '9')
				return 0;
			for (s++; *s >= '0' && *s <= '9'; s++)
				;
		}
	}
	if (*s == 'Z')
		return s[1] == '\0';
	if (*s == '+' || *s == '-') {
		h = iso_digits(s + 1, 2);
		if (h < 0 || h > 23)
			return 0;
		s += 3;
		if (*s == ':')
			s++;
		if (*s == '\0')
			return 1;
		mi = iso_digits(s, 2);
		return mi >= 0 && mi <= 59 && s[2] == '\0';
	}
	return *s == '\0';
}

int util_random(void *buf, size_t n)
{
	unsigned char *p = buf;

	while (n > 0) {
		ssize_t got = getrandom(p, n, 0);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return CAIRN_IO;
		}
		p += got;
		n -= (size_t)got;
	}
	return CAIRN_OK;
}

void util_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

int util_sha256_parts(const struct util_span *parts, size_t n,
		      unsigned char out[32])
{
	SHA256_CTX ctx;
	size_t i;

	if (SHA256_Init(&ctx) != 1)
		return -1;
	for (i = 0; i < n; i++)
		if (parts[i].len && SHA256_Update(&ctx, parts[i].p,
						  parts[i].len) != 1)
			return -1;
	return SHA256_Final(out, &ctx) == 1 ? 0 : -1;
}

void util_sha256_hex(const void *data, size_t len, char out[65])
{
	struct util_span one = { data, len };
	unsigned char md[32];

	if (util_sha256_parts(&one, 1, md) != 0)
		memset(md, 0, sizeof(md)); /* cannot fail: no allocation */
	util_hex(md, sizeof(md), out);
}

double util_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* write(2), or send(2) without SIGPIPE, until all n bytes are out. */
static int put_all(int fd, const void *p, size_t n, int sock)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = sock ? send(fd, c, n, MSG_NOSIGNAL) : write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int util_write_all(int fd, const void *p, size_t n)
{
	return put_all(fd, p, n, 0);
}

int util_send_all(int fd, const void *p, size_t n)
{
	return put_all(fd, p, n, 1);
}

char *util_read_fd(int fd, size_t limit, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	if (fstat(fd, &st) != 0 || st.st_size <= 0 ||
	    (unsigned long long)st.st_size > limit)
		return NULL;
	buf = util_calloc(1, (size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (got < (size_t)st.st_size) {
		ssize_t r = pread(fd, buf + got, (size_t)st.st_size - got,
				  (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

int util_read_file(const char *path, size_t limit, char **out, size_t *len,
		   char *err, size_t errsize)
{
	struct sbuf sb = SBUF_INIT;
	char chunk[65536];
	int fd, rc = CAIRN_OK;

	*out = NULL;
	if (len)
		*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errsize, "cannot open '%s': %s", path,
			 strerror(errno));
		return CAIRN_IO;
	}
	sbuf_init(&sb, limit);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errsize, "cannot read '%s': %s", path,
				 strerror(errno));
			rc = CAIRN_IO;
			goto out;
		}
		if (n == 0)
			break;
		sbuf_add(&sb, chunk, (size_t)n);
		if (sb.err) {
			rc = sb.err;
			snprintf(err, errsize, "%s '%s'",
				 rc == CAIRN_TOOBIG ? "file too large:"
						    : "out of memory reading",
				 path);
			goto out;
		}
	}
	*out = sbuf_detach(&sb, len);
	if (!*out) {
		rc = CAIRN_NOMEM;
		snprintf(err, errsize, "out of memory reading '%s'", path);
	}
out:
	close(fd);
	sbuf_release(&sb);
	return rc;
}

size_t util_u8len(unsigned char c)
{
	if (c >= 0xF0)
		return 4;
	if (c >= 0xE0)
		return 3;
	if (c >= 0xC0)
		return 2;
	return 1;
}

long util_utf8_invalid_at(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n, k;
		unsigned cp;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			cp = c & 0x07;
		} else {
			return (long)i;
		}
		for (k = 1; k <= n; k++) {
			if (i + k >= len || (s[i + k] & 0xC0) != 0x80)
				return (long)i;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		/* overlong, surrogate and out-of-range forms are invalid */
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return (long)i;
		i += n + 1;
	}
	return -1;
}

int util_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

void util_owned_free(void *p)
{
	if (p)
		((struct util_owned *)p)->release(p);
}

int util_cache_dir(const char *override, char *buf, size_t size)
{
	const char *d = override ? override : getenv("CAIRN_CACHE_DIR");
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;

	if (d)
		n = *d ? snprintf(buf, size, "%s", d) : -1;
	else if (x && x[0] == '/')
		n = snprintf(buf, size, "%s/cairn", x);
	else if (h && *h)
		n = snprintf(buf, size, "%s/.cache/cairn", h);
	else
		n = -1;
	return n > 0 && (size_t)n < size;
}

void util_source_text(struct sbuf *sb, const cairn_record *r)
{
	if (r->src_path) {
		sbuf_adds(sb, r->src_path);
		if (r->src_line > 0)
			sbuf_addf(sb, ":%ld", r->src_line);
		if (r->src_commit)
			sbuf_addf(sb, " @%.8s", r->src_commit);
		if (r->src_heading && *r->src_heading)
			sbuf_addf(sb, " > %s", r->src_heading);
	} else if (r->src_tool && strncmp(r->src_tool, "team:", 5) == 0 &&
		   strcmp(r->kind ? r->kind : "", "event") != 0) {
		/* a pulled record: the server's stamp of who wrote it */
		sbuf_addf(sb, "from the team, by %s", r->src_tool + 5);
	} else if (r->src_session || r->src_tool) {
		sbuf_addf(sb, "session %s",
			  r->src_session ? r->src_session : "-");
		if (r->src_tool)
			sbuf_addf(sb, ", %s", r->src_tool);
	} else {
		sbuf_adds(sb, r->origin ? r->origin : "");
	}
}

int util_dl_syms(const char *lib, const char *pkg, const char *const *names,
		 void **const *slots, size_t n, char *why, size_t whysize)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!h) {
		snprintf(why, whysize, "cannot load %s (install %s): %s", lib,
			 pkg, dlerror());
		return -1;
	}
	for (i = 0; i < n; i++) {
		*slots[i] = dlsym(h, names[i]);
		if (!*slots[i]) {
			snprintf(why, whysize, "%s has no %s", lib, names[i]);
			return -1;
		}
	}
	return 0;
}

void util_sweep_tmp(const char *dir, const char *file)
{
	const char *base = strrchr(file, '/');
	size_t blen;
	struct dirent *e;
	DIR *d;

	base = base ? base + 1 : file;
	blen = strlen(base);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *p = e->d_name;
		char path[4400], *end;
		long pid;

		if (strncmp(p, base, blen) != 0 || p[blen] != '.')
			continue;
		errno = 0;
		pid = strtol(p + blen + 1, &end, 10);
		if (errno || end == p + blen + 1 || pid <= 0 ||
		    strcmp(end, ".tmp") != 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, p) <
		    (int)sizeof(path))
			unlink(path);
	}
	closedir(d);
}

/*
 * Bytes of the control at s (n bytes left) that util_add_escaped writes
 * visibly, and its code point in *cp; 0 when s starts with none.
 */
static size_t esc_control(const unsigned char *s, size_t n, unsigned flags,
			  unsigned *cp)
{
	if (s[0] < 0x20 || s[0] == 0x7F) {
		if (s[0] == '\t' || (s[0] == '\n' && (flags & UTIL_ESC_KEEP_NL)))
			return 0;
		*cp = s[0];
		return 1;
	}
	if (s[0] == 0xC2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9F) {
		*cp = s[1];
		return 2;
	}
	if ((flags & UTIL_ESC_LINESEP) && s[0] == 0xE2 && n >= 3 &&
	    s[1] == 0x80 && s[2] >= 0xA8 && s[2] <= 0xAE) {
		*cp = 0x2000u + s[2] - 0x80u;
		return 3;
	}
	if ((flags & UTIL_ESC_LINESEP) && s[0] == 0xE2 && n >= 3 &&
	    s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9) {
		*cp = 0x2040u + s[2] - 0x80u;
		return 3;
	}
	return 0;
}

void util_add_escaped(struct sbuf *sb, const char *s, size_t len,
		      unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < len) {
		unsigned cp = 0;
		size_t k = esc_control(u + i, len - i, flags, &cp);

		if (k == 0) {
			i++;
			continue;
		}
		sbuf_add(sb, s + run, i - run);
		/* the JSON escape: readable, and the same value inside a
		 * JSON string (so --json output stays valid JSON) */
		sbuf_addf(sb, "\\u%04x", cp);
		i += k;
		run = i;
	}
	sbuf_add(sb, s + run, len - run);
}

int util_needs_escape(const char *s, size_t len, unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned cp;

		if (esc_control(u + i, len - i, flags, &cp))
			return 1;
	}
	return 0;
}

int util_mkdir_p(const char *path, unsigned mode)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return errno = ENAMETOOLONG, -1;
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];

			buf[i] = '\0';
			if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
				return -1;
			buf[i] = c;
		}
	}
	return 0;
}
