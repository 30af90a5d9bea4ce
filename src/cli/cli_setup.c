/*
 * cli_setup.c -- `cairn setup claude-code`: install cairn into a Claude
 * Code project.
 *
 * Layer: top (the `cairn` command). Reads and writes three files under the
 * project folder, nothing else:
 *   .claude/settings.json   the hook entries: UserPromptSubmit,
 *                           SessionStart, Stop and SessionEnd run `cairn
 *                           hook` (cli_hook.c)
 *   .mcp.json               the MCP server "cairn": `cairn mcp` (mcp.c)
 *   .claude/skills/cairn-memory/SKILL.md
 *                           the Skill: when to use which memory tool
 *
 * Invariants: idempotent (a second run changes nothing); everything already
 * in the JSON files is kept (other hooks, other servers, unknown keys, their
 * order); an entry that already runs `cairn hook`, or a server already named
 * "cairn", is left as it is; a file is rewritten only when something is
 * added, as indented JSON, through a temporary file and rename() so that it
 * is never half-written. Every file is checked before any is written: one
 * that is not valid JSON, or whose "hooks" / "mcpServers" has the wrong
 * type, stops the run with nothing changed.
 *
 * The Skill text says only what the code does: every sentence of it is
 * listed in tests/t_skill.sh with the test that shows the behaviour it
 * claims ("advice" for sentences that claim no behaviour), and that test
 * fails when the text gains a sentence the table does not list.
 *
 * Must never: touch a file it cannot parse, drop or reorder what a file
 * holds, or write outside DIR/.claude and DIR/.mcp.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

#define SETUP_MAX_FILE ((size_t)4 << 20) /* 4 MiB: larger settings are refused */
#define SETUP_PATH 4096                  /* bytes of a path */

/* The hook events `cairn hook` handles (cli_hook.c). */
static const char *const setup_events[] = { "UserPromptSubmit",
					    "SessionStart", "Stop",
					    "SessionEnd" };
#define SETUP_NEVENTS (sizeof(setup_events) / sizeof(setup_events[0]))

/*
 * The Skill (Claude Code's SKILL.md: YAML front matter with name and
 * description, then Markdown). Each sentence is bound in tests/t_skill.sh.
 */
static const char skill_text[] =
	"---\n"
	"name: cairn-memory\n"
	"description: This project's long-term memory, kept by cairn across "
	"sessions: decisions and ADRs, rules, capabilities, procedures and "
	"facts. Use it before proposing a design or choosing a tool, before "
	"saying that something cannot be done from here (deploy, connect, "
	"publish), and when you need to know what was decided before and why.\n"
	"---\n"
	"\n"
	"# cairn: this project's memory\n"
	"\n"
	"The MCP server `cairn` gives you six tools over this project's "
	"records.\n"
	"\n"
	"## Before proposing a design\n"
	"\n"
	"Call `find_precedents` with the topic first.\n"
	"It searches only decisions and ADRs.\n"
	"Follow what it finds, or say plainly that you are revisiting an "
	"earlier decision and why.\n"
	"An empty result means that no recorded decision matches.\n"
	"\n"
	"## Before saying \"I can't\"\n"
	"\n"
	"Before you say that you cannot deploy, connect to a service or "
	"publish from here, call `memory_recall` with the action as the "
	"query and `kinds` set to `[\"capability\", \"procedure\"]`.\n"
	"A capability record says what has worked from this machine, with "
	"its proof.\n"
	"If one matches, try that way before giving up.\n"
	"\n"
	"## Which tool for what\n"
	"\n"
	"- `memory_recall`: ranked search over every kind, when you do not "
	"know a record's key.\n"
	"- `find_precedents`: the same search, restricted to decisions and "
	"ADRs.\n"
	"- `memory_read`: one record in full, by its id (from a search or "
	"from the context cairn adds) or by its key.\n"
	"- `memory_write`: propose a lasting fact, rule, decision, procedure "
	"or capability.\n"
	"- `memory_candidates`: the proposals waiting for a human.\n"
	"- `memory_forget`: ask to retire a record that is no longer true, by "
	"its full id or its key, with a `reason` that the human who decides "
	"sees.\n"
	"\n"
	"An empty result from `memory_recall` means that the memory holds no "
	"answer.\n"
	"\n"
	"## What you write is a candidate\n"
	"\n"
	"`memory_write` stores a candidate, not an accepted record.\n"
	"`memory_recall` does not return candidates by default.\n"
	"A human approves a candidate with `cairn approve ID` or rejects it "
	"with `cairn reject ID`.\n"
	"No tool can approve a record.\n"
	"A forget of a record you did not write waits for a human too: "
	"`cairn approve ID` retires the record, `cairn reject ID` keeps it.\n"
	"\n"
	"## When a record's source moved on\n"
	"\n"
	"A record marked with drift refers to a repository file that changed "
	"since the record was written (`drift` in `memory_recall` and "
	"`memory_read`, a ⚠ line in the context cairn adds).\n"
	"Read that file before relying on the record.\n"
	"\n"
	"## What cairn adds by itself\n"
	"\n"
	"At the start of a session, cairn adds the standing rules and "
	"capabilities and the number of candidates waiting for approval.\n"
	"With a prompt, it may add past records under the header \"Past "
	"project records from cairn's memory\", each with an id for "
	"`memory_read`.\n"
	"Those records are not part of the current conversation.\n"
	"At the end of each turn and of the session, cairn reads the "
	"transcript and proposes what it learned (commands that succeeded, "
	"rules the user stated) as candidates.\n";

