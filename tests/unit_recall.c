/*
 * unit_recall.c -- recall ranks exactly as FTS5's own bm25() does, however
 * few rows it reads (recall.c: cairn_rank's heap and the bound that skips
 * a row's length, and the MaxScore passes that leave rows out of the
 * MATCH). The reference is the plain query
 *   SELECT ... ORDER BY bm25(records_fts, 2.0, 1.0) LIMIT 100
 * over the OR of the question's terms, on the same connection: the ids
 * must come in the same order and every score must be equal bit for bit.
 *
 * The store is made for the shortcuts to matter: 4 000 records, so that
 * more rows match than recall's heap keeps (800); a term in every record
 * (idf at FTS5's floor), two in ~1 600 and ~1 840 records (never
 * together: the first MaxScore pass takes the rarer and leaves out the
 * other, whose rows say it often, in the title, and fill the top 100, so
 * the second pass is needed) and a rare one. Negative controls: built with
 * -DCAIRN_MUTATE_NO_RANK_BOUND (rows skipped without the bound) or
 * -DCAIRN_MUTATE_NO_PRUNE_CHECK (the first pass trusted unchecked),
 * test_same_as_bm25 fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cairn.h"
#include "store.h"
#include "test.h"
#include "tokenize.h"

#define NREC 4000

static unsigned long long rng = 12345;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng >> 33) % n);
}

/* Append word n times (at least once when n > 0). */
static void add_word(char *buf, size_t size, const char *w, unsigned n)
{
	while (n-- > 0) {
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, "%s%s", len ? " " : "", w);
	}
}

static void fill(cairn_db *db)
{
	static const char *const filler[] = {
		"lorem", "ipsum", "dolor", "amet", "consectetur", "adipiscing",
		"elit", "sed", "eiusmod", "tempor", "incididunt", "labore",
		"dolore", "magna", "aliqua", "enim", "minim", "veniam",
		"quis", "nostrud", "exercitation", "ullamco", "laboris",
		"nisi", "aliquip", "commodo", "consequat", "duis", "aute",
		"irure",
	};
	char title[256], body[2048], id[16];
	unsigned i, k;

	CHECK_INT(cairn_begin(db), CAIRN_OK);
	for (i = 0; i < NREC; i++) {
		cairn_record r;

		title[0] = body[0] = '\0';
		add_word(title, sizeof(title), filler[rnd(30)], 1);
		add_word(title, sizeof(title), filler[rnd(30)], 1);
		for (k = 0; k < 5 + rnd(60); k++)
			add_word(body, sizeof(body), filler[rnd(30)], 1);
		add_word(body, sizeof(body), "omnia", 1 + rnd(3));
		k = rnd(100); /* one of the two mid terms, or neither */
		if (k < 40) /* rarer, said once in the body */
			add_word(body, sizeof(body), "borealis", 1);
		else if (k < 86 && rnd(2)) /* said often, in the title */
			add_word(title, sizeof(title), "glacies", 3 + rnd(4));
		else if (k < 86)
			add_word(body, sizeof(body), "glacies", 3 + rnd(4));
		if (rnd(100) < 2)
			add_word(body, sizeof(body), "zephyrus", 1 + rnd(2));
		memset(&r, 0, sizeof(r));
		snprintf(id, sizeof(id), "t%05u", i); /* rowid order = id order */
		r.id = id;
		r.kind = (char *)"note";
		r.title = title;
		r.body = body;
		r.origin = (char *)"human";
		r.status = (char *)"accepted";
		r.confidence = -1;
		CHECK_INT(cairn_record_write(db, &r, 0, NULL), CAIRN_OK);
	}
	CHECK_INT(cairn_commit(db), CAIRN_OK);
}

/*
 * The plain FTS5 ranking of question q's terms, checked against recall;
 * only records of default statuses when filtered.
 */
