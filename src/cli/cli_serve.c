/*
 * cli_serve.c -- `cairn serve`: the review console, a small web server on
 * the loopback interface for the human who works the approval gate.
 *
 * Layer: top (a face, like cli.c and mcp.c). It talks to the store only
 * through the public calls of cairn.h, and reads the hook log and eval
 * history files of the store directory; no SQL here. HTTP is Debian's
 * libmicrohttpd, loaded with dlopen() on the first `cairn serve` so that
 * no other command pays for it. The page (src/cli/console/: HTML, CSS and
 * JavaScript written for cairn, no third-party code) is compiled in by
 * scripts/embed; the API is JSON under /api/.
 *
 * Safety (docs/console.md):
 *   - it listens on 127.0.0.1 unless --listen names another address, and
 *     then warns;
 *   - every start makes a new 128-bit token, printed in the URL's fragment
 *     (never sent by the browser) and written to .cairn/serve.url (0600);
 *     every /api/ call must carry it in the X-Cairn-Token header, compared
 *     in constant time;
 *   - the Host header must name the listen address (or localhost on
 *     loopback, or an IP literal on a wildcard address): a DNS-rebinding
 *     page's Host is its own name; an Origin header, when sent, must be
 *     this server's; a cross-site Sec-Fetch-Site is refused;
 *   - state changes are POST with a JSON body (Content-Type
 *     application/json, so a cross-origin form cannot send one and a
 *     fetch with the token header needs a CORS preflight this server never
 *     grants: it sends no Access-Control-* header at all);
 *   - a strict Content-Security-Policy (scripts and styles from this
 *     server only, no inline script), nosniff, no framing, no referrer;
 *     the page writes stored text with textContent only;
 *   - request bodies, headers and connections are bounded; errors are
 *     JSON {"error":{"code","message"}} with the matching status;
 *   - a connection that has not sent a whole request holds its place
 *     only while no one needs it: past SERVE_CONN_LIMIT live connections
 *     the one waiting longest for its request is cut, and one waiting
 *     SERVE_REQUEST_DEADLINE is cut when the next arrives (issue 31: 32
 *     connections trickling headers, each under the idle timeout, locked
 *     the owner out).
 *
 * Threads: libmicrohttpd runs every request on its one internal polling
 * thread, so the store handle is never used by two requests at once; the
 * main thread only waits for SIGINT or SIGTERM.
 *
 * Must never: answer an /api/ call without the token, write to the store
 * on GET, or put stored text into the page as markup.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "json.h"

#include "console_assets.h" /* generated: console_assets[] */

#define SERVE_LIBMHD "libmicrohttpd.so.12"     /* Debian's libmicrohttpd12 */
#define SERVE_MAX_BODY ((size_t)1 << 20)       /* 1 MiB of JSON per POST */
#define SERVE_MAX_IDS 500                      /* ids in one batch approve */
#define SERVE_CONN_MEMORY ((size_t)64 << 10)   /* per connection: headers, URL */
#define SERVE_CONN_LIMIT 32                    /* live connections kept */
/* libmicrohttpd's own limit: room above SERVE_CONN_LIMIT for the newcomer
 * whose arrival cuts a waiting one (conn_started) */
#define SERVE_CONN_HARD 64
#define SERVE_CONN_TIMEOUT 30                  /* seconds idle */
#define SERVE_REQUEST_DEADLINE 10.0            /* seconds to send a request */
#define SERVE_LIST_LIMIT 500                   /* records per list */
#define SERVE_HOOK_CALLS 100                   /* recent hook calls shown */
#define SERVE_HOOK_RECEIPTS 50                 /* of which with their receipt */
#define SERVE_RECEIPT_SCAN 500                 /* log lines a record page scans */
#define SERVE_LOG_TAIL ((long)1 << 20)         /* bytes of hook.log read */
#define SERVE_EVAL_FILE "eval.jsonl"           /* in the store directory */
#define SERVE_EVAL_RUNS 100                    /* latest runs shown */
#define SERVE_EVAL_MAX ((long)4 << 20)         /* bytes of it read */
#define SERVE_TOKEN_HEADER "X-Cairn-Token"

/* ------------------------------------------------------- libmicrohttpd */

static struct {
	struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t,
					   MHD_AcceptPolicyCallback, void *,
					   MHD_AccessHandlerCallback, void *,
					   ...);
	void (*stop_daemon)(struct MHD_Daemon *);
	struct MHD_Response *(*create_response_from_buffer)(
		size_t, void *, enum MHD_ResponseMemoryMode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *,
					       const char *, const char *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *,
					  unsigned int, struct MHD_Response *);
	void (*destroy_response)(struct MHD_Response *);
	const char *(*lookup_connection_value)(struct MHD_Connection *,
					       enum MHD_ValueKind,
					       const char *);
	const union MHD_ConnectionInfo *(*get_connection_info)(
		struct MHD_Connection *, enum MHD_ConnectionInfoType, ...);
} mhd;

static int mhd_load(char *why, size_t whysize)
{
	static const char *const names[] = {
		"MHD_start_daemon",		   "MHD_stop_daemon",
		"MHD_create_response_from_buffer", "MHD_add_response_header",
		"MHD_queue_response",		   "MHD_destroy_response",
		"MHD_lookup_connection_value",	   "MHD_get_connection_info",
	};
	void **const slots[] = {
		(void **)&mhd.start_daemon,
		(void **)&mhd.stop_daemon,
		(void **)&mhd.create_response_from_buffer,
		(void **)&mhd.add_response_header,
		(void **)&mhd.queue_response,
		(void **)&mhd.destroy_response,
		(void **)&mhd.lookup_connection_value,
		(void **)&mhd.get_connection_info,
	};

	return util_dl_syms(SERVE_LIBMHD, "Debian's libmicrohttpd12", names,
			    slots, ARRAY_SIZE(names), why, whysize);
}

/* ------------------------------------------------------------- state */

/* A live connection (conn_started to conn_closed). */
struct conn {
	struct MHD_Connection *c; /* libmicrohttpd's handle */
	int fd;                   /* its socket; -1 once cut */
	double since;             /* when it began waiting for a request (ms) */
	int busy;                 /* 1: a whole request came; answering it */
};

