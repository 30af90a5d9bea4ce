/*
 * unit_seed.c -- seeding file-backed records from Markdown (SPEC 4.1):
 * the status mapping, chunking, ids, idempotence, facts files,
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
#include "seed_int.h"
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

/* All or nothing, as --strict. */
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

/* EVIDENCE-OF: the ADR status mapping keeps standing knowledge recallable */
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
		/* what real repositories write */
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
		{ "2019-04-01: Accepted", "accepted", NULL, NULL },
		{ "Completed", "accepted", NULL, NULL },
		{ "RFC", "unverified", NULL, NULL },
		{ "Superseeded by ADR-3", "superseded", NULL, "ADR-3" },
		{ "已废弃（见 ADR-3）", "historical", NULL, NULL },
		/* statuses written as sentences (docs/SEED.md) */
		{ "Gathering information. We are starting with Bulma.",
		  "unverified", NULL, NULL },
		{ "The board approved it in May.", "accepted", NULL, NULL },
		{ "We rejected it after the pilot.", "accepted", "rejected",
		  NULL },
		{ "This one is now superseded by ADR 9.", "superseded", NULL,
		  "ADR 9" },
		{ "It is under discussion in the guild.", "unverified", NULL,
		  NULL },
		{ "我们已接受这个方案。", "accepted", NULL, NULL },
	};
	static const char *const bad[] = {
		"Frobnicated", "", "Accepted or Maybe", "candidate", "or",
		"Not sure", "Maybe later", "🤷", "Accepted | ???", "Acceptedish",
		/* sentences no rule maps: a negation, words that disagree,
		 * a clear word only after the first sentence */
		"We have not accepted it.", "It was never approved.",
		"We don't agree. Accepted later.",
		"Such as proposed, accepted, rejected.",
		"We are starting with Bulma. It was accepted.",
		"我们还没有接受。",
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

/* EVIDENCE-OF: an unknown status is an error naming file:line; nothing is written */
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

/* EVIDENCE-OF: a bad file is reported and skipped, the rest seeded; its records stay as they were */
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

/* EVIDENCE-OF: Rejected stays recallable with its outcome; Superseded by X links to X */
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

/* EVIDENCE-OF: chunking: whole when short; H1-H3 sections, merged and split; no bare heading */
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

/* EVIDENCE-OF: stable ids; idempotent by content hash; revisions kept; deleted files retire */
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

/* EVIDENCE-OF: ids depend on path + heading path, not on order or other files */
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

/* EVIDENCE-OF: facts files: one record per item, own status and key; false leaves recall */
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

/* EVIDENCE-OF: front matter gives kind, key, status, supersedes, date, id */
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

/* ------------------------------------------------- real repositories (18) */

/* The stored record of a file's first chunk. */
static cairn_record *first_of(cairn_db *db, const char *path)
{
	cairn_filter f;
	cairn_record **v = NULL, *hit = NULL;
	size_t n = 0, i;
	long best = 0;

	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	for (i = 0; i < n; i++)
		if (v[i]->src_path && strcmp(v[i]->src_path, path) == 0 &&
		    (!hit || v[i]->src_line < best)) {
			hit = v[i];
			best = v[i]->src_line;
		}
	for (i = 0; i < n; i++)
		if (v[i] == hit)
			v[i] = NULL;
	cairn_record_list_free(v, n);
	return hit;
}

/* Status, outcome-in-body and time of a file's first record. */
static void check_file(cairn_db *db, const char *path, const char *status,
		       const char *time)
{
	cairn_record *r = first_of(db, path);

	CHECK_MSG(r != NULL, "%s: no record", path);
	if (!r)
		return;
	CHECK_MSG(strcmp(r->status, status) == 0, "%s: status %s, not %s",
		  path, r->status, status);
	if (time)
		CHECK_MSG(r->time && strcmp(r->time, time) == 0,
			  "%s: time %s, not %s", path,
			  r->time ? r->time : "(none)", time);
	cairn_record_free(r);
}

/* EVIDENCE-OF: the date forms of real ADRs parse, an ambiguous day/month is marked */
static void test_date_forms(void)
{
	static const struct {
		const char *in, *iso;
		int ambiguous, dayfirst;
	} t[] = {
		{ "2020-09-24", "2020-09-24", 0, 0 },
		{ "2020-09-24T10:00:00Z", "2020-09-24", 0, 0 },
		{ "2020/09/24", "2020-09-24", 0, 0 },
		{ "24.09.2020", "2020-09-24", 0, 0 },
		{ "05/02/2018", "2018-02-05", 1, 0 },
		{ "13/05/2018", "2018-05-13", 0, 1 },
		{ "05/13/2018", "2018-05-13", 0, -1 },
		{ "07/07/2019", "2019-07-07", 0, 0 },
		{ "10/04/18", "2018-04-10", 1, 0 },
		{ "December 1, 2021", "2021-12-01", 0, 0 },
		{ "Dec 1st 2021", "2021-12-01", 0, 0 },
		{ "1 December 2021", "2021-12-01", 0, 0 },
		{ "Sept. 3, 2019", "2019-09-03", 0, 0 },
		{ "15th of March 2021", "2021-03-15", 0, 0 },
		{ "2021年12月1日", "2021-12-01", 0, 0 },
		{ "**2020-01-02** (updated)", "2020-01-02", 0, 0 },
	};
	static const char *const bad[] = {
		"someday", "2021-13-01", "31/31/2020", "December 2021",
		"DATE", "YYYY-MM-DD", "February 30, 2020", "",
	};
	struct seed_date d;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		int rc = seed_parse_date(t[i].in, strlen(t[i].in), &d);

		CHECK_MSG(rc == 0, "'%s' did not parse", t[i].in);
		if (rc)
			continue;
		CHECK_MSG(strcmp(d.iso, t[i].iso) == 0, "'%s': %s", t[i].in,
			  d.iso);
		CHECK_INT(d.ambiguous, t[i].ambiguous);
		CHECK_INT(d.dayfirst, t[i].dayfirst);
	}
	CHECK(seed_parse_date("05/02/2018", 10, &d) == 0);
	seed_date_order(&d, 0);
	CHECK_STR(d.iso, "2018-05-02");
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_MSG(seed_parse_date(bad[i], strlen(bad[i]), &d) != 0,
			  "'%s' should not parse", bad[i]);
}