static void compare_f(cairn_db *db, const char *q, int filtered)
{
	cairn_recall_opts o;
	cairn_result *res = NULL;
	char match[1024] = "", *terms, *w, *save = NULL;
	sqlite3_stmt *st = NULL;
	size_t i = 0;

	memset(&o, 0, sizeof(o));
	o.k = 100;
	o.no_floor = 1;
	o.no_receipt = 1;
	CHECK_INT(cairn_recall(db, q, &o, &res), CAIRN_OK);
	if (!res)
		return;
	CHECK_INT(res->n, 100);
	/* the same terms, each as recall escapes it */
	terms = strdup(res->terms);
	for (w = strtok_r(terms, " ", &save); w; w = strtok_r(NULL, " ", &save))
		snprintf(match + strlen(match), sizeof(match) - strlen(match),
			 "%s\"%c%s\"", match[0] ? " OR " : "", TOK_RAW, w);
	free(terms);
	CHECK(sqlite3_prepare_v2(db->sql,
				 filtered
					 ? "SELECT r.id, bm25(records_fts, 2.0, "
					   "1.0) FROM records_fts JOIN records r "
					   "ON r.rid = records_fts.rowid WHERE "
					   "records_fts MATCH ?1 AND r.status IN "
					   "('accepted', 'unverified') ORDER BY "
					   "bm25(records_fts, 2.0, 1.0) LIMIT 100"
					 : "SELECT r.id, bm25(records_fts, 2.0, "
					   "1.0) FROM records_fts JOIN records r "
					   "ON r.rid = records_fts.rowid WHERE "
					   "records_fts MATCH ?1 ORDER BY "
					   "bm25(records_fts, 2.0, 1.0) LIMIT 100",
				 -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW && i < res->n) {
		const char *id = (const char *)sqlite3_column_text(st, 0);
		double s = -sqlite3_column_double(st, 1);

		CHECK_MSG(strcmp(res->hits[i].rec->id, id) == 0,
			  "%s: hit %zu is %s, bm25() ranks %s there", q, i,
			  res->hits[i].rec->id, id);
		CHECK_MSG(res->hits[i].bm25 == s, "%s: %s scores %.17g, not %.17g",
			  q, id, res->hits[i].bm25, s);
		i++;
	}
	CHECK_INT(i, 100);
	sqlite3_finalize(st);
	cairn_result_free(res);
}

static void compare(cairn_db *db, const char *q)
{
	compare_f(db, q, 0);
}

/*
 * EVIDENCE-OF: recall p50 on 100k records: the shortcuts of
 * cairn_rank change no hit, no order and no score.
 */
static void test_same_as_bm25(void)
{
	cairn_db *db = test_store("rank", NULL, 0);

	if (!db)
		return;
	fill(db);
	compare(db, "zephyrus borealis glacies");
	compare(db, "omnia borealis");
	compare(db, "glacies omnia zephyrus");
	compare(db, "borealis glacies");
	compare(db, "omnia");
	cairn_db_close(db);
}

/*
 * When the status filter removes most of the best rows, the heap of
 * ranked rows is too small for the pool: recall ranks again with a larger
 * one (x RECALL_GROW), then every row. Same hits, order and scores as
 * filtering the plain ranking.
 */
static void test_filtered_pool(void)
{
	/* the statuses to set, then two questions to compare */
	static const char *const phase[][3] = {
		/* three records in four superseded: the heap's first rows
		 * fall short, a heap 8x larger does not */
		{ "UPDATE records SET status = 'superseded' WHERE rid % 4 != 0",
		  "omnia", "glacies omnia zephyrus" },
		/* all but one in fifteen: every matching row */
		{ "UPDATE records SET status = CASE WHEN rid % 15 = 0 THEN "
		  "'accepted' ELSE 'superseded' END",
		  "omnia", "borealis glacies" },
	};
	cairn_db *db = test_store("rank-filtered", NULL, 0);
	size_t i;

	if (!db)
		return;
	fill(db);
	for (i = 0; i < sizeof(phase) / sizeof(phase[0]); i++) {
		CHECK_INT(sqlite3_exec(db->sql, phase[i][0], NULL, NULL, NULL),
			  SQLITE_OK);
		compare_f(db, phase[i][1], 1);
		compare_f(db, phase[i][2], 1);
	}
	cairn_db_close(db);
}

void unit_recall(void)
{
	RUN(test_same_as_bm25);
	RUN(test_filtered_pool);
}