struct serve {
	struct conn conns[SERVE_CONN_HARD]; /* the live connections */
	size_t nconns;           /* of conns[] in use */
	cairn_db *db;            /* the workspace store */
	char *dir;               /* its .cairn directory */
	char token[33];          /* 128 bits as 32 hex digits */
	char host[300];          /* the Host a request must name: "addr:port" */
	char host_local[64];     /* "localhost:port" on loopback, else "" */
	int wildcard;            /* listening on 0.0.0.0 or ::: any IP literal Host */
	int port;                /* the bound port */
};

/* One request in progress (libmicrohttpd's con_cls). */
struct req {
	struct sbuf body;        /* the POST body so far */
	int too_big;             /* it passed SERVE_MAX_BODY */
};

static const char *hdr(struct MHD_Connection *c, const char *name)
{
	return mhd.lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	const char *v = mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
						    name);

	return v && *v ? v : NULL;
}

/* ----------------------------------------------------------- replies */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, const void *data, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = mhd.create_response_from_buffer(len, (void *)data,
					    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	mhd.add_response_header(r, "Content-Type", type);
	mhd.add_response_header(r, "Content-Security-Policy",
				"default-src 'none'; script-src 'self'; "
				"style-src 'self'; img-src 'self'; "
				"connect-src 'self'; base-uri 'none'; "
				"form-action 'none'; frame-ancestors 'none'");
	mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
	mhd.add_response_header(r, "X-Frame-Options", "DENY");
	mhd.add_response_header(r, "Referrer-Policy", "no-referrer");
	mhd.add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
	mhd.add_response_header(r, "Cross-Origin-Resource-Policy",
				"same-origin");
	mhd.add_response_header(r, "Cache-Control", "no-store");
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status,
				  struct sbuf *sb);

/* {"error":{"code":CODE,"message":...}} with this status */
static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status,
				   const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status,
				   const char *code, const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT, msg = SBUF_INIT;
	enum MHD_Result ret;
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	sbuf_adds(&sb, "{\"error\":{\"code\":");
	json_add_strz(&sb, code);
	sbuf_adds(&sb, ",\"message\":");
	json_add_strz(&sb, sbuf_str(&msg));
	sbuf_adds(&sb, "}}");
	sbuf_release(&msg);
	if (sb.err) {
		static const char nomem[] = "{\"error\":{\"code\":\"nomem\","
					    "\"message\":\"out of memory\"}}";

		sbuf_release(&sb);
		return reply(c, 500, "application/json", nomem,
			     sizeof(nomem) - 1);
	}
	ret = reply(c, status, "application/json; charset=utf-8", sb.buf,
		    sb.len);
	sbuf_release(&sb);
	return ret;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned status,
				  struct sbuf *sb)
{
	enum MHD_Result ret;

	if (sb->err)
		ret = reply_error(c, 500, "format",
				  "cannot format the answer: %s",
				  cairn_errstr(sb->err));
	else
		ret = reply(c, status, "application/json; charset=utf-8",
			    sb->buf ? sb->buf : "", sb->len);
	sbuf_release(sb);
	return ret;
}

/* A library error as an HTTP status and a JSON error. */
static enum MHD_Result reply_db(struct serve *s, struct MHD_Connection *c,
				int rc)
{
	unsigned st = 500;
	const char *code = "error";

	switch (rc) {
	case CAIRN_NOTFOUND: st = 404; code = "not_found"; break;
	case CAIRN_INVALID: st = 400; code = "invalid"; break;
	case CAIRN_TOOBIG: st = 413; code = "too_big"; break;
	case CAIRN_SECRET: st = 422; code = "secret"; break;
	case CAIRN_READONLY: st = 409; code = "file_backed"; break;
	case CAIRN_EXISTS: st = 409; code = "exists"; break;
	case CAIRN_BUSY: st = 503; code = "busy"; break;
	default: break;
	}
	return reply_error(c, st, code, "%s", cairn_errmsg(s->db));
}

/* ------------------------------------------------------------ checks */

/* Constant-time comparison of a presented token with ours. */
static int token_ok(const struct serve *s, const char *got)
{
	unsigned char diff = 0;
	size_t i, n = sizeof(s->token) - 1;

	if (!got || strlen(got) != n)
		return 0;
	for (i = 0; i < n; i++)
		diff |= (unsigned char)(got[i] ^ s->token[i]);
	return diff == 0;
}

/* Is host ("name:port") an IP literal with our port? (wildcard listen) */
static int host_ip_literal(const struct serve *s, const char *host)
{
	char name[64], want[16];
	const char *colon;
	unsigned char a[16];
	size_t n;

	snprintf(want, sizeof(want), ":%d", s->port);
	if (host[0] == '[') {
		colon = strstr(host, "]:");
		if (!colon || strcmp(colon + 1, want) != 0)
			return 0;
		n = (size_t)(colon - host - 1);
		if (n >= sizeof(name))
			return 0;
		memcpy(name, host + 1, n);
		name[n] = '\0';
		return inet_pton(AF_INET6, name, a) == 1;
	}
	colon = strrchr(host, ':');
	if (!colon || strcmp(colon, want) != 0)
		return 0;
	n = (size_t)(colon - host);
	if (n >= sizeof(name))
		return 0;
	memcpy(name, host, n);
	name[n] = '\0';
	return inet_pton(AF_INET, name, a) == 1;
}

static int host_ok(const struct serve *s, const char *host)
{
	if (!host)
		return 0;
	if (strcasecmp(host, s->host) == 0)
		return 1;
	if (s->host_local[0] && strcasecmp(host, s->host_local) == 0)
		return 1;
	return s->wildcard && host_ip_literal(s, host);
}

/* An Origin, when sent, must be http:// + a Host we accept. */
static int origin_ok(const struct serve *s, const char *origin)
{
	if (!origin)
		return 1;
	if (strncasecmp(origin, "http://", 7) != 0)
		return 0;
	return host_ok(s, origin + 7);
}

/* The interface language from Accept-Language: the first zh or en tag. */
static const char *pick_lang(const char *al)
{
	const char *p = al;

	while (p && *p) {
		p += strspn(p, " \t,");
		if (strncasecmp(p, "zh", 2) == 0 && (p[2] == '\0' ||
		    p[2] == '-' || p[2] == ',' || p[2] == ';'))
			return "zh";
		if (strncasecmp(p, "en", 2) == 0 && (p[2] == '\0' ||
		    p[2] == '-' || p[2] == ',' || p[2] == ';'))
			return "en";
		p = strchr(p, ',');
	}
	return "en";
}

/* ------------------------------------------------------------ files */

