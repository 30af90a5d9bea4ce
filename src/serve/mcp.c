/*
 * mcp.c -- the MCP server (SPEC 7): JSON-RPC 2.0 over newline-delimited
 * messages (the stdio transport of MCP 2025-06-18) and the memory tools.
 *
 * Layer: top, beside cli and hook. Uses the public API for every store
 * operation (cairn_recall, cairn_record_*) and the store's
 * cairn_record_file_backed() so that "file-backed" means the same here as in
 * the CLI.
 *
 * Holds: the message dispatcher (mcp_handle_line), the serving loop over
 * two file descriptors (mcp_serve_side), the tool table with each tool's
 * description, input and output JSON Schemas, argument validation and the
 * six tool handlers.
 *
 * Protocol decisions (docs/MCP.md says the same):
 *   - revisions 2025-06-18 (latest), 2025-03-26 and 2024-11-05: a client
 *     asking for one of them gets it, any other gets the latest. Below
 *     2025-06-18 the tool list carries no title/outputSchema and results
 *     no structuredContent (those fields came with 2025-06-18);
 *   - batches (JSON arrays) were removed from MCP in 2025-06-18: an array
 *     is answered -32600;
 *   - only initialize and ping are served before initialize; other known
 *     methods answer -32002 (server not initialized);
 *   - notifications never get a reply, valid or not; only
 *     notifications/initialized has an effect;
 *   - a tool's argument errors (unknown argument, wrong type, out of
 *     range) are tool results with isError:true, so the model can read and
 *     correct them; an unknown tool name or non-object arguments are
 *     -32602.
 *
 * Must never: write anything but JSON-RPC to its output, approve a record
 * (no tool can set a status other than retired, and writes are always
 * origin "agent", hence candidates), echo a refused secret, or stop
 * serving because of one malformed message.
 */
#include <errno.h>
#include <poll.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "mcp.h"
#include "words.h"

#define MCP_READ_CHUNK 65536       /* bytes per read() from the client */
#define MCP_EXCERPT_BYTES 400      /* body excerpt of a search result */
#define MCP_EXCERPT_LINES 4        /* ... and at most this many lines */
#define MCP_CLIENT_MAX 120         /* bytes of clientInfo kept for provenance */
#define MCP_CANDIDATES_DEFAULT 50  /* memory_candidates without limit */
#define MCP_CANDIDATES_MAX 500

/* JSON-RPC 2.0 error codes (section 5.1) and the one of our own */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_INTERNAL_ERROR (-32603)
#define RPC_NOT_INITIALIZED (-32002) /* implementation-defined server error */

struct mcp_server {
	cairn_db *db;            /* the store (borrowed) */
	int initialized;         /* 1 once initialize was answered */
	char version[16];        /* negotiated protocol revision, "" before */
	char session[128];       /* provenance: session id of writes */
	char client[MCP_CLIENT_MAX + 1]; /* clientInfo "name version", or "" */
};

static const char *const protocol_versions[] = {
	MCP_PROTOCOL_LATEST, "2025-03-26", "2024-11-05",
};

/* =========================================================== schemas */

#define S_STR "{\"type\":\"string\"}"
#define S_NSTR "{\"type\":[\"string\",\"null\"]}"
#define S_NUM "{\"type\":\"number\"}"
#define S_INT "{\"type\":\"integer\"}"
#define S_BOOL "{\"type\":\"boolean\"}"
#define KIND_ENUM WORDS_JSON(CAIRN_KINDS)
#define STATUS_ENUM WORDS_JSON(CAIRN_STATUSES)
#define SCOPE_ENUM WORDS_JSON(CAIRN_SCOPES)
#define S_SOURCE                                                            \
	"{\"type\":\"object\",\"properties\":{\"path\":" S_NSTR               \
	",\"heading\":" S_NSTR ",\"line\":{\"type\":[\"integer\",\"null\"]}," \
	"\"commit\":" S_NSTR ",\"session\":" S_NSTR ",\"tool\":" S_NSTR "},"  \
	"\"required\":[\"path\",\"heading\",\"line\",\"commit\",\"session\","  \
	"\"tool\"]}"
/* the fields of a search result or a candidate (add_summary) */
#define SUMMARY_PROPS                                                       \
	"\"id\":" S_STR ",\"key\":" S_NSTR ",\"kind\":" S_STR                 \
	",\"status\":" S_STR ",\"scope\":" S_STR ",\"title\":" S_STR          \
	",\"origin\":" S_STR ",\"source\":" S_SOURCE ",\"source_text\":" S_STR \
	",\"time\":" S_NSTR ",\"updated\":" S_STR ",\"proof\":" S_NSTR         \
	",\"excerpt\":" S_STR ",\"excerpt_truncated\":" S_BOOL
#define SUMMARY_REQ                                                         \
	"\"id\",\"key\",\"kind\",\"status\",\"scope\",\"title\",\"origin\","  \
	"\"source\",\"source_text\",\"excerpt\",\"excerpt_truncated\""
#define S_SUMMARY                                                           \
	"{\"type\":\"object\",\"properties\":{" SUMMARY_PROPS "},"            \
	"\"required\":[" SUMMARY_REQ "]}"
#define S_HIT                                                               \
	"{\"type\":\"object\",\"properties\":{" SUMMARY_PROPS                 \
	",\"relevance\":" S_NUM ",\"score\":" S_NUM ",\"drift\":" S_NSTR     \
	"},\"required\":[" SUMMARY_REQ ",\"relevance\",\"score\"]}"
/* a whole record (add_record) */
#define S_RECORD                                                            \
	"{\"type\":\"object\",\"properties\":{\"id\":" S_STR ",\"key\":"      \
	S_NSTR ",\"kind\":" S_STR ",\"status\":" S_STR ",\"scope\":" S_STR    \
	",\"title\":" S_STR ",\"body\":" S_STR ",\"proof\":" S_NSTR           \
	",\"confidence\":" S_NUM ",\"origin\":" S_STR ",\"source\":" S_SOURCE \
	",\"source_text\":" S_STR ",\"time\":" S_NSTR ",\"created\":" S_STR   \
	",\"updated\":" S_STR ",\"last_seen\":" S_NSTR ",\"supersedes\":"     \
	S_NSTR ",\"superseded_by\":" S_NSTR ",\"revision\":" S_INT "},"       \
	"\"required\":[\"id\",\"key\",\"kind\",\"status\",\"scope\","         \
	"\"title\",\"body\",\"origin\",\"source\",\"source_text\","           \
	"\"revision\"]}"
#define S_RECALL_OUT                                                        \
	"{\"type\":\"object\",\"properties\":{\"receipt\":" S_NSTR            \
	",\"count\":" S_INT ",\"results\":{\"type\":\"array\",\"items\":"     \
	S_HIT "}},\"required\":[\"receipt\",\"count\",\"results\"]}"

#define IN_QUERY                                                            \
	"\"query\":{\"type\":\"string\",\"minLength\":1,\"description\":"     \
	"\"the question or topic, in the words a record would use (any "     \
	"language)\"},\"k\":{\"type\":\"integer\",\"minimum\":1,"             \
	"\"maximum\":100,\"default\":5,\"description\":\"at most this many "  \
	"results\"}"

static const char recall_in[] =
	"{\"type\":\"object\",\"properties\":{" IN_QUERY
	",\"kinds\":{\"type\":\"array\",\"minItems\":1,\"items\":{\"enum\":"
	KIND_ENUM "},\"description\":\"only these kinds (default: all)\"},"
	"\"statuses\":{\"type\":\"array\",\"minItems\":1,\"items\":{\"enum\":"
	STATUS_ENUM "},\"description\":\"only these statuses (default: "
	"accepted and unverified)\"}},\"required\":[\"query\"],"
	"\"additionalProperties\":false}";

static const char precedents_in[] =
	"{\"type\":\"object\",\"properties\":{" IN_QUERY "},"
	"\"required\":[\"query\"],\"additionalProperties\":false}";

