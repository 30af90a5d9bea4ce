/*
 * receipt.c -- recall receipts (SPEC 5.3) and their spool; see receipt.h.
 *
 * Layer: on store (the connection, ids, errors), json (the spool's lines)
 * and lifecycle (the clock last_seen is written in). Above it: recall.c.
 *
 * The spool is appended under an exclusive flock(2) and drained under a
 * non-blocking one, inside the write transaction that holds the store's
 * lock; it is truncated only after that transaction commits, and a
 * receipt inserted twice (a drain killed between commit and truncate) is
 * ignored the second time. A line without its newline (an appender killed
 * mid-write) is skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utf8proc.h>

#include "json.h"
#include "lifecycle.h"
#include "receipt.h"
#include "store.h"

/* One receipt's fields; ids and hits are JSON arrays as text. */
struct rcpt {
	const char *id, *hash, *ids, *hits, *provider, *rev, *time, *seen;
};

/* NFKC + case fold + collapsed whitespace: the text a receipt hashes. */
static char *normalise_query(const char *q)
{
	utf8proc_uint8_t *n = utf8proc_NFKC_Casefold((const utf8proc_uint8_t *)q);
	struct sbuf sb = SBUF_INIT;
	const char *p;
	int space = 0;

	if (!n)
		return NULL;
	for (p = (const char *)n; *p; p++) {
		if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
			space = sb.len > 0;
			continue;
		}
		if (space)
			sbuf_addc(&sb, ' ');
		space = 0;
		sbuf_addc(&sb, *p);
	}
	free(n); /* allocated by utf8proc with malloc */
	if (sb.err) {
		sbuf_release(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

/*
 * The store's revision: how many transactions changed its records,
 * counted by the writes (store.c, migration 5), so naming it reads one row.
 */
static void db_revision(struct cairn_db *db, struct sbuf *sb)
{
	long long n = 0;

	(void)store_revision(db, "main", &n); /* 0 when it cannot be read */
	sbuf_addf(sb, "db:%lld", n);
}

/* The one JSON form of a receipt: the spool's line and what lookups show. */
static void rcpt_json(struct sbuf *sb, const struct rcpt *r, int spool_line)
{
	sbuf_adds(sb, "{\"id\":");
	json_add_strz(sb, r->id);
	sbuf_adds(sb, ",\"query_sha256\":");
	json_add_strz(sb, r->hash);
	/* ids and hits were written by us as JSON */
	sbuf_adds(sb, ",\"ids\":");
	sbuf_adds(sb, r->ids);
	sbuf_adds(sb, ",\"hits\":");
	sbuf_adds(sb, r->hits);
	sbuf_adds(sb, ",\"provider\":");
	json_add_strz(sb, r->provider);
	sbuf_adds(sb, ",\"revision\":");
	json_add_strz(sb, r->rev);
	sbuf_adds(sb, ",\"time\":");
	json_add_strz(sb, r->time);
	if (spool_line) {
		sbuf_adds(sb, ",\"seen\":");
		json_add_strz(sb, r->seen);
	} else if (r->seen) {
		sbuf_adds(sb, ",\"pending\":true"); /* still in the spool */
	}
	sbuf_addc(sb, '}');
	if (spool_line)
		sbuf_addc(sb, '\n');
}

/* Insert one receipt and set last_seen of its records (inside a write). */
static int rcpt_insert(struct cairn_db *db, const struct rcpt *r)
{
	sqlite3_stmt *st = NULL;
	char sql[200];
	int i, src;

	src = sqlite3_prepare_v2(db->sql,
				 "INSERT OR IGNORE INTO main.receipts (id, "
				 "query_sha256, ids, detail, provider, "
				 "revision, time) VALUES (?1, ?2, ?3, ?4, ?5, "
				 "?6, ?7)",
				 -1, &st, NULL);
	if (src == SQLITE_OK) {
		sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, r->hash, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, r->ids, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, r->hits, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, r->provider, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 6, r->rev, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, r->time, -1, SQLITE_STATIC);
		src = sqlite3_step(st);
	}
	sqlite3_finalize(st);
	if (src != SQLITE_DONE)
		return store_sql_error(db, src, "writing the receipt");
	if (strcmp(r->ids, "[]") == 0)
		return CAIRN_OK;
	/* last_seen for every returned record, one statement per schema */
	for (i = 0; i < 2; i++) {
		const char *schema = i == 0 ? "main" : "global";

		if (i == 1 && !db->has_global)
			break;
		snprintf(sql, sizeof(sql),
			 "UPDATE %s.records SET last_seen = ?1 WHERE id IN "
			 "(SELECT value FROM json_each(?2))",
			 schema);
		st = NULL;
		src = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
		if (src == SQLITE_OK) {
			sqlite3_bind_text(st, 1, r->seen, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, r->ids, -1, SQLITE_STATIC);
			db->rev_quiet = 1; /* not a change of the content */
			src = sqlite3_step(st);
			db->rev_quiet = 0;
		}
		sqlite3_finalize(st);
		if (src != SQLITE_DONE)
			return store_sql_error(db, src, "updating last_seen");
	}
	return CAIRN_OK;
}

/* ------------------------------------------------------------------ spool */

static int spool_open(struct cairn_db *db, int flags)
{
	char path[4200];

	if (!store_dir_file(db, RECEIPT_SPOOL, path, sizeof(path))) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* Bytes in the spool; 0 when there is none. */
static long long spool_size(struct cairn_db *db)
{
	char path[4200];
	struct stat stt;

	if (!store_dir_file(db, RECEIPT_SPOOL, path, sizeof(path)) ||
	    lstat(path, &stt) != 0 || !S_ISREG(stt.st_mode))
		return 0;
	return (long long)stt.st_size;
}

static int spool_append(struct cairn_db *db, const struct rcpt *r)
{
	struct sbuf line = SBUF_INIT;
	int fd, rc = CAIRN_OK;

	rcpt_json(&line, r, 1);
	if (line.err)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	fd = spool_open(db, O_WRONLY | O_APPEND | O_CREAT);
	if (fd < 0 || flock(fd, LOCK_EX) != 0 ||
	    util_write_all(fd, line.buf, line.len) != 0)
		rc = store_error(db, CAIRN_IO,
				 "the receipt could not be spooled to "
				 "%s/%s: %s",
				 db->dir, RECEIPT_SPOOL, strerror(errno));
	if (fd >= 0)
		close(fd); /* releases the lock */
	sbuf_release(&line);
	return rc;
}

/*
 * A spool line as a receipt: its strings point into j, ids and hits are
 * re-serialised into the two buffers. 0 when every field is there.
 */
static int rcpt_parse(const struct json *j, struct rcpt *r, struct sbuf *ids,
		      struct sbuf *hits)
{
	const struct json *ji = json_get(j, "ids"), *jh = json_get(j, "hits");

	memset(r, 0, sizeof(*r));
	r->id = json_get_str(j, "id");
	r->hash = json_get_str(j, "query_sha256");
	r->provider = json_get_str(j, "provider");
	r->rev = json_get_str(j, "revision");
	r->time = json_get_str(j, "time");
	r->seen = json_get_str(j, "seen");
	if (!r->id || !r->hash || !r->provider || !r->rev || !r->time ||
	    !r->seen || !ji || ji->type != JSON_ARRAY || !jh ||
	    jh->type != JSON_ARRAY)
		return -1;
	ids->len = 0;
	hits->len = 0;
	json_add_tree(ids, ji);
	json_add_tree(hits, jh);
	if (ids->err || hits->err)
		return -1;
	r->ids = ids->buf;
	r->hits = hits->buf;
	return 0;
}

/*
 * Call fn on every complete, well-formed line of the spool text; stop at
 * the first non-zero return and give it back.
 */
static int spool_each(char *text, size_t len,
		      int (*fn)(const struct rcpt *, void *), void *arg)
{
	struct sbuf ids = SBUF_INIT, hits = SBUF_INIT;
	char *p = text, *end = text + len;
	int rc = 0;

	while (p < end && rc == 0) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		struct json *j = NULL;
		struct rcpt r;

		if (!nl)
			break; /* torn by a killed appender */
		if (json_parse(p, (size_t)(nl - p), &j, NULL, 0) == CAIRN_OK &&
		    rcpt_parse(j, &r, &ids, &hits) == 0)
			rc = fn(&r, arg);
		json_free(j);
		p = nl + 1;
	}
	sbuf_release(&ids);
	sbuf_release(&hits);
	return rc;
}

static int drain_one(const struct rcpt *r, void *arg)
{
	return rcpt_insert(arg, r);
}

/*
 * Move the spooled receipts into the table inside the caller's write. On
 * success *fd holds the locked spool (or -1), to truncate once the write
 * commits. A spool another process holds is left for a later drain.
 */
static int spool_drain(struct cairn_db *db, int *fd)
{
	char *text;
	size_t len = 0;
	int rc;

	*fd = spool_open(db, O_RDWR);
	if (*fd < 0)
		return CAIRN_OK; /* no spool */
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		close(*fd);
		*fd = -1;
		return CAIRN_OK;
	}
	text = util_read_fd(*fd, RECEIPT_SPOOL_MAX, &len);
	if (!text) {
		close(*fd);
		*fd = -1;
		return CAIRN_OK;
	}
	rc = spool_each(text, len, drain_one, db);
	cairn_free(text);
	if (rc) {
		close(*fd);
		*fd = -1;
	}
	return rc;
}

