/*
 * eval.c -- the evaluation engine behind `cairn eval` (SPEC 8).
 *
 * Layer: eval, above recall, seed and the hook's injection (hook_inject.h),
 * below the faces (docs/ARCHITECTURE.md, "Layers"). Uses only the public API for
 * records, batches, seeding, calibration and recall, plus one pragma on the
 * temporary store's own connection (store.h) to skip fsync on data that is
 * thrown away.
 *
 * Flow of eval_run():
 *   1. read corpus.jsonl, queries.jsonl and (if present) probes.jsonl into
 *      memory, each line checked; a bad line is an error naming file:line;
 *   2. make a private directory (mkdtemp under $TMPDIR or /tmp) and, for the
 *      pooled corpus or for each group (--per-group), build a fresh store in
 *      it: every corpus row becomes an accepted human note whose id is the
 *      corpus id, written in batches of EVAL_BATCH rows; or, for a seeded
 *      workspace, a copy of DIR/docs is made beside the store and
 *      cairn_seed() (no git) fills it, so src_path is "docs/...";
 *   3. calibrate that store's floor from the probes (never from the queries);
 *   4. ask cairn_recall() every query (no receipt, no last_seen) and score
 *      the returned ids with eval_score_query(); seeded, the ids are the
 *      hits' src_path, each file kept once, at its first (best) chunk;
 *      with opts->hook, also recall and render the query as the hook
 *      does (hook_inject.h) and keep the ids of the block's entries;
 *   5. remove the directory, whatever happened.
 *
 * Must never: open the user's stores (cairn_db_open gets an explicit
 * temporary directory and no_global), calibrate on the scored queries, print
 * (progress is a callback), or leave the temporary directory behind on an
 * error path.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cairn.h"
#include "eval.h"
#include "hook_inject.h"
#include "internal.h"
#include "json.h"
#include "seed.h"
#include "store.h"
#include "embed.h"
#include "vector.h"

/* ================================================================ scoring */

/* Is id one of the na answers? */
static int is_answer(const char *id, const char *const *answers, size_t na)
{
	size_t i;

	for (i = 0; i < na; i++)
		if (answers[i] && strcmp(id, answers[i]) == 0)
			return 1;
	return 0;
}

/* Does returned[0..i) already hold returned[i]? */
static int seen_before(const char *const *returned, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (returned[j] && strcmp(returned[j], returned[i]) == 0)
			return 1;
	return 0;
}

/*
 * min(distinct answers, 10): the number of ideal positions for IDCG@10.
 * Stops at 10, so the cost is O(na * 10) whatever the duplicates.
 */
static size_t ideal_positions(const char *const *answers, size_t na)
{
	const char *distinct[10];
	size_t i, j, nd = 0;

	for (i = 0; i < na && nd < ARRAY_SIZE(distinct); i++) {
		if (!answers[i])
			continue;
		for (j = 0; j < nd; j++)
			if (strcmp(distinct[j], answers[i]) == 0)
				break;
		if (j == nd)
			distinct[nd++] = answers[i];
	}
	return nd;
}

/* Score one query's returned ids against its answers (see eval.h). */
void eval_score_query(const char *const *returned, size_t n,
		      const char *const *answers, size_t na,
		      struct eval_qscore *out)
{
	double dcg = 0, idcg = 0;
	size_t i, ideal;

	memset(out, 0, sizeof(*out));
	if (na == 0)
		return;
	for (i = 0; i < n; i++) {
		if (!returned[i] || !is_answer(returned[i], answers, na))
			continue;
		if (out->rank == 0)
			out->rank = i + 1;
		/* binary relevance: position i+1 gains 1/log2((i+1)+1) */
		if (i < 10 && !seen_before(returned, i))
			dcg += 1.0 / log2((double)i + 2.0);
	}
	if (out->rank >= 1 && out->rank <= 10)
		out->rr = 1.0 / (double)out->rank;
	ideal = ideal_positions(answers, na);
	for (i = 0; i < ideal; i++)
		idcg += 1.0 / log2((double)i + 2.0);
	if (idcg > 0)
		out->ndcg = dcg / idcg;
}

/* Add one query's outcome to m (see eval.h). */
void eval_metrics_add(struct eval_metrics *m, size_t na, size_t nreturned,
		      const struct eval_qscore *s)
{
	if (na == 0) {
		m->no_answer++;
		if (nreturned == 0)
			m->no_answer_empty++;
		return;
	}
	m->answerable++;
	if (s->rank == 0)
		return;
	m->hit1 += s->rank <= 1;
	m->hit3 += s->rank <= 3;
	m->hit5 += s->rank <= 5;
	m->hit10 += s->rank <= 10;
	m->rr_sum += s->rr;
	m->ndcg_sum += s->ndcg;
}

/*
 * Add one query's hook outcome (see eval.h). The injection hit rate
 * (SPEC 8) is measured on the block the hook's own functions rendered,
 * not on ranks: budget, floor and one entry per source all count.
 */
void eval_metrics_add_hook(struct eval_metrics *m, size_t na,
			   size_t ninjected, int hit)
{
	m->hooked++;
	if (na == 0)
		m->nothing_injected += ninjected == 0;
	else
		m->injected += hit != 0;
}

void eval_metrics_add_block(struct eval_metrics *m, size_t entries,
			    size_t relevant, size_t chars)
{
	m->hook_prompts += entries > 0;
	m->hook_entries += entries;
	m->hook_relevant += relevant;
	m->hook_chars += chars;
}

/* Stale for the stale-hit rate (see eval.h). */
int eval_record_stale(const cairn_record *r)
{
	if (!r->status || (strcmp(r->status, "accepted") != 0 &&
			   strcmp(r->status, "unverified") != 0))
		return 1;
	return r->superseded_by && *r->superseded_by;
}

void eval_metrics_add_stale(struct eval_metrics *m, size_t stale)
{
	m->stale_hits += stale;
	m->stale_queries += stale > 0;
}

/* One rate of m, or -1 when it is undefined (see eval.h). */
double eval_metric(const struct eval_metrics *m, enum eval_metric_kind kind)
{
	double num = 0;

	if (kind == EVAL_STALE_HIT)
		return m->answerable + m->no_answer == 0
			       ? -1
			       : (double)m->stale_queries /
					 (double)(m->answerable + m->no_answer);
	if (kind == EVAL_NOTHING_INJECTED)
		return m->hooked == 0 || m->no_answer == 0
			       ? -1
			       : (double)m->nothing_injected /
					 (double)m->no_answer;
	if (m->answerable == 0 || (kind == EVAL_INJECTION && m->hooked == 0))
		return -1;
	switch (kind) {
	case EVAL_R1: num = (double)m->hit1; break;
	case EVAL_R3: num = (double)m->hit3; break;
	case EVAL_R5: num = (double)m->hit5; break;
	case EVAL_R10: num = (double)m->hit10; break;
	case EVAL_MRR: num = m->rr_sum; break;
	case EVAL_NDCG10: num = m->ndcg_sum; break;
	case EVAL_INJECTION: num = (double)m->injected; break;
	case EVAL_NOTHING_INJECTED: break; /* handled above */
	case EVAL_STALE_HIT: break;        /* handled above */
	}
	return num / (double)m->answerable;
}

/* ============================================================= input rows */

/* One corpus row. */
struct eval_doc {
	char *id;    /* corpus id: becomes the record id */
	char *title; /* title ("" when absent) */
	char *text;  /* body */
	char *time;  /* event time, or NULL when absent or "" */
	char *group; /* group, or NULL */
	size_t line; /* 1-based line in corpus.jsonl */
};

/* One probe question (a no-answer question used only for calibration). */
struct eval_probe {
	char *text;  /* the question */
	char *group; /* its group, or NULL: applies to every store */
};

/* Everything read from the dataset, and the run's working state. */
struct eval_ctx {
	const struct eval_opts *opts; /* the caller's options (never NULL here) */
	struct eval_doc *docs;        /* corpus rows, in file order */
	size_t ndocs;                 /* rows in docs */
	size_t capdocs;               /* allocated entries of docs */
	struct eval_probe *probes;    /* probe questions, in file order */
	size_t nprobes;               /* entries in probes */
	size_t capprobes;             /* allocated entries of probes */
	size_t *qline;                /* queries.jsonl line of each report query */
	size_t capq;                  /* allocated entries of r->q and qline */
	struct eval_report *r;        /* the report being filled */
	char corpus_path[4096];       /* DIR/corpus.jsonl, for messages */
	char queries_path[4096];      /* DIR/queries.jsonl */
	char probes_path[4096];       /* DIR/probes.jsonl */
	char docs_path[4096];         /* DIR/docs: what a seeded run seeds */
	char **offq;                  /* off-topic questions (eval_opts.offtopic) */
	size_t noffq;                 /* entries in offq */
	char **files;                 /* seeded: the distinct src_paths, sorted */
	size_t nfiles;                /* entries in files */
	int stop;                     /* seeded: the progress callback asked to stop */
	char tmp[4096];               /* the private temporary directory; "" when none */
	size_t loaded;                /* corpus rows written so far, over all stores */
	size_t answered;              /* queries answered so far, over all stores */
	double floor_sum;             /* sum of the stores' floors */
	size_t nfloors;               /* stores whose floor is known */
	double cos_sum;               /* sum of the hybrid stores' cosine floors */
	int cos_noted;                /* 1: this store's cosine floor is noted */
	char *err;                    /* the caller's message buffer */
	size_t errsize;               /* its size */
};

