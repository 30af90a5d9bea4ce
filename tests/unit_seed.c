/*
 * unit_seed.c -- seeding file-backed records from Markdown (SPEC 4.1,
 * issue 6): the status mapping, chunking, ids, idempotence, facts files,
 * front matter, links and the read-only rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cairn.h"
#include "internal.h"
#include "seed.h"
#include "test.h"

/* ---------------------------------------------------------------- helpers */

static char ws_root[512]; /* the current test workspace */

static cairn_db *ws_open(const char *name)
{
	char full[256];

	snprintf(full, sizeof(full), "seed-%s", name);
	return test_store(full, ws_root, sizeof(ws_root));
}

/* Write a file under the workspace, creating its folders. */
static void put(const char *rel, const char *text)
{
	char path[1024];

	test_write_file(ws_root, rel, text, path);
}

static void rm(const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", ws_root, rel);
	CHECK(unlink(path) == 0);
}

/* Seed the default paths; strict: any error writes nothing. */
static int seed_mode(cairn_db *db, int dry, int strict, cairn_seed_report *rep)
{
	cairn_seed_opts o;

	memset(&o, 0, sizeof(o));
	o.dry_run = dry;
	o.strict = strict;
	o.no_git = 1;
	return cairn_seed(db, NULL, 0, &o, rep);
}

/* All or nothing, as --strict (the tests of issue 6). */
static int seed(cairn_db *db, int dry, cairn_seed_report *rep)
{
	return seed_mode(db, dry, 1, rep);
}

/* Seed and expect success; the report is released. */
static void seed_ok(cairn_db *db, size_t new_, size_t changed,
		    size_t unchanged, size_t retired)
{
	cairn_seed_report rep;
	int rc = seed(db, 0, &rep);

	CHECK_MSG(rc == CAIRN_OK, "seed: %s", cairn_errmsg(db));
	CHECK_INT(rep.n_new, new_);
	CHECK_INT(rep.n_changed, changed);
	CHECK_INT(rep.n_unchanged, unchanged);
	CHECK_INT(rep.n_retired, retired);
	cairn_seed_report_release(&rep);
}

/* Count stored records with this status ("all": any). */
static size_t count(cairn_db *db, const char *statuses)
{
	cairn_filter f;
	cairn_record **v = NULL;
	size_t n = 0;

	memset(&f, 0, sizeof(f));
	f.statuses = statuses;
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	cairn_record_list_free(v, n);
	return n;
}

/* The record whose source is path (first chunk: line given). */
static cairn_record *by_source(cairn_db *db, const char *path, long line)
{
	cairn_filter f;
	cairn_record **v = NULL, *hit = NULL;
	size_t n = 0, i;

	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	for (i = 0; i < n; i++) {
		if (v[i]->src_path && strcmp(v[i]->src_path, path) == 0 &&
		    (line == 0 || v[i]->src_line == line)) {
			hit = v[i];
			v[i] = NULL;
			break;
		}
	}
	cairn_record_list_free(v, n);
	return hit;
}

static const char adr_small[] =
	"# ADR 1: Use PostgreSQL\n"
	"\n"
	"Date: 2023-04-01\n"
	"\n"
	"## Status\n"
	"\n"
	"Accepted\n"
	"\n"
	"## Decision\n"
	"\n"
	"We use PostgreSQL 15 for the orders database.\n";

/* A paragraph of n sentences (about 60 characters each). */
static void para(struct sbuf *sb, const char *word, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sbuf_addf(sb, "The %s choice number %d matters for the team. ",
			  word, i);
	sbuf_adds(sb, "\n\n");
}

/* ---------------------------------------------------------------- mapping */