static const char setup_help[] =
	"usage: cairn setup claude-code [--dir DIR] [--dry-run] [--cairn PATH]\n"
	"                               [--model NAME [--probes FILE]]\n"
	"                               [--json]\n"
	"\n"
	"Install cairn into a Claude Code project (DIR, default: the current\n"
	"directory):\n"
	"  .claude/settings.json   hooks UserPromptSubmit, SessionStart, Stop\n"
	"                          and SessionEnd run `cairn hook`\n"
	"  .mcp.json               the MCP server \"cairn\": `cairn mcp`\n"
	"  .claude/skills/cairn-memory/SKILL.md\n"
	"                          a Skill telling the agent when to use which\n"
	"                          memory tool\n"
	"\n"
	"Everything already in those files is kept: other hooks, other\n"
	"servers, unknown keys. A hook entry that already runs `cairn hook`,\n"
	"or a server already named \"cairn\", is left as it is, so running it\n"
	"twice changes nothing. A file is rewritten (as indented JSON, through\n"
	"a temporary file and a rename) only when something is added; the\n"
	"Skill is replaced when its text differs from this version's. A file\n"
	"that is not valid JSON stops the run before anything is written.\n"
	"Without a store for DIR (none there or above it, as the hook finds\n"
	"it), setup creates DIR/.cairn and seeds it from the decision records\n"
	"the project holds (as 'cairn init' then 'cairn seed'), saying what it\n"
	"did; an existing store is left as it is. Claude Code asks the user\n"
	"to approve the new MCP server (`claude mcp list` shows it \"Pending\n"
	"approval\" until then); setup says how.\n"
	"\n"
	"options:\n"
	"  --dir DIR     the project folder (default .)\n"
	"  -n, --dry-run say what would change, write nothing\n"
	"  --cairn PATH  the cairn command written into the entries (default\n"
	"                \"cairn\", found on PATH; a note says when it is\n"
	"                not there); its last part is \"cairn\"; letters,\n"
	"                digits and / . _ + - only\n"
	"  --model NAME  semantic recall in the same step: pull NAME (cairn\n"
	"                model list; or a URL), reindex every record with it\n"
	"                (vectors of another model are dropped), calibrate\n"
	"                its cosine floor\n"
	"  --probes FILE with --model: calibrate with these questions the\n"
	"                store cannot answer (as cairn calibrate); default:\n"
	"                the cosine floor from built-in off-topic questions\n"
	"  --json        print {dry_run, files: [{file, changed, existed,\n"
	"                added}], store, store_created, seeded: {files,\n"
	"                records, files_with_errors} or null, warning}\n"
	"\n"
	"A symlinked file stays a link: its target is rewritten.\n"
	"\n"
	"exit status: 0 done (or nothing to do), 1 error (nothing written\n"
	"when a file could not be parsed), 2 usage\n";