/* ---------------------------------------------------------------- write */

/*
 * In one write (or the caller's batch): every spooled receipt, then r when
 * not NULL. The spool is truncated once that write has committed (never
 * in a batch, which may still roll back). CAIRN_BUSY: the store stayed
 * locked, nothing was written.
 */
static int write_receipts(struct cairn_db *db, const struct rcpt *r)
{
	int rc, sfd = -1;

	rc = store_tx_begin(db);
	if (rc)
		return rc;
	if (!db->in_batch)
		rc = spool_drain(db, &sfd);
	if (rc == CAIRN_OK && r)
		rc = rcpt_insert(db, r);
	rc = store_tx_end(db, rc);
	if (sfd >= 0) {
		if (rc == CAIRN_OK && ftruncate(sfd, 0) != 0) {
			/* kept: drained again, each receipt ignored once in */
		}
		close(sfd);
	}
	return rc;
}

int receipt_write(struct cairn_db *db, const char *query,
		  const char *identity, const char *vec_identity,
		  cairn_result *res)
{
	struct sbuf ids = SBUF_INIT, detail = SBUF_INIT, rev = SBUF_INIT;
	char hash[65], now[32], seen[32], rid[17];
	char *norm = normalise_query(query);
	struct rcpt r;
	size_t i;
	int rc;

	if (!norm)
		return store_error(db, CAIRN_NOMEM, "out of memory");
	util_sha256_hex(norm, strlen(norm), hash);
	cairn_free(norm);
	util_now_iso(now, sizeof(now));
	lifecycle_now_iso(seen, sizeof(seen)); /* the lifecycle's clock */
	rc = store_new_id(rid);
	if (rc)
		goto out;
	rid[0] = 'q'; /* receipts read "q..." so they are not taken for records */
	sbuf_addc(&ids, '[');
	sbuf_addc(&detail, '[');
	for (i = 0; i < res->n; i++) {
		const cairn_hit *h = &res->hits[i];

		if (i) {
			sbuf_addc(&ids, ',');
			sbuf_addc(&detail, ',');
		}
		json_add_strz(&ids, h->rec->id);
		sbuf_adds(&detail, "{\"id\":");
		json_add_strz(&detail, h->rec->id);
		sbuf_addf(&detail, ",\"bm25_rank\":%d,\"bm25\":", h->bm25_rank);
		json_add_num(&detail, round(h->bm25 * 1e4) / 1e4);
		sbuf_adds(&detail, ",\"lexical\":");
		json_add_num(&detail, round(h->lexical * 1e4) / 1e4);
		sbuf_adds(&detail, ",\"relevance\":");
		json_add_num(&detail, round(h->relevance * 1e4) / 1e4);
		sbuf_adds(&detail, ",\"weight\":");
		json_add_num(&detail, h->weight);
		sbuf_adds(&detail, ",\"score\":");
		json_add_num(&detail, round(h->score * 1e4) / 1e4);
		if (res->hybrid) {
			sbuf_addf(&detail, ",\"dense_rank\":%d,\"cosine\":",
				  h->dense_rank);
			json_add_num(&detail, round(h->cosine * 1e4) / 1e4);
			sbuf_adds(&detail, ",\"rrf\":");
			json_add_num(&detail, round(h->rrf * 1e6) / 1e6);
			sbuf_addf(&detail, ",\"pinned\":%s,\"exact_key\":%s,"
				  "\"basis\":",
				  h->pinned ? "true" : "false",
				  h->exact_key ? "true" : "false");
			json_add_strz(&detail, h->basis);
			sbuf_adds(&detail, ",\"decay\":");
			json_add_num(&detail, round(h->decay * 1e4) / 1e4);
		}
		if (res->reranked && h->rerank_rank > 0) {
			sbuf_adds(&detail, ",\"rerank\":");
			json_add_num(&detail, round(h->rerank * 1e4) / 1e4);
			sbuf_addf(&detail, ",\"rerank_rank\":%d,"
				  "\"rerank_from\":%d",
				  h->rerank_rank, h->rerank_from);
		}
		sbuf_addc(&detail, '}');
	}
	sbuf_addc(&ids, ']');
	sbuf_addc(&detail, ']');
	sbuf_addf(&rev, "cairn/%s %s ", CAIRN_VERSION, identity);
	if (res->hybrid && vec_identity)
		sbuf_addf(&rev, "vectors:%s ", vec_identity);
	if (res->reranked)
		sbuf_addf(&rev, "rerank:%s ", res->rerank_model);
	db_revision(db, &rev);
	if (ids.err || detail.err || rev.err) {
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	r.id = rid;
	r.hash = hash;
	r.ids = ids.buf;
	r.hits = detail.buf;
	if (res->reranked)
		r.provider = res->hybrid ? "bm25+dense+rerank" : "bm25+rerank";
	else
		r.provider = res->hybrid ? "bm25+dense" : "bm25";
	r.rev = rev.buf;
	r.time = now;
	r.seen = seen;
	/*
	 * The hook spools first (db->spool_receipts): a write transaction
	 * costs it the WAL's header sync, the folder's sync and a checkpoint
	 * at exit (~6 ms of a prompt); one in RECEIPT_SPOOL_DRAIN bytes of
	 * spooled receipts moves them all at once.
	 */
	if (db->spool_receipts && !db->in_batch &&
	    spool_size(db) < RECEIPT_SPOOL_DRAIN) {
		rc = spool_append(db, &r);
	} else {
		rc = write_receipts(db, &r);
#ifndef CAIRN_MUTATE_NO_RECEIPT_SPOOL
		if (rc == CAIRN_BUSY && !db->in_batch)
			rc = spool_append(db, &r);
#endif
	}
	if (rc == CAIRN_OK)
		snprintf(res->receipt_id, sizeof(res->receipt_id), "%s", rid);
out:
	sbuf_release(&ids);
	sbuf_release(&detail);
	sbuf_release(&rev);
	return rc;
}

int receipt_drain(struct cairn_db *db)
{
	if (db->in_batch || spool_size(db) == 0)
		return CAIRN_OK; /* nothing spooled: no write */
	return write_receipts(db, NULL);
}

/* --------------------------------------------------------------- lookup */

struct find {
	const char *id;
	struct sbuf *out;
};

static int find_one(const struct rcpt *r, void *arg)
{
	struct find *f = arg;

	if (strcmp(r->id, f->id) != 0)
		return 0;
	rcpt_json(f->out, r, 0);
	return 1;
}

/* The spooled receipt id as JSON into sb; 1 found, 0 not. */
static int spool_find(struct cairn_db *db, const char *id, struct sbuf *sb)
{
	struct find f = { id, sb };
	char *text;
	size_t len = 0;
	int fd = spool_open(db, O_RDONLY), found = 0;

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_SH) == 0 &&
	    (text = util_read_fd(fd, RECEIPT_SPOOL_MAX, &len)) != NULL) {
		found = spool_each(text, len, find_one, &f) == 1;
		cairn_free(text);
	}
	close(fd);
	return found;
}