/*
 * The last `max_lines` lines of a file, reading at most `tail` bytes from
 * its end (a partial first line is dropped). Returns the line count and
 * fills *buf (caller frees with cairn_free()) and lines[] (pointers into
 * it, oldest first); 0 when the file is absent.
 */
static size_t read_tail(const char *path, long tail, char **buf,
			char **lines, size_t max_lines)
{
	struct sbuf sb = SBUF_INIT;
	char chunk[65536], *p, *nl;
	size_t n = 0, got, i, skip;
	long size;
	FILE *f;

	*buf = NULL;
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > tail) {
		fseek(f, size - tail, SEEK_SET);
		/* drop the partial first line */
		while ((got = fread(chunk, 1, 1, f)) == 1 && chunk[0] != '\n')
			;
	} else {
		fseek(f, 0, SEEK_SET);
	}
	sbuf_init(&sb, (size_t)tail + 1);
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sbuf_add(&sb, chunk, got);
	fclose(f);
	if (sb.err || !sb.buf) {
		sbuf_release(&sb);
		return 0;
	}
	*buf = sbuf_detach(&sb, NULL);
	/* count lines, then keep the last max_lines */
	for (p = *buf, i = 0; *p; i++) {
		nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	if (*p)
		i++;
	skip = i > max_lines ? i - max_lines : 0;
	for (p = *buf, i = 0; *p;) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (i++ >= skip && *p)
			lines[n++] = p;
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

/* --------------------------------------------------------------- API */

/* ,"may_replace":[{record..., "similarity", "same_key_family"}] */
static void add_may_replace(struct serve *s, struct sbuf *sb, const char *id)
{
	cairn_suggestion *v = NULL;
	size_t n = 0, i;

	sbuf_adds(sb, ",\"may_replace\":[");
	if (cairn_supersede_suggest(s->db, id, &v, &n) == CAIRN_OK) {
		for (i = 0; i < n; i++) {
			if (i)
				sbuf_addc(sb, ',');
			sbuf_adds(sb, "{\"record\":");
			cli_record_json(sb, v[i].rec, 1);
			sbuf_adds(sb, ",\"similarity\":");
			json_add_num(sb, round(v[i].similarity * 1e4) / 1e4);
			sbuf_addf(sb, ",\"same_key_family\":%s}",
				  v[i].same_family ? "true" : "false");
		}
	}
	cairn_suggestions_free(v, n);
	sbuf_addc(sb, ']');
}

static enum MHD_Result api_info(struct serve *s, struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	char *stats = NULL;
	int rc;

	rc = cairn_stats_json(s->db, &stats);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"version\":");
	json_add_strz(&sb, CAIRN_VERSION);
	sbuf_adds(&sb, ",\"root\":");
	json_add_strz(&sb, cairn_db_root(s->db));
	sbuf_adds(&sb, ",\"lang\":");
	json_add_strz(&sb, pick_lang(hdr(c, "Accept-Language")));
	sbuf_adds(&sb, ",\"stats\":");
	sbuf_adds(&sb, stats);
	sbuf_addc(&sb, '}');
	cairn_free(stats);
	return reply_json(c, 200, &sb);
}

static enum MHD_Result api_candidates(struct serve *s,
				      struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	cairn_record **v = NULL;
	cairn_filter f;
	size_t n = 0, i;
	int rc;

	memset(&f, 0, sizeof(f));
	f.statuses = "candidate";
	f.kinds = arg(c, "kind");
	f.limit = SERVE_LIST_LIMIT;
	rc = cairn_record_list(s->db, &f, &v, &n);
	if (rc)
		return reply_db(s, c, rc);
	/* what each may replace is /api/suggest's: on a 10k-record store a
	 * suggestion costs tens of ms, so the page asks card by card */
	sbuf_adds(&sb, "{\"candidates\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(&sb, ',');
		sbuf_adds(&sb, "{\"record\":");
		cli_record_json(&sb, v[i], 1);
		sbuf_addc(&sb, '}');
	}
	sbuf_addf(&sb, "],\"limit\":%d", SERVE_LIST_LIMIT);
	cairn_record_list_free(v, n);
	/* the forgets an agent proposed, which wait for a human too */
	{
		cairn_forget *fv = NULL;
		size_t nf = 0;

		rc = cairn_forget_list(s->db, &fv, &nf);
		if (rc) {
			sbuf_release(&sb);
			return reply_db(s, c, rc);
		}
		sbuf_adds(&sb, ",\"forgets\":[");
		for (i = 0; i < nf; i++) {
			sbuf_adds(&sb, i ? ",{\"record\":" : "{\"record\":");
			cli_record_json(&sb, fv[i].rec, 1);
			sbuf_adds(&sb, ",\"proposed\":");
			json_add_strz(&sb, fv[i].time);
			sbuf_adds(&sb, ",\"session\":");
			json_add_strz(&sb, fv[i].session);
			sbuf_adds(&sb, ",\"tool\":");
			json_add_strz(&sb, fv[i].tool);
			sbuf_adds(&sb, ",\"reason\":");
			json_add_strz(&sb, fv[i].reason);
			sbuf_addc(&sb, '}');
		}
		sbuf_adds(&sb, "]}");
		cairn_forget_list_free(fv, nf);
	}
	return reply_json(c, 200, &sb);
}

/*
 * POST /api/forget {"id","apply":true|false}: a pending forget applied
 * (the record becomes retired) or dropped (it stays as it is), as
 * `cairn approve ID` / `cairn reject ID` do with a pending forget's id.
 */
static enum MHD_Result api_forget(struct serve *s, struct MHD_Connection *c,
				  const struct json *j)
{
	struct sbuf sb = SBUF_INIT;
	const char *id = json_get_str(j, "id");
	const struct json *a = json_get(j, "apply");
	int rc, apply;

	if (!id || !*id || !a || (a->type != JSON_TRUE && a->type != JSON_FALSE))
		return reply_error(c, 400, "invalid", "give the record's \"id\" "
				   "and \"apply\": true (retire it) or false "
				   "(keep it)");
	apply = a->type == JSON_TRUE;
	rc = cairn_forget_resolve(s->db, id, apply);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"id\":");
	json_add_strz(&sb, id);
	sbuf_addf(&sb, ",\"forget\":\"%s\"}", apply ? "applied" : "dropped");
	return reply_json(c, 200, &sb);
}