static int fail(struct eval_ctx *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Write a message into the caller's buffer; return rc. */
static int fail(struct eval_ctx *c, int rc, const char *fmt, ...)
{
	va_list ap;

	if (c->errsize > 0) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errsize, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* Make room for one more element in an array of `size`-byte entries. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return CAIRN_OK;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > ((size_t)-1) / size)
		return CAIRN_NOMEM;
	p = util_realloc(*arr, ncap * size);
	if (!p)
		return CAIRN_NOMEM;
	*arr = p;
	*cap = ncap;
	return CAIRN_OK;
}

/*
 * Member `key` of row as a copied string into *out (NULL when absent or
 * null). A member of another type, or one holding a NUL byte, is an error;
 * so is an absent or empty one when `required`.
 */
static int get_str(struct eval_ctx *c, const struct json *row,
		   const char *key, int required, const char *path,
		   size_t line, char **out)
{
	const struct json *v = json_get(row, key);

	*out = NULL;
	if (!v || v->type == JSON_NULL) {
		if (required)
			return fail(c, CAIRN_INVALID, "%s:%zu: missing \"%s\"",
				    path, line, key);
		return CAIRN_OK;
	}
	if (v->type != JSON_STRING)
		return fail(c, CAIRN_INVALID,
			    "%s:%zu: \"%s\" must be a string", path, line,
			    key);
	if (strlen(v->str) != v->len)
		return fail(c, CAIRN_INVALID,
			    "%s:%zu: \"%s\" contains a NUL character", path,
			    line, key);
	if (required && v->len == 0)
		return fail(c, CAIRN_INVALID, "%s:%zu: \"%s\" is empty", path,
			    line, key);
	*out = util_strdup(v->str);
	if (!*out)
		return fail(c, CAIRN_NOMEM, "out of memory");
	return CAIRN_OK;
}

/* The "answers" member of row: an array of non-empty strings, copied. */
static int get_answers(struct eval_ctx *c, const struct json *row,
		       int required, const char *path, size_t line,
		       struct eval_qresult *q)
{
	const struct json *v = json_get(row, "answers"), *a;
	size_t i = 0;

	if (!v || v->type == JSON_NULL) {
		if (required)
			return fail(c, CAIRN_INVALID,
				    "%s:%zu: missing \"answers\" (use [] for "
				    "a question with no answer)",
				    path, line);
		return CAIRN_OK;
	}
	if (v->type != JSON_ARRAY)
		return fail(c, CAIRN_INVALID,
			    "%s:%zu: \"answers\" must be an array of ids",
			    path, line);
	if (v->len > EVAL_MAX_ANSWERS)
		return fail(c, CAIRN_TOOBIG,
			    "%s:%zu: more than %d answers", path, line,
			    EVAL_MAX_ANSWERS);
	if (v->len == 0)
		return CAIRN_OK;
	q->answers = util_calloc(v->len, sizeof(char *));
	if (!q->answers)
		return fail(c, CAIRN_NOMEM, "out of memory");
	for (a = v->child; a; a = a->next) {
		if (a->type != JSON_STRING || a->len == 0 ||
		    strlen(a->str) != a->len)
			return fail(c, CAIRN_INVALID,
				    "%s:%zu: answer %zu is not a non-empty "
				    "string",
				    path, line, i + 1);
		q->answers[i] = util_strdup(a->str);
		if (!q->answers[i])
			return fail(c, CAIRN_NOMEM, "out of memory");
		i++;
		q->nanswers = i;
	}
	return CAIRN_OK;
}

/* What a line of one file turns into. */
typedef int (*row_fn)(struct eval_ctx *c, const struct json *row,
		      const char *path, size_t line);

/*
 * Read the JSON Lines file at path, one object per non-blank line (at most
 * EVAL_MAX_LINE bytes each), and hand each to fn. A missing file is
 * CAIRN_NOTFOUND (the caller decides whether that is an error).
 */
static int read_jsonl(struct eval_ctx *c, const char *path, row_fn fn)
{
	struct sbuf sb = SBUF_INIT;
	struct json *row = NULL;
	FILE *f = NULL;
	char perr[256];
	size_t line = 0;
	int ch = 0, rc = CAIRN_OK;

	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			rc = fail(c, CAIRN_NOTFOUND, "cannot open '%s': %s",
				  path, strerror(errno));
		else
			rc = fail(c, CAIRN_IO, "cannot open '%s': %s", path,
				  strerror(errno));
		goto out;
	}
	sbuf_init(&sb, EVAL_MAX_LINE);
	while (ch != EOF) {
		sbuf_reset(&sb);
		line++;
		for (;;) {
			ch = getc(f);
			if (ch == EOF || ch == '\n')
				break;
			sbuf_addc(&sb, (char)ch);
		}
		if (ferror(f)) {
			rc = fail(c, CAIRN_IO, "cannot read '%s': %s", path,
				  strerror(errno));
			goto out;
		}
		if (sb.err == CAIRN_TOOBIG) {
			rc = fail(c, CAIRN_TOOBIG,
				  "%s:%zu: line is longer than %zu bytes",
				  path, line, EVAL_MAX_LINE);
			goto out;
		}
		if (sb.err) {
			rc = fail(c, sb.err, "out of memory");
			goto out;
		}
		while (sb.len > 0 && (sb.buf[sb.len - 1] == '\r' ||
				      sb.buf[sb.len - 1] == ' ' ||
				      sb.buf[sb.len - 1] == '\t'))
			sb.buf[--sb.len] = '\0';
		if (sb.len == 0)
			continue;
		rc = json_parse(sb.buf, sb.len, &row, perr, sizeof(perr));
		if (rc) {
			rc = fail(c, rc, "%s:%zu: %s", path, line, perr);
			goto out;
		}
		if (row->type != JSON_OBJECT) {
			rc = fail(c, CAIRN_INVALID,
				  "%s:%zu: expected a JSON object", path,
				  line);
			goto out;
		}
		rc = fn(c, row, path, line);
		if (rc)
			goto out;
		json_free(row);
		row = NULL;
	}
out:
	json_free(row);
	sbuf_release(&sb);
	if (f)
		fclose(f);
	return rc;
}

/* A corpus.jsonl row: {id, text, title, time, group?}. */
static int corpus_row(struct eval_ctx *c, const struct json *row,
		      const char *path, size_t line)
{
	struct eval_doc *d;
	int rc;

	rc = grow((void **)&c->docs, &c->capdocs, c->ndocs, sizeof(*c->docs));
	if (rc)
		return fail(c, rc, "out of memory");
	d = &c->docs[c->ndocs++];
	memset(d, 0, sizeof(*d));
	d->line = line;
	rc = get_str(c, row, "id", 1, path, line, &d->id);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "text", 1, path, line, &d->text);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "title", 0, path, line, &d->title);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "time", 0, path, line, &d->time);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "group", 0, path, line, &d->group);
	if (rc)
		return rc;
	if (d->time && *d->time == '\0') {
		cairn_free(d->time);
		d->time = NULL;
	}
	return CAIRN_OK;
}

/* Does this queries.jsonl row pass --split (see struct eval_opts)? */
static int split_keeps(const struct eval_ctx *c, const struct json *row,
		       const char *id)
{
	const char *want = c->opts->split;
	const struct json *s;

	if (!want)
		return 1;
	s = json_get(row, "split");
	if (s && s->type == JSON_STRING)
		return strcmp(s->str, want) == 0;
	return strncmp(id, want, strlen(want)) == 0;
}

