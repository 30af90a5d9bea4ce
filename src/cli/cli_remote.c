/*
 * cli_remote.c -- `cairn remote add|list|rm` and `cairn sync` (team memory
 * on PostgreSQL, docs/TEAM.md). Only the public API (include/cairn.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1

static const char remote_help[] =
	"usage: cairn remote add NAME CONNINFO [--space SPACE]\n"
	"       cairn remote list [--json]\n"
	"       cairn remote rm NAME\n"
	"\n"
	"A remote is a PostgreSQL database the team shares (docs/TEAM.md).\n"
	"CONNINFO is a libpq connection string, e.g.\n"
	"  postgres://alice@db.example.com/cairn?sslmode=verify-full\n"
	"It must not carry a password: cairn never stores one. libpq reads it\n"
	"from ~/.pgpass (or the file $PGPASSFILE names; one line\n"
	"host:port:database:user:password, mode 0600); PGSSLROOTCERT and the\n"
	"other PG* variables apply as usual.\n"
	"\n"
	"SPACE is the team space this repository's records go to; without\n"
	"--space it is derived from the Git remote 'origin' (host/owner/repo).\n"
	"Global records go to the user's own space (user:ROLE), file-backed\n"
	"records never leave the machine, and machine-scoped ones (--scope\n"
	"machine: true only here) only with `cairn sync --include-machine`.\n"
	"Each remote keeps its own sync state (its name and the server's id),\n"
	"so two remotes on one server, two spaces or two roles, each get\n"
	"every change.\n";

static const char sync_help[] =
	"usage: cairn sync [NAME] [--include-machine] [--watch [--for SECONDS]]\n"
	"                  [--json]\n"
	"\n"
	"Push this workspace's changed records (new records, revisions,\n"
	"candidates, approvals, rejections, supersessions, forgets; global\n"
	"records to your own space) to remote NAME (default: the only one),\n"
	"then pull everyone else's since the last sync. Recall never waits on\n"
	"the network: it reads the local store, which sync keeps current.\n"
	"File-backed records never travel (Git carries them); machine-scoped\n"
	"ones (true only on this machine) stay local unless asked, and are\n"
	"never pulled onto another machine.\n"
	"\n"
	"Conflicts: a record changed here and on the server keeps the\n"
	"server's version; this machine's text becomes a candidate (nothing\n"
	"is lost; approve it to make it win). What is pulled passes the\n"
	"secret filter and the approval gate again.\n"
	"\n"
	"Who wrote a record is the server's stamp, never the row's: a record\n"
	"by a role the team has not declared a person (docs/TEAM.md) arrives\n"
	"a candidate unless a person approved that very text; a person's is\n"
	"shown \"from the team, by NAME\". Retiring another member's human\n"
	"record is a pending forget (cairn candidates), as an agent's is.\n"
	"\n"
	"  --include-machine\n"
	"                 push this machine's machine-scoped records too\n"
	"                 (a CI runner publishing what it proved)\n"
	"  --watch        keep syncing whenever another machine pushes\n"
	"                 (LISTEN/NOTIFY), and at least every 60 s\n"
	"  --for SECONDS  with --watch: stop after SECONDS (default: never)\n"
	"  --json         one JSON object per sync: pushed, pulled, conflicts,\n"
	"                 refused, unsynced, error, log (one string per event)\n"
	"\n"
	"exit status: 0 synced, 1 the server could not be reached or refused\n"
	"(the message says why; local work is unaffected).\n";

/* host/owner/repo from a Git remote URL; "" when there is none. */
static void git_space(const char *root, char *out, size_t size)
{
	char cmd[4400], line[1024], *p, *s;
	FILE *f;
	size_t n;

	out[0] = '\0';
	if (strchr(root, '\'') ||
	    snprintf(cmd, sizeof(cmd),
		     "git -C '%s' config --get remote.origin.url 2>/dev/null",
		     root) >= (int)sizeof(cmd))
		return;
	f = popen(cmd, "r");
	if (!f)
		return;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	pclose(f);
	n = strcspn(line, "\r\n");
	line[n] = '\0';
	s = line;
	p = strstr(s, "://");
	if (p)
		s = p + 3;
	p = strchr(s, '@'); /* user@ (never a password: dropped) */
	if (p && (!strchr(s, '/') || p < strchr(s, '/')))
		s = p + 1;
	p = strchr(s, ':'); /* scp form host:owner/repo */
	if (p && !strstr(line, "://"))
		*p = '/';
	n = strlen(s);
	while (n && s[n - 1] == '/')
		s[--n] = '\0';
	if (n > 4 && strcmp(s + n - 4, ".git") == 0)
		s[n - 4] = '\0';
	snprintf(out, size, "%s", s);
}