/* One file of the set-up: its path, what it held, what it will hold. */
struct setup_file {
	char path[SETUP_PATH]; /* DIR/relative */
	const char *rel;       /* the relative name, for messages */
	int exists;            /* 1: the file was there */
	mode_t mode;           /* its permission bits (new files: 0644) */
	char *old;             /* its bytes (NUL-terminated), or NULL */
	size_t oldlen;         /* their length */
	struct json *root;     /* JSON files: the parsed (then merged) tree */
	struct sbuf added;     /* what was added, for the report ("" = nothing) */
	int write;             /* 1: write `out` */
	struct sbuf out;       /* the new bytes */
};

/* ------------------------------------------------------------ JSON tree */

/* Parse a JSON text we wrote ourselves (cannot fail but for memory). */
static struct json *tree(const char *text)
{
	struct json *j = NULL;
	char err[64];

	if (json_parse(text, strlen(text), &j, err, sizeof(err)) != CAIRN_OK)
		return NULL;
	return j;
}

/* Append child c (a parsed tree) to array or object p; key for objects. */
static int append(struct json *p, const char *key, struct json *c)
{
	struct json **tail = &p->child;

	if (!c)
		return CAIRN_NOMEM;
	if (key) {
		c->key = util_strdup(key);
		if (!c->key) {
			json_free(c);
			return CAIRN_NOMEM;
		}
		c->keylen = strlen(key);
	}
	while (*tail)
		tail = &(*tail)->next;
	*tail = c;
	p->len++;
	return CAIRN_OK;
}

/*
 * Append j as indented JSON (two spaces a level). Recursion is bounded:
 * parsed trees are at most JSON_MAX_DEPTH deep and set-up adds three
 * levels.
 */
static void put_json(struct sbuf *sb, const struct json *j, int depth)
{
	const struct json *c;

	switch (j->type) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		if (!j->child) {
			sbuf_adds(sb, j->type == JSON_OBJECT ? "{}" : "[]");
			return;
		}
		sbuf_addc(sb, j->type == JSON_OBJECT ? '{' : '[');
		for (c = j->child; c; c = c->next) {
			sbuf_addf(sb, "\n%*s", 2 * (depth + 1), "");
			if (j->type == JSON_OBJECT) {
				json_add_str(sb, c->key ? c->key : "",
					     c->key ? c->keylen : 0);
				sbuf_adds(sb, ": ");
			}
			put_json(sb, c, depth + 1);
			if (c->next)
				sbuf_addc(sb, ',');
		}
		sbuf_addf(sb, "\n%*s", 2 * depth, "");
		sbuf_addc(sb, j->type == JSON_OBJECT ? '}' : ']');
		return;
	default:
		json_add_tree(sb, j);
	}
}

/*
 * Does this command run cairn's hook? "cairn hook", "/usr/bin/cairn hook
 * --budget 2000" and the like: a word whose last path part is "cairn"
 * followed by the word "hook".
 */
static int is_cairn_hook(const char *cmd)
{
	const char *p = cmd;

	while ((p = strstr(p, "cairn hook")) != NULL) {
		int start = p == cmd || p[-1] == '/' || p[-1] == ' ' ||
			    p[-1] == '"' || p[-1] == '\'';
		char after = p[10];

		if (start && (after == '\0' || after == ' ' || after == '"' ||
			      after == '\''))
			return 1;
		p++;
	}
	return 0;
}

