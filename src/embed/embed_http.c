/*
 * embed_http.c -- the "http" provider: an OpenAI-compatible embeddings
 * endpoint (POST {url}/embeddings {"model", "input": [...]}), as served by
 * Ollama, llama.cpp's server, TEI and vLLM, through libcurl.
 *
 * Layer: a provider behind embed.c, on libcurl and json.h.
 * Holds: the request builder, the retry loop, the reply checks.
 *
 * Requests carry at most HTTP_BATCH texts. 429, 5xx and connection
 * failures are retried HTTP_RETRIES times with exponential backoff
 * (HTTP_BACKOFF_MS, doubling); a timeout, any other 4xx, a reply that is
 * not JSON, or one with the wrong count or width is an error at once. The
 * API key is read from the environment variable the settings name (never
 * stored); the width is learned at open from one short request, unless
 * the caller knows it (embed_config.dim: the stored vectors' identity).
 *
 * libcurl is loaded with dlopen() when the first HTTP provider opens, not
 * linked: it pulls in some thirty libraries (TLS, Kerberos, LDAP, ...), and
 * every `cairn` process -- the hook on each prompt above all -- would pay
 * for loading them. A missing libcurl is a clear error, not a crash.
 *
 * Must never: retry without bound, print the API key, or accept a reply
 * whose vectors do not match the inputs one for one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#define CURL_DISABLE_TYPECHECK /* the calls below go through pointers */
#include <curl/curl.h>

#include "embed.h"
#include "internal.h"
#include "json.h"

#define HTTP_BATCH 64                   /* texts per request */
#define HTTP_RETRIES 4                  /* retries after the first try */
#define HTTP_BACKOFF_MS 250             /* first wait; doubles */
#define HTTP_DEFAULT_TIMEOUT_MS 30000
#define HTTP_MAX_REPLY ((size_t)64 << 20) /* 64 MiB */
#define HTTP_URL_MAX 2048

#define HTTP_LIBCURL "libcurl.so.4" /* Debian's libcurl4 (ABI 4) */

/* The libcurl entry points this file uses, resolved once. */
static struct {
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	CURLcode (*easy_perform)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	char why[256]; /* "" when loaded */
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_load(void)
{
	static const char *const names[] = {
		"curl_easy_init",    "curl_easy_cleanup",  "curl_easy_reset",
		"curl_easy_setopt",  "curl_easy_getinfo",  "curl_easy_perform",
		"curl_easy_strerror", "curl_slist_append", "curl_slist_free_all",
	};
	void **const slots[] = {
		(void **)&cu.easy_init,     (void **)&cu.easy_cleanup,
		(void **)&cu.easy_reset,    (void **)&cu.easy_setopt,
		(void **)&cu.easy_getinfo,  (void **)&cu.easy_perform,
		(void **)&cu.easy_strerror, (void **)&cu.slist_append,
		(void **)&cu.slist_free_all,
	};

	(void)util_dl_syms(HTTP_LIBCURL, "Debian's libcurl4", names, slots,
			   ARRAY_SIZE(names), cu.why, sizeof(cu.why));
}

/* Load libcurl once; 0, or -1 with the reason in err. */
static int cu_ready(char *err, size_t errsize)
{
	pthread_once(&cu_once, cu_load);
	if (cu.why[0]) {
		snprintf(err, errsize, "HTTP embedding provider: %s", cu.why);
		return -1;
	}
	return 0;
}

#define curl_easy_init cu.easy_init
#define curl_easy_cleanup cu.easy_cleanup
#define curl_easy_reset cu.easy_reset
#undef curl_easy_setopt  /* curl.h maps these to themselves as macros */
#undef curl_easy_getinfo
#define curl_easy_setopt cu.easy_setopt
#define curl_easy_getinfo cu.easy_getinfo
#define curl_easy_perform cu.easy_perform
#define curl_easy_strerror cu.easy_strerror
#define curl_slist_append cu.slist_append
#define curl_slist_free_all cu.slist_free_all

struct http_model {
	char url[HTTP_URL_MAX];
	char *model;
	char *auth;       /* "Authorization: Bearer …" or NULL */
	long timeout_ms;
	int dim;          /* 0 until learned */
	double deadline;  /* monotonic ms the requests must end by; 0: none */
};

struct reply {
	struct sbuf body;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct reply *r = user;
	size_t n = size * nmemb;