static int remote_add(int argc, char **argv)
{
	static const struct option lo[] = { { "space", 1, 0, 's' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const char *space = NULL;
	char derived[1024];
	cairn_db *db = NULL;
	int c, rc;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(remote_help);
		if (c == 's')
			space = optarg;
		else
			return cli_usage("remote", "unknown option");
	}
	if (argc - optind != 2)
		return cli_usage("remote", "add needs NAME and CONNINFO");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (!space) {
		git_space(cairn_db_root(db), derived, sizeof(derived));
		space = derived; /* "": the library says what to do */
	}
	rc = cairn_remote_add(db, argv[optind], argv[optind + 1], space);
	if (rc) {
		cli_db_fail(db, rc);
		cairn_db_close(db);
		return EXIT_ERR;
	}
	if (!cli_state.json)
		printf("remote %s: team space %s\n", argv[optind], space);
	else
		printf("{\"name\":\"%s\",\"ok\":true}\n", argv[optind]);
	cairn_db_close(db);
	return EXIT_OK;
}

int cmd_remote(int argc, char **argv)
{
	cairn_db *db = NULL;
	char *out = NULL, err[128];
	struct json *j = NULL;
	const struct json *e;
	const char *sub;
	int rc, ret = EXIT_OK;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)
		return argc < 2 ? cli_usage("remote", "add, list or rm?")
				: cli_help(remote_help);
	sub = argv[1];
	if (strcmp(sub, "add") == 0)
		return remote_add(argc - 1, argv + 1);
	if (strcmp(sub, "list") == 0) {
		int i;

		for (i = 2; i < argc; i++) {
			if (strcmp(argv[i], "--json") == 0)
				cli_state.json = 1;
			else
				return cli_usage("remote", "unexpected '%s'",
						 argv[i]);
		}
		if (cli_open(&db, 0))
			return EXIT_ERR;
		rc = cairn_remote_list_json(db, &out);
		if (rc) {
			ret = cli_db_fail(db, rc);
		} else if (cli_state.json) {
			printf("%s\n", out);
		} else if (json_parse(out, strlen(out), &j, err, sizeof(err)) ==
			   CAIRN_OK) {
			for (e = j->child; e; e = e->next) {
				const char *n = json_get_str(e, "name");
				const char *u = json_get_str(e, "url");
				const char *s = json_get_str(e, "space");
				size_t unsynced = 0;

				if (!n)
					continue;
				(void)cairn_sync_unsynced(db, n, &unsynced);
				printf("%s\t%s\tspace %s\t%zu unsynced\n", n,
				       u, s, unsynced);
			}
		}
		json_free(j);
		cairn_free(out);
		cairn_db_close(db);
		return ret;
	}
	if (strcmp(sub, "rm") == 0) {
		if (argc != 3)
			return cli_usage("remote", "rm needs NAME");
		if (cli_open(&db, 0))
			return EXIT_ERR;
		rc = cairn_remote_rm(db, argv[2]);
		if (rc)
			ret = cli_db_fail(db, rc);
		cairn_db_close(db);
		return ret;
	}
	return cli_usage("remote", "unknown subcommand '%s'", sub);
}

static void print_report(const cairn_sync_report *r, int rc, cairn_db *db)
{
	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;
		const char *p;

		sbuf_addf(&sb,
			  "{\"ok\":%s,\"pushed\":%zu,\"pulled\":%zu,"
			  "\"conflicts\":%zu,\"refused\":%zu,\"unsynced\":%zu,"
			  "\"error\":",
			  rc ? "false" : "true", r->pushed, r->pulled,
			  r->conflicts, r->refused, r->unsynced);
		if (rc) {
			sbuf_addc(&sb, '"');
			for (p = cairn_errmsg(db); *p; p++) {
				if (*p == '"' || *p == '\\')
					sbuf_addc(&sb, '\\');
				if ((unsigned char)*p >= 0x20)
					sbuf_addc(&sb, *p);
			}
			sbuf_addc(&sb, '"');
		} else {
			sbuf_adds(&sb, "null");
		}
		/* what happened, one string per event (conflicts, refusals) */
		sbuf_adds(&sb, ",\"log\":[");
		for (p = r->log ? r->log : ""; *p;) {
			const char *e = strchr(p, '\n');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			size_t k;

			if (p != r->log)
				sbuf_addc(&sb, ',');
			sbuf_addc(&sb, '"');
			for (k = 0; k < len; k++) {
				unsigned char ch = (unsigned char)p[k];

				if (ch == '"' || ch == '\\')
					sbuf_addc(&sb, '\\');
				if (ch >= 0x20)
					sbuf_addc(&sb, (char)ch);
			}
			sbuf_addc(&sb, '"');
			p += len + (e ? 1 : 0);
		}
		sbuf_adds(&sb, "]}");
		printf("%s\n", sb.err ? "{}" : sbuf_str(&sb));
		sbuf_release(&sb);
	} else {
		if (r->log && *r->log)
			fputs(r->log, stdout);
		if (rc == CAIRN_OK)
			printf("synced: pushed %zu, pulled %zu, conflicts %zu, "
			       "refused %zu, unsynced %zu\n",
			       r->pushed, r->pulled, r->conflicts, r->refused,
			       r->unsynced);
	}
	if (rc)
		fprintf(stderr,
			"cairn: sync failed: %s (%zu local changes wait for "
			"the next sync)\n",
			cairn_errmsg(db), r->unsynced);
	fflush(stdout);
}