/* EVIDENCE-OF: dates in list items, numeric and English forms; front matter and text agree; ambiguity warned */
static void test_dates(void)
{
	cairn_db *db = ws_open("dates");
	cairn_seed_report rep;
	int rc;

	put("docs/adr/0001-madr.md", "# Use MADR\n\n* Status: accepted\n"
				     "* Deciders: ann\n* Date: 2020-09-24\n\n"
				     "## Context\n\nWe need a format.\n");
	put("docs/adr/0002-old.md", "# 2. Old format\n\nDate: 05/02/2018\n\n"
				    "## Status\n\nAccepted\n\n## Context\n\nOld.\n");
	put("docs/adr/0003-front.md", "---\ndate: December 1, 2021\n---\n"
				      "# 3. Front\n\nText.\n");
	put("docs/adr/0004-body.md", "# 4. Body\n\nDate: December 1, 2021\n\n"
				     "Text.\n");
	put("docs/adr/0008-zh.md", "# ADR-008：采用 Kafka\n\n## 状态\n\n"
				   "已接受（见 ADR-3）\n\n## 日期\n\n2026-09-08\n\n"
				   "## 背景\n\n需要队列。\n");
	put("docs/adr/0007-in-status.md", "# 7. In status\n\n## Status\n\n"
					  "Accepted on 2022-03-04\n\nText.\n");
	put("docs/adr/0005-bad.md", "---\ndate: the day after\n---\n"
				    "# 5. Bad date\n\nDate: 2020-03-04\n\nText.\n");
	put("docs/adr/0006-nocolon.md", "# 6. No colon\n\nDate 13/04/2018\n\n"
					"Text.\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_errors, 0); /* a bad date is no error */
	CHECK_MSG(rep.messages &&
			  strstr(rep.messages,
				 "docs/adr/0002-old.md:3: warning: date "
				 "05/02/2018 is day/month or month/day: read "
				 "as 2018-02-05") &&
			  strstr(rep.messages, "docs/adr/0005-bad.md:2: warning: "
					       "date 'the day after'"),
		  "messages: %s", rep.messages ? rep.messages : "(none)");
	cairn_seed_report_release(&rep);
	check_file(db, "docs/adr/0001-madr.md", "accepted", "2020-09-24");
	check_file(db, "docs/adr/0002-old.md", "accepted", "2018-02-05");
	check_file(db, "docs/adr/0003-front.md", "accepted", "2021-12-01");
	check_file(db, "docs/adr/0004-body.md", "accepted", "2021-12-01");
	check_file(db, "docs/adr/0005-bad.md", "accepted", "2020-03-04");
	check_file(db, "docs/adr/0006-nocolon.md", "accepted", "2018-04-13");
	check_file(db, "docs/adr/0007-in-status.md", "accepted", "2022-03-04");
	check_file(db, "docs/adr/0008-zh.md", "accepted", "2026-09-08");
	cairn_db_close(db);
	/* the other dates of the run decide the order: month first here */
	db = ws_open("dates-us");
	put("docs/adr/0001-a.md", "# 1. A\n\nDate: 12/25/2019\n\nText.\n");
	put("docs/adr/0002-b.md", "# 2. B\n\nDate: 05/02/2018\n\nText.\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK(rep.messages && strstr(rep.messages, "read as 2018-05-02 "
						   "(month first"));
	cairn_seed_report_release(&rep);
	check_file(db, "docs/adr/0001-a.md", "accepted", "2019-12-25");
	check_file(db, "docs/adr/0002-b.md", "accepted", "2018-05-02");
	cairn_db_close(db);
}