/* GET /api/suggest?id=ID: {"id","may_replace":[...]} */
static enum MHD_Result api_suggest(struct serve *s, struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	const char *id = arg(c, "id");
	cairn_record *r = NULL;
	int rc;

	if (!id)
		return reply_error(c, 400, "invalid", "give the record's id=");
	rc = cairn_record_get(s->db, id, &r);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"id\":");
	json_add_strz(&sb, r->id);
	add_may_replace(s, &sb, r->id);
	sbuf_addc(&sb, '}');
	cairn_record_free(r);
	return reply_json(c, 200, &sb);
}

/* GET /api/records: a list with filters, or with q= the CLI's recall */
static enum MHD_Result api_records(struct serve *s, struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	const char *q = arg(c, "q"), *lim = arg(c, "limit");
	cairn_record **v = NULL;
	cairn_filter f;
	size_t n = 0, i;
	long limit = 100;
	char *end;
	int rc;

	if (lim) {
		limit = strtol(lim, &end, 10);
		if (*end || limit < 1 || limit > SERVE_LIST_LIMIT)
			return reply_error(c, 400, "invalid", "limit must be "
					   "a number in 1..%d",
					   SERVE_LIST_LIMIT);
	}
	if (q) {
		cairn_recall_opts o;
		cairn_result *res = NULL;

		memset(&o, 0, sizeof(o));
		o.k = limit > 100 ? 100 : (int)limit;
		if (!lim)
			o.k = 10;
		o.kinds = arg(c, "kind");
		o.statuses = arg(c, "status");
		if (o.statuses && strcmp(o.statuses, "all") == 0)
			o.statuses = "candidate,accepted,unverified,stale,"
				     "superseded,historical,false,retired,"
				     "rejected";
		o.explain = 1;
		o.no_receipt = 1; /* a person looking is not what the agent saw */
		rc = cairn_recall(s->db, q, &o, &res);
		if (rc)
			return reply_db(s, c, rc);
		cli_result_json(&sb, res, 1);
		cairn_result_free(res);
		return reply_json(c, 200, &sb);
	}
	memset(&f, 0, sizeof(f));
	f.kinds = arg(c, "kind");
	f.statuses = arg(c, "status");
	f.scope = arg(c, "scope");
	f.origins = arg(c, "origin");
	f.limit = limit;
	rc = cairn_record_list(s->db, &f, &v, &n);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"records\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(&sb, ',');
		cli_record_json(&sb, v[i], 1);
	}
	sbuf_adds(&sb, "]}");
	cairn_record_list_free(v, n);
	return reply_json(c, 200, &sb);
}

/* The receipt id of a hook.log line's extra field ("... receipt=ID ..."). */
static int log_receipt(const char *extra, char *id, size_t size)
{
	const char *p = extra ? strstr(extra, "receipt=") : NULL;
	size_t n;

	if (!p)
		return 0;
	p += 8;
	n = strcspn(p, " \t");
	if (n == 0 || n >= size)
		return 0;
	memcpy(id, p, n);
	id[n] = '\0';
	return 1;
}

/* Split a hook.log line into its five tab-separated fields. */
static int log_fields(char *line, char *fields[5])
{
	char *p = line;
	int k;

	for (k = 0; k < 5; k++) {
		fields[k] = p;
		p = p ? strchr(p, '\t') : NULL;
		if (p)
			*p++ = '\0';
	}
	return fields[3] != NULL;
}

/* Does receipt JSON j list record id among its ids? */
static int receipt_has(const struct json *j, const char *id)
{
	const struct json *ids = json_get(j, "ids"), *e;

	if (!ids || ids->type != JSON_ARRAY)
		return 0;
	for (e = ids->child; e; e = e->next)
		if (e->type == JSON_STRING && strcmp(e->str, id) == 0)
			return 1;
	return 0;
}

/* A receipt by id, parsed (NULL when it is gone or unreadable). */
static struct json *receipt_get(struct serve *s, const char *id)
{
	struct json *j = NULL;
	char *txt = NULL, err[64];

	if (cairn_receipt_json(s->db, id, &txt) != CAIRN_OK)
		return NULL;
	if (json_parse(txt, strlen(txt), &j, err, sizeof(err)) != CAIRN_OK)
		j = NULL;
	cairn_free(txt);
	return j;
}

static enum MHD_Result api_record(struct serve *s, struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	const char *id = arg(c, "id");
	cairn_record *r = NULL, *o = NULL, **hist = NULL;
	size_t nh = 0, i, nl, shown = 0;
	char path[4200], *buf = NULL, **lines = NULL;
	int rc;

	if (!id)
		return reply_error(c, 400, "invalid", "give the record's id=");
	rc = cairn_record_get(s->db, id, &r);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"record\":");
	cli_record_json(&sb, r, 1);
	sbuf_adds(&sb, ",\"history\":[");
	if (r->key && cairn_record_history(s->db, r->key, r->scope, &hist,
					   &nh) == CAIRN_OK)
		for (i = 0; i < nh; i++) {
			if (i)
				sbuf_addc(&sb, ',');
			cli_record_json(&sb, hist[i], 1);
		}
	cairn_record_list_free(hist, nh);
	sbuf_adds(&sb, "],\"supersedes\":");
	if (r->supersedes && cairn_record_get(s->db, r->supersedes, &o) == 0)
		cli_record_json(&sb, o, 0);
	else
		sbuf_adds(&sb, "null");
	cairn_record_free(o);
	o = NULL;
	sbuf_adds(&sb, ",\"superseded_by\":");
	if (r->superseded_by &&
	    cairn_record_get(s->db, r->superseded_by, &o) == 0)
		cli_record_json(&sb, o, 0);
	else
		sbuf_adds(&sb, "null");
	cairn_record_free(o);
	add_may_replace(s, &sb, r->id);
	/* the receipts of recent hook calls that returned it */
	sbuf_adds(&sb, ",\"receipts\":[");
	snprintf(path, sizeof(path), "%s/hook.log", s->dir);
	lines = cairn_malloc(SERVE_RECEIPT_SCAN * sizeof(*lines));
	nl = lines ? read_tail(path, SERVE_LOG_TAIL, &buf, lines,
			       SERVE_RECEIPT_SCAN) : 0;
	for (i = nl; i-- > 0 && shown < 20;) {
		char *fields[5], rid[64];
		struct json *j;

		if (!log_fields(lines[i], fields) ||
		    !log_receipt(fields[4], rid, sizeof(rid)))
			continue;
		j = receipt_get(s, rid);
		if (j && receipt_has(j, r->id)) {
			if (shown++)
				sbuf_addc(&sb, ',');
			sbuf_adds(&sb, "{\"id\":");
			json_add_strz(&sb, rid);
			sbuf_adds(&sb, ",\"call_time\":");
			json_add_strz(&sb, fields[0]);
			sbuf_adds(&sb, ",\"receipt\":");
			json_add_tree(&sb, j);
			sbuf_addc(&sb, '}');
		}
		json_free(j);
	}
	cairn_free(buf);
	cairn_free(lines);
	sbuf_adds(&sb, "]}");
	cairn_record_free(r);
	return reply_json(c, 200, &sb);
}

