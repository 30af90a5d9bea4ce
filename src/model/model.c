/*
 * model.c -- the model catalogue and the one place cairn downloads
 * anything: `cairn model pull` (cairn_model_pull in cairn.h).
 *
 * Layer: beside embed.h; on libcurl (dlopen()ed on the first download, as
 * embed_http.c does, so that no other command loads it), libcrypto (the
 * SHA-256) and json.h (the NAME.json manifest).
 *
 * Files, in the model directory (cairn_model_dir):
 *   NAME.gguf        the model, only ever put there by rename()
 *   NAME.gguf.part   the bytes of an unfinished download (resumed with a
 *                    Range request by the next pull)
 *   NAME.gguf.part.if-range  the strong ETag, or else the Last-Modified, of
 *                    the answer the part was started from: sent as If-Range
 *                    with every resume, so bytes of a file changed since are
 *                    never spliced onto it (no validator: no resume)
 *   NAME.json        {"name", "source", "sha256", "size", "pinned",
 *                    "pulled"}: what the file is and where it came from
 *
 * The catalogue lists GGUF conversions on Hugging Face by repository and
 * file name as the repositories list them; none of them could be fetched
 * from the machine this was written on (no route to Hugging Face), so no
 * hash is pinned here: the first download's SHA-256 is recorded, and it is
 * part of every vector's identity (embed_gguf.c).
 *
 * Must never: download without being asked (no call from recall, reindex
 * or the hook), leave a half-written NAME.gguf, follow a redirect from
 * https to http, or loop without bound (MODEL_TRIES transfers at most),
 * write more than the size bound, or wait on a trickling server for ever.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OPENSSL_API_COMPAT 10101 /* SHA256_*, as util.c */
#include <openssl/sha.h>
#include <pthread.h>

#define CURL_DISABLE_TYPECHECK /* the calls below go through pointers */
#include <curl/curl.h>

#include "internal.h"
#include "json.h"
#include "model.h"

/*
 * Messages are cut to out->error's fixed size on purpose (a path or URL
 * can be long); the compiler's truncation warning is not an error here.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#define MODEL_LIBCURL "libcurl.so.4" /* Debian's libcurl4 (ABI 4) */
#define MODEL_DEFAULT_ENDPOINT "https://huggingface.co"
#define MODEL_PROGRESS_MS 100.0

/* ------------------------------------------------------------ catalogue */

#define MB(x) ((long long)((x) * 1000000.0))

/*
 * Repositories and file names as listed on Hugging Face (looked up, not
 * downloaded: see the file comment). Instructions follow each model card's
 * retrieval recipe: bge English v1.5 and bge Chinese v1.5 prepend an
 * instruction to queries only, e5 "query: " / "passage: ", bge-m3 none.
 */
static const cairn_model_entry catalogue[] = {
	{ "bge-small-en-v1.5", "embedding",
	  "CompendiumLabs/bge-small-en-v1.5-gguf", "bge-small-en-v1.5-q8_0.gguf",
	  MB(36.8), 384, "cls",
	  "Represent this sentence for searching relevant passages: ", "", "en",
	  "small and fast: English records and questions" },
	{ "bge-base-en-v1.5", "embedding",
	  "CompendiumLabs/bge-base-en-v1.5-gguf", "bge-base-en-v1.5-q8_0.gguf",
	  MB(118), 768, "cls",
	  "Represent this sentence for searching relevant passages: ", "", "en",
	  "better English recall than small, about 3x slower" },
	{ "bge-m3", "embedding", "rbehzadan/bge-m3-gguf", "bge-m3-Q8_0.gguf",
	  MB(635), 1024, "cls", "", "", "100+ languages",
	  "the strongest multilingual model here; large (24 layers) and slow "
	  "on a CPU" },
	{ "multilingual-e5-small", "embedding", "cstr/multilingual-e5-small-GGUF",
	  "multilingual-e5-small-q8_0.gguf", MB(125), 384, "mean", "query: ",
	  "passage: ", "100+ languages",
	  "small multilingual: Chinese questions about English records and "
	  "the reverse" },
	{ "bge-small-zh-v1.5", "embedding",
	  "CompendiumLabs/bge-small-zh-v1.5-gguf", "bge-small-zh-v1.5-q8_0.gguf",
	  MB(26.5), 512, "cls",
	  "\xe4\xb8\xba\xe8\xbf\x99\xe4\xb8\xaa\xe5\x8f\xa5\xe5\xad\x90\xe7\x94"
	  "\x9f\xe6\x88\x90\xe8\xa1\xa8\xe7\xa4\xba\xe4\xbb\xa5\xe7\x94\xa8\xe4"
	  "\xba\x8e\xe6\xa3\x80\xe7\xb4\xa2\xe7\x9b\xb8\xe5\x85\xb3\xe6\x96\x87"
	  "\xe7\xab\xa0\xef\xbc\x9a", /* 为这个句子生成表示以用于检索相关文章： */
	  "", "zh", "small and fast: Chinese records and questions" },
	{ "bge-reranker-base", "reranker", "jimi0209/bge-reranker-base-Q5_K_M-GGUF",
	  "bge-reranker-base-q5_k_m.gguf", MB(228), 1, "rank", "", "", "zh, en",
	  "cross-encoder for cairn recall --rerank: Chinese and English" },
	{ "bge-reranker-v2-m3", "reranker", "gpustack/bge-reranker-v2-m3-GGUF",
	  "bge-reranker-v2-m3-Q8_0.gguf", MB(636), 1, "rank", "", "",
	  "100+ languages",
	  "multilingual cross-encoder; large (24 layers) and slow on a CPU" },
};