/* EVIDENCE-OF: issue 6 -- the ADR status mapping keeps standing knowledge recallable */
static void test_status_map(void)
{
	static const struct {
		const char *in, *status, *outcome, *target;
	} t[] = {
		{ "Accepted", "accepted", NULL, NULL },
		{ "  accepted. ", "accepted", NULL, NULL },
		{ "Approved", "accepted", NULL, NULL },
		{ "Proposed", "unverified", NULL, NULL },
		{ "Rejected", "accepted", "rejected", NULL },
		{ "Deprecated", "historical", NULL, NULL },
		{ "Superseded", "superseded", NULL, NULL },
		{ "Superseded by ADR-0005", "superseded", NULL, "ADR-0005" },
		{ "superseded by: DR008.", "superseded", NULL, "DR008" },
		{ "Accepted or Rejected", "unverified", NULL, NULL },
		{ "proposed | accepted", "unverified", NULL, NULL },
		{ "false", "false", NULL, NULL },
		{ "historical", "historical", NULL, NULL },
		/* issue 18: what real repositories write */
		{ "Accepted and shipped", "accepted", NULL, NULL },
		{ "Superseded later", "superseded", NULL, NULL },
		{ "✅ Accepted", "accepted", NULL, NULL },
		{ "🤔 Proposed", "unverified", NULL, NULL },
		{ "⌛️ Superseded by ADR-0007", "superseded", NULL, "ADR-0007" },
		{ "**Accepted** ✅", "accepted", NULL, NULL },
		{ "Rejected (see 019)", "accepted", "rejected", NULL },
		{ "Accepted (documenting an existing thing)", "accepted", NULL,
		  NULL },
		{ "Pending", "unverified", NULL, NULL },
		{ "Incomplete", "unverified", NULL, NULL },
		{ "on hold", "unverified", NULL, NULL },
		{ "On-Hold", "unverified", NULL, NULL },
		{ "Partly superseded", "accepted", NULL, NULL },
		{ "accepted; supersedes ADR-0045", "accepted", NULL, NULL },
		{ "Decided. We go with the monorepo.", "accepted", NULL, NULL },
		{ "[Draft/Final/Postponed/Cancelled]", "unverified", NULL, NULL },
		{ "[proposed | rejected | accepted | deprecated | … | "
		  "superseded by ADR-0005]",
		  "unverified", NULL, NULL },
		{ "Superceded by 0002", "superseded", NULL, "0002" },
		{ "Superseded: 2019-12-19 by ADR 14", "superseded", NULL,
		  "ADR 14" },
		{ "Deprecated, superseded by ADR 7", "superseded", NULL, "ADR 7" },
		{ "Cancelled", "accepted", "abandoned", NULL },
		{ "Obsolete", "historical", NULL, NULL },
		{ "已接受", "accepted", NULL, NULL },
		{ "已废弃（见 ADR-3）", "historical", NULL, NULL },
	};
	static const char *const bad[] = {
		"Frobnicated", "", "Accepted or Maybe", "candidate", "or",
		"Not sure", "Maybe later", "🤷", "Accepted | ???", "Acceptedish",
	};
	const char *st, *oc, *tg;
	size_t i, tl;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int rc = cairn_seed_map_status(t[i].in, &st, &oc, &tg, &tl);

		CHECK_MSG(rc == CAIRN_OK, "'%s' did not map", t[i].in);
		if (rc)
			continue;
		CHECK_STR(st, t[i].status);
		CHECK_MSG(util_streq(oc, t[i].outcome), "'%s': outcome %s",
			  t[i].in, oc ? oc : "(none)");
		if (t[i].target)
			CHECK_MSG(tg && tl == strlen(t[i].target) &&
					  memcmp(tg, t[i].target, tl) == 0,
				  "'%s': target '%.*s'", t[i].in,
				  tg ? (int)tl : 0, tg ? tg : "");
		else
			CHECK(tg == NULL);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_MSG(cairn_seed_map_status(bad[i], &st, &oc, &tg, &tl) ==
				  CAIRN_INVALID,
			  "'%s' should be an unknown status", bad[i]);
}