/* GET /api/hook: the summary of `cairn stats --hook` and recent calls */
static enum MHD_Result api_hook(struct serve *s, struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	char path[4200], *buf = NULL, *lines[SERVE_HOOK_CALLS];
	size_t nl, i, k = 0, with = 0;

	sbuf_adds(&sb, "{\"stats\":");
	cli_hook_stats_json(s->dir, &sb);
	sbuf_adds(&sb, ",\"calls\":[");
	snprintf(path, sizeof(path), "%s/hook.log", s->dir);
	nl = read_tail(path, SERVE_LOG_TAIL, &buf, lines, SERVE_HOOK_CALLS);
	for (i = nl; i-- > 0;) {
		char *fields[5], rid[64];
		struct json *j = NULL;

		if (!log_fields(lines[i], fields))
			continue;
		if (k++)
			sbuf_addc(&sb, ',');
		sbuf_adds(&sb, "{\"time\":");
		json_add_strz(&sb, fields[0]);
		sbuf_adds(&sb, ",\"event\":");
		json_add_strz(&sb, fields[1]);
		sbuf_adds(&sb, ",\"outcome\":");
		json_add_strz(&sb, fields[2]);
		sbuf_adds(&sb, ",\"ms\":");
		json_add_num(&sb, atof(fields[3]));
		sbuf_adds(&sb, ",\"detail\":");
		json_add_strz(&sb, fields[4] ? fields[4] : "");
		sbuf_addf(&sb, ",\"served\":%s",
			  fields[4] && strstr(fields[4], "via=mcp") ? "true"
								    : "false");
		sbuf_adds(&sb, ",\"receipt\":");
		if (log_receipt(fields[4], rid, sizeof(rid)) &&
		    with < SERVE_HOOK_RECEIPTS && (j = receipt_get(s, rid))) {
			with++;
			sbuf_adds(&sb, "{\"id\":");
			json_add_strz(&sb, rid);
			sbuf_adds(&sb, ",\"data\":");
			json_add_tree(&sb, j);
			sbuf_addc(&sb, '}');
			json_free(j);
		} else {
			sbuf_adds(&sb, "null");
		}
		sbuf_addc(&sb, '}');
	}
	cairn_free(buf);
	sbuf_adds(&sb, "]}");
	return reply_json(c, 200, &sb);
}

/* GET /api/quality: the runs in .cairn/eval.jsonl, oldest first */
static enum MHD_Result api_quality(struct serve *s, struct MHD_Connection *c)
{
	struct sbuf sb = SBUF_INIT;
	char path[4200], *buf = NULL, *lines[SERVE_EVAL_RUNS], err[64];
	size_t nl, i, k = 0, bad = 0;

	snprintf(path, sizeof(path), "%s/%s", s->dir, SERVE_EVAL_FILE);
	nl = read_tail(path, SERVE_EVAL_MAX, &buf, lines, SERVE_EVAL_RUNS);
	sbuf_adds(&sb, "{\"file\":");
	json_add_strz(&sb, path);
	sbuf_adds(&sb, ",\"runs\":[");
	for (i = 0; i < nl; i++) {
		struct json *j = NULL;

		if (json_parse(lines[i], strlen(lines[i]), &j, err,
			       sizeof(err)) != CAIRN_OK ||
		    j->type != JSON_OBJECT) {
			json_free(j);
			bad++;
			continue;
		}
		if (k++)
			sbuf_addc(&sb, ',');
		json_add_tree(&sb, j);
		json_free(j);
	}
	cairn_free(buf);
	sbuf_addf(&sb, "],\"unreadable\":%zu}", bad);
	return reply_json(c, 200, &sb);
}

/* ------------------------------------------------------- POST calls */

/* The "id" or "ids" of a POST body, at most SERVE_MAX_IDS. */
static size_t body_ids(const struct json *j, const char **ids)
{
	const struct json *a = json_get(j, "ids"), *e;
	const char *one = json_get_str(j, "id");
	size_t n = 0;

	if (one && *one) {
		ids[n++] = one;
		return n;
	}
	if (!a || a->type != JSON_ARRAY)
		return 0;
	for (e = a->child; e; e = e->next) {
		if (e->type != JSON_STRING || !*e->str || n == SERVE_MAX_IDS)
			return 0;
		ids[n++] = e->str;
	}
	return n;
}

/* POST /api/approve, /api/reject: {"id"} or {"ids":[...]} */
static enum MHD_Result api_set_status(struct serve *s,
				      struct MHD_Connection *c,
				      const struct json *j, const char *to)
{
	struct sbuf sb = SBUF_INIT;
	const char *ids[SERVE_MAX_IDS];
	size_t n = body_ids(j, ids), i, failed = 0;
	int rc;

	if (n == 0)
		return reply_error(c, 400, "invalid", "give \"id\" or \"ids\" "
				   "(1..%d non-empty strings)", SERVE_MAX_IDS);
	if (n == 1) {
		rc = cairn_record_set_status(s->db, ids[0], "candidate", to, 0);
		if (rc)
			return reply_db(s, c, rc);
		sbuf_adds(&sb, "{\"id\":");
		json_add_strz(&sb, ids[0]);
		sbuf_adds(&sb, ",\"status\":");
		json_add_strz(&sb, to);
		if (strcmp(to, "accepted") == 0)
			add_may_replace(s, &sb, ids[0]);
		sbuf_addc(&sb, '}');
		return reply_json(c, 200, &sb);
	}
	/* a group: each id on its own, every outcome reported */
	sbuf_adds(&sb, "{\"results\":[");
	for (i = 0; i < n; i++) {
		rc = cairn_record_set_status(s->db, ids[i], "candidate", to, 0);
		if (i)
			sbuf_addc(&sb, ',');
		sbuf_adds(&sb, "{\"id\":");
		json_add_strz(&sb, ids[i]);
		if (rc) {
			failed++;
			sbuf_adds(&sb, ",\"error\":");
			json_add_strz(&sb, cairn_errmsg(s->db));
		} else {
			sbuf_adds(&sb, ",\"status\":");
			json_add_strz(&sb, to);
		}
		sbuf_addc(&sb, '}');
	}
	sbuf_addf(&sb, "],\"failed\":%zu}", failed);
	return reply_json(c, failed == n ? 400 : 200, &sb);
}