const cairn_model_entry *cairn_model_catalogue(size_t *n)
{
	if (n)
		*n = ARRAY_SIZE(catalogue);
	return catalogue;
}

const cairn_model_entry *cairn_model_lookup(const char *name)
{
	size_t i;

	for (i = 0; name && i < ARRAY_SIZE(catalogue); i++)
		if (strcmp(catalogue[i].name, name) == 0)
			return &catalogue[i];
	return NULL;
}

const char *cairn_model_recommend(double han, const char *locale,
				  const char **reranker, const char **why)
{
	int zh_user = locale && strncmp(locale, "zh", 2) == 0;
	const char *m, *w;

	if (han >= 0.7) {
		m = "bge-small-zh-v1.5";
		w = "most records are in Chinese: a small Chinese model";
	} else if (han >= 0.05 || zh_user) {
		m = "multilingual-e5-small";
		w = zh_user && han < 0.05
			    ? "a Chinese-speaking user with English records: a "
			      "multilingual model matches Chinese questions to "
			      "English text"
			    : "records in Chinese and English: a multilingual "
			      "model puts both in one space";
	} else {
		m = "bge-small-en-v1.5";
		w = "English records: a small English model";
	}
	if (reranker)
		*reranker = "bge-reranker-base";
	if (why)
		*why = w;
	return m;
}

/* ------------------------------------------------------------- the files */