	if (r->body.len + n > HTTP_MAX_REPLY)
		return 0; /* curl reports a write error */
	sbuf_add(&r->body, ptr, n);
	return r->body.err ? 0 : n;
}

static void sleep_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The message for a failed reply: status and the start of its body. */
static void http_message(char *err, size_t errsize, const char *url,
			 long status, const struct reply *r,
			 const struct http_model *m)
{
	char snippet[201];
	size_t i, n = r->body.len < 200 ? r->body.len : 200;

	for (i = 0; i < n; i++) {
		char c = r->body.buf[i];

		snippet[i] = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
	}
	snippet[n] = '\0';
	snprintf(err, errsize, "embedding server '%s' answered HTTP %ld%s%s%s",
		 url, status,
		 (status == 401 || status == 403)
			 ? (m->auth ? " (is the API key right?)"
				    : " (no API key set: see --api-key-env)")
			 : "",
		 n ? ": " : "", snippet);
}

/* POST body; on success r holds a 2xx reply. */
static int post(struct http_model *m, const char *body, struct reply *r,
		char *err, size_t errsize)
{
	struct curl_slist *hdr = NULL;
	CURL *c = NULL;
	long status = 0, wait = HTTP_BACKOFF_MS;
	int attempt, tries = 0, rc = CAIRN_IO;

	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	if (hdr && m->auth) {
		struct curl_slist *h2 = curl_slist_append(hdr, m->auth);

		if (!h2) {
			curl_slist_free_all(hdr);
			hdr = NULL;
		} else {
			hdr = h2;
		}
	}
	c = curl_easy_init();
	if (!hdr || !c) {
		snprintf(err, errsize, "out of memory");
		rc = CAIRN_NOMEM;
		goto out;
	}
	for (attempt = 0; attempt <= HTTP_RETRIES; attempt++) {
		CURLcode cc;
		int retry = 0;
		long tmo = m->timeout_ms;

		if (m->deadline > 0) {
			/* a budget (recall's): no try past it */
			double left = m->deadline - util_now_ms();

			if (left < 1) {
				if (attempt == 0)
					snprintf(err, errsize, "embedding "
						 "server '%s': no time left",
						 m->url);
				break;
			}
			if ((double)tmo > left)
				tmo = (long)left;
		}
		sbuf_reset(&r->body);
		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, m->url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, tmo);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, tmo);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_USERAGENT, "cairn/" CAIRN_VERSION);
		cc = curl_easy_perform(c);
		tries++;
		if (cc == CURLE_OK) {
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
			if (status >= 200 && status < 300) {
				rc = CAIRN_OK;
				goto out;
			}
			http_message(err, errsize, m->url, status, r, m);
			if (status == 429 || status >= 500) {
				retry = 1;
			} else {
				rc = CAIRN_INVALID;
				goto out;
			}
		} else if (cc == CURLE_OPERATION_TIMEDOUT) {
			snprintf(err, errsize, "embedding server '%s' did not "
					       "answer within %ld ms",
				 m->url, tmo);
			rc = CAIRN_IO;
			goto out;
		} else if (cc == CURLE_COULDNT_CONNECT ||
			   cc == CURLE_COULDNT_RESOLVE_HOST ||
			   cc == CURLE_GOT_NOTHING || cc == CURLE_RECV_ERROR ||
			   cc == CURLE_SEND_ERROR || cc == CURLE_PARTIAL_FILE) {
			snprintf(err, errsize, "embedding server '%s': %s",
				 m->url, curl_easy_strerror(cc));
			retry = 1;
		} else {
			snprintf(err, errsize, "embedding server '%s': %s",
				 m->url,
				 cc == CURLE_WRITE_ERROR
					 ? "reply too large"
					 : curl_easy_strerror(cc));
			goto out;
		}
		if (!retry || attempt == HTTP_RETRIES)
			break;
		if (m->deadline > 0 && util_now_ms() + (double)wait >= m->deadline)
			break; /* the wait would pass the budget */
		sleep_ms(wait);
		wait *= 2;
	}
	/* retries exhausted: err holds the last failure */
	{
		size_t len = strlen(err);

		if (tries > 0)
			snprintf(err + len, errsize > len ? errsize - len : 0,
				 " (after %d tr%s%s)", tries,
				 tries == 1 ? "y" : "ies",
				 tries <= HTTP_RETRIES ? ", out of time" : "");
	}
	rc = CAIRN_IO;