/* EVIDENCE-OF: issue 6 -- an unknown status is an error naming file:line; nothing is written */
static void test_unknown_status(void)
{
	cairn_db *db = ws_open("unknown");
	cairn_seed_report rep;
	int rc;

	put("docs/adr/0001-good.md", adr_small);
	put("docs/adr/0002-bad.md", "# ADR 2: Cache\n\n## Status\n\n"
				    "Frobnicated\n\n## Decision\n\nUse Redis.\n");
	rc = seed(db, 0, &rep);
	CHECK_INT(rc, CAIRN_INVALID);
	CHECK_INT(rep.n_errors, 1);
	CHECK_MSG(rep.messages &&
			  strstr(rep.messages, "docs/adr/0002-bad.md:5: error: "
					       "unknown status 'Frobnicated'"),
		  "messages: %s", rep.messages ? rep.messages : "(none)");
	CHECK(strstr(cairn_errmsg(db), "docs/adr/0002-bad.md:5") != NULL);
	CHECK_INT(count(db, "all"), 0); /* the good file is not written either */
	cairn_seed_report_release(&rep);
	cairn_db_close(db);
}

/* EVIDENCE-OF: issue 18 -- a bad file is reported and skipped, the rest seeded; its records stay as they were */
static void test_per_file_errors(void)
{
	cairn_db *db = ws_open("perfile");
	cairn_seed_report rep;
	cairn_record *a, *b;
	size_t i, bad = 0;
	int rc;

	put("docs/adr/0001-good.md", adr_small);
	put("docs/adr/0002-bad.md", "# ADR 2: Cache\n\n## Status\n\n"
				    "Frobnicated\n\n## Decision\n\nUse Redis.\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_errors, 1);
	CHECK_INT(rep.n_failed, 1);
	CHECK_INT(rep.n_new, 1);
	CHECK(rep.messages && strstr(rep.messages, "docs/adr/0002-bad.md:5: "
						   "error: unknown status "
						   "'Frobnicated'"));
	for (i = 0; i < rep.n_sources; i++)
		if (rep.sources[i].error) {
			bad++;
			CHECK_STR(rep.sources[i].path, "docs/adr/0002-bad.md");
		}
	CHECK_INT(bad, 1);
	cairn_seed_report_release(&rep);
	CHECK_INT(count(db, "all"), 1); /* the good file is written */
	/* a file that seeded fine and then breaks keeps its record as it was:
	 * not changed, not retired, provenance untouched */
	put("docs/adr/0002-bad.md", "# ADR 2: Cache\n\n## Status\n\n"
				    "Accepted\n\n## Decision\n\nUse Redis.\n");
	seed_ok(db, 1, 0, 1, 0);
	a = by_source(db, "docs/adr/0002-bad.md", 0);
	put("docs/adr/0002-bad.md", "\n\n# ADR 2: Cache\n\n## Status\n\n"
				    "Frobnicated\n\n## Decision\n\nUse "
				    "Memcached.\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_errors, 1);
	CHECK_INT(rep.n_retired, 0);
	CHECK_INT(rep.n_changed, 0);
	cairn_seed_report_release(&rep);
	b = by_source(db, "docs/adr/0002-bad.md", 0);
	CHECK(a && b && strcmp(a->id, b->id) == 0 && b->revision == 1 &&
	      b->src_line == a->src_line && strcmp(b->status, "accepted") == 0 &&
	      strstr(b->body, "Redis") != NULL);
	cairn_record_free(a);
	cairn_record_free(b);
	cairn_db_close(db);
}

/* EVIDENCE-OF: issue 6 -- Rejected stays recallable with its outcome; Superseded by X links to X */
static void test_adr_statuses(void)
{
	cairn_db *db = ws_open("statuses");
	cairn_record *a, *b, *c, *d, *e;

	put("docs/adr/0001-rust.md", "# ADR 1: Try Rust\n\n## Status\n\n"
				     "`Rejected`\n\n## Decision\n\nWe keep Ruby.\n");
	put("docs/adr/0002-old.md", "# ADR 2: Old queue\n\n## Status\n\n"
				    "Superseded by [ADR 3](0003-new.md)\n\n"
				    "## Decision\n\nUse SQS.\n");
	put("docs/adr/0003-new.md", "# ADR 3: New queue\n\n## Status\n\n"
				    "> Accepted\n\n## Decision\n\nUse Kafka.\n");
	put("docs/adr/0004-older.md", "# ADR 4: Older\n\n## Status\n\n"
				      "Superseded by ADR-0003\n\n## Decision\n\n"
				      "Use files.\n");
	put("docs/adr/0005-tpl.md", "# ADR 5: Template left in\n\n## Status\n\n"
				    "> Accepted or Rejected\n>\n> Valid statuses "
				    "are many.\n\n## Decision\n\nUse a pager.\n");
	seed_ok(db, 5, 0, 0, 0);
	a = by_source(db, "docs/adr/0001-rust.md", 0);
	b = by_source(db, "docs/adr/0002-old.md", 0);
	c = by_source(db, "docs/adr/0003-new.md", 0);
	d = by_source(db, "docs/adr/0004-older.md", 0);
	e = by_source(db, "docs/adr/0005-tpl.md", 0);
	CHECK(a && b && c && d && e);
	if (a && b && c && d && e) {
		CHECK_STR(a->status, "accepted");
		CHECK(strncmp(a->body, "Outcome: rejected.\n", 19) == 0);
		CHECK_STR(a->kind, "adr");
		CHECK_STR(b->status, "superseded");
		CHECK_STR(b->superseded_by, c->id);
		CHECK_STR(c->status, "accepted");
		CHECK_STR(d->status, "superseded");
		CHECK_STR(d->superseded_by, c->id);
		CHECK_STR(e->status, "unverified");
	}
	/* default listing (recall's set): all but the superseded ones */
	CHECK_INT(count(db, NULL), 3);
	cairn_record_free(a);
	cairn_record_free(b);
	cairn_record_free(c);
	cairn_record_free(d);
	cairn_record_free(e);
	cairn_db_close(db);
}

/* --------------------------------------------------------------- chunking */

/* EVIDENCE-OF: issue 6 -- chunking: whole when short; H1-H3 sections, merged and split; no bare heading */
static void test_chunking(void)
{
	cairn_db *db = ws_open("chunks");
	struct sbuf sb = SBUF_INIT;
	cairn_filter f;
	cairn_record **v = NULL;
	size_t n = 0, i, context = 0;
	int saw_fence = 0;

	put("docs/adr/0001-small.md", adr_small);
	sbuf_adds(&sb, "# ADR 2: Messaging\n\n## Status\n\nAccepted\n\n"
		       "## Context\n\n");
	para(&sb, "context", 8); /* about 400 characters each */
	para(&sb, "history", 8);
	para(&sb, "pressure", 8);
	sbuf_adds(&sb, "## Decision\n\nWe use Kafka.\n\n```\n## not a heading\n"
		       "```\n\n### Details\n\n");
	para(&sb, "detail", 4);
	sbuf_adds(&sb, "## Consequences\n\nMore operations work.\n\n"
		       "## Notes\n");
	put("docs/adr/0002-long.md", sbuf_str(&sb));
	sbuf_release(&sb);
	/* 0001 whole; 0002: title+status+context 1, context 2, context 3 +
	 * the small sections after it (docs/SEED.md's worked example) */
	seed_ok(db, 4, 0, 0, 0);
	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	for (i = 0; i < n; i++) {
		const char *b = v[i]->body;
		const char *p = b;
		int only_headings = 1;

		if (strcmp(v[i]->src_path, "docs/adr/0001-small.md") == 0) {
			/* a file that fits stays whole */
			CHECK_INT(v[i]->src_line, 1);
			CHECK(strstr(b, "PostgreSQL 15") && strstr(b, "# ADR 1"));
			continue;
		}
		/* no chunk is only headings */
		while (*p) {
			size_t l = strcspn(p, "\n");

			if (l > 0 && *p != '#')
				only_headings = 0;
			p += l;
			if (*p)
				p++;
		}
		CHECK_MSG(!only_headings, "bare heading chunk: %s", b);
		/* within ~800 characters (1.25 x for a small neighbour) */
		CHECK_MSG(strlen(b) <= 1000, "chunk of %zu bytes", strlen(b));
		if (strstr(v[i]->src_heading, "Context"))
			context++;
		/* a "heading" inside a code fence is code, not a section */
		CHECK(strstr(v[i]->src_heading, "not a heading") == NULL);
		if (strstr(b, "## not a heading")) {
			saw_fence = 1;
			CHECK(strstr(b, "## Decision") != NULL);
		}
		/* the over-long section was cut before a paragraph */
		if (v[i]->src_line == 11)
			CHECK_STR(v[i]->src_heading,
				  "ADR 2: Messaging > Context");
		CHECK(strncmp(v[i]->title, "ADR 2: Messaging", 16) == 0);
	}
	/* the over-long Context section was split on paragraph boundaries */
	CHECK_MSG(context >= 2, "context chunks: %zu", context);
	CHECK(saw_fence);
	cairn_record_list_free(v, n);
	cairn_db_close(db);
}

/* ------------------------------------------------------ ids, idempotence */

/* EVIDENCE-OF: issue 6 -- stable ids; idempotent by content hash; revisions kept; deleted files retire */
static void test_idempotence(void)
{
	cairn_db *db = ws_open("idem");
	cairn_seed_report rep;
	cairn_record *r1, *r2;
	char msg[256];
	int rc;

	put("docs/adr/0001-db.md", adr_small);
	put("docs/adr/0002-cache.md", "# ADR 2: Cache\n\nWe use Redis.\n");
	seed_ok(db, 2, 0, 0, 0);
	r1 = by_source(db, "docs/adr/0001-db.md", 0);
	CHECK(r1 && r1->revision == 1 && strcmp(r1->origin, "file") == 0);
	CHECK(r1 && strcmp(r1->src_heading, "ADR 1: Use PostgreSQL") == 0);
	/* seeding again touches nothing */
	seed_ok(db, 0, 0, 2, 0);
	/* a dry run plans and writes nothing */
	put("docs/adr/0001-db.md", "# ADR 1: Use PostgreSQL\n\n## Status\n\n"
				   "Accepted\n\n## Decision\n\nWe use "
				   "PostgreSQL 16 for the orders database.\n");
	rc = seed(db, 1, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_changed, 1);
	CHECK_INT(rep.dry_run, 1);
	cairn_seed_report_release(&rep);
	r2 = by_source(db, "docs/adr/0001-db.md", 0);
	CHECK(r2 && r2->revision == 1 && strstr(r2->body, "PostgreSQL 15"));
	cairn_record_free(r2);
	/* an edit updates the record in place: same id, old revision kept */
	seed_ok(db, 0, 1, 1, 0);
	r2 = by_source(db, "docs/adr/0001-db.md", 0);
	CHECK(r1 && r2 && strcmp(r1->id, r2->id) == 0);
	CHECK(r2 && r2->revision == 2 && strstr(r2->body, "PostgreSQL 16"));
	/* file-backed records are read-only (SPEC 4.1) */
	if (r2) {
		cairn_record ch;

		memset(&ch, 0, sizeof(ch));
		ch.body = (char *)"edited";
		ch.confidence = -1;
		CHECK_INT(cairn_record_revise(db, r2->id, &ch, 0),
			  CAIRN_READONLY);
		snprintf(msg, sizeof(msg), "file-backed: edit "
					   "docs/adr/0001-db.md:1");
		CHECK_STR(cairn_errmsg(db), msg);
		CHECK_INT(cairn_record_set_status(db, r2->id, NULL, "retired",
						  0),
			  CAIRN_READONLY);
	}
	/* a deleted file retires its records */
	rm("docs/adr/0002-cache.md");
	seed_ok(db, 0, 0, 1, 1);
	CHECK_INT(count(db, NULL), 1);
	CHECK_INT(count(db, "retired"), 1);
	/* and seeding again does not retire it twice */
	seed_ok(db, 0, 0, 1, 0);
	/* the file comes back: the same id, revived */
	put("docs/adr/0002-cache.md", "# ADR 2: Cache\n\nWe use Redis.\n");
	seed_ok(db, 0, 1, 1, 0);
	CHECK_INT(count(db, NULL), 2);
	cairn_record_free(r1);
	cairn_record_free(r2);
	cairn_db_close(db);
}

/* EVIDENCE-OF: issue 6 -- ids depend on path + heading path, not on order or other files */
static void test_stable_ids(void)
{
	cairn_db *db = ws_open("ids1");
	cairn_db *db2;
	cairn_record *a, *b;

	put("docs/adr/0002-cache.md", "# ADR 2: Cache\n\nWe use Redis.\n");
	seed_ok(db, 1, 0, 0, 0);
	a = by_source(db, "docs/adr/0002-cache.md", 0);
	cairn_db_close(db);
	db2 = ws_open("ids2");
	put("docs/adr/0001-other.md", "# ADR 1: Other\n\nSomething else.\n");
	put("docs/adr/0002-cache.md", "# ADR 2: Cache\n\nWe use Redis 7.\n");
	seed_ok(db2, 2, 0, 0, 0);
	b = by_source(db2, "docs/adr/0002-cache.md", 0);
	CHECK(a && b && strcmp(a->id, b->id) == 0);
	CHECK(a && a->id[0] == 'f' && strlen(a->id) == 16);
	cairn_record_free(a);
	cairn_record_free(b);
	cairn_db_close(db2);
}

/* ------------------------------------------------------------------ facts */

/* EVIDENCE-OF: issue 6 -- facts files: one record per item, own status and key; false leaves recall */
static void test_facts(void)
{
	cairn_db *db = ws_open("facts");
	cairn_seed_report rep;
	cairn_record *k = NULL;
	cairn_filter f;
	cairn_record **v = NULL;
	size_t n = 0, i;
	int rc, saw_false = 0;

	put(".cairn/records/infra.facts.md",
	    "# Infrastructure facts\n"
	    "\n"
	    "Short facts about the platform.\n"
	    "\n"
	    "## Database\n"
	    "\n"
	    "- [key=db.engine] The orders database is PostgreSQL 15.\n"
	    "- [false] The orders database is MySQL.\n"
	    "- [unverified, key=db.backup] Backups run nightly at 02:00\n"
	    "  and are kept for 30 days.\n"
	    "\n"
	    "## CI\n"
	    "\n"
	    "1. CI runs on GitHub Actions.\n");
	seed_ok(db, 4, 0, 0, 0);
	CHECK_INT(count(db, NULL), 3); /* the false fact is not listed */
	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	for (i = 0; i < n; i++) {
		CHECK_STR(v[i]->kind, "fact");
		if (strcmp(v[i]->status, "false") == 0) {
			saw_false = 1;
			CHECK_STR(v[i]->body, "The orders database is MySQL.");
			CHECK_INT(v[i]->src_line, 8);
			CHECK_STR(v[i]->src_heading,
				  "Infrastructure facts > Database");
		}
	}
	CHECK(saw_false);
	cairn_record_list_free(v, n);
	CHECK(cairn_record_read_key(db, "db.backup", NULL, &k) == CAIRN_OK);
	if (k) {
		CHECK_STR(k->status, "unverified");
		CHECK_STR(k->body, "Backups run nightly at 02:00\n"
				   "and are kept for 30 days.");
		CHECK_INT(k->src_line, 9);
		cairn_record_free(k);
	}
	/* a keyed fact keeps its id when its text changes */
	put(".cairn/records/infra.facts.md",
	    "# Infrastructure facts\n\n## Database\n\n"
	    "- [key=db.engine] The orders database is PostgreSQL 16.\n"
	    "- [false] The orders database is MySQL.\n"
	    "- [unverified, key=db.backup] Backups run nightly at 02:00\n"
	    "  and are kept for 30 days.\n\n## CI\n\n"
	    "1. CI runs on GitHub Actions.\n");
	seed_ok(db, 0, 1, 3, 0);
	CHECK(cairn_record_read_key(db, "db.engine", NULL, &k) == CAIRN_OK);
	CHECK(k && k->revision == 2);
	cairn_record_free(k);
	/* an unknown tag is an error naming file:line */
	put(".cairn/records/bad.facts.md", "# Bad\n\n- [maybe] Who knows.\n");
	rc = seed(db, 0, &rep);
	CHECK_INT(rc, CAIRN_INVALID);
	CHECK_MSG(rep.messages && strstr(rep.messages,
					 ".cairn/records/bad.facts.md:3: error: "
					 "unknown status 'maybe'"),
		  "messages: %s", rep.messages ? rep.messages : "(none)");
	cairn_seed_report_release(&rep);
	cairn_db_close(db);
}

/* ----------------------------------------------------------- front matter */

/* EVIDENCE-OF: issue 6 -- front matter gives kind, key, status, supersedes, date, id */
static void test_front_matter(void)
{
	cairn_db *db = ws_open("front");
	cairn_seed_report rep;
	cairn_record *r = NULL, *d = NULL;
	int rc;

	put("docs/decisions/deploy.md",
	    "---\n"
	    "kind: rule\n"
	    "key: deploy.window\n"
	    "status: deprecated\n"
	    "date: 2024-02-03\n"
	    "id: rule-deploy-window\n"
	    "supersedes: old.md\n"
	    "deciders: [ann, bob]\n"
	    "---\n"
	    "# Deploy window\n\nDeploys happen Tuesday to Thursday.\n");
	put("docs/decisions/old.md", "# Old deploy rule\n\nDeploy any day.\n");
	seed_ok(db, 2, 0, 0, 0);
	CHECK(cairn_record_get(db, "rule-deploy-window", &r) == CAIRN_OK);
	d = by_source(db, "docs/decisions/old.md", 0);
	if (r && d) {
		CHECK_STR(r->kind, "rule");
		CHECK_STR(r->key, "deploy.window");
		CHECK_STR(r->status, "historical");
		CHECK_STR(r->time, "2024-02-03");
		CHECK_STR(r->supersedes, d->id);
		CHECK_INT(r->src_line, 10);
		CHECK(strncmp(r->body, "# Deploy window", 15) == 0);
		CHECK_STR(d->kind, "decision"); /* from the folder */
	}
	cairn_record_free(r);
	cairn_record_free(d);
	/* an unknown kind is an error at its line */
	put("docs/decisions/bad.md", "---\ntitle: x\nkind: wish\n---\nText.\n");
	rc = seed(db, 0, &rep);
	CHECK_INT(rc, CAIRN_INVALID);
	CHECK_MSG(rep.messages && strstr(rep.messages,
					 "docs/decisions/bad.md:3: error: "
					 "unknown kind 'wish'"),
		  "messages: %s", rep.messages ? rep.messages : "(none)");
	cairn_seed_report_release(&rep);
	/* a secret refuses the file (SPEC: secrets never enter memory) */
	put("docs/decisions/bad.md",
	    "# Keys\n\nThe key is AKIAIOSFODNN7EXAMPLQ for now.\n");
	rc = seed(db, 0, &rep);
	CHECK_INT(rc, CAIRN_SECRET);
	CHECK(rep.messages && strstr(rep.messages, "docs/decisions/bad.md:3"));
	cairn_seed_report_release(&rep);
	cairn_db_close(db);
}

void unit_seed(void)
{
	RUN(test_status_map);
	RUN(test_unknown_status);
	RUN(test_per_file_errors);
	RUN(test_adr_statuses);
	RUN(test_chunking);
	RUN(test_idempotence);
	RUN(test_stable_ids);
	RUN(test_facts);
	RUN(test_front_matter);
}