static const char read_in[] =
	"{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\","
	"\"minLength\":1,\"description\":\"exact key, e.g. deploy:staging\"},"
	"\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"record "
	"id, or a unique prefix of at least 4 characters\"},\"scope\":{"
	"\"enum\":" SCOPE_ENUM ",\"description\":\"with key: "
	"look only in this scope (default: workspace, then global)\"}},"
	"\"additionalProperties\":false}";

static const char read_out[] =
	"{\"type\":\"object\",\"properties\":{\"record\":" S_RECORD
	",\"file_backed\":" S_BOOL ",\"edit\":" S_NSTR ",\"drift\":{\"type\":"
	"\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"path\":"
	S_STR ",\"state\":" S_STR ",\"renamed_to\":" S_NSTR "},\"required\":"
	"[\"path\",\"state\"]}}},\"required\":["
	"\"record\",\"file_backed\",\"edit\",\"drift\"]}";

static const char write_in[] =
	"{\"type\":\"object\",\"properties\":{\"kind\":{\"enum\":" KIND_ENUM
	",\"description\":\"what sort of memory this is\"},\"key\":{\"type\":"
	"\"string\",\"minLength\":1,\"maxLength\":512,\"description\":"
	"\"optional exact-match key, e.g. deploy:staging\"},\"title\":{"
	"\"type\":\"string\",\"description\":\"a short title\"},\"body\":{"
	"\"type\":\"string\",\"minLength\":1,\"description\":\"the full text "
	"a future session needs, without secrets\"},\"proof\":{\"type\":"
	"\"string\",\"description\":\"what verified it, e.g. the command "
	"that succeeded\"},\"scope\":{\"enum\":" SCOPE_ENUM ","
	"\"description\":\"workspace (default): this project; global: every "
	"project of this user; machine: true only on this machine (a "
	"capability proved here), kept out of team sync\"}},\"required\":[\"kind\",\"body\"],"
	"\"additionalProperties\":false}";

#define S_MAY_REPLACE                                                       \
	"{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"  \
	"\"id\":" S_STR ",\"kind\":" S_STR ",\"status\":" S_STR ",\"key\":"   \
	S_NSTR ",\"title\":" S_STR ",\"similarity\":" S_NUM                    \
	",\"same_key_family\":" S_BOOL "},\"required\":[\"id\",\"kind\","     \
	"\"status\",\"title\",\"similarity\",\"same_key_family\"]}}"
static const char write_out[] =
	"{\"type\":\"object\",\"properties\":{\"record\":" S_RECORD
	",\"approve_with\":" S_STR ",\"may_replace\":" S_MAY_REPLACE
	"},\"required\":[\"record\",\"approve_with\",\"may_replace\"]}";

static const char forget_in[] =
	"{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\","
	"\"minLength\":1,\"description\":\"the record's full id (no "
	"prefix)\"},"
	"\"key\":{\"type\":\"string\",\"minLength\":1,\"description\":"
	"\"exact key\"},\"scope\":{\"enum\":" SCOPE_ENUM ","
	"\"description\":\"with key: only this scope\"},"
	"\"reason\":{\"type\":\"string\",\"description\":\"why the "
	"record is wrong or obsolete, shown to the human who decides (one "
	"line; the first 500 bytes are kept)\"}},"
	"\"additionalProperties\":false}";

static const char forget_out[] =
	"{\"type\":\"object\",\"properties\":{\"id\":" S_STR ",\"kind\":"
	S_STR ",\"key\":" S_NSTR ",\"title\":" S_STR ",\"previous_status\":"
	S_STR ",\"status\":" S_STR ",\"pending\":" S_BOOL ",\"confirm_with\":"
	S_NSTR "},\"required\":[\"id\",\"kind\",\"key\",\"title\","
	"\"previous_status\",\"status\",\"pending\",\"confirm_with\"]}";

static const char candidates_in[] =
	"{\"type\":\"object\",\"properties\":{\"kinds\":{\"type\":\"array\","
	"\"minItems\":1,\"items\":{\"enum\":" KIND_ENUM "},\"description\":"
	"\"only these kinds (default: all)\"},\"limit\":{\"type\":"
	"\"integer\",\"minimum\":1,\"maximum\":500,\"default\":50,"
	"\"description\":\"at most this many, newest first\"}},"
	"\"additionalProperties\":false}";

static const char candidates_out[] =
	"{\"type\":\"object\",\"properties\":{\"count\":" S_INT
	",\"candidates\":{\"type\":\"array\",\"items\":" S_SUMMARY "}},"
	"\"required\":[\"count\",\"candidates\"]}";

/* ========================================================= descriptions */

/*
 * Each description says what the tool is, when to use it, what happens
 * after the call, how it differs from the other tools and its side
 * effects (seed 004 §5). Every claim is bound by a test in
 * tests/unit_mcp.c; change both together.
 */
static const char recall_desc[] =
	"Search this project's long-term memory: records kept across sessions "
	"(decisions, ADRs, facts, rules, procedures, capabilities, findings, "
	"notes), written by people, seeded from the repository's Markdown, or "
	"proposed by agents and approved. Use it when the task may depend on "
	"something settled or learned before (how to deploy, a convention, "
	"why a choice was made, whether something was already tried) and you "
	"do not know the record's key. Results are ranked by how well each "
	"record's title and body match the query (its words, and its meaning "
	"when the store has an embedding model), weighted by kind and "
	"status; a no-match floor applies, so an empty result means the "
	"memory holds no answer (do not retry with vaguer words). By default "
	"only accepted and unverified records are searched; pass statuses to "
	"include candidates or others. Each result gives id, key, kind, "
	"status, source, relevance (0..1), drift (null, or which file it "
	"refers to changed since it was recorded: re-check before relying "
	"on it) and the first lines of the body; "
	"call memory_read with the id for the full text. Differs from "
	"find_precedents (decisions and ADRs only) and memory_read (one "
	"record by exact key or id, no ranking). Side effects: stores a "
	"receipt of what was returned (its id is in the answer) and sets "
	"last_seen on the returned records; the first search of a day also "
	"ages the store (decisions and facts unseen for 90 days become "
	"stale, for 180 days retired). It never changes a record's text.";

static const char read_desc[] =
	"Read one record of this project's memory in full, by key (the exact "
	"drawer, e.g. deploy:staging) or by id (from memory_recall, "
	"find_precedents or memory_candidates). Use it when you know the key, "
	"or to get the whole text after a search showed an excerpt. Returns "
	"the full body, kind, status, proof and provenance. A file-backed "
	"record (seeded from Markdown in the repository) has file_backed true "
	"and edit naming the source file and line: that file is the "
	"authority. drift lists the repository files the record refers to "
	"that changed (or were deleted or renamed) since it was recorded: "
	"re-check what it says against them before relying on it. Any status is returned, including candidate, stale and "
	"retired, so check status before relying on it. Differs from "
	"memory_recall: exact match only, no ranking, no receipt. Give "
	"exactly one of key and id. Side effects: reading by key sets the "
	"record's last_seen and revives a stale record (it is no longer "
	"stale: an explicit read confirms it is still in use); reading by id "
	"changes nothing.";

static const char write_desc[] =
	"Propose a new memory for this project: a fact, rule, decision, "
	"procedure, capability, finding or note worth keeping for future "
	"sessions, e.g. a command sequence that worked, a rule the user "
	"stated, a capability with its proof. The record is stored as a "
	"candidate with origin agent and this session's provenance; "
	"memory_recall does not return it by default and it is not an "
	"accepted fact or decision until a human approves it with 'cairn "
	"approve ID' (no tool can approve, and arguments other than kind, "
	"key, title, body, proof and scope are refused). Use it once per "
	"lasting fact, not for conversation notes. With a key that names an "
	"existing record, approval replaces that record's text (the old text "
	"is kept as a revision); with the key of a pending candidate, that "
	"candidate's text is replaced; the key of a file-backed record is "
	"refused (edit the file instead). Text containing a secret (API "
	"keys, tokens, private keys, passwords in URLs) is refused and "
	"nothing is stored: write the fact without the secret. The result's "
	"may_replace lists live records of the same kind with close text "
	"that this one may replace; nothing is linked: tell the user, who "
	"can run 'cairn supersede OLD NEW'. Differs from "
	"memory_forget (asks to retire a record) and from the reading tools. Side "
	"effects: adds one candidate record, or replaces the text of the "
	"pending candidate with the same key.";