/* Does array `entries` (matcher groups of one event) run cairn's hook? */
static int has_cairn_hook(const struct json *entries)
{
	const struct json *e, *h;

	for (e = entries->child; e; e = e->next) {
		const struct json *hooks = json_get(e, "hooks");

		if (!hooks || hooks->type != JSON_ARRAY)
			continue;
		for (h = hooks->child; h; h = h->next) {
			const char *cmd = json_get_str(h, "command");

			if (cmd && is_cairn_hook(cmd))
				return 1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- files */

/* Read f->path if it exists. CAIRN_IO with a message on failure. */
static int load(struct setup_file *f, char *err, size_t errsize)
{
	struct stat st;
	int rc;

	if (stat(f->path, &st) != 0) {
		if (errno == ENOENT)
			return CAIRN_OK;
		snprintf(err, errsize, "cannot read '%s': %s", f->rel,
			 strerror(errno));
		return CAIRN_IO;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errsize, "'%s' is not a regular file", f->rel);
		return CAIRN_IO;
	}
	f->exists = 1;
	f->mode = st.st_mode & 07777;
	rc = util_read_file(f->path, SETUP_MAX_FILE, &f->old, &f->oldlen, err,
			    errsize);
	if (rc)
		snprintf(err, errsize, "cannot read '%s' (%s)", f->rel,
			 cairn_errstr(rc));
	return rc;
}

/* Parse a JSON file (an absent or blank one is {}); it must be an object. */
static int parse(struct setup_file *f, char *err, size_t errsize)
{
	char why[256];
	size_t n = f->old ? strspn(f->old, " \t\r\n") : 0;

	if (!f->old || n == f->oldlen) {
		f->root = tree("{}");
		return f->root ? CAIRN_OK : CAIRN_NOMEM;
	}
	if (json_parse(f->old, f->oldlen, &f->root, why, sizeof(why)) !=
	    CAIRN_OK) {
		snprintf(err, errsize,
			 "'%s' is not valid JSON (%s); fix or move it, then "
			 "run setup again: nothing was changed",
			 f->rel, why);
		return CAIRN_INVALID;
	}
	if (f->root->type != JSON_OBJECT) {
		snprintf(err, errsize,
			 "'%s' does not hold a JSON object; nothing was "
			 "changed", f->rel);
		return CAIRN_INVALID;
	}
	return CAIRN_OK;
}

/* The member `key` of object o, made an empty {} or [] when absent. */
static int member(struct setup_file *f, struct json *o, const char *key,
		  enum json_type type, struct json **out, char *err,
		  size_t errsize)
{
	struct json *m = (struct json *)json_get(o, key);
	int rc;

	if (m && m->type != type) {
		snprintf(err, errsize,
			 "'%s': \"%s\" is not a JSON %s; nothing was changed",
			 f->rel, key,
			 type == JSON_OBJECT ? "object" : "array");
		return CAIRN_INVALID;
	}
	if (!m) {
		rc = append(o, key, tree(type == JSON_OBJECT ? "{}" : "[]"));
		if (rc)
			return rc;
		m = (struct json *)json_get(o, key);
	}
	*out = m;
	return CAIRN_OK;
}

/* Merge the hook entries into .claude/settings.json's tree. */
static int merge_settings(struct setup_file *f, const char *cairn, char *err,
			  size_t errsize)
{
	struct json *hooks, *arr;
	struct sbuf entry = SBUF_INIT;
	size_t i;
	int rc;

	rc = member(f, f->root, "hooks", JSON_OBJECT, &hooks, err, errsize);
	if (rc)
		return rc;
	sbuf_adds(&entry, "{\"hooks\":[{\"type\":\"command\",\"command\":");
	sbuf_addf(&entry, "\"%s hook\"}]}", cairn);
	if (entry.err)
		return entry.err;
	for (i = 0; i < SETUP_NEVENTS; i++) {
		rc = member(f, hooks, setup_events[i], JSON_ARRAY, &arr, err,
			    errsize);
		if (rc)
			break;
		if (has_cairn_hook(arr))
			continue;
		rc = append(arr, NULL, tree(entry.buf));
		if (rc)
			break;
		sbuf_addf(&f->added, "%s%s", f->added.len ? ", " : "hooks ",
			  setup_events[i]);
	}
	sbuf_release(&entry);
	return rc;
}

/* Merge the MCP server into .mcp.json's tree. */
static int merge_mcp(struct setup_file *f, const char *cairn, char *err,
		     size_t errsize)
{
	struct json *servers;
	struct sbuf entry = SBUF_INIT;
	int rc;

	rc = member(f, f->root, "mcpServers", JSON_OBJECT, &servers, err,
		    errsize);
	if (rc || json_get(servers, "cairn"))
		return rc; /* a server named cairn stays as it is */
	sbuf_addf(&entry, "{\"type\":\"stdio\",\"command\":\"%s\","
		  "\"args\":[\"mcp\"]}", cairn);
	rc = entry.err ? entry.err : append(servers, "cairn", tree(entry.buf));
	if (rc == CAIRN_OK)
		sbuf_addf(&f->added, "server \"cairn\" (%s mcp)", cairn);
	sbuf_release(&entry);
	return rc;
}

/* mkdir -p of the folder that holds path (below the project folder). */
static int make_parents(const char *path, char *err, size_t errsize)
{
	char tmp[SETUP_PATH];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errsize, "cannot create '%s': %s", tmp,
				 strerror(errno));
			return CAIRN_IO;
		}
		*p = '/';
	}
	return CAIRN_OK;
}

