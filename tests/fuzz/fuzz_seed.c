/*
 * fuzz_seed.c -- libFuzzer target for seeding Markdown + front matter into
 * file-backed records (src/ingest/seed.c, cairn_seed).
 *
 * The first byte of the input picks the file the rest is written to (an
 * ADR, a decision, a facts file, a note, or the one ADR seeded at start-up,
 * so that updates and retirement run too); the file is seeded inside a
 * batch that is rolled back, so inputs do not pile up.
 *
 * Checks: cairn_seed returns one of its documented codes; on an error the
 * report lists at least one error (out of memory aside); the report's
 * counts add up (new + changed + unchanged + retired = items, records =
 * items - retired); on success every planned record can be read back with
 * origin "file", its path, valid UTF-8 text and the status planned, and a
 * second seed of the same file in the same batch changes nothing
 * (ids are stable, content hashes are deterministic).
 *
 *   make fuzz FUZZ_TARGETS=seed   (or build/san/replay_seed tests/fuzz/corpus/seed)
 */
#define _XOPEN_SOURCE 700
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "seed.h"

#define FUZZ_STORE_NAME "seed"
#include "fuzz_store.h"

static const char *const files[] = {
	"docs/adr/0001-base.md",       /* seeded at start-up: updates, retires */
	"docs/adr/0002-fuzz.md",       /* a new ADR */
	"docs/decisions/fuzz.md",      /* a decision */
	".cairn/records/fuzz.facts.md", /* a facts file by its name */
	"notes/fuzz.md",               /* a note named explicitly */
};

static void write_file(const char *rel, const void *data, size_t n)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "wb");
	if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
		abort();
}

static const char base[] =
	"---\nstatus: accepted\ndate: 2024-01-02\n---\n"
	"# Use PostgreSQL for orders\n\n## Context\n\nWe need transactions.\n\n"
	"## Decision\n\nPostgreSQL 16, one database per service.\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const subs[] = { "docs", "docs/adr",
					    "docs/decisions", "notes", "cache" };
	char sub[256];
	const char *p0 = files[0];
	cairn_seed_opts so;
	cairn_seed_report rep;

	(void)argc;
	(void)argv;
	fuzz_store_open(subs, sizeof(subs) / sizeof(subs[0]));
	snprintf(sub, sizeof(sub), "%s/.cairn/records", dir);
	if (mkdir(sub, 0700) != 0)
		abort();
	write_file(p0, base, sizeof(base) - 1);
	memset(&so, 0, sizeof(so));
	so.no_git = 1;
	memset(&rep, 0, sizeof(rep));
	if (cairn_seed(db, &p0, 1, &so, &rep) != CAIRN_OK || rep.n_new == 0)
		abort();
	cairn_seed_report_release(&rep);
	return 0;
}

static void check_report(const cairn_seed_report *r)
{
	size_t i, n[4] = { 0, 0, 0, 0 };

	for (i = 0; i < r->n_items; i++) {
		const cairn_seed_item *it = &r->items[i];

		if (it->action < 0 || it->action > 3 || !it->id || !it->path ||
		    !it->status || !it->kind || !cairn_status_valid(it->status) ||
		    !cairn_kind_valid(it->kind))
			abort();
		n[it->action]++;
	}
	if (n[CAIRN_SEED_NEW] != r->n_new ||
	    n[CAIRN_SEED_CHANGED] != r->n_changed ||
	    n[CAIRN_SEED_UNCHANGED] != r->n_unchanged ||
	    n[CAIRN_SEED_RETIRED] != r->n_retired ||
	    r->records != r->n_items - r->n_retired)
		abort();
}

/* Every planned record is in the store as planned. */
static void check_written(const cairn_seed_report *r)
{
	size_t i;

	for (i = 0; i < r->n_items; i++) {
		const cairn_seed_item *it = &r->items[i];
		cairn_record *rec = NULL;
		int rc = cairn_record_get(db, it->id, &rec);

		if (rc == CAIRN_NOMEM)
			continue;
		if (rc != CAIRN_OK) {
			fprintf(stderr, "seeded record %s not found: %s\n",
				it->id, cairn_errmsg(db));
			abort();
		}
		if (!util_streq(rec->origin, "file") ||
		    !util_streq(rec->src_path, it->path) ||
		    !util_streq(rec->status, it->status) || !rec->body ||
		    util_utf8_invalid_at(rec->body, strlen(rec->body)) >= 0) {
			fprintf(stderr, "record %s differs from its plan\n",
				it->id);
			abort();
		}
		cairn_record_free(rec);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *rel;
	cairn_seed_opts so;
	cairn_seed_report rep, again;
	int rc;

	if (!db)
		LLVMFuzzerInitialize(NULL, NULL);
	if (size < 1)
		return 0;
	rel = files[data[0] % (sizeof(files) / sizeof(files[0]))];
	write_file(rel, data + 1, size - 1);
	memset(&so, 0, sizeof(so));
	so.no_git = 1;
	so.strict = 1; /* the checks below are those of all or nothing */
	memset(&rep, 0, sizeof(rep));
	memset(&again, 0, sizeof(again));
	if (cairn_begin(db) != CAIRN_OK)
		abort();
	rc = cairn_seed(db, &rel, 1, &so, &rep);
	if (rc != CAIRN_OK && rc != CAIRN_INVALID && rc != CAIRN_SECRET &&
	    rc != CAIRN_TOOBIG && rc != CAIRN_NOMEM) {
		fprintf(stderr, "cairn_seed: unexpected %d: %s\n", rc,
			cairn_errmsg(db));
		abort();
	}
	if ((rc == CAIRN_INVALID || rc == CAIRN_SECRET) &&
	    (rep.n_errors == 0 || !rep.messages)) {
		fprintf(stderr, "cairn_seed: %d without a listed error: %s\n",
			rc, cairn_errmsg(db));
		abort();
	}
	if (rc == CAIRN_OK && rep.n_errors != 0)
		abort();
	check_report(&rep);
	if (rc == CAIRN_OK) {
		check_written(&rep);
		rc = cairn_seed(db, &rel, 1, &so, &again);
		if (rc == CAIRN_OK &&
		    (again.n_new || again.n_changed || again.n_retired)) {
			fprintf(stderr, "re-seeding %s changed records\n",
				rel);
			abort();
		}
		if (rc != CAIRN_OK && rc != CAIRN_NOMEM)
			abort();
	}
	cairn_seed_report_release(&again);
	cairn_seed_report_release(&rep);
	cairn_rollback(db);
	return 0;
}