static const char forget_desc[] =
	"Ask to retire a record that is wrong or no longer true, by its full "
	"id (no prefix) or its key. A record you did not write yourself (a "
	"human's rule, a seeded fact, another session's proposal, or your own "
	"once a human approved it) is not changed: the answer has pending "
	"true, and a human confirms with 'cairn approve ID' (it is listed by "
	"'cairn candidates') or drops it with 'cairn reject ID'; until then "
	"the record stays as it is. Another session's candidate stays for "
	"the human's review ('cairn reject ID' drops it). Your own pending "
	"candidate from this session is retired at once (a withdrawn "
	"proposal). A retired record "
	"leaves memory_recall and find_precedents by default; its text and "
	"revisions stay in the store and a human can restore it ('cairn "
	"revise ID --status accepted'). Use it once you have established "
	"that a record is obsolete, give the reason in reason (the human "
	"who confirms sees it) and tell the user why; when a fact "
	"changed rather than ended, prefer memory_write with the same key. A "
	"file-backed record (seeded from Markdown in the repository) is not "
	"changed: the answer is an error naming the file and line to edit, "
	"after which 'cairn seed' updates the store. Give exactly one of id "
	"and key. Differs from memory_write (proposes candidates) and the "
	"reading tools. Side effects: retires your own candidate, or records "
	"one pending forget for a human; nothing is deleted.";

static const char candidates_desc[] =
	"List the candidate records waiting for human approval: what agents, "
	"transcript capture and reflection proposed, with proof and "
	"provenance, newest first. Use it to avoid proposing something twice "
	"or to tell the user what awaits review. Candidates are proposals, "
	"not accepted facts: do not rely on them as settled. A human approves "
	"or rejects them with 'cairn approve ID' or 'cairn reject ID'; no "
	"tool does. Differs from memory_recall (ranked search over accepted "
	"records). Side effects: none, it changes nothing in the store.";

static const char precedents_desc[] =
	"Search only this project's decisions and ADRs (architecture decision "
	"records) for what was decided before about a topic, and why. Use it "
	"before proposing a design, choosing a library or tool, or changing a "
	"convention, so that you follow an earlier decision or knowingly "
	"revisit it instead of deciding again. Same ranking, no-match floor "
	"and result fields as memory_recall, restricted to kinds decision and "
	"adr with status accepted or unverified; an empty result means no "
	"recorded decision matches. Call memory_read with an id for the full "
	"text. Differs from memory_recall, which searches every kind. Side "
	"effects: as for memory_recall: a receipt, last_seen on the returned "
	"records, and the daily ageing; it never changes a record's text.";

static const char server_instructions[] =
	"cairn is this project's long-term memory. Before designing or "
	"deciding, check find_precedents; when a task may depend on earlier "
	"knowledge, use memory_recall and then memory_read for full text. "
	"Propose lasting facts with memory_write: they become candidates that "
	"a human approves. memory_forget proposes retiring an obsolete record, "
	"which a human confirms.";

/* ============================================================ arguments */

enum arg_type {
	ARG_STR,      /* a string without NUL characters */
	ARG_INT,      /* an integer in [min, max] */
	ARG_KINDS,    /* a non-empty array of kinds */
	ARG_STATUSES, /* a non-empty array of statuses */
	ARG_SCOPE,    /* "workspace", "global" or "machine" */
};

struct arg_spec {
	const char *name;   /* argument name */
	enum arg_type type; /* what it must be */
	int required;       /* 1: must be present */
	long min, max;      /* ARG_INT range; ARG_STR: min length (bytes) */
};

struct tool;
/* A handler: fills sc with the structured result (a JSON object) and
 * returns 0, or fills msg and returns 1 for a tool error. */
typedef int (*tool_fn)(struct mcp_server *s, const struct tool *t,
		       const struct json *args, struct sbuf *sc,
		       struct sbuf *msg);

struct tool {
	const char *name;         /* tools/call name */
	const char *title;        /* display title (2025-06-18) */
	const char *description;  /* what, when, after, differs, side effects */
	const char *input;        /* inputSchema (JSON) */
	const char *output;       /* outputSchema (JSON) */
	const char *annotations;  /* behaviour hints (JSON) */
	const struct arg_spec *args; /* terminated by a NULL name */
	tool_fn fn;               /* the handler */
};

/* "Does not change its environment" is false for every tool but
 * memory_candidates: recall and precedents store receipts and last_seen,
 * read by key sets last_seen. */
#define ANN(ro, destr, idem)                                                \
	"{\"readOnlyHint\":" ro ",\"destructiveHint\":" destr                 \
	",\"idempotentHint\":" idem ",\"openWorldHint\":false}"

static const struct arg_spec recall_args[] = {
	{ "query", ARG_STR, 1, 1, 0 },
	{ "k", ARG_INT, 0, 1, 100 },
	{ "kinds", ARG_KINDS, 0, 0, 0 },
	{ "statuses", ARG_STATUSES, 0, 0, 0 },
	{ NULL, ARG_STR, 0, 0, 0 },
};
static const struct arg_spec precedents_args[] = {
	{ "query", ARG_STR, 1, 1, 0 },
	{ "k", ARG_INT, 0, 1, 100 },
	{ NULL, ARG_STR, 0, 0, 0 },
};
static const struct arg_spec read_args[] = {
	{ "key", ARG_STR, 0, 1, 0 },
	{ "id", ARG_STR, 0, 1, 0 },
	{ "scope", ARG_SCOPE, 0, 0, 0 },
	{ NULL, ARG_STR, 0, 0, 0 },
};
static const struct arg_spec write_args[] = {
	{ "kind", ARG_STR, 1, 1, 0 },
	{ "key", ARG_STR, 0, 1, 0 },
	{ "title", ARG_STR, 0, 0, 0 },
	{ "body", ARG_STR, 1, 1, 0 },
	{ "proof", ARG_STR, 0, 0, 0 },
	{ "scope", ARG_SCOPE, 0, 0, 0 },
	{ NULL, ARG_STR, 0, 0, 0 },
};
static const struct arg_spec forget_args[] = {
	{ "id", ARG_STR, 0, 1, 0 },
	{ "key", ARG_STR, 0, 1, 0 },
	{ "scope", ARG_SCOPE, 0, 0, 0 },
	{ "reason", ARG_STR, 0, 0, 0 },
	{ NULL, ARG_STR, 0, 0, 0 },
};
static const struct arg_spec candidates_args[] = {
	{ "kinds", ARG_KINDS, 0, 0, 0 },
	{ "limit", ARG_INT, 0, 1, MCP_CANDIDATES_MAX },
	{ NULL, ARG_STR, 0, 0, 0 },
};

/* Names of a tool's arguments, comma-separated, for messages. */
static void arg_names(struct sbuf *sb, const struct arg_spec *a)
{
	const struct arg_spec *first = a;

	for (; a->name; a++)
		sbuf_addf(sb, "%s%s", a == first ? "" : ", ", a->name);
}

/* Is every element of array j a string that passes valid? */
static int str_array_ok(const struct json *j, int (*valid)(const char *),
			const char **bad)
{
	const struct json *e;

	if (j->type != JSON_ARRAY || j->len == 0)
		return 0;
	for (e = j->child; e; e = e->next) {
		if (e->type != JSON_STRING || strlen(e->str) != e->len ||
		    !valid(e->str)) {
			*bad = e->type == JSON_STRING ? e->str : NULL;
			return 0;
		}
	}
	return 1;
}

static int scope_valid(const char *s)
{
	return cairn_scope_valid(s);
}

/*
 * Check args against the tool's argument list: no unknown argument, every
 * required one present, each of the right type. Returns 0, or 1 with the
 * reason in msg.
 */
static int check_args(const struct tool *t, const struct json *args,
		      struct sbuf *msg)
{
	const struct arg_spec *a;
	const struct json *m;