/* Write f->out to f->path through a temporary file and rename(). */
static int write_atomic(struct setup_file *f, char *err, size_t errsize)
{
	char tmp[SETUP_PATH + 16];
	size_t off = 0;
	int fd, rc = CAIRN_IO;

	if (make_parents(f->path, err, errsize))
		return CAIRN_IO;
	{
		/* a symlinked file (dotfiles kept elsewhere) stays a link:
		 * its target is what is replaced */
		struct stat lst;
		char *real;

		if (lstat(f->path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			real = realpath(f->path, NULL);
			if (!real || strlen(real) >= sizeof(f->path)) {
				snprintf(err, errsize,
					 "cannot follow the link '%s'", f->rel);
				free(real);
				return CAIRN_IO;
			}
			snprintf(f->path, sizeof(f->path), "%s", real);
			free(real);
		}
	}
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", f->path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		snprintf(err, errsize, "cannot write next to '%s': %s", f->rel,
			 strerror(errno));
		return CAIRN_IO;
	}
	while (off < f->out.len) {
		ssize_t n = write(fd, f->out.buf + off, f->out.len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fchmod(fd, f->exists ? f->mode : 0644) != 0 || fsync(fd) != 0)
		goto fail;
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, f->path) != 0)
		goto fail;
	return CAIRN_OK;
fail:
	snprintf(err, errsize, "cannot write '%s': %s", f->rel,
		 strerror(errno));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc;
}

/*
 * Is s a cairn command: every byte a letter, digit or one of / . _ + -,
 * not an option ("--foo", "-"), and its last path part "cairn" -- so that
 * is_cairn_hook() knows the entries it writes and a second run adds none.
 */
static int safe_command(const char *s)
{
	const char *base = strrchr(s, '/');

	base = base ? base + 1 : s;
	if (!*s || *s == '-' || strcmp(base, "cairn") != 0)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("/._+-", *s)))
			return 0;
	return 1;
}

/*
 * A note when Claude Code would not find the command: a bare name not on
 * $PATH, or a path that is not an executable file. "" when it would.
 */