out:
	curl_easy_cleanup(c);
	curl_slist_free_all(hdr);
	return rc;
}

/* Embed up to HTTP_BATCH texts in one request into out. */
static int embed_batch(struct http_model *m, const char *const *texts,
		       size_t n, float *out, int *dim_out, char *err,
		       size_t errsize)
{
	struct sbuf req = SBUF_INIT;
	struct reply r;
	struct json *root = NULL;
	const struct json *data, *item;
	unsigned char *seen = NULL;
	size_t i, count = 0;
	int rc, dim = m->dim;

	memset(&r, 0, sizeof(r));
	sbuf_adds(&req, "{\"model\":");
	json_add_strz(&req, m->model);
	sbuf_adds(&req, ",\"input\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(&req, ',');
		json_add_strz(&req, texts[i]);
	}
	sbuf_adds(&req, "]}");
	seen = util_calloc(n, 1);
	if (req.err || !seen) {
		snprintf(err, errsize, "out of memory");
		rc = CAIRN_NOMEM;
		goto out;
	}
	rc = post(m, req.buf, &r, err, errsize);
	if (rc)
		goto out;
	rc = CAIRN_CORRUPT;
	if (json_parse(r.body.buf ? r.body.buf : "", r.body.len, &root, NULL,
		       0) != CAIRN_OK) {
		snprintf(err, errsize, "embedding server '%s' sent a reply "
				       "that is not JSON", m->url);
		goto out;
	}
	data = json_get(root, "data");
	if (!data || data->type != JSON_ARRAY) {
		snprintf(err, errsize, "embedding server '%s' sent no "
				       "\"data\" array", m->url);
		goto out;
	}
	if (data->len != n) {
		snprintf(err, errsize, "embedding server '%s' sent %zu vectors "
				       "for %zu texts", m->url, data->len, n);
		goto out;
	}
	for (item = data->child; item; item = item->next, count++) {
		const struct json *emb = json_get(item, "embedding"), *x;
		double idx;
		size_t at = count, j = 0;

		if (json_get_num(item, "index", &idx)) {
			if (idx < 0 || idx >= (double)n || idx != (size_t)idx) {
				snprintf(err, errsize, "embedding server '%s' "
						       "sent index %g for %zu "
						       "texts", m->url, idx, n);
				goto out;
			}
			at = (size_t)idx;
		}
		if (seen[at]) {
			snprintf(err, errsize, "embedding server '%s' sent "
					       "text %zu twice", m->url, at);
			goto out;
		}
		seen[at] = 1;
		if (!emb || emb->type != JSON_ARRAY || emb->len == 0 ||
		    emb->len > EMBED_MAX_DIM) {
			snprintf(err, errsize, "embedding server '%s': item %zu "
					       "has no usable \"embedding\" "
					       "array", m->url, count);
			goto out;
		}
		if (dim == 0)
			dim = (int)emb->len;
		if ((int)emb->len != dim) {
			snprintf(err, errsize, "embedding server '%s' sent a "
					       "%zu-wide vector; expected %d",
				 m->url, emb->len, dim);
			goto out;
		}
		for (x = emb->child; x; x = x->next, j++) {
			if (x->type != JSON_NUMBER) {
				snprintf(err, errsize, "embedding server '%s' "
						       "sent a non-number in "
						       "a vector", m->url);
				goto out;
			}
			if (out)
				out[at * (size_t)dim + j] = (float)x->num;
		}
	}
	if (dim_out)
		*dim_out = dim;
	rc = CAIRN_OK;
out:
	json_free(root);
	sbuf_release(&req);
	sbuf_release(&r.body);
	cairn_free(seen);
	return rc;
}

