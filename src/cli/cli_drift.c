/*
 * cli_drift.c -- `cairn check` (records whose referenced files changed
 * since they were recorded) and `cairn verify` (a human re-affirms one).
 *
 * Layer: top (the cairn command), on the public API (cairn_drift_check,
 * cairn_record_verify, cairn_record_get).
 * Must never: change a record's text; `check` only reports (and keeps
 * git's counts for the hook), `verify` records the human act.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "internal.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_DRIFT 3

static const char check_help[] =
	"usage: cairn check [--all] [--json] [--weight W] [ID]\n"
	"\n"
	"List the records whose source moved on: each workspace record keeps the\n"
	"repository files it refers to (a seeded record's file; the Makefile,\n"
	"scripts and package.json a procedure or capability names; paths named\n"
	"in its text) with their Git blob ids from when it was written, seeded,\n"
	"captured or verified. A file that differs today is 'changed' (with the\n"
	"commits that touched it since and the lines added and removed, from\n"
	"git), one that is gone is 'deleted', or 'renamed' when HEAD holds the\n"
	"same content under another path.\n"
	"\n"
	"Recall and the hook mark such records (\"scripts/deploy.sh changed in\n"
	"3 commits since this was recorded\") and multiply their score by the\n"
	"down-weight (default 0.85); they never run git: the commit counts they\n"
	"show are the ones this command found last.\n"
	"\n"
	"  --all       list unchanged references too\n"
	"  --weight W  set the down-weight of a drifted record in recall (0..1;\n"
	"              1 turns it off) and exit\n"
	"  --json      one JSON object: {\"drifted\": N, \"refs\": [...]}\n"
	"  ID          only this record (id or unique prefix)\n"
	"\n"
	"A seeded record (from a Markdown file) is flagged only when the lines\n"
	"of its own chunk changed, not for an edit elsewhere in its file; it\n"
	"comes back in step with `cairn seed`. `cairn verify ID` re-affirms any\n"
	"other record against today's tree (--json: each drifted reference's\n"
	"\"fix\").\n"
	"exit status: 0 nothing drifted, 3 some reference drifted, 1 error,\n"
	"2 usage.\n";

static const char verify_help[] =
	"usage: cairn verify [--json] ID\n"
	"\n"
	"Re-affirm record ID against today's tree, as a human act: the files it\n"
	"refers to are recorded anew (`cairn check` and recall stop marking it)\n"
	"and the act is a new revision (proof \"verified by a human against the\n"
	"tree at COMMIT on DATE\"; `cairn history` keeps the previous one).\n";

/* Is record id file-backed (seeded from a Markdown file)? Re-seeding,
 * not `cairn verify`, brings it in step with its file. */
static int seeded(cairn_db *db, const char *id)
{
	cairn_record *r = NULL;
	int file = 0;

	if (cairn_record_get(db, id, &r) == CAIRN_OK)
		file = r->origin && strcmp(r->origin, "file") == 0;
	cairn_record_free(r);
	return file;
}

static void print_ref(const cairn_drift *d)
{
	printf("%s  %-8s  %s", d->record_id, d->state, d->path);
	if (d->renamed_to)
		printf(" -> %s", d->renamed_to);
	if (d->commits >= 0)
		printf("  %ld commit%s", d->commits, d->commits == 1 ? "" : "s");
	if (d->lines_added >= 0)
		printf("  +%ld -%ld", d->lines_added, d->lines_removed);
	printf("\n    [%s] ", d->kind ? d->kind : "?");
	fputs(d->title && *d->title ? d->title : "(untitled)", stdout);
	printf(" · recorded %.10s (%s)\n", d->recorded ? d->recorded : "?",
	       d->how ? d->how : "?");
}

static void json_ref(struct sbuf *sb, const cairn_drift *d, int file)
{
	sbuf_adds(sb, "{\"id\":");
	json_add_strz(sb, d->record_id);
	sbuf_adds(sb, ",\"kind\":");
	json_add_strz(sb, d->kind ? d->kind : "");
	sbuf_adds(sb, ",\"title\":");
	json_add_strz(sb, d->title ? d->title : "");
	sbuf_adds(sb, ",\"path\":");
	json_add_strz(sb, d->path);
	sbuf_adds(sb, ",\"state\":");
	json_add_strz(sb, d->state);
	if (d->renamed_to) {
		sbuf_adds(sb, ",\"renamed_to\":");
		json_add_strz(sb, d->renamed_to);
	}
	sbuf_adds(sb, ",\"blob\":");
	json_add_strz(sb, d->blob ? d->blob : "");
	sbuf_adds(sb, ",\"commit\":");
	json_add_strz(sb, d->commit ? d->commit : "");
	sbuf_adds(sb, ",\"recorded\":");
	json_add_strz(sb, d->recorded ? d->recorded : "");
	sbuf_adds(sb, ",\"how\":");
	json_add_strz(sb, d->how ? d->how : "");
	if (d->commits >= 0)
		sbuf_addf(sb, ",\"commits\":%ld", d->commits);
	if (d->lines_added >= 0)
		sbuf_addf(sb, ",\"lines_added\":%ld,\"lines_removed\":%ld",
			  d->lines_added, d->lines_removed);
	/* what brings it in step: re-seeding a seeded record, else a
	 * human's verify */
	if (strcmp(d->state, "same") != 0) {
		char fix[160];

		snprintf(fix, sizeof(fix), file ? "cairn seed"
						: "cairn verify %.140s",
			 d->record_id);
		sbuf_adds(sb, ",\"fix\":");
		json_add_strz(sb, fix);
	}
	sbuf_addc(sb, '}');
}