static void on_path_note(const char *cmd, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p, *e;
	char buf[SETUP_PATH];

	out[0] = '\0';
	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) != 0)
			snprintf(out, size,
				 "'%s' is not an executable file: the hook "
				 "entries will fail until it is",
				 cmd);
		return;
	}
	for (p = path ? path : ""; *p; p = *e ? e + 1 : e) {
		e = strchr(p, ':');
		if (!e)
			e = p + strlen(p);
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s",
				     e == p ? 1 : (int)(e - p),
				     e == p ? "." : p, cmd) < sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return;
	}
	snprintf(out, size,
		 "'%s' is not on PATH, so Claude Code will not find it: "
		 "install cairn (make install) or pass --cairn "
		 "/path/to/cairn",
		 cmd);
}

/* `cairn setup claude-code [--dir DIR] [--dry-run] [--cairn PATH]`. */
/*
 * Read the three files under dir and merge cairn's entries into them (the
 * Skill replaced when it differs), nothing written yet. A file that
 * cannot be read or parsed stops it: its message goes to err.
 */
static int setup_merge(struct setup_file *files, const char *dir,
		       const char *cairn, char *err, size_t errsize)
{
	static const char *const rels[3] = {
		".claude/settings.json", ".mcp.json",
		".claude/skills/cairn-memory/SKILL.md"
	};
	int i, rc = CAIRN_OK;

	for (i = 0; i < 3 && rc == CAIRN_OK; i++) {
		struct setup_file *f = &files[i];

		f->rel = rels[i];
		sbuf_init(&f->added, 0);
		sbuf_init(&f->out, 0);
		if ((size_t)snprintf(f->path, sizeof(f->path), "%s/%s", dir,
				     rels[i]) >= sizeof(f->path)) {
			snprintf(err, errsize, "'%s' is too long", dir);
			rc = CAIRN_INVALID;
			break;
		}
		rc = load(f, err, errsize);
		if (rc)
			break;
		if (i == 2) {
			/* the Skill: ours, replaced when it differs */
			if (!f->old || strcmp(f->old, skill_text) != 0) {
				sbuf_adds(&f->added, f->exists ? "replaced"
							       : "created");
				sbuf_adds(&f->out, skill_text);
				f->write = 1;
			}
			continue;
		}
		rc = parse(f, err, errsize);
		if (rc == CAIRN_OK)
			rc = i == 0 ? merge_settings(f, cairn, err, errsize)
				    : merge_mcp(f, cairn, err, errsize);
		if (rc == CAIRN_OK && f->added.len > 0) {
			put_json(&f->out, f->root, 0);
			sbuf_addc(&f->out, '\n');
			f->write = 1;
		}
		if (rc == CAIRN_OK && (f->added.err || f->out.err))
			rc = CAIRN_NOMEM;
	}
	return rc;
}

/*
 * Write the files that changed (not on a dry run), each listed in js and,
 * without --json, on a line of its own. Stops at the first that cannot be
 * written (its message in err).
 */
static int setup_write(struct setup_file *files, int dry, struct sbuf *js,
		       char *err, size_t errsize)
{
	int i, rc;

	for (i = 0; i < 3; i++) {
		struct setup_file *f = &files[i];

		if (f->write && !dry &&
		    (rc = write_atomic(f, err, errsize)) != CAIRN_OK)
			return rc;
		sbuf_adds(js, i ? ",{\"file\":" : "{\"file\":");
		json_add_strz(js, f->rel);
		sbuf_addf(js, ",\"changed\":%s,\"existed\":%s,\"added\":",
			  f->write ? "true" : "false",
			  f->exists ? "true" : "false");
		json_add_strz(js, sbuf_str(&f->added));
		sbuf_addc(js, '}');
		if (cli_state.json)
			continue;
		if (!f->write) {
			printf("%s: unchanged\n", f->rel);
			continue;
		}
		printf("%s: %s%s%s\n", f->rel, dry ? "would be " : "",
		       i < 2 ? (f->exists ? "updated, added " : "created, added ")
			     : "",
		       sbuf_str(&f->added));
	}
	return CAIRN_OK;
}