/* A queries.jsonl row: {id, text, answers, category, group?, split?}. */
static int query_row(struct eval_ctx *c, const struct json *row,
		     const char *path, size_t line)
{
	struct eval_report *r = c->r;
	struct eval_qresult *q;
	const char *id = json_get_str(row, "id");
	size_t oldcap;
	int rc;

	if (id && !split_keeps(c, row, id))
		return CAIRN_OK;
	oldcap = c->capq;
	rc = grow((void **)&r->q, &c->capq, r->nq, sizeof(*r->q));
	if (rc == CAIRN_OK && c->capq != oldcap) {
		size_t *nl = util_realloc(c->qline, c->capq * sizeof(size_t));

		if (!nl)
			rc = CAIRN_NOMEM;
		else
			c->qline = nl;
	}
	if (rc)
		return fail(c, rc, "out of memory");
	q = &r->q[r->nq];
	memset(q, 0, sizeof(*q));
	c->qline[r->nq] = line;
	r->nq++;
	rc = get_str(c, row, "id", 1, path, line, &q->id);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "text", 1, path, line, &q->text);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "category", 0, path, line, &q->category);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "group", 0, path, line, &q->group);
	if (rc == CAIRN_OK)
		rc = get_answers(c, row, 1, path, line, q);
	if (rc)
		return rc;
	if (!q->category) {
		q->category = util_strdup("");
		if (!q->category)
			return fail(c, CAIRN_NOMEM, "out of memory");
	}
	return CAIRN_OK;
}

/* A probes.jsonl row: a query row whose answers are empty (or absent). */
static int probe_row(struct eval_ctx *c, const struct json *row,
		     const char *path, size_t line)
{
	struct eval_probe *p;
	const struct json *a = json_get(row, "answers");
	int rc;

	if (a && a->type == JSON_ARRAY && a->len > 0)
		return fail(c, CAIRN_INVALID,
			    "%s:%zu: a probe must have no answers", path,
			    line);
	rc = grow((void **)&c->probes, &c->capprobes, c->nprobes,
		  sizeof(*c->probes));
	if (rc)
		return fail(c, rc, "out of memory");
	p = &c->probes[c->nprobes++];
	memset(p, 0, sizeof(*p));
	rc = get_str(c, row, "text", 1, path, line, &p->text);
	if (rc == CAIRN_OK)
		rc = get_str(c, row, "group", 0, path, line, &p->group);
	return rc;
}

/* ======================================================= temporary stores */

/* nftw callback: remove one entry (children first, FTW_DEPTH). */
static int rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Remove a directory tree we made; a missing one is fine. */
static void rm_tree(const char *path)
{
	if (path && *path)
		nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The rows of one store: indices into c->docs and c->r->q. */
struct eval_job {
	const char *group; /* the group (per_group), or NULL for the pooled run */
	size_t *docs;      /* indices of its corpus rows */
	size_t ndocs;      /* entries in docs */
	size_t *queries;   /* indices of its queries */
	size_t nqueries;   /* entries in queries */
};

/* Call the progress callback; CAIRN_ERROR when it asks to stop. */
static int report_progress(struct eval_ctx *c, enum eval_phase phase,
			   size_t done, size_t total)
{
	if (!c->opts->progress)
		return CAIRN_OK;
	if (c->opts->progress(c->opts->user, phase, done, total))
		return fail(c, CAIRN_ERROR, "interrupted");
	return CAIRN_OK;
}

/*
 * Write one corpus row as a record. A row that holds something the secret
 * filter refuses is written again with the secret masked (CAIRN_WRITE_REDACT)
 * and counted, so that the corpus stays whole.
 */
static int load_doc(struct eval_ctx *c, cairn_db *db, const struct eval_doc *d)
{
	cairn_record rec;
	int rc;

	memset(&rec, 0, sizeof(rec));
	rec.id = d->id;
	rec.kind = (char *)"note";          /* one kind: no kind weight interferes */
	rec.status = (char *)"accepted";
	rec.origin = (char *)"human";
	rec.title = d->title ? d->title : (char *)"";
	rec.body = d->text;
	rec.time = d->time;
	rec.confidence = -1;
	rc = cairn_record_write(db, &rec, 0, NULL);
	if (rc == CAIRN_SECRET) {
		rc = cairn_record_write(db, &rec, CAIRN_WRITE_REDACT, NULL);
		if (rc == CAIRN_OK)
			c->r->redacted++;
	}
	if (rc)
		return fail(c, rc, "%s:%zu: %s", c->corpus_path, d->line,
			    cairn_errmsg(db));
	return CAIRN_OK;
}

/* qsort comparator for an array of string pointers. */
static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Count the answers of the job's queries not among the n sorted ids. */
static void count_unknown(struct eval_ctx *c, const struct eval_job *j,
			  const char *const *ids, size_t n)
{
	size_t i, k;

	for (i = 0; i < j->nqueries; i++) {
		const struct eval_qresult *q = &c->r->q[j->queries[i]];

		for (k = 0; k < q->nanswers; k++)
			if (!bsearch(&q->answers[k], ids, n, sizeof(*ids),
				     cmp_strp))
				c->r->unknown_answers++;
	}
}

/* Count the answers of the job's queries that name no row of its corpus. */
static int count_unknown_answers(struct eval_ctx *c, const struct eval_job *j)
{
	const char **ids = NULL;
	size_t i;

	if (j->nqueries == 0)
		return CAIRN_OK;
	ids = util_calloc(j->ndocs ? j->ndocs : 1, sizeof(*ids));
	if (!ids)
		return fail(c, CAIRN_NOMEM, "out of memory");
	for (i = 0; i < j->ndocs; i++)
		ids[i] = c->docs[j->docs[i]].id;
	qsort(ids, j->ndocs, sizeof(*ids), cmp_strp);
	count_unknown(c, j, ids, j->ndocs);
	cairn_free(ids);
	return CAIRN_OK;
}

/* Write the corpus rows of job j into db, in batches of EVAL_BATCH. */
static int load_rows(struct eval_ctx *c, cairn_db *db,
		     const struct eval_job *j)
{
	size_t i;
	int rc, in_batch = 0;

	rc = count_unknown_answers(c, j);
	if (rc)
		goto out;
	for (i = 0; i < j->ndocs; i++) {
		if (!in_batch) {
			rc = cairn_begin(db);
			if (rc) {
				rc = fail(c, rc, "%s", cairn_errmsg(db));
				goto out;
			}
			in_batch = 1;
		}
		rc = load_doc(c, db, &c->docs[j->docs[i]]);
		if (rc)
			goto out;
		c->r->corpus++;
		c->loaded++;
		if ((i + 1) % EVAL_BATCH == 0 || i + 1 == j->ndocs) {
			in_batch = 0;
			rc = cairn_commit(db);
			if (rc) {
				rc = fail(c, rc, "%s", cairn_errmsg(db));
				goto out;
			}
		}
		rc = report_progress(c, EVAL_PHASE_LOAD, c->loaded, c->ndocs);
		if (rc)
			goto out;
	}
out:
	if (in_batch)
		cairn_rollback(db);
	return rc;
}

/* ======================================================= seeded workspace */

/* Copy the regular file src to dst (created 0600). */
static int copy_file(struct eval_ctx *c, const char *src, const char *dst)
{
	char buf[65536];
	FILE *in = NULL, *out = NULL;
	size_t n;
	int rc = CAIRN_OK;

	in = fopen(src, "rb");
	if (!in) {
		rc = fail(c, CAIRN_IO, "cannot open '%s': %s", src,
			  strerror(errno));
		goto out;
	}
	out = fopen(dst, "wb");
	if (!out) {
		rc = fail(c, CAIRN_IO, "cannot create '%s': %s", dst,
			  strerror(errno));
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out)) {
		rc = fail(c, CAIRN_IO, "cannot copy '%s' to '%s': %s", src,
			  dst, strerror(errno));
		goto out;
	}
out:
	if (out && fclose(out) != 0 && rc == CAIRN_OK)
		rc = fail(c, CAIRN_IO, "cannot write '%s': %s", dst,
			  strerror(errno));
	if (in)
		fclose(in);
	return rc;
}

/*
 * Copy folder src to dst (created 0700): its folders and regular files, to
 * EVAL_COPY_DEPTH levels. Hidden entries and symlinks are left out, as
 * cairn_seed() skips them while walking.
 */