	for (m = args->child; m; m = m->next) {
		for (a = t->args; a->name; a++)
			if (strlen(a->name) == m->keylen &&
			    memcmp(a->name, m->key, m->keylen) == 0)
				break;
		if (!a->name) {
			sbuf_adds(msg, "unknown argument ");
			json_add_str(msg, m->key, m->keylen);
			sbuf_addf(msg, ": %s accepts only ", t->name);
			arg_names(msg, t->args);
			return 1;
		}
	}
	for (a = t->args; a->name; a++) {
		const char *bad = NULL;

		m = json_get(args, a->name);
		if (!m || m->type == JSON_NULL) {
			if (a->required) {
				sbuf_addf(msg, "missing argument '%s'",
					  a->name);
				return 1;
			}
			continue;
		}
		switch (a->type) {
		case ARG_STR:
			if (m->type != JSON_STRING) {
				sbuf_addf(msg, "argument '%s' must be a "
					  "string", a->name);
				return 1;
			}
			if (strlen(m->str) != m->len) {
				sbuf_addf(msg, "argument '%s' contains a NUL "
					  "character", a->name);
				return 1;
			}
			if ((long)m->len < a->min) {
				sbuf_addf(msg, "argument '%s' is empty",
					  a->name);
				return 1;
			}
			break;
		case ARG_INT:
			if (m->type != JSON_NUMBER || m->num != floor(m->num) ||
			    m->num < (double)a->min || m->num > (double)a->max) {
				sbuf_addf(msg, "argument '%s' must be an "
					  "integer from %ld to %ld", a->name,
					  a->min, a->max);
				return 1;
			}
			break;
		case ARG_KINDS:
		case ARG_STATUSES:
			if (!str_array_ok(m, a->type == ARG_KINDS
						    ? cairn_kind_valid
						    : cairn_status_valid,
					  &bad)) {
				sbuf_addf(msg, "argument '%s' must be a "
					  "non-empty array of %s", a->name,
					  a->type == ARG_KINDS ? "kinds"
							       : "statuses");
				if (bad) {
					sbuf_adds(msg, "; unknown: ");
					json_add_strz(msg, bad);
				}
				return 1;
			}
			break;
		case ARG_SCOPE:
			if (m->type != JSON_STRING || !scope_valid(m->str)) {
				sbuf_addf(msg, "argument '%s' must be "
					  "\"workspace\", \"global\" or "
					  "\"machine\"",
					  a->name);
				return 1;
			}
			break;
		}
	}
	return 0;
}

/* A string argument, or NULL when absent or null. */
static const char *arg_str(const struct json *args, const char *name)
{
	return json_get_str(args, name);
}

/* A comma-separated list from an array argument into sb ("" if absent). */
static void arg_csv(const struct json *args, const char *name,
		    struct sbuf *sb)
{
	const struct json *m = json_get(args, name), *e;

	if (!m || m->type != JSON_ARRAY)
		return;
	for (e = m->child; e; e = e->next) {
		if (sb->len)
			sbuf_addc(sb, ',');
		sbuf_adds(sb, e->str);
	}
}

/* ========================================================= record output */

/* A required string: NULL is written as "" so the schema's type holds. */
static void add_s(struct sbuf *sb, const char *s)
{
	json_add_strz(sb, s ? s : "");
}

static void add_source(struct sbuf *sb, const cairn_record *r)
{
	struct sbuf t = SBUF_INIT;

	sbuf_adds(sb, "\"source\":");
	json_add_source(sb, r);
	sbuf_adds(sb, ",\"source_text\":");
	util_source_text(&t, r);
	if (t.err)
		sb->err = t.err;
	add_s(sb, sbuf_str(&t));
	sbuf_release(&t);
}

/*
 * The first lines of the body: at most MCP_EXCERPT_LINES non-empty lines
 * and MCP_EXCERPT_BYTES bytes, never cutting a UTF-8 sequence. Sets
 * *truncated when some of the body was left out.
 */
static void add_excerpt(struct sbuf *sb, const char *body)
{
	struct sbuf ex = SBUF_INIT;
	const char *b = body ? body : "";
	int lines = 0, cut = 0;

	while (*b) {
		size_t n = strcspn(b, "\n");
		size_t sep = ex.len ? 1 : 0; /* the '\n' before this line */
		size_t room = ex.len < MCP_EXCERPT_BYTES
				      ? MCP_EXCERPT_BYTES - ex.len
				      : 0;

		if (lines == MCP_EXCERPT_LINES) {
			cut = 1;
			break;
		}
		if (n + sep > room) {
			/* b[n] stays inside the line: the new n is smaller */
			n = room > sep ? room - sep : 0;
			while (n > 0 && ((unsigned char)b[n] & 0xC0) == 0x80)
				n--;
			cut = 1;
		}
		if (n > 0) {
			if (ex.len)
				sbuf_addc(&ex, '\n');
			sbuf_add(&ex, b, n);
			lines++;
		}
		if (cut)
			break;
		b += n;
		if (*b == '\n')
			b++;
	}
	/* only blank lines left is not a cut */
	if (cut) {
		const char *rest = b;

		while (*rest == '\n' || *rest == ' ' || *rest == '\t' ||
		       *rest == '\r')
			rest++;
		if (!*rest)
			cut = 0;
	}
	if (ex.err)
		sb->err = ex.err;
	sbuf_adds(sb, "\"excerpt\":");
	add_s(sb, sbuf_str(&ex));
	sbuf_addf(sb, ",\"excerpt_truncated\":%s", cut ? "true" : "false");
	sbuf_release(&ex);
}

/* The fields of a search result or candidate (S_SUMMARY), without braces. */
static void add_summary(struct sbuf *sb, const cairn_record *r)
{
	sbuf_adds(sb, "\"id\":");
	add_s(sb, r->id);
	sbuf_adds(sb, ",\"key\":");
	json_add_strz(sb, r->key);
	sbuf_adds(sb, ",\"kind\":");
	add_s(sb, r->kind);
	sbuf_adds(sb, ",\"status\":");
	add_s(sb, r->status);
	sbuf_adds(sb, ",\"scope\":");
	add_s(sb, r->scope);
	sbuf_adds(sb, ",\"title\":");
	add_s(sb, r->title);
	sbuf_adds(sb, ",\"origin\":");
	add_s(sb, r->origin);
	sbuf_addc(sb, ',');
	add_source(sb, r);
	sbuf_adds(sb, ",\"time\":");
	json_add_strz(sb, r->time);
	sbuf_adds(sb, ",\"updated\":");
	add_s(sb, r->updated);
	sbuf_adds(sb, ",\"proof\":");
	json_add_strz(sb, r->proof);
	sbuf_addc(sb, ',');
	add_excerpt(sb, r->body);
}

/* A whole record as an object (S_RECORD). */
static void add_record(struct sbuf *sb, const cairn_record *r)
{
	sbuf_adds(sb, "{\"id\":");
	add_s(sb, r->id);
	sbuf_adds(sb, ",\"key\":");
	json_add_strz(sb, r->key);
	sbuf_adds(sb, ",\"kind\":");
	add_s(sb, r->kind);
	sbuf_adds(sb, ",\"status\":");
	add_s(sb, r->status);
	sbuf_adds(sb, ",\"scope\":");
	add_s(sb, r->scope);
	sbuf_adds(sb, ",\"title\":");
	add_s(sb, r->title);
	sbuf_adds(sb, ",\"body\":");
	add_s(sb, r->body);
	sbuf_adds(sb, ",\"proof\":");
	json_add_strz(sb, r->proof);
	sbuf_adds(sb, ",\"confidence\":");
	json_add_num(sb, isfinite(r->confidence) ? r->confidence : 0);
	sbuf_adds(sb, ",\"origin\":");
	add_s(sb, r->origin);
	sbuf_addc(sb, ',');
	add_source(sb, r);
	sbuf_adds(sb, ",\"time\":");
	json_add_strz(sb, r->time);
	sbuf_adds(sb, ",\"created\":");
	add_s(sb, r->created);
	sbuf_adds(sb, ",\"updated\":");
	add_s(sb, r->updated);
	sbuf_adds(sb, ",\"last_seen\":");
	json_add_strz(sb, r->last_seen);
	sbuf_adds(sb, ",\"supersedes\":");
	json_add_strz(sb, r->supersedes);
	sbuf_adds(sb, ",\"superseded_by\":");
	json_add_strz(sb, r->superseded_by);
	sbuf_addf(sb, ",\"revision\":%ld}", r->revision);
}