int cmd_check(int argc, char **argv)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "all", 0, 0, 'a' },
					    { "weight", 1, 0, 'w' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_drift *d = NULL;
	cairn_db *db = NULL;
	cairn_record *rec = NULL;
	const char *weight = NULL;
	size_t n = 0, drifted = 0, nseeded = 0;
	unsigned flags = CAIRN_DRIFT_HISTORY;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(check_help);
		if (c == 'j')
			cli_state.json = 1;
		else if (c == 'a')
			flags |= CAIRN_DRIFT_ALL;
		else if (c == 'w')
			weight = optarg;
		else
			return cli_usage("check", "unknown option");
	}
	if (optind + 1 < argc)
		return cli_usage("check", "at most one record id");
	if (weight) {
		char *end;
		double w = strtod(weight, &end);

		if (end == weight || *end || !(w >= 0 && w <= 1))
			return cli_usage("check", "--weight wants a number from 0 to 1");
	}
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (weight) {
		rc = cairn_drift_set_weight(db, strtod(weight, NULL));
		if (rc)
			ret = cli_db_fail(db, rc);
		else if (cli_state.json)
			printf("{\"drift.weight\":%s}\n", weight);
		else
			printf("a drifted record's score is now multiplied by %s\n",
			       weight);
		cairn_db_close(db);
		return ret;
	}
	if (optind < argc) {
		rc = cairn_record_get(db, argv[optind], &rec);
		if (rc) {
			ret = cli_db_fail(db, rc);
			goto out;
		}
	}
	rc = cairn_drift_check(db, rec ? rec->id : NULL, flags, &d, &n);
	if (rc) {
		ret = cli_db_fail(db, rc);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(d[i].state, "same") != 0) {
			drifted++;
			nseeded += seeded(db, d[i].record_id);
		}
	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "{\"drifted\":%zu,\"refs\":[", drifted);
		for (size_t i = 0; i < n; i++) {
			if (i)
				sbuf_addc(&sb, ',');
			json_ref(&sb, &d[i], strcmp(d[i].state, "same") != 0 &&
						  seeded(db, d[i].record_id));
		}
		sbuf_adds(&sb, "]}\n");
		fputs(sbuf_str(&sb), stdout);
		sbuf_release(&sb);
	} else {
		for (size_t i = 0; i < n; i++)
			print_ref(&d[i]);
		if (!drifted)
			printf("no record's source changed since it was recorded\n");
		else if (nseeded == 0)
			printf("%zu reference%s drifted; `cairn verify ID` re-affirms "
			       "a record that still holds\n",
			       drifted, drifted == 1 ? "" : "s");
		else if (nseeded == drifted)
			printf("%zu reference%s drifted, of records seeded from "
			       "Markdown: `cairn seed` re-reads their files\n",
			       drifted, drifted == 1 ? "" : "s");
		else
			printf("%zu reference%s drifted; %zu of seeded records: "
			       "`cairn seed` re-reads their files; `cairn "
			       "verify ID` re-affirms another record that still "
			       "holds\n",
			       drifted, drifted == 1 ? "" : "s", nseeded);
	}
	if (drifted)
		ret = EXIT_DRIFT;
out:
	cairn_drift_free(d, n);
	cairn_record_free(rec);
	cairn_db_close(db);
	return ret;
}

int cmd_verify(int argc, char **argv)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_db *db = NULL;
	cairn_record *rec = NULL;
	cairn_drift *d = NULL;
	size_t n = 0;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(verify_help);
		if (c == 'j')
			cli_state.json = 1;
		else
			return cli_usage("verify", "unknown option");
	}
	if (optind + 1 != argc)
		return cli_usage("verify", "one record id expected");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	rc = cairn_record_get(db, argv[optind], &rec);
	if (rc == CAIRN_OK)
		rc = cairn_record_verify(db, rec->id);
	if (rc == CAIRN_OK)
		rc = cairn_drift_check(db, rec->id, CAIRN_DRIFT_ALL, &d, &n);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else if (cli_state.json) {
		printf("{\"id\":\"%s\",\"verified\":true,\"refs\":%zu}\n", rec->id, n);
	} else {
		printf("verified %s against today's tree (%zu file%s)\n", rec->id,
		       n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			printf("  %s\n", d[i].path);
	}
	cairn_drift_free(d, n);
	cairn_record_free(rec);
	cairn_db_close(db);
	return ret;
}