static int copy_tree(struct eval_ctx *c, const char *src, const char *dst,
		     int depth)
{
	char s[PATH_MAX], d[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *dir = NULL;
	int rc = CAIRN_OK;

	if (mkdir(dst, 0700) != 0) {
		rc = fail(c, CAIRN_IO, "cannot create '%s': %s", dst,
			  strerror(errno));
		goto out;
	}
	dir = opendir(src);
	if (!dir) {
		rc = fail(c, CAIRN_IO, "cannot open '%s': %s", src,
			  strerror(errno));
		goto out;
	}
	while (rc == CAIRN_OK && (de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue; /* hidden, ".", ".." */
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", src, de->d_name) >=
			    sizeof(s) ||
		    (size_t)snprintf(d, sizeof(d), "%s/%s", dst, de->d_name) >=
			    sizeof(d)) {
			rc = fail(c, CAIRN_TOOBIG, "path too long under '%s'",
				  src);
			break;
		}
		if (lstat(s, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) && depth + 1 < EVAL_COPY_DEPTH)
			rc = copy_tree(c, s, d, depth + 1);
		else if (S_ISREG(st.st_mode))
			rc = copy_file(c, s, d);
	}
out:
	if (dir)
		closedir(dir);
	return rc;
}

/* cairn_seed() progress, per file: forwarded; a stop request is kept. */
static void seed_progress(void *user, size_t done, size_t total)
{
	struct eval_ctx *c = user;

	if (!c->stop && report_progress(c, EVAL_PHASE_LOAD, done, total))
		c->stop = 1;
}

/*
 * Keep the distinct src_paths of a seed report in c->files, sorted. Only
 * files[0..nfiles) are owned copies; the rest of the array is scratch.
 */
static int keep_files(struct eval_ctx *c, const cairn_seed_report *rep)
{
	size_t i, n = 0;

	c->files = util_calloc(rep->n_items + 1, sizeof(*c->files));
	if (!c->files)
		return fail(c, CAIRN_NOMEM, "out of memory");
	for (i = 0; i < rep->n_items; i++)
		if (rep->items[i].action != CAIRN_SEED_RETIRED &&
		    rep->items[i].path)
			c->files[n++] = rep->items[i].path;
	qsort(c->files, n, sizeof(*c->files), cmp_strp);
	c->nfiles = 0;
	for (i = 0; i < n; i++) {
		char *p;

		if (c->nfiles > 0 &&
		    strcmp(c->files[c->nfiles - 1], c->files[i]) == 0)
			continue;
		p = util_strdup(c->files[i]); /* the report is released next */
		if (!p)
			return fail(c, CAIRN_NOMEM, "out of memory");
		c->files[c->nfiles++] = p;
	}
	return CAIRN_OK;
}

/*
 * Seed db (whose workspace root holds the copy of DIR/docs) from "docs",
 * without git, timing the cairn_seed() call alone. A seeding error names
 * its first message ("docs/x.md:3: error: ...").
 */
static int seed_store(struct eval_ctx *c, cairn_db *db,
		      const struct eval_job *j)
{
	static const char *const paths[] = { "docs" };
	cairn_seed_opts so;
	cairn_seed_report rep;
	double t0;
	int rc;

	memset(&so, 0, sizeof(so));
	so.no_git = 1;
	so.strict = 1; /* a corpus seeds whole or not at all */
	so.progress = seed_progress;
	so.user = c;
	t0 = (util_now_ms() / 1e3);
	rc = cairn_seed(db, paths, ARRAY_SIZE(paths), &so, &rep);
	c->r->seed_s += (util_now_ms() / 1e3) - t0;
	if (c->stop) {
		rc = CAIRN_ERROR; /* report_progress wrote the message */
		goto out;
	}
	if (rc) {
		const char *m = rep.messages ? rep.messages : cairn_errmsg(db);

		rc = fail(c, rc, "%s: seeding failed: %.*s", c->docs_path,
			  (int)strcspn(m, "\n"), m);
		goto out;
	}
	c->r->seed_files += rep.files;
	c->r->seed_records += rep.records;
	c->r->corpus += rep.files;
	c->loaded += rep.files;
	rc = keep_files(c, &rep);
	if (rc)
		goto out;
	count_unknown(c, j, (const char *const *)c->files, c->nfiles);
out:
	cairn_seed_report_release(&rep);
	return rc;
}

/*
 * When an embedding provider is configured (CAIRN_EMBED_* in the
 * environment: the temporary store has no settings of its own), embed the
 * store's records so that its recall is hybrid, as a reindexed workspace's
 * is. Lexical-only otherwise.
 */
static int embed_job(struct eval_ctx *c, cairn_db *db)
{
	struct embedder *e = NULL;
	struct vector_reindex_result res;
	int rc;

	rc = vector_embedder(db, &e);
	if (rc)
		return fail(c, rc, "embedding provider: %s", cairn_errmsg(db));
	if (!e)
		return CAIRN_OK;
	memset(&res, 0, sizeof(res));
	rc = vector_reindex(db, e, 0, NULL, NULL, &res);
	if (rc)
		return fail(c, rc, "embedding the corpus: %s",
			    cairn_errmsg(db));
	c->r->embedded += (size_t)res.embedded;
	if (!c->r->embed_identity[0])
		embed_identity_string(embed_identity(e), c->r->embed_identity,
				      sizeof(c->r->embed_identity));
	return CAIRN_OK;
}

/* Calibrate db from the probes that apply to job j (its group, or none). */
static int calibrate_job(struct eval_ctx *c, cairn_db *db,
			 const struct eval_job *j, double *floor_out,
			 int *calibrated)
{
	const char **texts = NULL;
	size_t i, n = 0;
	int rc = CAIRN_OK;

	*calibrated = 0;
	if (c->opts->no_floor || c->nprobes == 0)
		return CAIRN_OK;
	texts = util_calloc(c->nprobes, sizeof(*texts));
	if (!texts)
		return fail(c, CAIRN_NOMEM, "out of memory");
	for (i = 0; i < c->nprobes; i++) {
		const struct eval_probe *p = &c->probes[i];

		if (!p->group || !j->group || strcmp(p->group, j->group) == 0)
			texts[n++] = p->text;
	}
	if (n == 0)
		goto out;
	rc = cairn_calibrate(db, texts, n, floor_out);
	if (rc) {
		rc = fail(c, rc, "%s: calibration failed: %s", c->probes_path,
			  cairn_errmsg(db));
		goto out;
	}
	*calibrated = 1;
	c->r->probes += n;
out:
	cairn_free(texts);
	return rc;
}

/* Is id one of the n strings of list? */
static int seen_in(char *const *list, size_t n, const char *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], id) == 0)
			return 1;
	return 0;
}

/*
 * Render query qi's block exactly as the hook would (hook_inject.h: the
 * hook's recall, budget, floor, one entry per source) and keep the ids of its
 * entries; seeded, their files. Writes no receipt (the hook would).
 */