/* A tool error from a store call: the store's message, never a secret
 * (the store's messages name the kind and line of a secret only). The
 * CLI's hint about --redact does not apply here and is cut off. */
static int store_fail(struct mcp_server *s, struct sbuf *msg,
		      const char *what, int rc)
{
	const char *m = cairn_errmsg(s->db);
	const char *hint = strstr(m, " (use --redact");
	size_t n = hint ? (size_t)(hint - m) : strlen(m);

	sbuf_addf(msg, "%s: %.*s", what, (int)n, *m ? m : cairn_errstr(rc));
	if (rc == CAIRN_SECRET)
		sbuf_adds(msg, "; nothing was stored: write the fact without "
			  "the secret");
	return 1;
}

/* =============================================================== tools */

static int recall_common(struct mcp_server *s, const struct json *args,
			 const char *kinds, struct sbuf *sc, struct sbuf *msg)
{
	struct sbuf kcsv = SBUF_INIT, scsv = SBUF_INIT;
	cairn_recall_opts o;
	cairn_result *res = NULL;
	double k = 0;
	size_t i;
	int rc;

	memset(&o, 0, sizeof(o));
	if (json_get_num(args, "k", &k))
		o.k = (int)k;
	if (kinds) {
		o.kinds = kinds;
	} else {
		arg_csv(args, "kinds", &kcsv);
		o.kinds = kcsv.len ? kcsv.buf : NULL;
	}
	arg_csv(args, "statuses", &scsv);
	o.statuses = scsv.len ? scsv.buf : NULL;
	if (kcsv.err || scsv.err) {
		rc = store_fail(s, msg, "out of memory", CAIRN_NOMEM);
		goto out;
	}
	rc = cairn_recall(s->db, arg_str(args, "query"), &o, &res);
	if (rc) {
		rc = store_fail(s, msg, "recall failed", rc);
		goto out;
	}
	sbuf_adds(sc, "{\"receipt\":");
	json_add_strz(sc, res->receipt_id[0] ? res->receipt_id : NULL);
	sbuf_addf(sc, ",\"count\":%zu,\"results\":[", res->n);
	for (i = 0; i < res->n; i++) {
		const cairn_hit *h = &res->hits[i];

		sbuf_adds(sc, i ? ",{" : "{");
		add_summary(sc, h->rec);
		sbuf_adds(sc, ",\"relevance\":");
		json_add_num(sc, isfinite(h->relevance) ? h->relevance : 0);
		sbuf_adds(sc, ",\"score\":");
		json_add_num(sc, isfinite(h->score) ? h->score : 0);
		sbuf_adds(sc, ",\"drift\":");
		json_add_strz(sc, h->drift);
		sbuf_addc(sc, '}');
	}
	sbuf_adds(sc, "]}");
out:
	cairn_result_free(res);
	sbuf_release(&kcsv);
	sbuf_release(&scsv);
	return rc;
}

static int tool_recall(struct mcp_server *s, const struct tool *t,
		       const struct json *args, struct sbuf *sc,
		       struct sbuf *msg)
{
	return recall_common(s, args, NULL, sc, msg);
}

static int tool_precedents(struct mcp_server *s, const struct tool *t,
			   const struct json *args, struct sbuf *sc,
			   struct sbuf *msg)
{
	return recall_common(s, args, "decision,adr", sc, msg);
}

/* Exactly one of key and id: 0, or 1 with the message. */
static int one_of_key_id(const struct tool *t, const struct json *args,
			 struct sbuf *msg)
{
	int k = arg_str(args, "key") != NULL, i = arg_str(args, "id") != NULL;

	if (k + i == 1)
		return 0;
	sbuf_addf(msg, "%s needs exactly one of 'key' and 'id'", t->name);
	return 1;
}

static int tool_read(struct mcp_server *s, const struct tool *t,
		     const struct json *args, struct sbuf *sc,
		     struct sbuf *msg)
{
	const char *key = arg_str(args, "key"), *id = arg_str(args, "id");
	cairn_record *r = NULL;
	char edit[1024];
	int rc, fb;

	if (one_of_key_id(t, args, msg))
		return 1;
	if (key)
		rc = cairn_record_read_key(s->db, key, arg_str(args, "scope"),
					   &r);
	else
		rc = cairn_record_get(s->db, id, &r);
	if (rc)
		return store_fail(s, msg, "not read", rc);
	fb = cairn_record_file_backed(r, edit, sizeof(edit));
	sbuf_adds(sc, "{\"record\":");
	add_record(sc, r);
	sbuf_addf(sc, ",\"file_backed\":%s,\"edit\":",
		  fb ? "true" : "false");
	/* "file-backed: edit PATH:LINE" -> "PATH:LINE" */
	json_add_strz(sc, fb ? edit + strlen("file-backed: edit ") : NULL);
	sbuf_adds(sc, ",\"drift\":[");
	{
		cairn_drift *d = NULL;
		size_t nd = 0;

		/* no git here: the files as they are against the recorded ids */
		if (cairn_drift_check(s->db, r->id, 0, &d, &nd) == CAIRN_OK) {
			for (size_t i = 0; i < nd; i++) {
				sbuf_adds(sc, i ? ",{\"path\":" : "{\"path\":");
				json_add_strz(sc, d[i].path);
				sbuf_adds(sc, ",\"state\":");
				json_add_strz(sc, d[i].state);
				sbuf_adds(sc, ",\"renamed_to\":");
				json_add_strz(sc, d[i].renamed_to);
				sbuf_addc(sc, '}');
			}
		}
		cairn_drift_free(d, nd);
	}
	sbuf_adds(sc, "]}");
	cairn_record_free(r);
	return 0;
}

static int tool_write(struct mcp_server *s, const struct tool *t,
		      const struct json *args, struct sbuf *sc,
		      struct sbuf *msg)
{
	struct sbuf tool = SBUF_INIT;
	cairn_record in, *r = NULL;
	cairn_suggestion *v = NULL;
	char *id = NULL;
	size_t nv = 0, i;
	int rc;

	if (!cairn_kind_valid(arg_str(args, "kind"))) {
		sbuf_adds(msg, "unknown kind ");
		json_add_strz(msg, arg_str(args, "kind"));
		sbuf_adds(msg, " (expected one of: " WORDS_LISTED(CAIRN_KINDS)
			  ")");
		return 1;
	}
	sbuf_adds(&tool, "mcp memory_write");
	if (s->client[0])
		sbuf_addf(&tool, " (client %s)", s->client);
	memset(&in, 0, sizeof(in));
	in.kind = (char *)arg_str(args, "kind");
	in.key = (char *)arg_str(args, "key");
	in.title = (char *)arg_str(args, "title");
	in.body = (char *)arg_str(args, "body");
	in.proof = (char *)arg_str(args, "proof");
	in.scope = (char *)arg_str(args, "scope");
	/* SPEC 4.2: an agent's write is a candidate, whatever it asks for */
	in.origin = (char *)"agent";
	in.src_session = s->session;
	in.src_tool = tool.err ? NULL : tool.buf;
	in.confidence = -1;
	rc = cairn_record_write(s->db, &in, 0, &id);
	if (rc) {
		rc = store_fail(s, msg, "not written", rc);
		goto out;
	}
	rc = cairn_record_get(s->db, id, &r);
	if (rc) {
		rc = store_fail(s, msg, "written but not readable", rc);
		goto out;
	}
	/* SPEC 5.5: the live records it may replace, for the human who
	 * approves it to link (cairn supersede OLD NEW); never linked here */
	if (cairn_supersede_suggest(s->db, r->id, &v, &nv) != CAIRN_OK)
		nv = 0;
	sbuf_adds(sc, "{\"record\":");
	add_record(sc, r);
	sbuf_addf(sc, ",\"approve_with\":\"cairn approve %s\"", r->id);
	sbuf_adds(sc, ",\"may_replace\":[");
	for (i = 0; i < nv; i++) {
		sbuf_adds(sc, i ? ",{\"id\":" : "{\"id\":");
		add_s(sc, v[i].rec->id);
		sbuf_adds(sc, ",\"kind\":");
		add_s(sc, v[i].rec->kind);
		sbuf_adds(sc, ",\"status\":");
		add_s(sc, v[i].rec->status);
		sbuf_adds(sc, ",\"key\":");
		json_add_strz(sc, v[i].rec->key);
		sbuf_adds(sc, ",\"title\":");
		add_s(sc, v[i].rec->title);
		sbuf_adds(sc, ",\"similarity\":");
		json_add_num(sc, round(v[i].similarity * 1e4) / 1e4);
		sbuf_addf(sc, ",\"same_key_family\":%s}",
			  v[i].same_family ? "true" : "false");
	}
	sbuf_adds(sc, "]}");
	cairn_suggestions_free(v, nv);
out:
	cairn_record_free(r);
	cairn_free(id);
	sbuf_release(&tool);
	return rc;
}