int cairn_receipt_json(cairn_db *db, const char *id, char **out)
{
	struct sbuf sb = SBUF_INIT;
	sqlite3_stmt *st = NULL;
	struct rcpt r;
	int src, rc = CAIRN_OK;

	*out = NULL;
	src = sqlite3_prepare_v2(db->sql,
				 "SELECT id, query_sha256, ids, detail, "
				 "provider, revision, time FROM main.receipts "
				 "WHERE id = ?1",
				 -1, &st, NULL);
	if (src != SQLITE_OK)
		return store_sql_error(db, src, "reading a receipt");
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		r.id = (const char *)sqlite3_column_text(st, 0);
		r.hash = (const char *)sqlite3_column_text(st, 1);
		r.ids = (const char *)sqlite3_column_text(st, 2);
		r.hits = (const char *)sqlite3_column_text(st, 3);
		r.provider = (const char *)sqlite3_column_text(st, 4);
		r.rev = (const char *)sqlite3_column_text(st, 5);
		r.time = (const char *)sqlite3_column_text(st, 6);
		r.seen = NULL;
		rcpt_json(&sb, &r, 0);
	} else if (src == SQLITE_DONE) {
		if (!spool_find(db, id, &sb))
			rc = store_error(db, CAIRN_NOTFOUND, "no receipt '%s'",
					 id);
	} else {
		rc = store_sql_error(db, src, "reading a receipt");
	}
	sqlite3_finalize(st);
	if (rc == CAIRN_OK && sb.err)
		rc = store_error(db, CAIRN_NOMEM, "out of memory");
	if (rc) {
		sbuf_release(&sb);
		return rc;
	}
	*out = sbuf_detach(&sb, NULL);
	return *out ? CAIRN_OK : CAIRN_NOMEM;
}