static int hook_query(struct eval_ctx *c, cairn_db *db, size_t qi)
{
	struct eval_qresult *q = &c->r->q[qi];
	struct hook_opts ho;
	struct hook_result hr;
	struct sbuf block = SBUF_INIT;
	cairn_result *res = NULL;
	size_t i;
	int rc;

	memset(&ho, 0, sizeof(ho));
	ho.budget = c->r->hook_budget;
	ho.k = c->r->hook_k;
	ho.no_receipt = 1;
	ho.any_answer = c->opts->hook_sweep;
	rc = hook_prompt_recall(db, q->text, &ho, &res);
	if (rc) {
		rc = fail(c, rc, "%s:%zu: query '%s' (hook): %s",
			  c->queries_path, c->qline[qi], q->id,
			  cairn_errmsg(db));
		goto out;
	}
	rc = hook_prompt_render(res, &ho, &block, &hr);
	q->hooked = 1;
	if (rc) {
		rc = fail(c, rc, "out of memory");
		goto out;
	}
	if (hr.injected > 0) {
		q->injected = util_calloc(hr.injected, sizeof(char *));
		if (!q->injected) {
			rc = fail(c, CAIRN_NOMEM, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < hr.injected; i++) {
		const cairn_record *r = res->hits[hr.shown[i]].rec;
		const char *id = c->r->seeded && r->src_path ? r->src_path
							      : r->id;

		q->stale += eval_record_stale(r);
		q->injected[i] = util_strdup(id);
		if (!q->injected[i]) {
			rc = fail(c, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		q->ninjected++;
		if (is_answer(id, (const char *const *)q->answers,
			      q->nanswers)) {
			q->hook_hit = 1;
			q->hook_relevant++;
		}
	}
	for (i = 0; i < block.len; i++) /* characters, not bytes */
		q->hook_chars += ((unsigned char)block.buf[i] & 0xC0) != 0x80;
	if (c->opts->hook_sweep) { /* eval_hook_sweep chooses from it */
		q->hook_res = res;
		res = NULL;
	}
out:
	sbuf_release(&block);
	cairn_result_free(res);
	return rc;
}

/*
 * Ask recall one query and keep the ids it returned, at most k. Seeded:
 * the hits' src_paths, each file once at its first (best) position, so
 * ranks count distinct files, not chunks.
 */
static int run_query(struct eval_ctx *c, cairn_db *db, size_t qi,
		     double *floor_seen, int *have_floor)
{
	struct eval_qresult *q = &c->r->q[qi];
	cairn_recall_opts ro;
	cairn_result *res = NULL;
	size_t i;
	int rc;

	memset(&ro, 0, sizeof(ro));
	ro.k = c->r->k;
	if (c->r->seeded) /* several chunks per file: ask for more */
		ro.k = c->r->k * EVAL_SEED_ASK > EVAL_MAX_K
			       ? EVAL_MAX_K
			       : c->r->k * EVAL_SEED_ASK;
	ro.no_floor = c->opts->no_floor;
	ro.no_receipt = 1;
	ro.statuses = c->opts->statuses;
	rc = cairn_recall(db, q->text, &ro, &res);
	if (rc) {
		rc = fail(c, rc, "%s:%zu: query '%s': %s", c->queries_path,
			  c->qline[qi], q->id, cairn_errmsg(db));
		goto out;
	}
	if (!*have_floor) {
		*floor_seen = res->floor;
		*have_floor = 1;
	}
	if (res->hybrid && !c->cos_noted) {
		/* the cosine floor gates hybrid hits: report it too */
		struct eval_report *r = c->r;

		if (r->cos_known == 0 || res->cos_floor < r->cos_floor_min)
			r->cos_floor_min = res->cos_floor;
		if (r->cos_known == 0 || res->cos_floor > r->cos_floor_max)
			r->cos_floor_max = res->cos_floor;
		r->cos_known++;
		r->cos_calibrated += res->cos_floor_calibrated ? 1 : 0;
		c->cos_sum += res->cos_floor;
		c->cos_noted = 1;
	}
	q->answer = res->answer;
	q->unseen = res->answer_unseen;
	for (i = 0; i < res->n; i++) {
		if (res->hits[i].lexical > q->lexical)
			q->lexical = res->hits[i].lexical;
		if (res->hits[i].cosine > q->cosine)
			q->cosine = res->hits[i].cosine;
	}
	if (res->n > 0) {
		q->returned = util_calloc(res->n, sizeof(char *));
		q->ret_answer = util_calloc(res->n, sizeof(double));
		if (!q->returned || !q->ret_answer) {
			rc = fail(c, CAIRN_NOMEM, "out of memory");
			goto out;
		}
	}
	q->nhits = res->n;
	/* every hit recall returned, also the chunks de-duplicated below */
	for (i = 0; i < res->n; i++)
		q->stale += eval_record_stale(res->hits[i].rec);
	for (i = 0; i < res->n && q->nreturned < (size_t)c->r->k; i++) {
		const char *id = res->hits[i].rec->id;

		if (c->r->seeded) {
			/* a file counts once, at its best chunk */
			id = res->hits[i].rec->src_path;
			if (!id || seen_in(q->returned, q->nreturned, id))
				continue;
		}
		q->ret_answer[q->nreturned] = res->hits[i].answer;
		q->returned[q->nreturned] = util_strdup(id);
		if (!q->returned[q->nreturned]) {
			rc = fail(c, CAIRN_NOMEM, "out of memory");
			goto out;
		}
		q->nreturned++;
	}
	eval_score_query((const char *const *)q->returned, q->nreturned,
			 (const char *const *)q->answers, q->nanswers,
			 &q->score);
	if (c->opts->hook)
		rc = hook_query(c, db, qi);
out:
	cairn_result_free(res);
	return rc;
}

/* Note the floor one store used, for the report's mean, min and max. */
static void note_floor(struct eval_ctx *c, double floor)
{
	struct eval_report *r = c->r;

	if (c->nfloors == 0 || floor < r->floor_min)
		r->floor_min = floor;
	if (c->nfloors == 0 || floor > r->floor_max)
		r->floor_max = floor;
	c->floor_sum += floor;
	c->nfloors++;
}

/* Add the store's records that default recall must not return (the same
 * rule as eval_record_stale) to the report. */
static int count_stale(struct eval_ctx *c, cairn_db *db)
{
	sqlite3_stmt *st = NULL;
	int src = sqlite3_prepare_v2(
		db->sql,
		"SELECT count(*) FROM main.records WHERE status NOT IN "
		"('accepted','unverified') OR coalesce(superseded_by, '') != ''",
		-1, &st, NULL);

	if (src == SQLITE_OK && (src = sqlite3_step(st)) == SQLITE_ROW) {
		c->r->stale_records += (size_t)sqlite3_column_int64(st, 0);
		src = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return src == SQLITE_DONE
		       ? CAIRN_OK
		       : fail(c, CAIRN_IO, "counting stale records: %s",
			      sqlite3_errmsg(db->sql));
}

/*
 * Build one temporary store for job j, calibrate it, answer its queries.
 * Seeded, the store is TMP/store-N/.cairn, so that its workspace root
 * TMP/store-N holds the copy of DIR/docs as "docs".
 */
/*
 * The off-topic questions of eval_opts.offtopic: one a line, blank lines
 * and '#' comments skipped, each at most EVAL_MAX_LINE bytes.
 */
static int read_offtopic(struct eval_ctx *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, lineno = 0, ncap = 0;
	ssize_t len;
	int rc = CAIRN_OK;

	if (!f)
		return fail(c, CAIRN_IO, "cannot read '%s': %s", path,
			    strerror(errno));
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if ((size_t)len > EVAL_MAX_LINE) {
			rc = fail(c, CAIRN_TOOBIG, "%s:%zu: line too long",
				  path, lineno);
			break;
		}
		if (len == 0 || line[0] == '#')
			continue;
		if (grow((void **)&c->offq, &ncap, c->noffq, sizeof(char *))) {
			rc = fail(c, CAIRN_NOMEM, "out of memory");
			break;
		}
		c->offq[c->noffq] = util_strdup(line);
		if (!c->offq[c->noffq]) {
			rc = fail(c, CAIRN_NOMEM, "out of memory");
			break;
		}
		c->noffq++;
	}
	if (rc == CAIRN_OK && ferror(f))
		rc = fail(c, CAIRN_IO, "cannot read '%s'", path);
	if (rc == CAIRN_OK && c->noffq == 0)
		rc = fail(c, CAIRN_INVALID, "'%s' holds no question", path);
	free(line);
	fclose(f);
	return rc;
}

/*
 * Ask the store every off-topic question as the scored queries are asked
 * (the same floor and statuses, no receipt): a question none of whose
 * hits comes back is quiet.
 */
static int run_offtopic(struct eval_ctx *c, cairn_db *db)
{
	cairn_recall_opts ro;
	size_t i;

	memset(&ro, 0, sizeof(ro));
	ro.k = 1;
	ro.no_floor = c->opts->no_floor;
	ro.no_receipt = 1;
	ro.statuses = c->opts->statuses;
	for (i = 0; i < c->noffq; i++) {
		cairn_result *res = NULL;
		int rc = cairn_recall(db, c->offq[i], &ro, &res);

		if (rc == CAIRN_INVALID) /* no searchable word: quiet */
			res = NULL;
		else if (rc)
			return fail(c, rc, "%s: off-topic question '%s': %s",
				    c->opts->offtopic, c->offq[i],
				    cairn_errmsg(db));
		c->r->offtopic++;
		c->r->offtopic_quiet += !res || res->n == 0;
		cairn_result_free(res);
	}
	return CAIRN_OK;
}

static int run_job(struct eval_ctx *c, const struct eval_job *j)
{
	char root[4200], dir[4300], docs[4300];
	cairn_open_opts oo;
	cairn_db *db = NULL;
	double t0 = (util_now_ms() / 1e3), t1, floor = 0, cal_floor = 0;
	size_t i;
	int rc, calibrated = 0, have_floor = 0;

	c->cos_noted = 0;
	snprintf(root, sizeof(root), "%s/store-%zu", c->tmp, c->r->stores);
	snprintf(dir, sizeof(dir), "%s", root);
	c->r->stores++;
	if (c->r->seeded) {
		snprintf(dir, sizeof(dir), "%s/.cairn", root);
		snprintf(docs, sizeof(docs), "%s/docs", root);
		if (mkdir(root, 0700) != 0) {
			rc = fail(c, CAIRN_IO, "cannot create '%s': %s", root,
				  strerror(errno));
			goto out;
		}
		rc = copy_tree(c, c->docs_path, docs, 0);
		if (rc)
			goto out;
	}
	memset(&oo, 0, sizeof(oo));
	oo.create = 1;
	oo.no_global = 1;
	rc = cairn_db_open(dir, &oo, &db);
	if (rc) {
		rc = fail(c, rc, "cannot create a temporary store in '%s': %s",
			  dir, cairn_errmsg(db));
		goto out;
	}
	/* the store is thrown away after the run: no fsync needed */
	sqlite3_exec(db->sql, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
	if (c->r->seeded)
		rc = seed_store(c, db, j);
	else
		rc = load_rows(c, db, j);
	if (rc)
		goto out;
	rc = count_stale(c, db);
	if (rc)
		goto out;
	rc = embed_job(c, db);
	if (rc)
		goto out;
	rc = calibrate_job(c, db, j, &cal_floor, &calibrated);
	if (rc)
		goto out;
	t1 = (util_now_ms() / 1e3);
	c->r->load_s += t1 - t0;
	for (i = 0; i < j->nqueries; i++) {
		rc = run_query(c, db, j->queries[i], &floor, &have_floor);
		if (rc)
			goto out;
		c->answered++;
		rc = report_progress(c, EVAL_PHASE_QUERY, c->answered,
				     c->r->nq);
		if (rc)
			goto out;
	}
	rc = run_offtopic(c, db);
	if (rc)
		goto out;
	c->r->query_s += (util_now_ms() / 1e3) - t1;
	c->r->calibrated += calibrated;
	if (!c->opts->no_floor && (have_floor || calibrated))
		note_floor(c, have_floor ? floor : cal_floor);
out:
	cairn_db_close(db);
	rm_tree(root);
	return rc;
}

/* ============================================================== grouping */

/* The group key of a row: "" stands for "no group". */
static const char *gkey(const char *group)
{
	return group ? group : "";
}

/* Sort state for index arrays (qsort has no user pointer). */
struct idx_sort {
	size_t idx;      /* index into docs or queries */
	const char *key; /* its group key */
};

/* Order by group key, then by file order (a stable sort). */
static int cmp_idx(const void *a, const void *b)
{
	const struct idx_sort *x = a, *y = b;
	int d = strcmp(x->key, y->key);

	if (d)
		return d;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * --per-group: one job per distinct group key over the corpus and the
 * queries, in key order. Rows without a group form the group "".
 */
static int run_groups(struct eval_ctx *c)
{
	struct idx_sort *ds = NULL, *qs = NULL;
	size_t *didx = NULL, *qidx = NULL;
	size_t i, di = 0, qi = 0, n;
	struct eval_job j;
	int rc = CAIRN_OK;

	ds = util_calloc(c->ndocs + 1, sizeof(*ds));
	qs = util_calloc(c->r->nq + 1, sizeof(*qs));
	didx = util_calloc(c->ndocs + 1, sizeof(*didx));
	qidx = util_calloc(c->r->nq + 1, sizeof(*qidx));
	if (!ds || !qs || !didx || !qidx) {
		rc = fail(c, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < c->ndocs; i++) {
		ds[i].idx = i;
		ds[i].key = gkey(c->docs[i].group);
	}
	for (i = 0; i < c->r->nq; i++) {
		qs[i].idx = i;
		qs[i].key = gkey(c->r->q[i].group);
	}
	qsort(ds, c->ndocs, sizeof(*ds), cmp_idx);
	qsort(qs, c->r->nq, sizeof(*qs), cmp_idx);
	while (di < c->ndocs || qi < c->r->nq) {
		const char *key;

		if (di >= c->ndocs)
			key = qs[qi].key;
		else if (qi >= c->r->nq)
			key = ds[di].key;
		else
			key = strcmp(ds[di].key, qs[qi].key) <= 0 ? ds[di].key
								  : qs[qi].key;
		memset(&j, 0, sizeof(j));
		j.group = key;
		j.docs = didx;
		j.queries = qidx;
		for (n = 0; di < c->ndocs && strcmp(ds[di].key, key) == 0; di++)
			didx[n++] = ds[di].idx;
		j.ndocs = n;
		for (n = 0; qi < c->r->nq && strcmp(qs[qi].key, key) == 0; qi++)
			qidx[n++] = qs[qi].idx;
		j.nqueries = n;
		rc = run_job(c, &j);
		if (rc)
			goto out;
	}
out:
	cairn_free(qidx);
	cairn_free(didx);
	cairn_free(qs);
	cairn_free(ds);
	return rc;
}

/* The pooled run: every corpus row in one store, every query against it. */
static int run_pooled(struct eval_ctx *c)
{
	struct eval_job j;
	size_t i;
	int rc = CAIRN_OK;

	memset(&j, 0, sizeof(j));
	j.docs = util_calloc(c->ndocs + 1, sizeof(size_t));
	j.queries = util_calloc(c->r->nq + 1, sizeof(size_t));
	if (!j.docs || !j.queries) {
		rc = fail(c, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < c->ndocs; i++)
		j.docs[i] = i;
	for (i = 0; i < c->r->nq; i++)
		j.queries[i] = i;
	j.ndocs = c->ndocs;
	j.nqueries = c->r->nq;
	rc = run_job(c, &j);
out:
	cairn_free(j.queries);
	cairn_free(j.docs);
	return rc;
}

/* ================================================================ totals */

/* Sum every query into r->all and its category, in query order. */
static int tally(struct eval_ctx *c)
{
	struct eval_report *r = c->r;
	size_t i, k;

	for (i = 0; i < r->nq; i++) {
		const struct eval_qresult *q = &r->q[i];

		for (k = 0; k < r->ncats; k++)
			if (strcmp(r->cats[k].name, q->category) == 0)
				break;
		if (k == r->ncats) {
			size_t cap = r->ncats;
			void *p = util_realloc(r->cats,
					       (cap + 1) * sizeof(*r->cats));

			if (!p)
				return fail(c, CAIRN_NOMEM, "out of memory");
			r->cats = p;
			memset(&r->cats[k], 0, sizeof(r->cats[k]));
			r->cats[k].name = util_strdup(q->category);
			if (!r->cats[k].name)
				return fail(c, CAIRN_NOMEM, "out of memory");
			r->ncats++;
		}
		eval_metrics_add(&r->all, q->nanswers, q->nreturned,
				 &q->score);
		eval_metrics_add(&r->cats[k].m, q->nanswers, q->nreturned,
				 &q->score);
		eval_metrics_add_stale(&r->all, q->stale);
		eval_metrics_add_stale(&r->cats[k].m, q->stale);
		if (r->hooked) {
			eval_metrics_add_hook(&r->all, q->nanswers,
					      q->ninjected, q->hook_hit);
			eval_metrics_add_hook(&r->cats[k].m, q->nanswers,
					      q->ninjected, q->hook_hit);
			eval_metrics_add_block(&r->all, q->ninjected,
					       q->hook_relevant, q->hook_chars);
			eval_metrics_add_block(&r->cats[k].m, q->ninjected,
					       q->hook_relevant,
					       q->hook_chars);
		}
	}
	return CAIRN_OK;
}

/* Free what eval_run() read into c (not the report). */
static void ctx_release(struct eval_ctx *c)
{
	size_t i;

	for (i = 0; i < c->ndocs; i++) {
		cairn_free(c->docs[i].id);
		cairn_free(c->docs[i].title);
		cairn_free(c->docs[i].text);
		cairn_free(c->docs[i].time);
		cairn_free(c->docs[i].group);
	}
	cairn_free(c->docs);
	for (i = 0; i < c->nprobes; i++) {
		cairn_free(c->probes[i].text);
		cairn_free(c->probes[i].group);
	}
	cairn_free(c->probes);
	cairn_free(c->qline);
	for (i = 0; i < c->nfiles; i++)
		cairn_free(c->files[i]);
	cairn_free(c->files);
	for (i = 0; i < c->noffq; i++)
		cairn_free(c->offq[i]);
	cairn_free(c->offq);
}

/* Run the evaluation of dataset folder dir (see eval.h). */
int eval_run(const char *dir, const struct eval_opts *opts,
	     struct eval_report **out, char *err, size_t errsize)
{
	static const struct eval_opts defaults;
	struct eval_ctx c;
	struct stat st;
	const char *tmpdir;
	double t0 = (util_now_ms() / 1e3);
	int rc, have_docs, have_corpus;

	*out = NULL;
	if (errsize > 0)
		err[0] = '\0';
	memset(&c, 0, sizeof(c));
	c.opts = opts ? opts : &defaults;
	c.err = err;
	c.errsize = errsize;
	c.r = util_calloc(1, sizeof(*c.r));
	if (!c.r) {
		rc = fail(&c, CAIRN_NOMEM, "out of memory");
		goto out;
	}
	c.r->k = c.opts->k ? c.opts->k : EVAL_DEFAULT_K;
	c.r->hooked = c.opts->hook != 0;
	c.r->hook_budget = c.opts->hook_budget ? c.opts->hook_budget
					       : HOOK_DEFAULT_BUDGET;
	c.r->hook_k = c.opts->hook_k ? c.opts->hook_k : HOOK_DEFAULT_K;
	if (c.r->hook_k < 1 || c.r->hook_k > HOOK_MAX_K) {
		rc = fail(&c, CAIRN_INVALID, "the hook's k must be 1..%d",
			  HOOK_MAX_K);
		goto out;
	}
	if (c.opts->hook && c.opts->no_floor) {
		rc = fail(&c, CAIRN_INVALID,
			  "the hook always applies the no-match floor: "
			  "--hook and --no-floor exclude each other");
		goto out;
	}
	if (c.r->k < 1 || c.r->k > EVAL_MAX_K) {
		rc = fail(&c, CAIRN_INVALID, "k must be 1..%d", EVAL_MAX_K);
		goto out;
	}
	if (!dir || !*dir) {
		rc = fail(&c, CAIRN_INVALID, "no dataset directory given");
		goto out;
	}
	snprintf(c.corpus_path, sizeof(c.corpus_path), "%s/corpus.jsonl",
		 dir);
	snprintf(c.queries_path, sizeof(c.queries_path), "%s/queries.jsonl",
		 dir);
	snprintf(c.probes_path, sizeof(c.probes_path), "%s/probes.jsonl",
		 dir);
	snprintf(c.docs_path, sizeof(c.docs_path), "%s/docs", dir);
	have_docs = stat(c.docs_path, &st) == 0 && S_ISDIR(st.st_mode);
	have_corpus = stat(c.corpus_path, &st) == 0 || errno != ENOENT;
	c.r->seeded = c.opts->seed || (!have_corpus && have_docs);
	if (c.r->seeded && !have_docs) {
		rc = fail(&c, CAIRN_IO, "'%s' is not a folder: nothing to seed",
			  c.docs_path);
		goto out;
	}
	if (c.r->seeded && c.opts->per_group) {
		rc = fail(&c, CAIRN_INVALID,
			  "per-group stores need corpus.jsonl groups; a "
			  "seeded workspace has none");
		goto out;
	}
	if (!c.r->seeded) {
		rc = read_jsonl(&c, c.corpus_path, corpus_row);
		if (rc == CAIRN_NOTFOUND)
			rc = CAIRN_IO;
		if (rc)
			goto out;
	}
	rc = read_jsonl(&c, c.queries_path, query_row);
	if (rc == CAIRN_NOTFOUND)
		rc = CAIRN_IO;
	if (rc)
		goto out;
	rc = read_jsonl(&c, c.probes_path, probe_row);
	if (rc == CAIRN_NOTFOUND) {
		rc = CAIRN_OK;
		if (errsize > 0)
			err[0] = '\0';
	}
	if (rc)
		goto out;
	if (c.opts->offtopic) {
		rc = read_offtopic(&c, c.opts->offtopic);
		if (rc)
			goto out;
	}
	if (c.r->nq == 0) {
		if (c.opts->split)
			rc = fail(&c, CAIRN_INVALID,
				  "no query in '%s' matches split '%s'",
				  c.queries_path, c.opts->split);
		else
			rc = fail(&c, CAIRN_INVALID, "'%s' holds no query",
				  c.queries_path);
		goto out;
	}
	tmpdir = c.opts->tmpdir;
	if (!tmpdir || !*tmpdir)
		tmpdir = getenv("TMPDIR");
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	snprintf(c.tmp, sizeof(c.tmp), "%s/cairn-eval-XXXXXX", tmpdir);
	if (!mkdtemp(c.tmp)) {
		rc = fail(&c, CAIRN_IO, "cannot create a directory in '%s': %s",
			  tmpdir, strerror(errno));
		c.tmp[0] = '\0';
		goto out;
	}
	if (c.opts->per_group)
		rc = run_groups(&c);
	else
		rc = run_pooled(&c);
	if (rc)
		goto out;
	rc = tally(&c);
	if (rc)
		goto out;
	if (c.nfloors > 0) {
		c.r->floor_known = 1;
		c.r->floor = c.floor_sum / (double)c.nfloors;
	}
	if (c.r->cos_known > 0)
		c.r->cos_floor = c.cos_sum / (double)c.r->cos_known;
	c.r->elapsed_s = (util_now_ms() / 1e3) - t0;
	*out = c.r;
	c.r = NULL;
out:
	rm_tree(c.tmp);
	ctx_release(&c);
	eval_report_free(c.r);
	return rc;
}

/* Free a report (see eval.h). */
void eval_report_free(struct eval_report *r)
{
	size_t i, k;

	if (!r)
		return;
	for (i = 0; i < r->nq; i++) {
		struct eval_qresult *q = &r->q[i];

		cairn_free(q->id);
		cairn_free(q->text);
		cairn_free(q->category);
		cairn_free(q->group);
		for (k = 0; k < q->nanswers; k++)
			cairn_free(q->answers[k]);
		cairn_free(q->answers);
		for (k = 0; k < q->nreturned; k++)
			cairn_free(q->returned[k]);
		cairn_free(q->returned);
		cairn_free(q->ret_answer);
		for (k = 0; k < q->ninjected; k++)
			cairn_free(q->injected[k]);
		cairn_free(q->injected);
		cairn_result_free(q->hook_res);
	}
	cairn_free(r->q);
	for (i = 0; i < r->ncats; i++)
		cairn_free(r->cats[i].name);
	cairn_free(r->cats);
	cairn_free(r);
}

/* ============================================== answerability: AUROC, sweep */

double eval_auroc(const struct eval_report *r, const char *cat)
{
	double wins = 0;
	size_t i, j, pos = 0, neg = 0;

	for (i = 0; i < r->nq; i++) {
		const struct eval_qresult *a = &r->q[i];

		if (a->nanswers == 0 ||
		    (cat && strcmp(a->category, cat) != 0))
			continue;
		pos++;
		for (j = 0; j < r->nq; j++) {
			const struct eval_qresult *b = &r->q[j];

			if (b->nanswers != 0)
				continue;
			wins += a->answer > b->answer	 ? 1.0
				: a->answer == b->answer ? 0.5
							 : 0.0;
		}
	}
	for (j = 0; j < r->nq; j++)
		neg += r->q[j].nanswers == 0;
	return pos && neg ? wins / ((double)pos * (double)neg) : -1;
}

int eval_sweep(const struct eval_report *r, struct eval_point *pts, size_t n)
{
	size_t p, i, j;

	if (r->floor_known)
		return -1;
	for (p = 0; p < n; p++) {
		double f = n > 1 ? (double)p / (double)(n - 1) : 0;
		double hf = f < CAIRN_DEFAULT_FLOOR ? f : CAIRN_DEFAULT_FLOOR;
		size_t ans = 0, hit3 = 0, na = 0, na_empty = 0, a_empty = 0;

		for (i = 0; i < r->nq; i++) {
			const struct eval_qresult *q = &r->q[i];
			size_t kept = 0;
			int found = 0;

			/* as recall applies a floor: the question, then each hit */
			for (j = 0; j < q->nreturned && q->answer > f; j++) {
				if (!(q->ret_answer[j] > hf))
					continue;
				kept++;
				if (kept <= 3 && q->nanswers &&
				    is_answer(q->returned[j],
					      (const char *const *)q->answers,
					      q->nanswers))
					found = 1;
			}
			if (q->nanswers) {
				ans++;
				hit3 += found;
				a_empty += kept == 0;
			} else {
				na++;
				na_empty += kept == 0;
			}
		}
		pts[p].floor = f;
		pts[p].r3 = ans ? (double)hit3 / (double)ans : 0;
		pts[p].no_answer_empty = na ? (double)na_empty / (double)na : 0;
		pts[p].answerable_empty = ans ? (double)a_empty / (double)ans : 0;
	}
	return 0;
}

int eval_hook_sweep(const struct eval_report *r, struct eval_hook_point *pts,
		    size_t n)
{
	size_t p, i, j, k = r->hook_k > 0 ? (size_t)r->hook_k
					  : HOOK_DEFAULT_K;

	if (!r->hooked)
		return -1;
	for (p = 0; p < n; p++) {
		double f = n > 1 ? (double)p / (double)(n - 1) : 0;
		size_t ans = 0, hit = 0, na = 0, quiet = 0, inj = 0, ent = 0;

		for (i = 0; i < r->nq; i++) {
			const struct eval_qresult *q = &r->q[i];
			size_t sel[HOOK_MAX_K], ns = 0;
			int found = 0;

			if (q->hook_res)
				ns = hook_select(q->hook_res, k, f, sel);
			for (j = 0; j < ns; j++) {
				const cairn_record *rec =
					q->hook_res->hits[sel[j]].rec;
				const char *id = r->seeded && rec->src_path
							 ? rec->src_path
							 : rec->id;

				found |= is_answer(id, (const char *const *)
							       q->answers,
						   q->nanswers);
			}
			inj += ns > 0;
			ent += ns;
			if (q->nanswers) {
				ans++;
				hit += found;
			} else {
				na++;
				quiet += ns == 0;
			}
		}
		pts[p].floor = f;
		pts[p].inject = ans ? (double)hit / (double)ans : 0;
		pts[p].quiet = na ? (double)quiet / (double)na : 0;
		pts[p].entries = inj ? (double)ent / (double)inj : 0;
	}
	return 0;
}

/* ================================================================== JSON */

/* Append v rounded to 4 decimals, as "0.8" rather than "0.8000". */
void eval_add_num4(struct sbuf *sb, double v)
{
	long long t;
	long long ip, fp;
	char frac[8];
	int n;

	if (!isfinite(v) || fabs(v) > 1e14) {
		json_add_num(sb, v);
		return;
	}
	t = llround(v * 10000.0);
	if (t < 0) {
		sbuf_addc(sb, '-');
		t = -t;
	}
	ip = t / 10000;
	fp = t % 10000;
	sbuf_addf(sb, "%lld", ip);
	if (fp == 0)
		return;
	snprintf(frac, sizeof(frac), "%04lld", fp);
	n = 4;
	while (n > 0 && frac[n - 1] == '0')
		frac[--n] = '\0';
	sbuf_addf(sb, ".%s", frac);
}

/* A rate, or null when undefined. */
static void add_rate(struct sbuf *sb, const struct eval_metrics *m,
		     enum eval_metric_kind kind)
{
	double v = eval_metric(m, kind);

	if (v < 0)
		sbuf_adds(sb, "null");
	else
		eval_add_num4(sb, v);
}

/* The metric keys of one set of figures, without braces. */
static void add_metrics(struct sbuf *sb, const struct eval_metrics *m)
{
	sbuf_adds(sb, "\"recall@1\":");
	add_rate(sb, m, EVAL_R1);
	sbuf_adds(sb, ",\"recall@3\":");
	add_rate(sb, m, EVAL_R3);
	sbuf_adds(sb, ",\"recall@5\":");
	add_rate(sb, m, EVAL_R5);
	sbuf_adds(sb, ",\"recall@10\":");
	add_rate(sb, m, EVAL_R10);
	sbuf_adds(sb, ",\"mrr\":");
	add_rate(sb, m, EVAL_MRR);
	sbuf_adds(sb, ",\"ndcg@10\":");
	add_rate(sb, m, EVAL_NDCG10);
	sbuf_addf(sb, ",\"answerable\":%zu,\"no_answer\":%zu,"
		  "\"no_answer_empty\":%zu",
		  m->answerable, m->no_answer, m->no_answer_empty);
	sbuf_adds(sb, ",\"injection_hit_rate\":");
	add_rate(sb, m, EVAL_INJECTION);
	sbuf_adds(sb, ",\"no_answer_nothing_injected\":");
	add_rate(sb, m, EVAL_NOTHING_INJECTED);
	sbuf_adds(sb, ",\"stale_hit_rate\":");
	add_rate(sb, m, EVAL_STALE_HIT);
	sbuf_addf(sb, ",\"stale_hits\":%zu", m->stale_hits);
	if (m->hooked)
		sbuf_addf(sb, ",\"hook_block\":{\"prompts_injected\":%zu,"
			  "\"entries\":%zu,\"relevant_entries\":%zu,"
			  "\"chars\":%zu}",
			  m->hook_prompts, m->hook_entries, m->hook_relevant,
			  m->hook_chars);
}

/* The AUROC of category cat (NULL: all), or null. */
static void add_auroc(struct sbuf *sb, const struct eval_report *r,
		      const char *cat)
{
	double v = eval_auroc(r, cat);

	if (v < 0)
		sbuf_adds(sb, "null");
	else
		eval_add_num4(sb, v);
}

/* The report as one JSON object (see eval.h). */
void eval_report_json(struct sbuf *sb, const struct eval_report *r,
		      const char *dataset)
{
	size_t i;

	sbuf_addc(sb, '{');
	add_metrics(sb, &r->all);
	sbuf_adds(sb, ",\"by_category\":{");
	for (i = 0; i < r->ncats; i++) {
		if (i)
			sbuf_addc(sb, ',');
		json_add_strz(sb, r->cats[i].name);
		sbuf_addc(sb, ':');
		sbuf_addc(sb, '{');
		add_metrics(sb, &r->cats[i].m);
		sbuf_addc(sb, '}');
	}
	sbuf_adds(sb, "},\"answer_auroc\":{\"all\":");
	add_auroc(sb, r, NULL);
	for (i = 0; i < r->ncats; i++) {
		if (eval_auroc(r, r->cats[i].name) < 0)
			continue;
		sbuf_addc(sb, ',');
		json_add_strz(sb, r->cats[i].name);
		sbuf_addc(sb, ':');
		add_auroc(sb, r, r->cats[i].name);
	}
	sbuf_adds(sb, "},\"dataset\":");
	json_add_strz(sb, dataset);
	sbuf_addf(sb, ",\"corpus\":%zu,\"queries\":%zu,\"stale_records\":%zu,"
		  "\"floor\":",
		  r->corpus, r->nq, r->stale_records);
	if (r->floor_known)
		eval_add_num4(sb, r->floor);
	else
		sbuf_adds(sb, "null");
	sbuf_adds(sb, ",\"cos_floor\":");
	if (r->cos_known)
		eval_add_num4(sb, r->cos_floor);
	else
		sbuf_adds(sb, "null");
	sbuf_addf(sb, ",\"cos_floor_calibrated\":%d", r->cos_calibrated);
	sbuf_addf(sb, ",\"redacted\":%zu,\"elapsed_s\":", r->redacted);
	eval_add_num4(sb, r->elapsed_s);
	if (r->seeded) {
		sbuf_addf(sb, ",\"seed\":{\"files\":%zu,\"records\":%zu,"
			  "\"seconds\":",
			  r->seed_files, r->seed_records);
		eval_add_num4(sb, r->seed_s);
		sbuf_addc(sb, '}');
	}
	if (r->hooked)
		sbuf_addf(sb, ",\"hook\":{\"budget\":%zu,\"k\":%d}",
			  r->hook_budget, r->hook_k);
	if (r->offtopic) {
		sbuf_addf(sb, ",\"offtopic\":{\"asked\":%zu,\"quiet\":%zu,"
			  "\"quiet_rate\":",
			  r->offtopic, r->offtopic_quiet);
		eval_add_num4(sb, (double)r->offtopic_quiet /
				      (double)r->offtopic);
		sbuf_addc(sb, '}');
	}
	if (r->embed_identity[0]) {
		sbuf_addf(sb, ",\"vectors\":{\"embedded\":%zu,\"identity\":",
			  r->embedded);
		json_add_strz(sb, r->embed_identity);
		sbuf_addc(sb, '}');
	}
	sbuf_addc(sb, '}');
}

/* One query as a JSON line (see eval.h). */
void eval_qresult_json(struct sbuf *sb, const struct eval_qresult *q)
{
	size_t i;

	sbuf_adds(sb, "{\"id\":");
	json_add_strz(sb, q->id);
	sbuf_adds(sb, ",\"text\":");
	json_add_strz(sb, q->text);
	sbuf_adds(sb, ",\"category\":");
	json_add_strz(sb, q->category);
	sbuf_adds(sb, ",\"answers\":[");
	for (i = 0; i < q->nanswers; i++) {
		if (i)
			sbuf_addc(sb, ',');
		json_add_strz(sb, q->answers[i]);
	}
	sbuf_addf(sb, "],\"rank\":%zu,\"stale\":%zu,\"answer\":",
		  q->score.rank, q->stale);
	eval_add_num4(sb, q->answer);
	sbuf_adds(sb, ",\"lexical\":");
	eval_add_num4(sb, q->lexical);
	sbuf_adds(sb, ",\"unseen\":");
	eval_add_num4(sb, q->unseen);
	sbuf_adds(sb, ",\"cosine\":");
	eval_add_num4(sb, q->cosine);
	sbuf_adds(sb, ",\"returned\":[");
	for (i = 0; i < q->nreturned; i++) {
		if (i)
			sbuf_addc(sb, ',');
		json_add_strz(sb, q->returned[i]);
	}
	sbuf_adds(sb, "],\"returned_answer\":[");
	for (i = 0; i < q->nreturned && q->ret_answer; i++) {
		if (i)
			sbuf_addc(sb, ',');
		eval_add_num4(sb, q->ret_answer[i]);
	}
	sbuf_addc(sb, ']');
	if (q->hooked) {
		sbuf_adds(sb, ",\"injected\":[");
		for (i = 0; i < q->ninjected; i++) {
			if (i)
				sbuf_addc(sb, ',');
			json_add_strz(sb, q->injected[i]);
		}
		sbuf_addc(sb, ']');
	}
	sbuf_adds(sb, "}\n");
}