/*
 * The id of the record with this key (workspace first, then global, or
 * only `scope`) into *out (caller frees), without touching last_seen or the
 * status the way cairn_record_read_key does: forgetting is not a read.
 */
static int id_for_key(struct mcp_server *s, const char *key,
		      const char *scope, char **out)
{
	cairn_record *r = NULL;
	int rc = cairn_record_find_key(s->db, key, scope, &r);

	*out = NULL;
	if (rc == CAIRN_OK) {
		*out = r->id; /* handed over */
		r->id = NULL;
	}
	cairn_record_free(r);
	return rc;
}

/*
 * May this session retire r on its own? Only its own pending candidate (a
 * proposal it withdraws); any other record, an approved one of its own
 * included, is a human's to retire (SPEC 4.5), so the forget is a pending
 * proposal instead.
 */
static int own_candidate(const struct mcp_server *s, const cairn_record *r)
{
	return strcmp(r->status, "candidate") == 0 &&
	       strcmp(r->origin, "agent") == 0 && r->src_session &&
	       strcmp(r->src_session, s->session) == 0;
}

static int tool_forget(struct mcp_server *s, const struct tool *t,
		       const struct json *args, struct sbuf *sc,
		       struct sbuf *msg)
{
	const char *key = arg_str(args, "key"), *id = arg_str(args, "id");
	struct sbuf tool = SBUF_INIT;
	cairn_record *r = NULL;
	char edit[1024];
	const char *now;
	int rc, pending = 0;

	if (one_of_key_id(t, args, msg))
		return 1;
	if (key) {
		char *kid = NULL;

		rc = id_for_key(s, key, arg_str(args, "scope"), &kid);
		if (rc == CAIRN_OK)
			rc = cairn_record_get(s->db, kid, &r);
		cairn_free(kid);
	} else {
		rc = cairn_record_get(s->db, id, &r);
		/* a destructive tool takes the full id, never a prefix */
		if (rc == CAIRN_OK && strcmp(r->id, id) != 0) {
			sbuf_adds(msg, "not retired: no record has the id ");
			json_add_strz(msg, id);
			sbuf_adds(msg, " (memory_forget takes a full id, not "
				  "a prefix)");
			cairn_record_free(r);
			return 1;
		}
		if (rc == CAIRN_INVALID)
			rc = cairn_db_fail(s->db, CAIRN_NOTFOUND, "no record "
					 "'%s' (memory_forget takes a full id)",
					 id);
	}
	if (rc)
		return store_fail(s, msg, "not retired", rc);
	if (cairn_record_file_backed(r, edit, sizeof(edit))) {
		sbuf_addf(msg, "not retired: record %s is %s, then run "
			  "'cairn seed'; the store was not changed", r->id,
			  edit);
		cairn_record_free(r);
		return 1;
	}
	sbuf_adds(&tool, "mcp memory_forget");
	if (s->client[0])
		sbuf_addf(&tool, " (client %s)", s->client);
	if (strcmp(r->status, "retired") == 0) {
		rc = CAIRN_OK; /* already retired: nothing to do */
		now = "retired";
#ifdef CAIRN_MUTATE_NO_FORGET_GATE
	} else if (1) {
		/* tests/mutate: any record is retired at once */
		rc = cairn_record_set_status(s->db, r->id, NULL, "retired", 0);
		now = "retired";
#endif
	} else if (own_candidate(s, r)) {
		rc = cairn_record_set_status(s->db, r->id, "candidate",
					     "retired", 0);
		now = "retired";
	} else if (strcmp(r->status, "candidate") == 0) {
		/* another session's proposal awaits a human anyway: their
		 * 'cairn reject' is its forget; nothing changes here */
		rc = CAIRN_OK;
		now = r->status;
		pending = 2;
	} else {
		rc = cairn_forget_propose_v2(s->db, r->id, s->session,
					     tool.err ? NULL : tool.buf,
					     arg_str(args, "reason"));
		now = r->status;
		pending = 1;
	}
	sbuf_release(&tool);
	if (rc) {
		rc = store_fail(s, msg, "not retired", rc);
		cairn_record_free(r);
		return rc;
	}
	sbuf_adds(sc, "{\"id\":");
	add_s(sc, r->id);
	sbuf_adds(sc, ",\"kind\":");
	add_s(sc, r->kind);
	sbuf_adds(sc, ",\"key\":");
	json_add_strz(sc, r->key);
	sbuf_adds(sc, ",\"title\":");
	add_s(sc, r->title);
	sbuf_adds(sc, ",\"previous_status\":");
	add_s(sc, r->status);
	sbuf_adds(sc, ",\"status\":");
	add_s(sc, now);
	sbuf_addf(sc, ",\"pending\":%s", pending ? "true" : "false");
	sbuf_adds(sc, ",\"confirm_with\":");
	if (pending)
		sbuf_addf(sc, "\"cairn %s %s\"}",
			  pending == 2 ? "reject" : "approve", r->id);
	else
		sbuf_adds(sc, "null}");
	cairn_record_free(r);
	return 0;
}

static int tool_candidates(struct mcp_server *s, const struct tool *t,
			   const struct json *args, struct sbuf *sc,
			   struct sbuf *msg)
{
	struct sbuf kcsv = SBUF_INIT;
	cairn_filter f;
	cairn_record **v = NULL;
	size_t n = 0, i;
	double lim = MCP_CANDIDATES_DEFAULT;
	int rc;

	memset(&f, 0, sizeof(f));
	json_get_num(args, "limit", &lim);
	arg_csv(args, "kinds", &kcsv);
	f.kinds = kcsv.len ? kcsv.buf : NULL;
	f.statuses = "candidate";
	f.limit = (long)lim;
	rc = cairn_record_list(s->db, &f, &v, &n);
	if (rc) {
		rc = store_fail(s, msg, "not listed", rc);
		goto out;
	}
	sbuf_addf(sc, "{\"count\":%zu,\"candidates\":[", n);
	for (i = 0; i < n; i++) {
		sbuf_adds(sc, i ? ",{" : "{");
		add_summary(sc, v[i]);
		sbuf_addc(sc, '}');
	}
	sbuf_adds(sc, "]}");
out:
	cairn_record_list_free(v, n);
	sbuf_release(&kcsv);
	return rc;
}

static const struct tool tools[] = {
	{ "memory_recall", "Search project memory", recall_desc, recall_in,
	  S_RECALL_OUT, ANN("false", "false", "false"), recall_args,
	  tool_recall },
	{ "memory_read", "Read one memory record", read_desc, read_in,
	  read_out, ANN("false", "false", "true"), read_args, tool_read },
	{ "memory_write", "Propose a memory (candidate)", write_desc,
	  write_in, write_out, ANN("false", "false", "false"), write_args,
	  tool_write },
	{ "memory_forget", "Retire a memory record", forget_desc, forget_in,
	  forget_out, ANN("false", "true", "true"), forget_args,
	  tool_forget },
	{ "memory_candidates", "List pending candidates", candidates_desc,
	  candidates_in, candidates_out, ANN("true", "false", "true"),
	  candidates_args, tool_candidates },
	{ "find_precedents", "Find earlier decisions and ADRs",
	  precedents_desc, precedents_in, S_RECALL_OUT,
	  ANN("false", "false", "false"), precedents_args, tool_precedents },
};

