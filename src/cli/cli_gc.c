/*
 * cli_gc.c -- `cairn gc` (age the records now) and `cairn supersede`
 * (link a record to its replacement; list possible replacements).
 *
 * Layer: top (the cairn command), on the public API (cairn_gc,
 * cairn_supersede, cairn_supersede_suggest).
 * Must never: link or change records the user did not name (--suggest only
 * lists).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1

static const char gc_help[] =
	"usage: cairn gc [--json]\n"
	"\n"
	"Age the records now (SPEC 5.5): decisions and facts that no recall or\n"
	"read has returned for 90 days become 'stale', for 180 days 'retired'\n"
	"(counted from when they were created if never returned). Capabilities,\n"
	"rules, procedures and every other kind never decay. Stale and retired\n"
	"records leave default recall; reading a stale record by key brings it\n"
	"back to the status it had. Recall runs this by itself at most once a\n"
	"day; `cairn gc` runs it at once.\n"
	"\n"
	"environment: CAIRN_NOW=ISO-TIME sets the lifecycle's clock (tests).\n";

int cmd_gc(int argc, char **argv)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_gc_result r;
	cairn_db *db = NULL;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(gc_help);
		if (c == 'j')
			cli_state.json = 1;
		else
			return cli_usage("gc", "unknown option");
	}
	if (optind < argc)
		return cli_usage("gc", "no arguments expected");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	rc = cairn_gc(db, 1, &r);
	if (rc)
		ret = cli_db_fail(db, rc);
	else if (cli_state.json)
		printf("{\"now\":\"%s\",\"stale\":%lld,\"retired\":%lld}\n",
		       r.now, r.staled, r.retired);
	else
		printf("%lld record%s now stale, %lld retired (as of %s)\n",
		       r.staled, r.staled == 1 ? "" : "s", r.retired, r.now);
	cairn_db_close(db);
	return ret;
}

static const char supersede_help[] =
	"usage: cairn supersede [--json] OLD NEW\n"
	"       cairn supersede --suggest ID [--json]\n"
	"\n"
	"Record that NEW replaces OLD: OLD becomes 'superseded' (it leaves\n"
	"default recall; `--status superseded` still finds it), with\n"
	"superseded_by = NEW, and NEW gets supersedes = OLD. Ids may be unique\n"
	"prefixes. A file-backed OLD is changed in its source file instead\n"
	"(front matter status: superseded).\n"
	"\n"
	"--suggest ID lists the existing records that ID may replace: the same\n"
	"kind and scope, accepted or unverified, the same key family (the key\n"
	"before its last ':') when ID has a key, and a lexical similarity of\n"
	"title + body of at least 0.5; best first, at most 10.\n";

static void suggestions_json(const char *id, const cairn_suggestion *v,
			     size_t n)
{
	struct sbuf sb = SBUF_INIT;
	size_t i;

	sbuf_adds(&sb, "{\"id\":");
	json_add_strz(&sb, id);
	sbuf_adds(&sb, ",\"suggestions\":[");
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_addc(&sb, ',');
		sbuf_adds(&sb, "{\"record\":");
		cli_record_json(&sb, v[i].rec, 0);
		sbuf_adds(&sb, ",\"similarity\":");
		json_add_num(&sb, v[i].similarity);
		sbuf_addf(&sb, ",\"same_key_family\":%s}",
			  v[i].same_family ? "true" : "false");
	}
	sbuf_adds(&sb, "]}");
	cli_print_json(&sb);
	sbuf_release(&sb);
}

int cmd_supersede(int argc, char **argv)
{
	enum { O_SUGGEST = 256, O_JSON };
	static const struct option lo[] = { { "suggest", 1, 0, O_SUGGEST },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const char *suggest = NULL;
	cairn_suggestion *v = NULL;
	cairn_record *o = NULL, *n = NULL;
	cairn_db *db = NULL;
	size_t nv = 0, i;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(supersede_help);
		if (c == O_SUGGEST)
			suggest = optarg;
		else if (c == O_JSON)
			cli_state.json = 1;
		else
			return cli_usage("supersede", "unknown option");
	}
	if (suggest ? optind != argc : optind + 2 != argc)
		return cli_usage("supersede", suggest
						      ? "--suggest takes one ID"
						      : "expected OLD and NEW");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (suggest) {
		rc = cairn_supersede_suggest(db, suggest, &v, &nv);
		if (rc) {
			ret = cli_db_fail(db, rc);
		} else if (cli_state.json) {
			suggestions_json(suggest, v, nv);
		} else if (nv == 0) {
			printf("no record that %s may replace\n", suggest);
		} else {
			for (i = 0; i < nv; i++)
				printf("%s  [%s · %s] %s  (similarity %.2f%s)\n",
				       v[i].rec->id, v[i].rec->kind,
				       v[i].rec->status,
				       *v[i].rec->title ? v[i].rec->title
							: "(untitled)",
				       v[i].similarity,
				       v[i].same_family ? ", same key family"
							: "");
			printf("link one with: cairn supersede OLD %s\n",
			       suggest);
		}
		cairn_suggestions_free(v, nv);
		cairn_db_close(db);
		return ret;
	}
	rc = cairn_supersede(db, argv[optind], argv[optind + 1]);
	if (rc == CAIRN_OK)
		rc = cairn_record_get(db, argv[optind], &o);
	if (rc == CAIRN_OK)
		rc = cairn_record_get(db, argv[optind + 1], &n);
	if (rc)
		ret = cli_db_fail(db, rc);
	else if (cli_state.json)
		printf("{\"old\":\"%s\",\"new\":\"%s\",\"status\":\"%s\"}\n",
		       o->id, n->id, o->status);
	else
		printf("%s superseded by %s\n", o->id, n->id);
	cairn_record_free(o);
	cairn_record_free(n);
	cairn_db_close(db);
	return ret;
}