/*
 * POST /api/edit-approve {"id","title"?,"body"?}: revise the candidate
 * (the secret filter as for every write), then approve it; one
 * transaction, so a refused edit approves nothing.
 */
static enum MHD_Result api_edit_approve(struct serve *s,
					struct MHD_Connection *c,
					const struct json *j)
{
	struct sbuf sb = SBUF_INIT;
	const char *id = json_get_str(j, "id");
	cairn_record ch;
	int rc;

	memset(&ch, 0, sizeof(ch));
	ch.confidence = -1;
	ch.title = (char *)json_get_str(j, "title");
	ch.body = (char *)json_get_str(j, "body");
	if (!id || !*id)
		return reply_error(c, 400, "invalid", "give the candidate's "
				   "\"id\"");
	if (!ch.title && !ch.body)
		return reply_error(c, 400, "invalid", "give the new \"title\" "
				   "or \"body\"");
	rc = cairn_begin(s->db);
	if (rc)
		return reply_db(s, c, rc);
	rc = cairn_record_revise(s->db, id, &ch, 0);
	if (!rc)
		rc = cairn_record_set_status(s->db, id, "candidate", "accepted",
					     0);
	if (rc) {
		enum MHD_Result ret = reply_db(s, c, rc);

		cairn_rollback(s->db);
		return ret;
	}
	rc = cairn_commit(s->db);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"id\":");
	json_add_strz(&sb, id);
	sbuf_adds(&sb, ",\"status\":\"accepted\"");
	add_may_replace(s, &sb, id);
	sbuf_addc(&sb, '}');
	return reply_json(c, 200, &sb);
}

/* POST /api/approve-supersede {"id","old"}: approve id, and it replaces old */
static enum MHD_Result api_approve_supersede(struct serve *s,
					     struct MHD_Connection *c,
					     const struct json *j)
{
	struct sbuf sb = SBUF_INIT;
	const char *id = json_get_str(j, "id"), *old = json_get_str(j, "old");
	int rc;

	if (!id || !*id || !old || !*old)
		return reply_error(c, 400, "invalid", "give the candidate's "
				   "\"id\" and the \"old\" record it replaces");
	rc = cairn_begin(s->db);
	if (rc)
		return reply_db(s, c, rc);
	rc = cairn_record_set_status(s->db, id, "candidate", "accepted", 0);
	if (!rc)
		rc = cairn_supersede(s->db, old, id);
	if (rc) {
		enum MHD_Result ret = reply_db(s, c, rc);

		cairn_rollback(s->db);
		return ret;
	}
	rc = cairn_commit(s->db);
	if (rc)
		return reply_db(s, c, rc);
	sbuf_adds(&sb, "{\"id\":");
	json_add_strz(&sb, id);
	sbuf_adds(&sb, ",\"status\":\"accepted\",\"supersedes\":");
	json_add_strz(&sb, old);
	sbuf_addc(&sb, '}');
	return reply_json(c, 200, &sb);
}

/* ------------------------------------------------------------ routing */

static const char *asset_type(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot && strcmp(dot, ".html") == 0)
		return "text/html; charset=utf-8";
	if (dot && strcmp(dot, ".js") == 0)
		return "text/javascript; charset=utf-8";
	if (dot && strcmp(dot, ".css") == 0)
		return "text/css; charset=utf-8";
	if (dot && strcmp(dot, ".svg") == 0)
		return "image/svg+xml";
	return "application/octet-stream";
}

static enum MHD_Result serve_asset(struct MHD_Connection *c, const char *url)
{
	const char *name = strcmp(url, "/") == 0 ? "index.html" : url + 1;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(console_assets); i++)
		if (strcmp(console_assets[i].name, name) == 0)
			return reply(c, 200, asset_type(name),
				     console_assets[i].data,
				     console_assets[i].len);
	return reply_error(c, 404, "not_found", "no such page '%s'", url);
}

static enum MHD_Result route_get(struct serve *s, struct MHD_Connection *c,
				 const char *url)
{
	if (strcmp(url, "/api/info") == 0)
		return api_info(s, c);
	if (strcmp(url, "/api/candidates") == 0)
		return api_candidates(s, c);
	if (strcmp(url, "/api/records") == 0)
		return api_records(s, c);
	if (strcmp(url, "/api/suggest") == 0)
		return api_suggest(s, c);
	if (strcmp(url, "/api/record") == 0)
		return api_record(s, c);
	if (strcmp(url, "/api/hook") == 0)
		return api_hook(s, c);
	if (strcmp(url, "/api/quality") == 0)
		return api_quality(s, c);
	return reply_error(c, 404, "not_found", "no API call '%s' for GET",
			   url);
}

static enum MHD_Result route_post(struct serve *s, struct MHD_Connection *c,
				  const char *url, struct req *rq)
{
	const char *type = hdr(c, "Content-Type");
	struct json *j = NULL;
	enum MHD_Result ret;
	char err[128];
	int rc;

	if (rq->too_big)
		return reply_error(c, 413, "too_big", "the request body is "
				   "over %zu bytes", SERVE_MAX_BODY);
	if (!type || strncasecmp(type, "application/json", 16) != 0 ||
	    (type[16] && type[16] != ';'))
		return reply_error(c, 415, "unsupported_type", "POST a JSON "
				   "body with Content-Type: application/json");
	rc = json_parse(rq->body.buf ? rq->body.buf : "", rq->body.len, &j,
			err, sizeof(err));
	if (rc)
		return reply_error(c, 400, "bad_json", "the body is not JSON: "
				   "%s", err);
	if (j->type != JSON_OBJECT)
		ret = reply_error(c, 400, "bad_json", "the body must be a JSON "
				  "object");
	else if (strcmp(url, "/api/approve") == 0)
		ret = api_set_status(s, c, j, "accepted");
	else if (strcmp(url, "/api/reject") == 0)
		ret = api_set_status(s, c, j, "rejected");
	else if (strcmp(url, "/api/edit-approve") == 0)
		ret = api_edit_approve(s, c, j);
	else if (strcmp(url, "/api/approve-supersede") == 0)
		ret = api_approve_supersede(s, c, j);
	else if (strcmp(url, "/api/forget") == 0)
		ret = api_forget(s, c, j);
	else
		ret = reply_error(c, 404, "not_found", "no API call '%s' for "
				  "POST", url);
	json_free(j);
	return ret;
}