int cmd_sync(int argc, char **argv)
{
	static const struct option lo[] = { { "watch", 0, 0, 'w' },
					    { "include-machine", 0, 0, 'm' },
					    { "for", 1, 0, 'f' },
					    { "json", 0, 0, 'j' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_sync_report rep;
	cairn_watch *w = NULL;
	cairn_db *db = NULL;
	const char *name = NULL;
	double secs = -1, end = 0;
	int c, rc, watch = 0;
	unsigned flags = 0;
	char *e;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(sync_help);
		if (c == 'w') {
			watch = 1;
		} else if (c == 'm') {
			flags |= CAIRN_SYNC_MACHINE;
		} else if (c == 'j') {
			cli_state.json = 1;
		} else if (c == 'f') {
			errno = 0;
			secs = strtod(optarg, &e);
			if (errno || *e || secs < 0)
				return cli_usage("sync", "--for needs seconds");
		} else {
			return cli_usage("sync", "unknown option");
		}
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		return cli_usage("sync", "unexpected argument");
	if (secs >= 0 && !watch)
		return cli_usage("sync", "--for goes with --watch");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (!watch) {
		rc = cairn_sync_flags(db, name, flags, &rep);
		print_report(&rep, rc, db);
		cairn_free(rep.log);
		cairn_db_close(db);
		return rc ? EXIT_ERR : EXIT_OK;
	}
	end = secs >= 0 ? util_now_ms() + secs * 1000 : 0;
	for (;;) {
		double left;

		if (!w && cairn_watch_open(db, name, &w) != CAIRN_OK)
			fprintf(stderr, "cairn: following: %s\n",
				cairn_errmsg(db));
		rc = cairn_sync_flags(db, name, flags, &rep);
		print_report(&rep, rc, db);
		cairn_free(rep.log);
		left = end ? end - util_now_ms() : 60000;
		if (left <= 0)
			break;
		if (left > 60000)
			left = 60000;
		if (!w) {
			/* the server is away: try again in a while */
			usleep((useconds_t)(left > 5000 ? 5000 : left) * 1000);
		} else if (cairn_watch_wait(w, (int)left) == CAIRN_IO) {
			cairn_watch_close(w);
			w = NULL;
		}
		if (end && util_now_ms() >= end)
			break;
	}
	cairn_watch_close(w);
	cairn_db_close(db);
	return EXIT_OK;
}

/* `cairn stats`: the local changes each remote has not got yet. */
void cli_sync_stats(cairn_db *db, int json, struct sbuf *sb)
{
	char *out = NULL, err[128];
	struct json *j = NULL;
	const struct json *e;
	int n = 0;

	if (cairn_remote_list_json(db, &out) != CAIRN_OK ||
	    json_parse(out, strlen(out), &j, err, sizeof(err)) != CAIRN_OK) {
		cairn_free(out);
		return;
	}
	for (e = j->child; e; e = e->next) {
		const char *name = json_get_str(e, "name");
		size_t u = 0;

		if (!name || cairn_sync_unsynced(db, name, &u) != CAIRN_OK)
			continue;
		if (json)
			sbuf_addf(sb, "%s\"%s\":%zu", n ? "," : "", name, u);
		else
			sbuf_addf(sb, "%s %s=%zu", n ? "" : "unsynced ", name,
				  u);
		n++;
	}
	json_free(j);
	cairn_free(out);
}