/* EVIDENCE-OF: real statuses in files map; a Status list item after others is read; unknown refused per file */
static void test_real_statuses(void)
{
	cairn_db *db = ws_open("realstatus");
	cairn_seed_report rep;
	cairn_record *r;
	int rc;

	put("docs/adr/0001-emoji.md", "# 1. Emoji\n\n## Status\n\n"
				      "✅ Accepted\n\n## Context\n\nText.\n");
	put("docs/adr/0002-comment.md", "# 2. Comment\n\n## Status\n\n"
					"Rejected (see 019)\n\n## Context\n\nText.\n");
	put("docs/adr/0003-list.md", "# 3. List\n\n* Date: 2021-02-03\n"
				     "* Status: proposed <!-- optional -->\n\n"
				     "## Context\n\nText.\n");
	put("docs/adr/0004-placeholder.md",
	    "# 4. Placeholder\n\nStatus: [Draft/Final/Postponed/Cancelled]\n\n"
	    "## Context\n\nText.\n");
	put("docs/adr/0005-hold.md", "---\nstatus: on hold\n---\n# 5. Hold\n\n"
				     "Text.\n");
	put("docs/adr/0006-unknown.md", "# 6. Unknown\n\n## Status\n\n"
					"Maybe later\n\n## Context\n\nText.\n");
	put("docs/adr/0007-table.md", "# 7. Table\n\n| Field | Value |\n"
				      "|---|---|\n| Status | Deprecated |\n"
				      "| Date | 2019-01-02 |\n\nText.\n");
	put("docs/adr/0010-docusaurus.md",
	    "---\nid: adrs-adr010\ntitle: ADR010: Use the Luxon Date Library\n"
	    "---\n\n| Created    | Status |\n| ---------- | ------ |\n"
	    "| 2021-01-16 | Open   |\n\n# ADR010: Luxon Date Library\n\n"
	    "## Context\n\nDates.\n");
	put("docs/adr/adr000-template.md",
	    "---\nid: adrs-adr000\ntitle: ADR000: [TITLE]\n---\n\n"
	    "## Context\n\n<!-- forces -->\n");
	put("docs/adr/0011-unchecked.md", "# 11. Unchecked\n\n## Status\n\n"
					  "- [ ] Accepted\n- [ ] Rejected\n\n"
					  "## Context\n\nText.\n");
	put("docs/adr/0012-prose.md", "# 12. HTTP errors\n\n## Context\n\n"
				      "Status: 404 is what the old API sent.\n\n"
				      "## Decision\n\nSend 410.\n");
	put("docs/adr/0008-log.md", "# 8. Log\n\n## Status\n\n2019-03-01 proposed\n"
				    "2019-04-01 deprecated\n\n## Context\n\nText.\n");
	put("docs/adr/0009-check.md", "# 9. Checklist\n\n## Status\n\n"
				      "- [ ] Proposed\n- [x] Rejected\n- [ ] "
				      "Accepted\n\n## Context\n\nText.\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_errors, 1);
	CHECK(rep.messages && strstr(rep.messages, "docs/adr/0006-unknown.md:5: "
						   "error: unknown status "
						   "'Maybe later'"));
	cairn_seed_report_release(&rep);
	check_file(db, "docs/adr/0001-emoji.md", "accepted", NULL);
	check_file(db, "docs/adr/0002-comment.md", "accepted", NULL);
	check_file(db, "docs/adr/0003-list.md", "unverified", "2021-02-03");
	check_file(db, "docs/adr/0004-placeholder.md", "unverified", NULL);
	check_file(db, "docs/adr/0005-hold.md", "unverified", NULL);
	check_file(db, "docs/adr/0007-table.md", "historical", "2019-01-02");
	check_file(db, "docs/adr/0008-log.md", "historical", NULL);
	check_file(db, "docs/adr/0010-docusaurus.md", "unverified", "2021-01-16");
	check_file(db, "docs/adr/0011-unchecked.md", "unverified", NULL);
	check_file(db, "docs/adr/0012-prose.md", "accepted", NULL);
	r = first_of(db, "docs/adr/adr000-template.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	r = first_of(db, "docs/adr/0009-check.md");
	CHECK(r && strcmp(r->status, "accepted") == 0 &&
	      strncmp(r->body, "Outcome: rejected.", 18) == 0);
	cairn_record_free(r);
	/* never read as unverified: the unknown one has no record at all */
	r = first_of(db, "docs/adr/0006-unknown.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	r = first_of(db, "docs/adr/0002-comment.md");
	CHECK(r && strncmp(r->body, "Outcome: rejected.", 18) == 0);
	cairn_record_free(r);
	cairn_db_close(db);
}

/* EVIDENCE-OF: decision folders are found: tool configuration, more defaults, by content, folder per ADR, .mdx */
static void test_discovery(void)
{
	static const char adr_body[] = "\n\n## Status\n\nAccepted\n\n"
				       "## Context\n\nSomething.\n\n"
				       "## Decision\n\nWe do it.\n";
	cairn_db *db = ws_open("discover");
	cairn_seed_report rep;
	cairn_record *r;
	char buf[512];
	int rc;

	put(".adr-dir", "doc/architecture/records\n");
	put("doc/architecture/records/0001-plain.md", "# 1. Plain\n\nJust text.\n");
	put(".log4brains.yml", "---\nproject:\n  name: x\n  adrFolder: ./design/adr\n"
			       "  packages:\n    - name: web\n      adrFolder: "
			       "./web/decisions-log\n");
	put("design/adr/20200101-first.md", "# First\n\n- Status: accepted\n"
					    "- Date: 2020-01-01\n");
	put("web/decisions-log/20200202-web.md", "# Web\n\nText.\n");
	snprintf(buf, sizeof(buf), "# 1. Use Kafka%s", adr_body);
	put("architecture-decision-record/0001-kafka.md", buf);
	snprintf(buf, sizeof(buf), "# ADR-2: Use Redis%s", adr_body);
	put("docs/architecture/adr/0002-redis.md", buf);
	/* at the root, and one folder per ADR */
	snprintf(buf, sizeof(buf), "# 3. Root one%s", adr_body);
	put("0003-root-one.md", buf);
	snprintf(buf, sizeof(buf), "# 4. Root two%s", adr_body);
	put("0004-root-two.md", buf);
	put("README.md", "# My project\n\nHow to build it.\n");
	put("notes.md", "# Notes\n\nSome notes.\n");
	snprintf(buf, sizeof(buf), "# 5. Use Go%s", adr_body);
	put("rfcs/0005-use-go/index.md", buf);
	snprintf(buf, sizeof(buf), "# 6. Use gRPC%s", adr_body);
	put("rfcs/0006-use-grpc/README.md", buf);
	snprintf(buf, sizeof(buf), "# 7. Use MDX%s", adr_body);
	put("docs/decisions/0007-mdx.mdx", buf);
	snprintf(buf, sizeof(buf), "# 8. Vendored%s", adr_body);
	put("node_modules/pkg/0008-vendored.md", buf);
	/* a found folder: its numbered files are read, other documents not */
	snprintf(buf, sizeof(buf), "# 1. Use S3%s", adr_body);
	put("design/records/0001-s3.md", buf);
	snprintf(buf, sizeof(buf), "# 2. Use SQS%s", adr_body);
	put("design/records/0002-sqs.md", buf);
	put("design/records/0003-short.md", "# 3. Short one\n\nWe use SNS.\n");
	put("design/records/overview.md", "# Overview\n\nHow it fits.\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_MSG(rc == CAIRN_OK, "seed: %s", cairn_errmsg(db));
	CHECK_INT(rep.n_errors, 0);
	cairn_seed_report_release(&rep);
	check_file(db, "doc/architecture/records/0001-plain.md", "accepted", NULL);
	check_file(db, "design/adr/20200101-first.md", "accepted", "2020-01-01");
	check_file(db, "web/decisions-log/20200202-web.md", "accepted", NULL);
	check_file(db, "architecture-decision-record/0001-kafka.md", "accepted",
		   NULL);
	check_file(db, "docs/architecture/adr/0002-redis.md", "accepted", NULL);
	check_file(db, "0003-root-one.md", "accepted", NULL);
	check_file(db, "0004-root-two.md", "accepted", NULL);
	check_file(db, "rfcs/0005-use-go/index.md", "accepted", NULL);
	check_file(db, "rfcs/0006-use-grpc/README.md", "accepted", NULL);
	check_file(db, "docs/decisions/0007-mdx.mdx", "accepted", NULL);
	r = first_of(db, "doc/architecture/records/0001-plain.md");
	CHECK(r && strcmp(r->kind, "adr") == 0);
	cairn_record_free(r);
	r = first_of(db, "rfcs/0006-use-grpc/README.md");
	CHECK(r && strcmp(r->title, "6. Use gRPC") == 0 &&
	      strcmp(r->kind, "adr") == 0);
	cairn_record_free(r);
	/* not decision records: no record */
	r = first_of(db, "README.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	r = first_of(db, "notes.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	r = first_of(db, "node_modules/pkg/0008-vendored.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	check_file(db, "design/records/0003-short.md", "accepted", NULL);
	r = first_of(db, "design/records/overview.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	/* idempotent; a root ADR that goes retires */
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_new + rep.n_changed + rep.n_retired, 0);
	cairn_seed_report_release(&rep);
	rm("0004-root-two.md");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rep.n_retired, 1);
	cairn_seed_report_release(&rep);
	cairn_db_close(db);
	/* nothing found says where it looked */
	db = ws_open("discover-none");
	put("src/main.c", "int main(void) { return 0; }\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.files, 0);
	CHECK(rep.searched && strstr(rep.searched, "docs/adr") &&
	      strstr(rep.searched, "anywhere in the workspace"));
	cairn_seed_report_release(&rep);
	cairn_db_close(db);
}

/* EVIDENCE-OF: titles: HTML comments dropped (ids kept), no-H1 files, front matter title and H1 not joined */
static void test_titles(void)
{
	cairn_db *db = ws_open("titles");
	cairn_seed_report rep;
	struct sbuf sb = SBUF_INIT;
	cairn_filter f;
	cairn_record **v = NULL;
	char hex[65], fid[17], want[17];
	size_t n = 0, i, seen = 0;
	int rc;

	sbuf_adds(&sb, "# ADR 1: Long\n\n## Status\n\nAccepted\n\n## Decision\n\n");
	para(&sb, "decision", 12);
	sbuf_adds(&sb, "### Positive Consequences <!-- optional -->\n\n");
	para(&sb, "good", 12);
	put("docs/adr/0001-long.md", sbuf_str(&sb));
	sbuf_reset(&sb);
	sbuf_adds(&sb, "## Status\n\nAccepted\n\n## Context\n\n");
	para(&sb, "context", 12);
	sbuf_adds(&sb, "## Decision\n\n");
	para(&sb, "decision", 12);
	put("docs/adr/0002-no-title.md", sbuf_str(&sb));
	sbuf_reset(&sb);
	sbuf_adds(&sb, "---\ntitle: ADR010: Use the Luxon Date Library\n"
		       "sidebar_label: Luxon\n---\n"
		       "# Use the Luxon Date Library\n\n## Context\n\n");
	para(&sb, "dates", 12);
	sbuf_adds(&sb, "## Decision\n\n");
	para(&sb, "luxon", 12);
	put("docs/adr/0010-luxon.md", sbuf_str(&sb));
	sbuf_release(&sb);
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_INT(rep.n_errors, 0);
	CHECK(rep.messages && strstr(rep.messages, "docs/adr/0010-luxon.md:2: "
						   "warning: front matter is "
						   "not valid YAML"));
	cairn_seed_report_release(&rep);
	/* the id of the commented section, as it was always derived */
	sbuf_addf(&sb, "file%cdocs/adr/0001-long.md", '\0');
	util_sha256_hex(sb.buf, sb.len, hex);
	fid[0] = 'f';
	memcpy(fid + 1, hex, 15);
	fid[16] = '\0';
	sbuf_reset(&sb);
	sbuf_addf(&sb, "%s%cADR 1: Long > Decision > Positive Consequences "
		       "<!-- optional -->",
		  fid, '\0');
	util_sha256_hex(sb.buf, sb.len, hex);
	want[0] = 'f';
	memcpy(want + 1, hex, 15);
	want[16] = '\0';
	sbuf_release(&sb);
	memset(&f, 0, sizeof(f));
	f.statuses = "all";
	CHECK(cairn_record_list(db, &f, &v, &n) == CAIRN_OK);
	for (i = 0; i < n; i++) {
		const char *p = v[i]->src_path;

		CHECK_MSG(strstr(v[i]->title, "<!--") == NULL &&
				  strstr(v[i]->src_heading, "<!--") == NULL,
			  "a comment in '%s' / '%s'", v[i]->title,
			  v[i]->src_heading);
		if (strcmp(p, "docs/adr/0001-long.md") == 0 &&
		    strstr(v[i]->src_heading, "Positive")) {
			seen++;
			CHECK_STR(v[i]->src_heading, "ADR 1: Long > Decision > "
						     "Positive Consequences");
			CHECK_STR(v[i]->title, "ADR 1: Long: Positive Consequences");
			CHECK_STR(v[i]->id, want);
		}
		if (strcmp(p, "docs/adr/0002-no-title.md") == 0 &&
		    strcmp(v[i]->id, fid) != 0 && v[i]->src_line == 1) {
			seen++;
			CHECK_STR(v[i]->title, "0002-no-title");
		}
		if (strcmp(p, "docs/adr/0010-luxon.md") == 0) {
			CHECK_MSG(strncmp(v[i]->title,
					  "ADR010: Use the Luxon Date Library",
					  34) == 0 &&
					  strstr(v[i]->title, "Library: Use") == NULL,
				  "title '%s'", v[i]->title);
			if (v[i]->src_line == 5)
				seen++;
		}
	}
	CHECK_INT(seen, 3);
	cairn_record_list_free(v, n);
	cairn_db_close(db);
}

/* EVIDENCE-OF: templates are skipped by content, not by a name with "template" in it */
static void test_templates(void)
{
	cairn_db *db = ws_open("templates");
	cairn_seed_report rep;
	cairn_record *r;
	size_t i, skipped = 0;
	int rc;

	put("docs/adr/0039-use-apache-velocity-as-template-engine.md",
	    "# 39. Use Apache Velocity as template engine\n\n## Status\n\n"
	    "Accepted\n\n## Decision\n\nVelocity.\n");
	put("docs/adr/adr-014-project-templates.md",
	    "# ADR 14: Project templates\n\nStatus: Proposed\n\nText.\n");
	put("docs/adr/template.md", "# [short title of solved problem and "
				    "solution]\n\n* Status: [proposed | rejected "
				    "| accepted | deprecated | … | superseded by "
				    "[ADR-0005](0005-example.md)]\n");
	put("docs/adr/blank.md", "# NUMBER. TITLE\n\nDate: DATE\n\n## Status\n\n"
				 "STATUS\n\n## Context\n\nThe issue.\n");
	put("docs/adr/madr.md", "---\nstatus: \"{proposed | rejected}\"\n"
				"date: {YYYY-MM-DD when decided}\n---\n"
				"# {short title, representative of solved "
				"problem}\n\n## Context and Problem Statement\n");
	put("docs/adr/adr-template-blank.md", "# Title\n\n## Status\n\n"
					      "What is the status?\n");
	rc = seed_mode(db, 0, 0, &rep);
	CHECK_INT(rc, CAIRN_OK);
	CHECK_MSG(rep.n_errors == 0 && rep.n_warnings == 0, "messages: %s",
		  rep.messages ? rep.messages : "(none)");
	CHECK_INT(rep.n_skipped, 4);
	for (i = 0; i < rep.n_sources; i++)
		if (rep.sources[i].skipped &&
		    strstr(rep.sources[i].skipped, "template"))
			skipped++;
	CHECK_INT(skipped, 4);
	cairn_seed_report_release(&rep);
	check_file(db, "docs/adr/0039-use-apache-velocity-as-template-engine.md",
		   "accepted", NULL);
	check_file(db, "docs/adr/adr-014-project-templates.md", "unverified",
		   NULL);
	r = first_of(db, "docs/adr/template.md");
	CHECK(r == NULL);
	cairn_record_free(r);
	CHECK_INT(count(db, "all"), 2);
	/* a file named as a PATH is always read */
	{
		const char *one = "docs/adr/template.md";
		cairn_seed_opts o;

		memset(&o, 0, sizeof(o));
		o.no_git = 1;
		o.dry_run = 1;
		rc = cairn_seed(db, &one, 1, &o, &rep);
		CHECK_INT(rc, CAIRN_OK);
		CHECK_INT(rep.records, 1);
		CHECK_INT(rep.n_skipped, 0);
		cairn_seed_report_release(&rep);
	}
	cairn_db_close(db);
}

/* EVIDENCE-OF: supersession outside the Status section, adr-tools' spelling, and the reverse link */
static void test_supersession(void)
{
	cairn_db *db = ws_open("supersede");
	cairn_record *o13, *n14, *a1, *a2;

	put("docs/adr/0013-old.md", "# 13. Old cache\n\n* Status: accepted\n"
				    "* Date: 2019-01-01\n\n## Decision\n\n"
				    "Use Memcached.\n\n"
				    "Superseded: 2019-12-19 by [ADR 14](0014-new.md)\n");
	put("docs/adr/0014-new.md", "# 14. New cache\n\n## Status\n\nAccepted\n\n"
				    "## Decision\n\nUse Redis.\n");
	put("docs/adr/0012-older.md", "# 12. Older cache\n\n## Status\n\n"
				      "Superseded by #13\n\n## Decision\n\n"
				      "Use files.\n");
	put("doc/adr/0001-first.md", "# 1. First Record\n\nDate: 1992-01-12\n\n"
				     "## Status\n\nSuperceded by [2. Second "
				     "Record](0002-second-record.md)\n\n"
				     "## Context\n\nOne.\n");
	put("doc/adr/0002-second-record.md", "# 2. Second Record\n\n"
					     "Date: 1992-01-12\n\n## Status\n\n"
					     "Accepted\n\nSupercedes [1. First "
					     "Record](0001-first.md)\n\n"
					     "## Context\n\nTwo.\n");
	seed_ok(db, 5, 0, 0, 0);
	o13 = first_of(db, "docs/adr/0013-old.md");
	n14 = first_of(db, "docs/adr/0014-new.md");
	a1 = first_of(db, "doc/adr/0001-first.md");
	a2 = first_of(db, "doc/adr/0002-second-record.md");
	CHECK(o13 && n14 && a1 && a2);
	if (o13 && n14 && a1 && a2) {
		CHECK_STR(o13->status, "superseded");
		CHECK_STR(o13->superseded_by, n14->id);
		CHECK_STR(n14->supersedes, o13->id); /* the reverse link */
		CHECK_STR(a1->status, "superseded");
		CHECK_STR(a1->superseded_by, a2->id);
		CHECK_STR(a2->supersedes, a1->id);
		CHECK_STR(a2->status, "accepted");
	}
	cairn_record_free(a1);
	a1 = first_of(db, "docs/adr/0012-older.md");
	CHECK(a1 && o13 && a1->superseded_by &&
	      strcmp(a1->superseded_by, o13->id) == 0);
	cairn_record_free(a1);
	cairn_record_free(o13);
	cairn_record_free(n14);
	cairn_record_free(a2);
	seed_ok(db, 0, 0, 5, 0); /* idempotent */
	cairn_db_close(db);
}

/* EVIDENCE-OF: decision records are recognised by content; templates by their title */
static void test_recognise(void)
{
	static const struct {
		const char *text;
		int adr;
	} t[] = {
		{ "# 3. Use Kafka\n\n## Status\n\nAccepted\n\n## Context\n\nX.\n", 1 },
		{ "# ADR-007: Kafka\n\n## Context\n\nX.\n\n## Decision\n\nY.\n", 1 },
		{ "# Use Lunr\n\n- Status: accepted\n\n## Context and Problem "
		  "Statement\n\nX.\n\n## Decision Outcome\n\nY.\n", 1 },
		{ "---\nstatus: accepted\n---\n# Luxon\n\n## Context\n\nX.\n\n"
		  "## Decision\n\nY.\n", 1 },
		{ "# Kafka\n\n## Context\n\nX.\n\n## Decision\n\nY.\n\n"
		  "## Consequences\n\nZ.\n", 1 },
		{ "# My project\n\n## Install\n\nmake\n\n## Usage\n\nrun it\n", 0 },
		{ "# 3. Notes\n\n```\n## Status\n## Context\n```\n", 0 },
		{ "# Kafka\n\n## Context\n\nX.\n\n## Decision\n\nY.\n", 0 },
		/* issue 33: a title that names a decision record, with one
		 * of its sections */
		{ "# Decision record for the queue\n\n## Decision Made\n\n"
		  "Kafka.\n", 1 },
		{ "# Architecture Decision Record: CSS framework\n\n"
		  "## Considered Alternatives\n\nBulma.\n", 1 },
		{ "# Decision Record for Teamwork\n\n## Alternatives "
		  "Considered\n\nLow trust.\n", 1 },
		{ "# Decision records\n\n## Decision\n\nAn index.\n", 0 },
		{ "# Decision record for the queue\n\nNo sections.\n", 0 },
	};
	static const char *const placeholders[] = {
		"[short title of solved problem and solution]",
		"{short title, representative of solved problem}",
		"NUMBER. TITLE", "Title", "ADR Template", "ADR-{number}: {title}",
		"<!-- -->",
	};
	static const char *const titles[] = {
		"39. Use Apache Velocity as template engine", "ADR 14: Project templates",
		"[WIP] Use Kafka", "Use title case in headings",
	};
	struct sbuf sb = SBUF_INIT;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		CHECK_MSG(seed_looks_like_adr(t[i].text, strlen(t[i].text)) ==
				  t[i].adr,
			  "case %zu: %s", i, t[i].text);
	/* a long document with ADR sections far down is no ADR */
	sbuf_adds(&sb, "# History\n\n");
	for (i = 0; i < 50; i++)
		sbuf_adds(&sb, "Some history line.\n");
	sbuf_adds(&sb, "## Context\n\nX.\n\n## Decision\n\nY.\n\n"
		       "## Consequences\n\nZ.\n");
	CHECK(!seed_looks_like_adr(sbuf_str(&sb), sb.len));
	sbuf_release(&sb);
	for (i = 0; i < ARRAY_SIZE(placeholders); i++)
		CHECK_MSG(seed_placeholder_title(placeholders[i]), "'%s'",
			  placeholders[i]);
	for (i = 0; i < ARRAY_SIZE(titles); i++)
		CHECK_MSG(!seed_placeholder_title(titles[i]), "'%s'", titles[i]);
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
	RUN(test_date_forms);
	RUN(test_dates);
	RUN(test_real_statuses);
	RUN(test_discovery);
	RUN(test_titles);
	RUN(test_templates);
	RUN(test_supersession);
	RUN(test_recognise);
}