/* ------------------------------------------------------ connections */

/* All on libmicrohttpd's one polling thread: no lock. */
static struct conn *conn_find(struct serve *s, struct MHD_Connection *c)
{
	size_t i;

	for (i = 0; i < s->nconns; i++)
		if (s->conns[i].c == c)
			return &s->conns[i];
	return NULL;
}

/* Cut a connection that waits for its request: libmicrohttpd sees the
 * socket end and closes it (conn_closed). The socket stays open until
 * then, so its number is never another's. */
static void conn_cut(struct conn *k)
{
	if (k->fd >= 0)
		shutdown(k->fd, SHUT_RDWR);
	k->fd = -1;
}

/*
 * A new connection: every one waiting SERVE_REQUEST_DEADLINE for its
 * request is cut, and past SERVE_CONN_LIMIT live ones the one waiting
 * longest too. A client that sends its request at once (the owner's
 * browser) is busy within milliseconds and never cut; connections that
 * trickle headers can only take each other's places.
 */
static void conn_started(struct serve *s, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	double now = util_now_ms();
	size_t i, live = 0;
	struct conn *old = NULL;

	if (s->nconns == SERVE_CONN_HARD)
		return; /* cannot happen: libmicrohttpd's limit is ours */
	s->conns[s->nconns].c = c;
	s->conns[s->nconns].fd = ci ? ci->connect_fd : -1;
	s->conns[s->nconns].since = now;
	s->conns[s->nconns].busy = 0;
	s->nconns++;
	for (i = 0; i + 1 < s->nconns; i++) {
		struct conn *k = &s->conns[i];

		if (k->fd < 0)
			continue;
		if (!k->busy && now - k->since > SERVE_REQUEST_DEADLINE * 1e3)
			conn_cut(k);
		else if (!k->busy && (!old || k->since < old->since))
			old = k;
	}
	for (i = 0; i < s->nconns; i++)
		live += s->conns[i].fd >= 0;
	if (live > SERVE_CONN_LIMIT && old)
		conn_cut(old);
}

static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct serve *s = cls;
	struct conn *k;

	(void)socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_started(s, c);
	} else if ((k = conn_find(s, c)) != NULL) {
		*k = s->conns[--s->nconns]; /* closed: its place freed */
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct serve *s = cls;
	struct req *rq = *con_cls;
	int post = strcmp(method, "POST") == 0;
	int api = strncmp(url, "/api/", 5) == 0;
	const char *fetch_site;

	(void)version;
	if (!rq) {
		/* the first call: headers only; refuse early */
		const char *len = hdr(c, "Content-Length");
		struct conn *k = conn_find(s, c);

		if (k)
			k->busy = 1; /* a whole request came: never cut */
		rq = cairn_malloc(sizeof(*rq));
		if (!rq)
			return MHD_NO;
		memset(rq, 0, sizeof(*rq));
		sbuf_init(&rq->body, SERVE_MAX_BODY);
		*con_cls = rq;
		if (!host_ok(s, hdr(c, "Host")))
			return reply_error(c, 403, "bad_host", "the Host header "
					   "must be %s", s->host);
		if (!origin_ok(s, hdr(c, "Origin")))
			return reply_error(c, 403, "bad_origin", "cross-origin "
					   "requests are refused");
		fetch_site = hdr(c, "Sec-Fetch-Site");
		if (fetch_site && strcmp(fetch_site, "cross-site") == 0)
			return reply_error(c, 403, "bad_origin", "cross-site "
					   "requests are refused");
		if (!post && strcmp(method, "GET") != 0 &&
		    strcmp(method, "HEAD") != 0)
			return reply_error(c, 405, "bad_method", "method %s is "
					   "not allowed", method);
		if (post && !api)
			return reply_error(c, 405, "bad_method", "POST only "
					   "to /api/");
		if (api && !token_ok(s, hdr(c, SERVE_TOKEN_HEADER)))
			return reply_error(c, 401, "unauthorized", "this call "
					   "needs the token of the URL that "
					   "'cairn serve' printed, in the "
					   SERVE_TOKEN_HEADER " header");
		if (post && len && strtoull(len, NULL, 10) > SERVE_MAX_BODY)
			return reply_error(c, 413, "too_big", "the request "
					   "body is over %zu bytes",
					   SERVE_MAX_BODY);
		return MHD_YES;
	}
	if (*upload_size > 0) {
		if (!rq->too_big) {
			sbuf_add(&rq->body, upload, *upload_size);
			if (rq->body.err)
				rq->too_big = 1;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (!api)
		return post ? reply_error(c, 405, "bad_method", "POST only to "
					  "/api/")
			    : serve_asset(c, url);
	if (post)
		return route_post(s, c, url, rq);
	return route_get(s, c, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;
	struct conn *k = conn_find(cls, c);

	(void)toe;
	if (k) { /* kept alive: waiting for the next request from now */
		k->busy = 0;
		k->since = util_now_ms();
	}
	if (rq) {
		sbuf_release(&rq->body);
		cairn_free(rq);
	}
	*con_cls = NULL;
}

/* -------------------------------------------------------------- start */

/*
 * Parse --listen ADDR[:PORT] ("127.0.0.1:8080", "localhost", "[::1]:0",
 * ":8080"): fill the socket address. 0 ok, -1 with a message in why.
 */
static int parse_listen(const char *spec, struct sockaddr_storage *ss,
			socklen_t *sslen, char *why, size_t whysize)
{
	char addr[128];
	const char *port = NULL, *end;
	long p = 0;
	char *e;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	if (spec[0] == '[') {
		end = strchr(spec, ']');
		if (!end)
			goto bad;
		n = (size_t)(end - spec - 1);
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			goto bad;
		spec++;
	} else {
		end = strrchr(spec, ':');
		n = end ? (size_t)(end - spec) : strlen(spec);
		if (end)
			port = end + 1;
	}
	if (n >= sizeof(addr))
		goto bad;
	memcpy(addr, spec, n);
	addr[n] = '\0';
	if (port) {
		errno = 0;
		p = strtol(port, &e, 10);
		if (errno || *e || e == port || p < 0 || p > 65535)
			goto bad;
	}
	if (n == 0 || strcasecmp(addr, "localhost") == 0)
		snprintf(addr, sizeof(addr), "127.0.0.1");
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons((uint16_t)p);
			*sslen = sizeof(*a4);
			return 0;
		}
		if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons((uint16_t)p);
			*sslen = sizeof(*a6);
			return 0;
		}
	}
bad:
	snprintf(why, whysize, "--listen wants ADDRESS[:PORT] with an IP "
		 "address (e.g. 127.0.0.1:8080 or [::1]:8080), not '%s'",
		 spec);
	return -1;
}