static int http_embed(void *impl, const char *const *texts, size_t n,
		      float *out, char *err, size_t errsize)
{
	struct http_model *m = impl;
	size_t i;
	int rc = CAIRN_OK;

	for (i = 0; rc == CAIRN_OK && i < n; i += HTTP_BATCH) {
		size_t k = n - i < HTTP_BATCH ? n - i : HTTP_BATCH;

		rc = embed_batch(m, texts + i, k, out + i * (size_t)m->dim,
				 NULL, err, errsize);
	}
	return rc;
}

static void http_budget(void *impl, long ms)
{
	struct http_model *m = impl;

	m->deadline = ms > 0 ? util_now_ms() + (double)ms : 0;
}

static void http_close(void *impl)
{
	struct http_model *m = impl;

	if (!m)
		return;
	cairn_free(m->model);
	if (m->auth) {
		memset(m->auth, 0, strlen(m->auth));
		cairn_free(m->auth);
	}
	cairn_free(m);
}

int embed_http_open(const struct embed_config *cfg, struct embed_provider *p,
		    char *err, size_t errsize)
{
	struct http_model *m = NULL;
	const char *base = cfg->url;
	const char *probe = "dimension probe";
	size_t len;
	int rc;

	if (!base || !*base) {
		snprintf(err, errsize, "the http provider needs a URL "
				       "(--url, e.g. http://127.0.0.1:11434/v1)");
		return CAIRN_INVALID;
	}
	if (strncmp(base, "http://", 7) != 0 &&
	    strncmp(base, "https://", 8) != 0) {
		snprintf(err, errsize, "embedding URL '%s' is not http(s)",
			 base);
		return CAIRN_INVALID;
	}
	if (cu_ready(err, errsize) != 0)
		return CAIRN_IO;
	m = util_calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	len = strlen(base);
	while (len > 0 && base[len - 1] == '/')
		len--;
	if (len >= 11 && strncmp(base + len - 11, "/embeddings", 11) == 0)
		snprintf(m->url, sizeof(m->url), "%.*s", (int)len, base);
	else
		snprintf(m->url, sizeof(m->url), "%.*s/embeddings", (int)len,
			 base);
	m->model = util_strdup(cfg->model);
	m->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms
					    : HTTP_DEFAULT_TIMEOUT_MS;
	if (!m->model) {
		http_close(m);
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	if (cfg->api_key_env && *cfg->api_key_env) {
		const char *key = getenv(cfg->api_key_env);
		struct sbuf sb = SBUF_INIT;

		if (!key || !*key) {
			http_close(m);
			snprintf(err, errsize, "environment variable '%s' (the "
					       "API key) is not set",
				 cfg->api_key_env);
			return CAIRN_INVALID;
		}
		sbuf_addf(&sb, "Authorization: Bearer %s", key);
		m->auth = sbuf_detach(&sb, NULL);
		if (!m->auth) {
			http_close(m);
			snprintf(err, errsize, "out of memory");
			return CAIRN_NOMEM;
		}
	}
	if (cfg->dim > 0 && cfg->dim <= EMBED_MAX_DIM) {
		/* the stored vectors say how wide: no probe (a hook would pay
		   for two requests); a reply of another width is an error */
		m->dim = cfg->dim;
	} else {
		rc = embed_batch(m, &probe, 1, NULL, &m->dim, err, errsize);
		if (rc) {
			http_close(m);
			return rc;
		}
	}
	memset(p, 0, sizeof(*p));
	p->impl = m;
	p->dim = m->dim;
	/* a served model has no file to hash: its id is its revision */
	snprintf(p->revision, sizeof(p->revision), "%s", cfg->model);
	snprintf(p->pooling, sizeof(p->pooling), "n/a");
	snprintf(p->name, sizeof(p->name), "%s", cfg->model);
	p->embed = http_embed;
	p->close = http_close;
	p->budget = http_budget;
	return CAIRN_OK;
}