/*
 * The store the hook and the MCP server will read: the one found from DIR
 * as they find it (walking up, or $CAIRN_DIR), else a new DIR/.cairn,
 * seeded from the decision records the project holds (what `cairn init`
 * then `cairn seed` do), so that one command leaves a working memory
 * rather than a hook that is silently empty. Says what it did on stdout
 * (members "store", "store_created", "seeded" of the --json object into
 * js). 0, or 1 after printing why.
 */
static int setup_store(const char *dir, int dry, struct sbuf *js)
{
	char *found = NULL, path[SETUP_PATH + 16];
	cairn_seed_report rep;
	cairn_open_opts o;
	cairn_db *db = NULL;
	int rc;

	if (cairn_workspace_find(dir, &found) == CAIRN_OK) {
		sbuf_adds(js, ",\"store\":");
		json_add_strz(js, found);
		sbuf_adds(js, ",\"store_created\":false,\"seeded\":null");
		cairn_free(found);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/.cairn", dir);
	sbuf_adds(js, ",\"store\":");
	json_add_strz(js, path);
	if (dry) {
		sbuf_adds(js, ",\"store_created\":false,\"seeded\":null");
		if (!cli_state.json)
			printf("%s: would be created (no store here yet), then "
			       "seeded from the decision records found\n",
			       path);
		return 0;
	}
	if (cli_store_create(path))
		return 1;
	sbuf_adds(js, ",\"store_created\":true,\"seeded\":");
	if (!cli_state.json)
		printf("%s: created (there was no store; the hook and the MCP "
		       "server read this one)\n", path);
	memset(&o, 0, sizeof(o));
	memset(&rep, 0, sizeof(rep));
	rc = cairn_db_open(path, &o, &db);
	if (rc == CAIRN_OK)
		rc = cairn_seed(db, NULL, 0, NULL, &rep);
	if (rc != CAIRN_OK) {
		/* the store is there: a seed that failed is said, not fatal */
		if (!cli_state.json)
			fprintf(stderr, "cairn: note: seeding failed (%s): run "
				"'cairn seed' in '%s' to see why\n",
				cairn_errmsg(db), dir);
		sbuf_adds(js, "{\"files\":0,\"records\":0,\"error\":");
		json_add_strz(js, cairn_errmsg(db));
		sbuf_addc(js, '}');
	} else {
		sbuf_addf(js, "{\"files\":%zu,\"records\":%zu,"
			      "\"files_with_errors\":%zu}",
			  rep.files - rep.n_failed, rep.records, rep.n_failed);
		if (!cli_state.json && rep.n_items == 0)
			printf("seed: no decision records found in the usual "
			       "folders (docs/decisions, docs/adr, ...); 'cairn "
			       "seed PATH' names theirs\n");
		else if (!cli_state.json)
			printf("seeded %zu files, %zu records from the "
			       "project's decision records (cairn seed; re-run "
			       "it after they change)\n",
			       rep.files - rep.n_failed, rep.records);
		if (!cli_state.json && rep.n_failed)
			fprintf(stderr, "cairn: note: %zu file%s with errors "
				"skipped: 'cairn seed' in '%s' lists them\n",
				rep.n_failed, rep.n_failed == 1 ? "" : "s",
				dir);
	}
	cairn_seed_report_release(&rep);
	cairn_db_close(db);
	return 0;
}

int cmd_setup(int argc, char **argv)
{
	enum { O_DIR = 256, O_CAIRN, O_MODEL, O_PROBES, O_JSON };
	static const struct option lo[] = { { "dir", 1, 0, O_DIR },
					    { "dry-run", 0, 0, 'n' },
					    { "cairn", 1, 0, O_CAIRN },
					    { "model", 1, 0, O_MODEL },
					    { "probes", 1, 0, O_PROBES },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	struct setup_file *files = NULL;
	const char *dir = ".", *cairn = "cairn", *model = NULL, *probes = NULL;
	char err[SETUP_PATH + 512], warn[SETUP_PATH + 256];
	struct sbuf js = SBUF_INIT;
	struct stat st;
	int c, i, dry = 0, ret = 0, rc = CAIRN_OK;

	err[0] = '\0';
	warn[0] = '\0';
	while ((c = cli_getopt(argc, argv, "nh", lo)) != -1) {
		switch (c) {
		case O_DIR: dir = optarg; break;
		case O_CAIRN: cairn = optarg; break;
		case O_JSON: cli_state.json = 1; break;
		case O_MODEL: model = optarg; break;
		case O_PROBES: probes = optarg; break;
		case 'n': dry = 1; break;
		case 'h': return cli_help(setup_help);
		default: return cli_usage("setup", "unknown option");
		}
	}
	if (optind >= argc)
		return cli_usage("setup", "expected a target: claude-code");
	if (strcmp(argv[optind], "claude-code") != 0)
		return cli_usage("setup", "unknown target '%s' (known: "
				 "claude-code)", argv[optind]);
	if (optind + 1 < argc)
		return cli_usage("setup", "unexpected argument '%s'",
				 argv[optind + 1]);
	if (!safe_command(cairn))
		return cli_usage("setup", "--cairn: a path to the cairn "
				 "command (its last part 'cairn'; letters, "
				 "digits and / . _ + - only)");
	on_path_note(cairn, warn, sizeof(warn));
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return cli_fail("'%s' is not a folder", dir);
	if (probes && !model)
		return cli_usage("setup", "--probes goes with --model");
	if (model && (ret = cli_model_setup_check(dir, model)) != 0)
		return ret; /* cli_model.c */
	files = util_calloc(3, sizeof(*files));
	if (!files)
		return cli_fail("out of memory");
	/* read and merge everything first: a bad file stops all writing */
	rc = setup_merge(files, dir, cairn, err, sizeof(err));
	if (rc) {
		ret = cli_fail("setup: %s", err[0] ? err : cairn_errstr(rc));
		goto out;
	}
	if (warn[0] && !cli_state.json)
		fprintf(stderr, "cairn: note: %s\n", warn);
	sbuf_addf(&js, "{\"dry_run\":%s,\"files\":[", dry ? "true" : "false");
	if (setup_write(files, dry, &js, err, sizeof(err)) != CAIRN_OK) {
		ret = cli_fail("setup: %s", err);
		goto out;
	}
	sbuf_addc(&js, ']');
	if (setup_store(dir, dry, &js)) {
		ret = EXIT_FAILURE;
		goto out;
	}
	if (cli_state.json) {
		sbuf_adds(&js, ",\"warning\":");
		if (warn[0])
			json_add_strz(&js, warn);
		else
			sbuf_adds(&js, "null");
		sbuf_addc(&js, '}');
		cli_print_json(&js);
	} else if (!dry && (files[0].write || files[1].write || files[2].write))
		printf("Restart Claude Code in '%s' to load them.\n", dir);
	/* what Claude Code does with a new .mcp.json server (
	 * checked by tests/clients/claude-code.sh) */
	if (!dry && files[1].write && !cli_state.json)
		printf("The MCP server \"cairn\" needs your approval in Claude "
		       "Code: until then `claude mcp list`\nshows it as "
		       "\"Pending approval\". Start `claude` in '%s', trust the "
		       "folder and choose\n\"Use this MCP server\"; `claude mcp "
		       "list` then shows it \"Connected\". If you declined\nit, "
		       "`claude mcp reset-project-choices` there makes Claude Code "
		       "ask again.\n", dir);
	if (model && dry)
		printf("would pull %s, reindex every record with it and "
		       "calibrate\n", model);
	else if (model)
		ret = cli_model_setup(dir, model, probes); /* cli_model.c */
out:
	for (i = 0; files && i < 3; i++) {
		cairn_free(files[i].old);
		json_free(files[i].root);
		sbuf_release(&files[i].added);
		sbuf_release(&files[i].out);
	}
	cairn_free(files);
	sbuf_release(&js);
	return ret;
}