static int is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >>
			24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static int is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* Write the URL to .cairn/serve.url, readable by the user only. */
static int write_url(const char *dir, const char *url)
{
	char path[4200];
	size_t len = strlen(url);
	int fd, ok;

	snprintf(path, sizeof(path), "%s/serve.url", dir);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -1;
	ok = fchmod(fd, 0600) == 0 && write(fd, url, len) == (ssize_t)len &&
	     write(fd, "\n", 1) == 1;
	if (close(fd) != 0)
		ok = 0;
	return ok ? 0 : -1;
}

static const char serve_help[] =
	"usage: cairn serve [--listen ADDRESS[:PORT]]\n"
	"\n"
	"The review console: a web page for the approval gate and the store.\n"
	"It prints one line, http://127.0.0.1:PORT/#token=..., and serves\n"
	"until interrupted (Ctrl-C). Open that URL in a browser: candidates\n"
	"to approve, reject, edit then approve, or approve as the replacement\n"
	"of a record they may supersede; record search with each hit's\n"
	"ranking figures (as 'cairn recall --explain'); a record's revisions,\n"
	"supersession links, provenance and the hook receipts that returned\n"
	"it; recent hook calls and hook health ('cairn stats --hook'); and\n"
	"the recall quality of the runs in .cairn/eval.jsonl (one 'cairn eval\n"
	"--json' object a line; 'cairn eval --record' appends them). English\n"
	"and Chinese (from the browser's language, switchable).\n"
	"\n"
	"Each start makes a new random 128-bit token, needed by every API\n"
	"call; the URL is also written to .cairn/serve.url (mode 0600) and\n"
	"removed at exit. Requests must name this server in Host (and Origin,\n"
	"when sent); nothing is served to other sites.\n"
	"\n"
	"options:\n"
	"      --listen ADDRESS[:PORT]  where to listen (default 127.0.0.1 on a\n"
	"                               free port); an address other than\n"
	"                               loopback is reachable from the network:\n"
	"                               a warning says so\n"
	"\n"
	"exit status: 0 stopped by a signal, 1 error, 2 usage\n";

int cmd_serve(int argc, char **argv)
{
	static const struct option lo[] = { { "listen", 1, 0, 'l' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	struct sockaddr_storage ss;
	socklen_t sslen = 0;
	struct serve s;
	struct MHD_Daemon *d = NULL;
	const char *listen_spec = "127.0.0.1:0";
	unsigned char rnd[16];
	char why[512], addr[INET6_ADDRSTRLEN], url[600];
	sigset_t sigs;
	int c, fd = -1, one = 1, sig, ret = 1;
	size_t i;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(serve_help);
		if (c == 'l')
			listen_spec = optarg;
		else
			return cli_usage("serve", "unknown option");
	}
	if (optind < argc)
		return cli_usage("serve", "unexpected argument '%s'",
				 argv[optind]);
	if (parse_listen(listen_spec, &ss, &sslen, why, sizeof(why)))
		return cli_usage("serve", "%s", why);
	if (mhd_load(why, sizeof(why)))
		return cli_fail("cairn serve: %s", why);
	memset(&s, 0, sizeof(s));
	if (cairn_workspace_find(NULL, &s.dir) != CAIRN_OK)
		return cli_fail("not in a cairn workspace (or any parent "
				"directory): run 'cairn init' first");
	if (cli_open(&s.db, 0))
		goto out;
	if (util_random(rnd, sizeof(rnd))) {
		cli_fail("cannot read random bytes for the token");
		goto out;
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(s.token + 2 * i, 3, "%02x", rnd[i]);

	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				 sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&ss, sslen) != 0 ||
	    listen(fd, 16) != 0) {
		cli_fail("cannot listen on %s: %s", listen_spec,
			 strerror(errno));
		goto out;
	}
	sslen = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
		cli_fail("cannot read the listening address: %s",
			 strerror(errno));
		goto out;
	}
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr,
			  addr, sizeof(addr));
		s.port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		snprintf(s.host, sizeof(s.host), "%s:%d", addr, s.port);
	} else {
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr,
			  addr, sizeof(addr));
		s.port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		snprintf(s.host, sizeof(s.host), "[%s]:%d", addr, s.port);
	}
	s.wildcard = is_wildcard(&ss);
	if (is_loopback(&ss))
		snprintf(s.host_local, sizeof(s.host_local), "localhost:%d",
			 s.port);
	else
		fprintf(stderr, "cairn: warning: listening on %s, which is "
			"not loopback: anyone who can reach it and learns the "
			"token can approve and reject records\n", s.host);
	if (s.wildcard)
		snprintf(url, sizeof(url), "http://%s:%d/#token=%s",
			 ss.ss_family == AF_INET ? "127.0.0.1" : "[::1]",
			 s.port, s.token);
	else
		snprintf(url, sizeof(url), "http://%s/#token=%s", s.host,
			 s.token);

	/* the daemon's thread inherits this mask: signals reach sigwait */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
			     on_request, &s,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned int)SERVE_CONN_HARD,
			     MHD_OPTION_CONNECTION_TIMEOUT,
			     (unsigned int)SERVE_CONN_TIMEOUT,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT,
			     SERVE_CONN_MEMORY,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, &s,
			     MHD_OPTION_END);
	if (!d) {
		cli_fail("cannot start the HTTP server on %s", s.host);
		goto out;
	}
	fd = -1; /* the daemon owns it now */
	if (write_url(s.dir, url))
		fprintf(stderr, "cairn: warning: cannot write %s/serve.url: "
			"%s\n", s.dir, strerror(errno));
	printf("%s\n", url);
	fflush(stdout);
	if (sigwait(&sigs, &sig) == 0)
		ret = 0;
	mhd.stop_daemon(d);
	{
		char path[4200];

		snprintf(path, sizeof(path), "%s/serve.url", s.dir);
		unlink(path);
	}
out:
	if (fd >= 0)
		close(fd);
	cairn_db_close(s.db);
	cairn_free(s.dir);
	return ret;
}