int model_name_valid(const char *s)
{
	size_t i;

	if (!s || !*s || *s == '.' || *s == '-')
		return 0;
	for (i = 0; s[i]; i++)
		if (i + 1 >= MODEL_NAME_MAX ||
		    !((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || strchr("._-", s[i])))
			return 0;
	return 1;
}

int cairn_model_dir(char *buf, size_t size)
{
	const char *m = getenv("CAIRN_MODEL_DIR"), *c = getenv("CAIRN_CACHE_DIR");
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
	int n;

	if (m && *m)
		n = snprintf(buf, size, "%s", m);
	else if (c && *c)
		n = snprintf(buf, size, "%s/models", c);
	else if (x && x[0] == '/')
		n = snprintf(buf, size, "%s/cairn/models", x);
	else if (h && *h)
		n = snprintf(buf, size, "%s/.cache/cairn/models", h);
	else
		return CAIRN_NOTFOUND;
	return n > 0 && (size_t)n < size ? CAIRN_OK : CAIRN_TOOBIG;
}

int model_sha256_file(const char *path, char hex[65])
{
	unsigned char md[32], *buf = NULL;
	SHA256_CTX ctx;
	ssize_t r;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	buf = cairn_malloc(1 << 20);
	if (!buf || SHA256_Init(&ctx) != 1)
		goto out;
	for (;;) {
		r = read(fd, buf, 1 << 20);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out;
		if (r == 0)
			break;
		if (SHA256_Update(&ctx, buf, (size_t)r) != 1)
			goto out;
	}
	if (SHA256_Final(md, &ctx) != 1)
		goto out;
	util_hex(md, sizeof(md), hex);
	ret = 0;
out:
	cairn_free(buf);
	close(fd);
	return ret;
}

/* DIR/NAME + suffix into buf; 0, or -1 when it does not fit. */
static int model_file(char *buf, size_t size, const char *dir,
		      const char *name, const char *suffix)
{
	int n = snprintf(buf, size, "%s/%s%s", dir, name, suffix);

	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* The recorded SHA-256 of NAME.json into sha ("" when none). */
static void manifest_sha(const char *dir, const char *name, char sha[65])
{
	char path[4200], err[128], *text = NULL;
	struct json *j = NULL;
	const char *s;
	size_t len;

	sha[0] = '\0';
	if (model_file(path, sizeof(path), dir, name, ".json") ||
	    util_read_file(path, MODEL_MANIFEST_MAX, &text, &len, err,
			   sizeof(err)) != CAIRN_OK)
		return;
	if (json_parse(text, len, &j, err, sizeof(err)) == CAIRN_OK) {
		s = json_get_str(j, "sha256");
		if (s && strlen(s) == 64)
			memcpy(sha, s, 65);
	}
	json_free(j);
	cairn_free(text);
}

static int resolve_dir(const char *dir, char *buf, size_t size)
{
	if (dir) {
		int n = snprintf(buf, size, "%s", dir);

		return n > 0 && (size_t)n < size ? CAIRN_OK : CAIRN_TOOBIG;
	}
	return cairn_model_dir(buf, size);
}

int cairn_model_installed(const char *name, const char *dir, char *path,
			  size_t size, char sha256[65])
{
	char d[4096], p[4200];
	struct stat st;
	int rc;

	if (!model_name_valid(name))
		return CAIRN_INVALID;
	rc = resolve_dir(dir, d, sizeof(d));
	if (rc)
		return rc;
	if (model_file(p, sizeof(p), d, name, ".gguf"))
		return CAIRN_TOOBIG;
	if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
		return CAIRN_NOTFOUND;
	if (path) {
		if (strlen(p) >= size)
			return CAIRN_TOOBIG;
		memcpy(path, p, strlen(p) + 1);
	}
	if (sha256)
		manifest_sha(d, name, sha256);
	return CAIRN_OK;
}

int cairn_model_remove(const char *name, const char *dir, char *err,
		       size_t errsize)
{
	static const char *const suffixes[] = { ".gguf", ".json", ".gguf.part",
						".gguf.part.if-range" };
	char d[4096], p[4200];
	size_t i;
	int rc, found = 0;

	if (err && errsize)
		err[0] = '\0';
	if (!model_name_valid(name)) {
		if (err)
			snprintf(err, errsize, "'%s' is not a model name",
				 name ? name : "");
		return CAIRN_INVALID;
	}
	rc = resolve_dir(dir, d, sizeof(d));
	if (rc)
		return rc;
	for (i = 0; i < ARRAY_SIZE(suffixes); i++) {
		if (model_file(p, sizeof(p), d, name, suffixes[i]))
			return CAIRN_TOOBIG;
		if (unlink(p) == 0) {
			found = 1;
		} else if (errno != ENOENT) {
			if (err)
				snprintf(err, errsize, "cannot remove '%s': %s",
					 p, strerror(errno));
			return CAIRN_IO;
		}
	}
	if (!found && err)
		snprintf(err, errsize, "model '%s' is not installed in '%s'",
			 name, d);
	return found ? CAIRN_OK : CAIRN_NOTFOUND;
}


/* ----------------------------------------------------------------- curl */

static struct {
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	char why[256]; /* "" when loaded */
} mc;
static pthread_once_t mc_once = PTHREAD_ONCE_INIT;

static void mc_load(void)
{
	static const char *const names[] = {
		"curl_easy_init",    "curl_easy_cleanup", "curl_easy_setopt",
		"curl_easy_getinfo", "curl_easy_perform", "curl_easy_strerror",
		"curl_slist_append", "curl_slist_free_all",
	};
	void **const slots[] = {
		(void **)&mc.easy_init,    (void **)&mc.easy_cleanup,
		(void **)&mc.easy_setopt,  (void **)&mc.easy_getinfo,
		(void **)&mc.easy_perform, (void **)&mc.easy_strerror,
		(void **)&mc.slist_append, (void **)&mc.slist_free_all,
	};

	(void)util_dl_syms(MODEL_LIBCURL, "Debian's libcurl4", names, slots,
			   ARRAY_SIZE(names), mc.why, sizeof(mc.why));
}

/* One transfer's state, shared with the callbacks. */
struct xfer {
	CURL *c;
	int fd;                  /* the .part file, O_APPEND */
	long long base;          /* bytes the part had when this transfer began */
	long long wrote;         /* bytes written by this transfer */
	long status;             /* the final response's HTTP status */
	int checked;             /* 1: the status was looked at (first data) */
	int restart;             /* 1: a 200 answered our Range: part truncated */
	int werr;                /* errno of a failed write, 0 */
	long long total;         /* whole file's size, 0 while unknown */
	long long bound;         /* most bytes the file may have */
	int toobig;              /* 1: the answer passed bound: stopped */
	int bad_range;           /* 1: a 206 from another offset: stopped */
	const char *vpath;       /* NAME.gguf.part.if-range */
	char etag[MODEL_VALIDATOR_MAX];    /* the answer's strong ETag, "" */
	char lastmod[MODEL_VALIDATOR_MAX]; /* its Last-Modified, "" */
	long long crange;        /* its Content-Range's first byte, -1 */
	const cairn_pull_opts *o;
	double last_ms;          /* when progress was last reported */
};

/* ------------------------------------------------------- the validator */

/* A header value that may go back into a header: printable ASCII only. */
static int header_safe(const char *v, size_t n)
{
	size_t i;

	if (n == 0 || n >= MODEL_VALIDATOR_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return 0;
	return 1;
}

/* The If-Range value recorded beside the part into buf ("" when none). */
static void validator_read(const char *vpath, char *buf, size_t size)
{
	int fd = open(vpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		buf[0] = '\0';
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!header_safe(buf, strlen(buf)))
		buf[0] = '\0';
}

/* Record the answer's validator beside a part started from byte 0 (or
 * remove the old one: without a validator the part is never resumed). */
static void validator_write(const struct xfer *x)
{
	const char *v = x->etag[0] ? x->etag : x->lastmod;
	int fd;

	unlink(x->vpath);
	if (!v[0])
		return;
	fd = open(x->vpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
				    O_NOFOLLOW,
		  0644);
	if (fd < 0)
		return;
	if (util_write_all(fd, v, strlen(v)) != 0 ||
	    util_write_all(fd, "\n", 1) != 0) {
		close(fd);
		unlink(x->vpath);
		return;
	}
	close(fd);
}

/* Is line (n bytes, CRLF included) the header name (with its ':')? Its
 * value, trimmed, into *v and *vn. */
static int header_is(const char *line, size_t n, const char *name,
		     const char **v, size_t *vn)
{
	size_t k = strlen(name);

	if (n < k || strncasecmp(line, name, k) != 0)
		return 0;
	line += k;
	n -= k;
	while (n > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n' ||
			 line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	*v = line;
	*vn = n;
	return 1;
}

/* Each header line of each answer (a redirect's too: a status line starts
 * the next answer afresh). */
static size_t on_header(char *p, size_t size, size_t nitems, void *user)
{
	struct xfer *x = user;
	size_t n = size * nitems, vn;
	const char *v;

	if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		x->etag[0] = x->lastmod[0] = '\0';
		x->crange = -1;
	} else if (header_is(p, n, "etag:", &v, &vn)) {
		/* a weak ETag cannot make a Range conditional (RFC 9110
		   13.1.5): Last-Modified then */
		if (!(vn >= 2 && v[0] == 'W' && v[1] == '/') &&
		    header_safe(v, vn))
			snprintf(x->etag, sizeof(x->etag), "%.*s", (int)vn, v);
	} else if (header_is(p, n, "last-modified:", &v, &vn)) {
		if (header_safe(v, vn))
			snprintf(x->lastmod, sizeof(x->lastmod), "%.*s",
				 (int)vn, v);
	} else if (header_is(p, n, "content-range:", &v, &vn)) {
		if (vn > 6 && strncmp(v, "bytes ", 6) == 0 && v[6] >= '0' &&
		    v[6] <= '9')
			x->crange = strtoll(v + 6, NULL, 10);
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *user)
{
	struct xfer *x = user;
	size_t n = size * nmemb;

	if (!x->checked) {
		curl_off_t len = -1;

		x->checked = 1;
		mc.easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &x->status);
		mc.easy_getinfo(x->c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
		if (x->status == 200 && x->base > 0) {
			/* the server ignored Range, or If-Range found the
			   file changed: the whole file again */
			if (ftruncate(x->fd, 0) != 0) {
				x->werr = errno;
				return 0;
			}
			x->base = 0;
			x->restart = 1;
		}
		if (x->status == 206 && x->crange != x->base) {
			x->bad_range = 1; /* bytes for another offset */
			return 0;
		}
		if ((x->status == 200 || x->status == 206) && len >= 0)
			x->total = x->base + (long long)len;
		if (x->total > x->bound) {
			x->toobig = 1; /* announced too big: nothing written */
			return 0;
		}
		if (x->status == 200)
			validator_write(x); /* a part starting at byte 0 */
	}
	if (x->status != 200 && x->status != 206)
		return n; /* an error page: read and dropped */
	if (x->base + x->wrote + (long long)n > x->bound) {
		x->toobig = 1; /* an endless answer: stopped at the bound */
		return 0;
	}
	if (util_write_all(x->fd, p, n) != 0) {
		x->werr = errno ? errno : EIO;
		return 0; /* curl stops with CURLE_WRITE_ERROR */
	}
	x->wrote += (long long)n;
	return n;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = user;
	double now = util_now_ms();

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (x->o && x->o->progress && x->checked &&
	    now - x->last_ms >= MODEL_PROGRESS_MS) {
		x->last_ms = now;
		x->o->progress(x->o->user, x->base + x->wrote, x->total);
	}
	return 0;
}

/* The host of url for messages ("" when it has none). */
static void url_host(const char *url, char *out, size_t size)
{
	const char *s = strstr(url, "://"), *e;
	size_t n;

	s = s ? s + 3 : url;
	e = s + strcspn(s, "/:?#");
	n = (size_t)(e - s) < size - 1 ? (size_t)(e - s) : size - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

enum xfer_outcome { X_DONE, X_RETRY, X_FAIL };

/*
 * One HTTP transfer of url onto the part file (resuming from its size).
 * X_DONE: the file is complete; X_RETRY: cut in the middle (resume);
 * X_FAIL: *rc and out->error say why.
 */
static enum xfer_outcome transfer(const char *url, int fd, const char *vpath,
				  long long bound, const cairn_pull_opts *o,
				  cairn_pull_result *out, int *rc)
{
	struct xfer x;
	struct stat st;
	struct curl_slist *hdrs = NULL;
	char range[48], host[256], ifr[MODEL_VALIDATOR_MAX + 16];
	char v[MODEL_VALIDATOR_MAX];
	const char *stall = getenv("CAIRN_PULL_STALL_S");
	long stall_s = stall && atol(stall) > 0 ? atol(stall) : MODEL_STALL_S;
	CURLcode cc;
	int https = strncmp(url, "https://", 8) == 0;

	memset(&x, 0, sizeof(x));
	x.fd = fd;
	x.o = o;
	x.vpath = vpath;
	x.bound = bound;
	x.crange = -1;
	if (fstat(fd, &st) != 0) {
		*rc = CAIRN_IO;
		snprintf(out->error, sizeof(out->error), "cannot stat the "
			 "partial file: %s", strerror(errno));
		return X_FAIL;
	}
	x.base = (long long)st.st_size;
	v[0] = '\0';
	if (x.base > 0) {
		validator_read(vpath, v, sizeof(v));
		if (!v[0]) {
			/* nothing tells whether the server's file is still the
			   one the part began: never splice, start again */
			if (ftruncate(fd, 0) != 0) {
				*rc = CAIRN_IO;
				snprintf(out->error, sizeof(out->error),
					 "cannot truncate the partial file: "
					 "%s", strerror(errno));
				return X_FAIL;
			}
			x.base = 0;
		}
	}
	x.c = mc.easy_init();
	if (!x.c) {
		*rc = CAIRN_NOMEM;
		snprintf(out->error, sizeof(out->error), "out of memory");
		return X_FAIL;
	}
	mc.easy_setopt(x.c, CURLOPT_URL, url);
	mc.easy_setopt(x.c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* Hugging Face answers resolve/ with a redirect to its CDN; never
	   from https down to http */
	mc.easy_setopt(x.c, CURLOPT_REDIR_PROTOCOLS_STR,
		       https ? "https" : "http,https");
	mc.easy_setopt(x.c, CURLOPT_FOLLOWLOCATION, 1L);
	mc.easy_setopt(x.c, CURLOPT_MAXREDIRS, 10L);
	mc.easy_setopt(x.c, CURLOPT_NOSIGNAL, 1L);
	mc.easy_setopt(x.c, CURLOPT_CONNECTTIMEOUT_MS, (long)MODEL_CONNECT_MS);
	mc.easy_setopt(x.c, CURLOPT_LOW_SPEED_LIMIT, (long)MODEL_LOW_SPEED_BPS);
	mc.easy_setopt(x.c, CURLOPT_LOW_SPEED_TIME, stall_s);
	mc.easy_setopt(x.c, CURLOPT_HEADERFUNCTION, on_header);
	mc.easy_setopt(x.c, CURLOPT_HEADERDATA, &x);
	mc.easy_setopt(x.c, CURLOPT_USERAGENT, "cairn/" CAIRN_VERSION);
	mc.easy_setopt(x.c, CURLOPT_WRITEFUNCTION, on_body);
	mc.easy_setopt(x.c, CURLOPT_WRITEDATA, &x);
	mc.easy_setopt(x.c, CURLOPT_XFERINFOFUNCTION, on_progress);
	mc.easy_setopt(x.c, CURLOPT_XFERINFODATA, &x);
	mc.easy_setopt(x.c, CURLOPT_NOPROGRESS, 0L);
	if (x.base > 0) {
		/* our own Range header (not CURLOPT_RESUME_FROM): a 200 reply
		   is then ours to handle, by starting again */
		snprintf(range, sizeof(range), "%lld-", x.base);
		mc.easy_setopt(x.c, CURLOPT_RANGE, range);
		/* only if the file is still the one the part began (RFC 9110
		   13.1.5): else the server sends it whole (200) */
		snprintf(ifr, sizeof(ifr), "If-Range: %s", v);
		hdrs = mc.slist_append(NULL, ifr);
		if (!hdrs) {
			mc.easy_cleanup(x.c);
			*rc = CAIRN_NOMEM;
			snprintf(out->error, sizeof(out->error),
				 "out of memory");
			return X_FAIL;
		}
		mc.easy_setopt(x.c, CURLOPT_HTTPHEADER, hdrs);
		if (!out->resumed_from)
			out->resumed_from = x.base;
	}
	cc = mc.easy_perform(x.c);
	if (!x.checked)
		mc.easy_getinfo(x.c, CURLINFO_RESPONSE_CODE, &x.status);
	mc.easy_cleanup(x.c);
	if (hdrs)
		mc.slist_free_all(hdrs);
	out->transfers++;
	if (x.restart)
		out->resumed_from = 0;
	url_host(url, host, sizeof(host));
	if (x.werr) {
		*rc = CAIRN_IO;
		snprintf(out->error, sizeof(out->error),
			 "%s writing the model into '%s' (%lld bytes kept: "
			 "free some space and run the same pull again to "
			 "resume)",
			 x.werr == ENOSPC ? "disk full" : strerror(x.werr),
			 out->path, x.base + x.wrote);
		return X_FAIL;
	}
	if (x.toobig) {
		*rc = CAIRN_TOOBIG;
		if (x.total > bound)
			snprintf(out->error, sizeof(out->error),
				 "%s announced %lld bytes, more than the "
				 "bound of %lld for this model: nothing kept "
				 "(--max-size BYTES allows more)",
				 host, x.total, bound);
		else
			snprintf(out->error, sizeof(out->error),
				 "%s sent more than %lld bytes, the bound for "
				 "this model: the download is removed "
				 "(--max-size BYTES allows more)",
				 host, bound);
		return X_FAIL;
	}
	if (x.bad_range || (x.status == 416 && x.base > 0)) {
		/* the part is not a prefix of this file: start again */
		if (ftruncate(fd, 0) != 0) {
			*rc = CAIRN_IO;
			snprintf(out->error, sizeof(out->error), "cannot "
				 "truncate the partial file: %s",
				 strerror(errno));
			return X_FAIL;
		}
		unlink(vpath);
		out->resumed_from = 0;
		return X_RETRY;
	}
	if (x.status >= 400) {
		*rc = x.status == 404 ? CAIRN_NOTFOUND : CAIRN_IO;
		snprintf(out->error, sizeof(out->error),
			 "'%s' answered HTTP %ld%s", url, x.status,
			 x.status == 404 ? " (not found: is the name or URL "
					   "right?)"
			 : x.status == 401 || x.status == 403
				 ? " (the file is gated or private)"
				 : "");
		return X_FAIL;
	}
	switch (cc) {
	case CURLE_OK:
		if (x.status != 200 && x.status != 206) {
			*rc = CAIRN_IO;
			snprintf(out->error, sizeof(out->error),
				 "'%s' answered HTTP %ld, not a file", url,
				 x.status);
			return X_FAIL;
		}
		if (x.total > 0 && x.base + x.wrote < x.total)
			return X_RETRY;
		out->size = x.base + x.wrote;
		if (o && o->progress)
			o->progress(o->user, out->size, out->size);
		return X_DONE;
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_OPERATION_TIMEDOUT:
		if (x.status == 0 && cc == CURLE_OPERATION_TIMEDOUT &&
		    x.wrote == 0 && !x.checked)
			break; /* never connected: no network */
		snprintf(out->error, sizeof(out->error),
			 "the transfer from %s was cut after %lld bytes (%s)",
			 host, x.base + x.wrote, mc.easy_strerror(cc));
		return X_RETRY;
	default:
		break;
	}
	*rc = CAIRN_IO;
	if (cc == CURLE_COULDNT_RESOLVE_HOST || cc == CURLE_COULDNT_CONNECT ||
	    cc == CURLE_OPERATION_TIMEDOUT || cc == CURLE_COULDNT_RESOLVE_PROXY)
		snprintf(out->error, sizeof(out->error),
			 "cannot reach %s (%s): no network? Set HF_ENDPOINT "
			 "to a mirror, or download the file yourself and give "
			 "its path to 'cairn reindex --provider gguf --model'",
			 host, mc.easy_strerror(cc));
	else
		snprintf(out->error, sizeof(out->error), "downloading '%s': %s%s",
			 url, mc.easy_strerror(cc),
			 cc == CURLE_PEER_FAILED_VERIFICATION ||
				 cc == CURLE_SSL_CACERT_BADFILE
			 ? " (are Debian's ca-certificates installed?)"
			 : "");
	return X_FAIL;
}

/* ----------------------------------------------------------------- pull */

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return s[64] == '\0';
}

static void lower_hex(const char *in, char out[65])
{
	size_t i;

	for (i = 0; i < 64; i++)
		out[i] = (in[i] >= 'A' && in[i] <= 'F') ? (char)(in[i] + 32)
							 : in[i];
	out[64] = '\0';
}

/* The name a URL's file is kept under: its last path part less ".gguf". */
static int name_of_url(const char *url, char *name, size_t size)
{
	const char *s = url + strcspn(url, "?#"), *b = s;
	size_t n;

	while (b > url && b[-1] != '/')
		b--;
	n = (size_t)(s - b);
	if (n > 5 && strncmp(s - 5, ".gguf", 5) == 0)
		n -= 5;
	if (n == 0 || n >= size)
		return -1;
	memcpy(name, b, n);
	name[n] = '\0';
	return model_name_valid(name) ? 0 : -1;
}

/* Is the file at path a GGUF file (its first four bytes)? */
static int looks_gguf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return 0;
	ok = read(fd, magic, 4) == 4 && memcmp(magic, "GGUF", 4) == 0;
	close(fd);
	return ok;
}

/* Write NAME.json through a temporary file and rename(). */
static int write_manifest(const char *dir, const cairn_pull_result *r,
			  int pinned, const char *catalogue_name)
{
	struct sbuf sb = SBUF_INIT;
	char path[4200], tmp[4300], now[32];
	int fd, rc = CAIRN_IO;

	util_now_iso(now, sizeof(now));
	sbuf_adds(&sb, "{\"name\":");
	json_add_strz(&sb, r->name);
	sbuf_adds(&sb, ",\"file\":");
	json_add_strz(&sb, strrchr(r->path, '/') ? strrchr(r->path, '/') + 1
						  : r->path);
	sbuf_adds(&sb, ",\"source\":");
	json_add_strz(&sb, r->url);
	sbuf_adds(&sb, ",\"catalogue\":");
	if (catalogue_name)
		json_add_strz(&sb, catalogue_name);
	else
		sbuf_adds(&sb, "null");
	sbuf_addf(&sb, ",\"sha256\":\"%s\",\"pinned\":%s,\"size\":%lld,"
		       "\"pulled\":\"%s\"}\n",
		  r->sha256, pinned ? "true" : "false", r->size, now);
	if (sb.err || model_file(path, sizeof(path), dir, r->name, ".json") ||
	    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >=
		    (int)sizeof(tmp)) {
		sbuf_release(&sb);
		return CAIRN_NOMEM;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (util_write_all(fd, sb.buf, sb.len) == 0 && fsync(fd) == 0)
			rc = CAIRN_OK;
		close(fd);
		if (rc == CAIRN_OK && rename(tmp, path) != 0)
			rc = CAIRN_IO;
		if (rc)
			unlink(tmp);
	}
	sbuf_release(&sb);
	return rc;
}

/* What to fetch and under which name: a catalogue entry (*e, its URL on
 * HF_ENDPOINT) or an http(s) URL (named by opts->name or the URL). */
static int pull_source(const char *what, const cairn_pull_opts *opts,
		       const cairn_model_entry **e, cairn_pull_result *out)
{
	*e = cairn_model_lookup(what);
	if (*e) {
		const char *ep = getenv("HF_ENDPOINT");
		size_t el;

		if (!ep || !*ep)
			ep = MODEL_DEFAULT_ENDPOINT;
		el = strlen(ep);
		while (el > 0 && ep[el - 1] == '/')
			el--;
		if (snprintf(out->url, sizeof(out->url), "%.*s/%s/resolve/main/%s",
			     (int)el, ep, (*e)->repo, (*e)->file) >=
		    (int)sizeof(out->url)) {
			snprintf(out->error, sizeof(out->error), "HF_ENDPOINT "
				 "is too long");
			return CAIRN_INVALID;
		}
		snprintf(out->name, sizeof(out->name), "%s", (*e)->name);
	} else if (strncmp(what, "https://", 8) == 0 ||
		   strncmp(what, "http://", 7) == 0) {
		if (strlen(what) >= sizeof(out->url)) {
			snprintf(out->error, sizeof(out->error), "the URL is "
				 "too long");
			return CAIRN_INVALID;
		}
		snprintf(out->url, sizeof(out->url), "%s", what);
		if (opts && opts->name) {
			if (!model_name_valid(opts->name)) {
				snprintf(out->error, sizeof(out->error),
					 "'%s' is not a model name (letters, "
					 "digits, . _ -)", opts->name);
				return CAIRN_INVALID;
			}
			snprintf(out->name, sizeof(out->name), "%s",
				 opts->name);
		} else if (name_of_url(what, out->name, sizeof(out->name))) {
			snprintf(out->error, sizeof(out->error), "cannot name "
				 "a model after '%s': give --name", what);
			return CAIRN_INVALID;
		}
	} else {
		snprintf(out->error, sizeof(out->error), "unknown model '%s': "
			 "give a name from 'cairn model list' or an https:// "
			 "URL of a .gguf file", what);
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

/* The model is there already (st): check it against the pin and the
 * manifest, fetch nothing, record it if it was put there by hand. */
static int pull_existing(const char *dir, const char *want,
			 const cairn_model_entry *e, const struct stat *st,
			 cairn_pull_result *out)
{
	char have[65], got[65];

	manifest_sha(dir, out->name, have);
	if (model_sha256_file(out->path, got) != 0) {
		snprintf(out->error, sizeof(out->error), "cannot read "
			 "'%s': %s", out->path, strerror(errno));
		return CAIRN_IO;
	}
	if ((want[0] && strcmp(got, want) != 0) ||
	    (have[0] && strcmp(got, have) != 0)) {
		snprintf(out->error, sizeof(out->error),
			 "'%s' is there but its SHA-256 is %s, not %s: "
			 "'cairn model rm %s' and pull again",
			 out->path, got, want[0] ? want : have,
			 out->name);
		return CAIRN_MISMATCH;
	}
	memcpy(out->sha256, got, 65);
	out->size = (long long)st->st_size;
	out->already = 1;
	out->pinned = want[0] != 0;
	if (!have[0]) /* put there by hand: record it now */
		(void)write_manifest(dir, out, out->pinned,
				     e ? e->name : NULL);
	return CAIRN_OK;
}

/* Download out->url onto the part file (appending: a cut transfer
 * resumes), up to MODEL_TRIES transfers with a doubling back-off. */
static int pull_download(const char *dir, const char *part,
			 const char *vpath, long long bound,
			 const cairn_pull_opts *opts, cairn_pull_result *out)
{
	long wait = MODEL_BACKOFF_MS;
	int fd, rc, t;
	struct stat st;

	pthread_once(&mc_once, mc_load);
	if (mc.why[0]) {
		snprintf(out->error, sizeof(out->error), "cannot download: %s",
			 mc.why);
		return CAIRN_ERROR;
	}
	if (util_mkdir_p(dir, 0700) != 0) {
		snprintf(out->error, sizeof(out->error), "cannot make '%s': %s",
			 dir, strerror(errno));
		return CAIRN_IO;
	}
	fd = open(part, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(out->error, sizeof(out->error), "cannot write '%s': %s",
			 part, strerror(errno));
		return CAIRN_IO;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		/* two pulls appending to one part would interleave their bytes */
		snprintf(out->error, sizeof(out->error), "another pull of '%s' "
			 "is running (it holds '%s')", out->name, part);
		close(fd);
		return CAIRN_BUSY;
	}
	rc = CAIRN_IO;
	for (t = 0; t < MODEL_TRIES; t++) {
		enum xfer_outcome x;

		if (t > 0) {
			struct timespec ts = { wait / 1000,
					       (wait % 1000) * 1000000L };

			while (nanosleep(&ts, &ts) != 0)
				;
			wait *= 2;
		}
		x = transfer(out->url, fd, vpath, bound, opts, out, &rc);
		if (x == X_DONE) {
			rc = CAIRN_OK;
			break;
		}
		if (x == X_FAIL)
			break;
		rc = CAIRN_IO; /* X_RETRY: out->error says where it was cut */
	}
	if (rc == CAIRN_IO && t == MODEL_TRIES)
		snprintf(out->error + strlen(out->error),
			 sizeof(out->error) - strlen(out->error),
			 "; gave up after %d transfers: run the same pull "
			 "again to resume", MODEL_TRIES);
	if (rc == CAIRN_OK && fsync(fd) != 0) {
		rc = CAIRN_IO;
		snprintf(out->error, sizeof(out->error), "%s writing '%s'",
			 errno == ENOSPC ? "disk full" : strerror(errno), part);
	}
	if (rc == CAIRN_TOOBIG || (rc && fstat(fd, &st) == 0 &&
				   st.st_size == 0)) {
		/* nothing came, or what came is no model: leave nothing */
		unlink(part);
		unlink(vpath);
	}
	close(fd);
	return rc;
}

/* The part file is complete: check its hash and magic, rename it into
 * place and write its manifest. */
static int pull_finish(const char *dir, const char *part, const char *vpath,
		       const char *want, const cairn_model_entry *e,
		       cairn_pull_result *out)
{
	out->error[0] = '\0';
	if (model_sha256_file(part, out->sha256) != 0) {
		snprintf(out->error, sizeof(out->error), "cannot read '%s': %s",
			 part, strerror(errno));
		return CAIRN_IO;
	}
	if (want[0] && strcmp(out->sha256, want) != 0) {
		snprintf(out->error, sizeof(out->error),
			 "the download's SHA-256 is %s, not the pinned %s: "
			 "removed; check the URL and the hash", out->sha256,
			 want);
		unlink(part);
		return CAIRN_MISMATCH;
	}
	if (!looks_gguf(part)) {
		snprintf(out->error, sizeof(out->error), "'%s' did not send a "
			 "GGUF file (no GGUF magic): removed", out->url);
		unlink(part);
		return CAIRN_CORRUPT;
	}
	if (rename(part, out->path) != 0) {
		snprintf(out->error, sizeof(out->error), "cannot rename '%s': %s",
			 part, strerror(errno));
		return CAIRN_IO;
	}
	unlink(vpath);
	out->pinned = want[0] != 0;
	if (write_manifest(dir, out, out->pinned, e ? e->name : NULL)) {
		snprintf(out->error, sizeof(out->error), "cannot record the "
			 "model in '%s/%s.json': %s", dir, out->name,
			 strerror(errno));
		return CAIRN_IO;
	}
	return CAIRN_OK;
}

int cairn_model_pull(const char *what, const cairn_pull_opts *opts,
		     cairn_pull_result *out)
{
	const cairn_model_entry *e;
	const char *pin = opts ? opts->sha256 : NULL;
	char dir[4096], part[4300], vpath[4320], want[65] = "";
	long long bound;
	int rc;
	struct stat st;

	if (!out)
		return CAIRN_INVALID;
	memset(out, 0, sizeof(*out));
	if (!what || !*what) {
		snprintf(out->error, sizeof(out->error), "give a model name or "
			 "URL (cairn model list shows the names)");
		return CAIRN_INVALID;
	}
	if (pin) {
		if (!is_hex64(pin)) {
			snprintf(out->error, sizeof(out->error), "--sha256 "
				 "takes 64 hex digits");
			return CAIRN_INVALID;
		}
		lower_hex(pin, want);
	}
	if ((rc = pull_source(what, opts, &e, out)))
		return rc;
	rc = resolve_dir(opts ? opts->dir : NULL, dir, sizeof(dir));
	if (rc) {
		snprintf(out->error, sizeof(out->error), "no model directory: "
			 "set CAIRN_MODEL_DIR or HOME");
		return rc;
	}
	if (model_file(out->path, sizeof(out->path), dir, out->name, ".gguf") ||
	    model_file(part, sizeof(part), dir, out->name, ".gguf.part") ||
	    model_file(vpath, sizeof(vpath), dir, out->name,
		       ".gguf.part.if-range")) {
		snprintf(out->error, sizeof(out->error), "the model "
			 "directory's path is too long");
		return CAIRN_TOOBIG;
	}
	/* there already: check it, fetch nothing */
	if (stat(out->path, &st) == 0 && S_ISREG(st.st_mode))
		return pull_existing(dir, want, e, &st, out);
	if (opts && opts->max_size > 0)
		bound = opts->max_size;
	else if (e)
		bound = e->size + (long long)(e->size * MODEL_SIZE_MARGIN);
	else
		bound = MODEL_MAX_URL_BYTES;
	if ((rc = pull_download(dir, part, vpath, bound, opts, out)))
		return rc;
	return pull_finish(dir, part, vpath, want, e, out);
}