/* ============================================================ protocol */

/* Protocol revisions before 2025-06-18 know no titles, output schemas or
 * structured content. */
static int modern(const struct mcp_server *s)
{
	return strcmp(s->version, "2025-06-18") >= 0;
}

static void reply_head(struct sbuf *o, const struct json *id)
{
	sbuf_adds(o, "{\"jsonrpc\":\"2.0\",\"id\":");
	if (id)
		json_add_tree(o, id);
	else
		sbuf_adds(o, "null");
}

/* A JSON-RPC error object; id NULL writes "id":null. */
static void reply_error(struct sbuf *o, const struct json *id, int code,
			const char *message)
{
	reply_head(o, id);
	sbuf_addf(o, ",\"error\":{\"code\":%d,\"message\":", code);
	json_add_strz(o, message);
	sbuf_adds(o, "}}");
}

static void reply_errorf(struct sbuf *o, const struct json *id, int code,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply_errorf(struct sbuf *o, const struct json *id, int code,
			 const char *fmt, ...)
{
	struct sbuf m = SBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(&m, fmt, ap);
	va_end(ap);
	reply_error(o, id, code, m.err ? "out of memory" : sbuf_str(&m));
	sbuf_release(&m);
}

/* The method name for a message, cut to 80 bytes for error messages. */
static void method_quoted(struct sbuf *sb, const char *m)
{
	size_t n = strlen(m);

	if (n > 80) {
		n = 80;
		while (n > 0 && ((unsigned char)m[n] & 0xC0) == 0x80)
			n--;
	}
	sbuf_addc(sb, '\'');
	sbuf_add(sb, m, n);
	sbuf_adds(sb, n < strlen(m) ? "...'" : "'");
}

static void do_initialize(struct mcp_server *s, const struct json *id,
			  const struct json *params, struct sbuf *o)
{
	const char *want = json_get_str(params, "protocolVersion");
	const struct json *info = json_get(params, "clientInfo");
	size_t i;

	if (s->initialized) {
		reply_error(o, id, RPC_INVALID_REQUEST,
			    "already initialized");
		return;
	}
	if (!want) {
		reply_error(o, id, RPC_INVALID_PARAMS,
			    "initialize needs params.protocolVersion (a "
			    "string)");
		return;
	}
	snprintf(s->version, sizeof(s->version), "%s", MCP_PROTOCOL_LATEST);
	for (i = 0; i < ARRAY_SIZE(protocol_versions); i++)
		if (strcmp(want, protocol_versions[i]) == 0)
			snprintf(s->version, sizeof(s->version), "%s",
				 protocol_versions[i]);
	if (info && info->type == JSON_OBJECT) {
		const char *name = json_get_str(info, "name");
		const char *ver = json_get_str(info, "version");
		size_t n;

		snprintf(s->client, sizeof(s->client), "%s%s%s",
			 name ? name : "", name && ver ? " " : "",
			 ver ? ver : "");
		/* snprintf may have cut a UTF-8 sequence or kept a NUL-cut
		 * name: trim to the last complete character */
		n = strlen(s->client);
		while (n > 0 && util_utf8_invalid_at(s->client, n) != -1)
			s->client[--n] = '\0';
	}
	s->initialized = 1;
	reply_head(o, id);
	sbuf_adds(o, ",\"result\":{\"protocolVersion\":");
	json_add_strz(o, s->version);
	sbuf_adds(o, ",\"capabilities\":{\"tools\":{}},\"serverInfo\":{"
		  "\"name\":\"cairn\",\"version\":\"" CAIRN_VERSION "\"},"
		  "\"instructions\":");
	json_add_strz(o, server_instructions);
	sbuf_adds(o, "}}");
}

static void do_tools_list(struct mcp_server *s, const struct json *id,
			  struct sbuf *o)
{
	size_t i;

	reply_head(o, id);
	sbuf_adds(o, ",\"result\":{\"tools\":[");
	for (i = 0; i < ARRAY_SIZE(tools); i++) {
		const struct tool *t = &tools[i];

		sbuf_adds(o, i ? ",{\"name\":" : "{\"name\":");
		json_add_strz(o, t->name);
		if (modern(s)) {
			sbuf_adds(o, ",\"title\":");
			json_add_strz(o, t->title);
		}
		sbuf_adds(o, ",\"description\":");
		json_add_strz(o, t->description);
		sbuf_addf(o, ",\"inputSchema\":%s", t->input);
		if (modern(s))
			sbuf_addf(o, ",\"outputSchema\":%s", t->output);
		if (strcmp(s->version, "2025-03-26") >= 0)
			sbuf_addf(o, ",\"annotations\":%s", t->annotations);
		sbuf_addc(o, '}');
	}
	sbuf_adds(o, "]}}");
}

static void tool_result_error(struct sbuf *o, const struct json *id,
			      const struct sbuf *msg)
{
	reply_head(o, id);
	sbuf_adds(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	json_add_strz(o, msg->err ? "out of memory" : sbuf_str(msg));
	sbuf_adds(o, "}],\"isError\":true}}");
}

static void do_tools_call(struct mcp_server *s, const struct json *id,
			  const struct json *params, struct sbuf *o)
{
	const struct json *name = json_get(params, "name");
	const struct json *args = json_get(params, "arguments");
	const struct json empty = { JSON_OBJECT, NULL, 0, NULL, 0, 0, NULL,
				    NULL };
	struct sbuf sc = SBUF_INIT, msg = SBUF_INIT;
	const struct tool *t = NULL;
	size_t i;

	if (!name || name->type != JSON_STRING) {
		reply_error(o, id, RPC_INVALID_PARAMS,
			    "tools/call needs params.name (a string)");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(tools); i++)
		if (strlen(tools[i].name) == name->len &&
		    strcmp(tools[i].name, name->str) == 0)
			t = &tools[i];
	if (!t) {
		struct sbuf m = SBUF_INIT;

		sbuf_adds(&m, "unknown tool ");
		method_quoted(&m, name->str);
		reply_error(o, id, RPC_INVALID_PARAMS,
			    m.err ? "unknown tool" : sbuf_str(&m));
		sbuf_release(&m);
		return;
	}
	if (args && args->type == JSON_NULL)
		args = NULL;
	if (args && args->type != JSON_OBJECT) {
		reply_error(o, id, RPC_INVALID_PARAMS,
			    "params.arguments must be an object");
		return;
	}
	if (!args)
		args = &empty;
	if (check_args(t, args, &msg) || t->fn(s, t, args, &sc, &msg)) {
		tool_result_error(o, id, &msg);
		goto out;
	}
	if (sc.err) {
		reply_error(o, id, RPC_INTERNAL_ERROR,
			    "out of memory building the result");
		goto out;
	}
	/* the structured result, and the same JSON as text for clients that
	 * read only content (MCP 2025-06-18, "Structured Content") */
	reply_head(o, id);
	sbuf_adds(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
	json_add_str(o, sc.buf, sc.len);
	sbuf_adds(o, "}]");
	if (modern(s)) {
		sbuf_adds(o, ",\"structuredContent\":");
		sbuf_add(o, sc.buf, sc.len);
	}
	sbuf_adds(o, ",\"isError\":false}}");
out:
	sbuf_release(&sc);
	sbuf_release(&msg);
}

/* Is this message's method one we serve (as a request)? */
static int known_method(const char *m)
{
	return strcmp(m, "initialize") == 0 || strcmp(m, "ping") == 0 ||
	       strcmp(m, "tools/list") == 0 || strcmp(m, "tools/call") == 0;
}

/* Dispatch one parsed message; appends the reply (if any) to o. */
static void dispatch(struct mcp_server *s, const struct json *msg,
		     struct sbuf *o)
{
	const struct json *id = json_get(msg, "id");
	const struct json *method = json_get(msg, "method");
	const struct json *params = json_get(msg, "params");
	const char *ver = json_get_str(msg, "jsonrpc");
	const char *m;

	if (id && id->type != JSON_STRING && id->type != JSON_NUMBER) {
		/* MCP: a request id is a string or a number, never null */
		reply_error(o, NULL, RPC_INVALID_REQUEST,
			    "invalid request: id must be a string or a "
			    "number");
		return;
	}
	if (!method && (json_get(msg, "result") || json_get(msg, "error")))
		return; /* a response: this server sends no requests */
	if (!ver || strcmp(ver, "2.0") != 0) {
		reply_error(o, id, RPC_INVALID_REQUEST,
			    "invalid request: jsonrpc must be \"2.0\"");
		return;
	}
	if (!method || method->type != JSON_STRING ||
	    strlen(method->str) != method->len) {
		reply_error(o, id, RPC_INVALID_REQUEST,
			    "invalid request: method must be a string");
		return;
	}
	if (params && params->type != JSON_OBJECT &&
	    params->type != JSON_ARRAY) {
		reply_error(o, id, RPC_INVALID_REQUEST,
			    "invalid request: params must be an object or "
			    "an array");
		return;
	}
	m = method->str;
	if (!id) {
		/* a notification: acted on or ignored, never answered */
		return;
	}
	if (!known_method(m)) {
		struct sbuf t = SBUF_INIT;

		sbuf_adds(&t, "method not found: ");
		method_quoted(&t, m);
		reply_error(o, id, RPC_METHOD_NOT_FOUND,
			    t.err ? "method not found" : sbuf_str(&t));
		sbuf_release(&t);
		return;
	}
	if (params && params->type == JSON_ARRAY) {
		reply_error(o, id, RPC_INVALID_PARAMS,
			    "invalid params: expected an object");
		return;
	}
	if (strcmp(m, "ping") == 0) {
		reply_head(o, id);
		sbuf_adds(o, ",\"result\":{}}");
		return;
	}
	if (strcmp(m, "initialize") == 0) {
		do_initialize(s, id, params, o);
		return;
	}
	if (!s->initialized) {
		reply_errorf(o, id, RPC_NOT_INITIALIZED,
			     "server not initialized: send initialize "
			     "before %s", m);
		return;
	}
	if (strcmp(m, "tools/list") == 0)
		do_tools_list(s, id, o);
	else
		do_tools_call(s, id, params, o);
}

int mcp_handle_line(struct mcp_server *s, const char *line, size_t len,
		    char **reply, size_t *replylen)
{
	struct sbuf o = SBUF_INIT;
	struct json *msg = NULL;
	char err[160];
	size_t i;

	*reply = NULL;
	if (replylen)
		*replylen = 0;
	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			break;
	if (i == len)
		return CAIRN_OK; /* an empty line is no message */
	if (len > MCP_MAX_LINE) {
		reply_errorf(&o, NULL, RPC_INVALID_REQUEST,
			     "message too large: %zu bytes, the limit is %zu",
			     len, MCP_MAX_LINE);
	} else if (json_parse(line, len, &msg, err, sizeof(err)) != CAIRN_OK) {
		reply_errorf(&o, NULL, RPC_PARSE_ERROR, "parse error: %s",
			     err);
	} else if (msg->type == JSON_ARRAY) {
		reply_error(&o, NULL, RPC_INVALID_REQUEST,
			    "invalid request: batches are not supported "
			    "(MCP 2025-06-18 removed JSON-RPC batching)");
	} else if (msg->type != JSON_OBJECT) {
		reply_error(&o, NULL, RPC_INVALID_REQUEST,
			    "invalid request: a message is a JSON object");
	} else {
		dispatch(s, msg, &o);
	}
	json_free(msg);
	if (o.err) {
		sbuf_release(&o);
		return CAIRN_NOMEM;
	}
	if (o.len == 0) {
		sbuf_release(&o);
		return CAIRN_OK;
	}
	*reply = sbuf_detach(&o, replylen);
	return *reply ? CAIRN_OK : CAIRN_NOMEM;
}

/* ============================================================== serving */

/* Handle one complete line (or an over-long one by its size) and write
 * the reply with its newline. */
static int serve_line(struct mcp_server *s, int outfd, const char *line,
		      size_t len, size_t dropped)
{
	char *reply = NULL;
	size_t n = 0;
	int rc;

	if (dropped) {
		struct sbuf o = SBUF_INIT;

		reply_errorf(&o, NULL, RPC_INVALID_REQUEST,
			     "message too large: %zu bytes, the limit is %zu",
			     dropped, MCP_MAX_LINE);
		if (o.err) {
			sbuf_release(&o);
			return CAIRN_NOMEM;
		}
		reply = sbuf_detach(&o, &n);
		rc = reply ? CAIRN_OK : CAIRN_NOMEM;
	} else {
		rc = mcp_handle_line(s, line, len, &reply, &n);
	}
	if (rc == CAIRN_OK && reply) {
		reply[n] = '\n'; /* replaces the NUL: written as n + 1 bytes */
		rc = util_write_all(outfd, reply, n + 1) ? CAIRN_IO : CAIRN_OK;
	}
	cairn_free(reply);
	return rc;
}

/* Wait until infd is readable, serving side_fd meanwhile; 0, or -1 (poll). */
static int wait_input(int infd, int side_fd, void (*side)(void *), void *arg)
{
	for (;;) {
		struct pollfd p[2] = { { infd, POLLIN, 0 },
				       { side_fd, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents & POLLIN)
			side(arg);
		if (p[0].revents)
			return 0; /* data, end of input or an error: read() says */
	}
}

int mcp_serve_side(struct mcp_server *s, int infd, int outfd, int side_fd,
		   void (*side)(void *), void *arg)
{
	struct sbuf line = SBUF_INIT;
	char *buf = NULL;
	size_t dropped = 0; /* bytes of an over-long line so far, 0 if none */
	int rc = CAIRN_OK;

	buf = cairn_malloc(MCP_READ_CHUNK);
	if (!buf)
		return CAIRN_NOMEM;
	for (;;) {
		ssize_t got;
		const char *p = buf, *end;

		if (side_fd >= 0 && wait_input(infd, side_fd, side, arg) != 0) {
			rc = CAIRN_IO;
			break;
		}
		got = read(infd, buf, MCP_READ_CHUNK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = CAIRN_IO;
			break;
		}
		if (got == 0) {
			/* a last message without its newline still counts */
			if (line.len || dropped)
				rc = serve_line(s, outfd, line.buf, line.len,
						dropped);
			break;
		}
		end = buf + got;
		while (p < end && rc == CAIRN_OK) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = (size_t)((nl ? nl : end) - p);

			if (dropped || line.len + n > MCP_MAX_LINE) {
				/* over the limit: count, never keep */
				dropped += line.len + n;
				sbuf_reset(&line);
			} else {
				sbuf_add(&line, p, n);
				if (line.err) {
					rc = CAIRN_NOMEM;
					break;
				}
			}
			if (!nl)
				break;
			rc = serve_line(s, outfd, line.buf ? line.buf : "",
					line.len, dropped);
			sbuf_reset(&line);
			dropped = 0;
			p = nl + 1;
		}
		if (rc)
			break;
	}
	sbuf_release(&line);
	cairn_free(buf);
	return rc;
}

/* ====================================================== server object */

int mcp_server_new(cairn_db *db, const struct mcp_opts *opts,
		   struct mcp_server **out)
{
	struct mcp_server *s;

	*out = NULL;
	s = util_calloc(1, sizeof(*s));
	if (!s)
		return CAIRN_NOMEM;
	s->db = db;
	if (opts && opts->session && *opts->session) {
		size_t n;

		snprintf(s->session, sizeof(s->session), "%s", opts->session);
		/* a cut may split a UTF-8 sequence: trim to a whole one */
		n = strlen(s->session);
		while (n > 0 && util_utf8_invalid_at(s->session, n) != -1)
			s->session[--n] = '\0';
	} else {
		unsigned char rnd[6];
		char hex[13];

		if (util_random(rnd, sizeof(rnd))) {
			cairn_free(s);
			return CAIRN_IO;
		}
		util_hex(rnd, sizeof(rnd), hex);
		snprintf(s->session, sizeof(s->session), "mcp-%s", hex);
	}
	*out = s;
	return CAIRN_OK;
}

void mcp_server_free(struct mcp_server *s)
{
	cairn_free(s);
}

const char *mcp_protocol(const struct mcp_server *s)
{
	return s->version;
}
