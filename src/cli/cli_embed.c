/*
 * cli_embed.c -- `cairn reindex` (embed records into the vector index, set
 * or switch the embedding settings) and `cairn model` (inspect a GGUF
 * file, embed texts by hand).
 *
 * Layer: top (the cairn command), on vector.h, embed.h and gguf.h.
 * Holds: the two commands' help texts, option parsing and output.
 * Output: a summary line or one JSON object (--json) on stdout; progress
 * on stderr ("reindex n/N, rate/s": a live line on a terminal, otherwise a
 * line every few seconds and one at the end).
 *
 * Must never: drop vectors of another identity without --yes or a "y"
 * typed at a terminal, or store an API key (only the variable's name).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "embed.h"
#include "gguf.h"
#include "json.h"
#include "vector.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_USAGE 2
#define PROGRESS_EVERY_S 2.0 /* seconds between progress lines off a terminal */
#define EMBED_CLI_MAX_TEXTS 256

static const char reindex_help[] =
	"usage: cairn reindex [--provider gguf|static|http|none] [--model M]\n"
	"                     [--url URL] [--api-key-env VAR]\n"
	"                     [--query-instruction S] [--passage-instruction S]\n"
	"                     [--pooling mean|cls|last] [--threads N]\n"
	"                     [--timeout-ms N] [--batch N] [--yes] [--status]\n"
	"                     [--json]\n"
	"\n"
	"Embed every record that has no vector yet (title + body, as a\n"
	"passage) with the store's embedding model, in batches that are each\n"
	"committed: an interrupted reindex resumes where it stopped. Records\n"
	"written after a reindex have no vector until the next one; recall\n"
	"finds them by words only. Changing a record's text drops its vector.\n"
	"The workspace store and, when attached, the global store are both\n"
	"indexed.\n"
	"\n"
	"With --provider the settings change and are stored in the workspace\n"
	"store (meta keys embed.*); CAIRN_EMBED_* variables override them for\n"
	"one process. Vectors made by another identity (provider, model,\n"
	"file SHA-256 or model id, dimensions, pooling, instructions) are\n"
	"dropped first: never mixed. That needs --yes, or a 'y' at the prompt\n"
	"on a terminal. --provider none removes the settings and all vectors.\n"
	"A new model is first tried on a few texts (fixed ones and the first\n"
	"records): one that fails, or yields NaN or infinity, is refused and\n"
	"nothing changes.\n"
	"\n"
	"--model NAME, a model pulled with 'cairn model pull NAME', needs no\n"
	"--provider: it is the gguf provider with the catalogue's query and\n"
	"passage instructions (cairn model list). Nothing is downloaded here.\n"
	"\n"
	"providers:\n"
	"  gguf    a BERT-family GGUF file run by cairn (--model FILE.gguf)\n"
	"  static  averaged word vectors (--model FILE.cairnvec)\n"
	"  http    an OpenAI-compatible server (--url http://HOST:PORT/v1\n"
	"          --model ID [--api-key-env VAR]); POST {url}/embeddings\n"
	"\n"
	"options:\n"
	"      --provider P           set the provider (see above)\n"
	"      --model M              file path (made absolute), model id, or\n"
	"                             NAME of a pulled model\n"
	"      --url URL              http: base URL\n"
	"      --api-key-env VAR      http: read the API key from $VAR\n"
	"      --query-instruction S  prepended to queries (default: the\n"
	"                             model family's: bge-en v1.5, e5)\n"
	"      --passage-instruction S  prepended to records (e5: 'passage: ')\n"
	"      --pooling P            gguf: override the file's pooling\n"
	"      --threads N            gguf: threads (default: all cores)\n"
	"      --timeout-ms N         http: per request (default 30000)\n"
	"      --batch N              records per transaction (default 32)\n"
	"  -y, --yes                  allow dropping vectors of another identity\n"
	"      --status               print settings and counts; embed nothing\n"
	"      --json                 one JSON object on stdout\n"
	"\n"
	"docs/EMBEDDINGS.md has the details.\n"
	"exit status: 0 done, 1 error, 2 usage\n";

static const char model_help[] =
	"usage: cairn model pull NAME|URL [--sha256 HEX] [--name NAME] [--json]\n"
	"       cairn model list [--recommend] [--json]\n"
	"       cairn model rm NAME\n"
	"       cairn model info FILE.gguf|NAME [--json]\n"
	"       cairn model embed [--provider P --model M [--url URL]\n"
	"                         [--api-key-env VAR]] [--query] [--cosine]\n"
	"                         [--json] TEXT...\n"
	"\n"
	"pull: download a model by its catalogue name (or a URL) into\n"
	"$XDG_CACHE_HOME/cairn/models, resumable, SHA-256 checked; list: the\n"
	"catalogue and what is pulled (--recommend: which to pull for this\n"
	"workspace); rm: remove a pulled model. 'cairn model pull --help' has\n"
	"the details. Nothing else downloads anything.\n"
	"\n"
	"info: what a GGUF file holds: architecture, name, dimensions, layers,\n"
	"heads, context length, pooling, tokenizer kind and vocabulary size,\n"
	"tensor types (count of tensors per type) and the file's SHA-256. Reads\n"
	"the header only; the model is not loaded.\n"
	"\n"
	"embed: embed each TEXT (as a passage; --query: as a query, with the\n"
	"query instruction) and print one vector per line as a JSON array, or\n"
	"with --cosine and two texts their cosine. Without --provider the\n"
	"workspace store's settings are used (and CAIRN_EMBED_*).\n"
	"\n"
	"options:\n"
	"      --provider P       gguf, static or http\n"
	"      --model M          file or model id\n"
	"      --url URL          http: base URL\n"
	"      --api-key-env VAR  http: the API key's variable\n"
	"      --timeout-ms N     http: per request\n"
	"      --query            embed as queries\n"
	"      --cosine           print the cosine of the two texts\n"
	"      --json             one JSON object: identity and vectors\n"
	"\n"
	"exit status: 0 done, 1 error, 2 usage\n";

/* -------------------------------------------------------------- progress */

struct prog {
	double t0, last;
	int tty;
	long long printed;
};

static void on_progress(void *ctx, long long done, long long total)
{
	struct prog *p = ctx;
	double now = (util_now_ms() / 1e3), el = now - p->t0;

	if (!p->tty && done < total && now - p->last < PROGRESS_EVERY_S)
		return;
	p->last = now;
	p->printed = done;
	fprintf(stderr, "%sreindex %lld/%lld (%.1f/s)%s",
		p->tty ? "\r" : "", done, total, el > 0 ? done / el : 0.0,
		p->tty ? "" : "\n");
	if (p->tty && done >= total)
		fputs("\n", stderr);
	fflush(stderr);
}

/* ------------------------------------------------------------- settings */

static int parse_pooling(const char *s)
{
	if (strcmp(s, "mean") == 0)
		return 1;
	if (strcmp(s, "cls") == 0)
		return 2;
	if (strcmp(s, "last") == 0)
		return 3;
	return -2;
}

/* Make a relative file path absolute; NULL on failure. Caller frees. */
static char *abs_path(const char *p)
{
	char buf[PATH_MAX];

	if (!realpath(p, buf))
		return NULL;
	return strdup(buf);
}

static int ask_yes(const char *question)
{
	char line[16];

	if (!isatty(0) || !isatty(2))
		return 0;
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

static void identity_json(struct sbuf *sb, const char *identity)
{
	if (identity && identity[0])
		sbuf_adds(sb, identity); /* already canonical JSON */
	else
		sbuf_adds(sb, "null");
}

static int print_status(cairn_db *db)
{
	struct vector_settings s;
	struct vector_stats st;
	int rc;

	rc = vector_settings_load(db, &s);
	if (rc)
		return cli_db_fail(db, rc);
	rc = vector_stats(db, &st);
	if (rc) {
		vector_settings_release(&s);
		return cli_db_fail(db, rc);
	}
	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;

		sbuf_adds(&sb, "{\"provider\":");
		json_add_strz(&sb, vector_settings_enabled(&s) ? s.cfg.provider
							       : "none");
		sbuf_adds(&sb, ",\"model\":");
		json_add_strz(&sb, s.cfg.model);
		sbuf_adds(&sb, ",\"url\":");
		json_add_strz(&sb, s.cfg.url);
		sbuf_addf(&sb, ",\"records\":%lld,\"with_vector\":%lld,"
			       "\"without_vector\":%lld,\"identity\":",
			  st.records, st.with_vector,
			  st.records - st.with_vector);
		identity_json(&sb, st.identity);
		sbuf_addc(&sb, '}');
		cli_print_json(&sb);
		sbuf_release(&sb);
	} else {
		printf("provider: %s\n", vector_settings_enabled(&s)
						 ? s.cfg.provider
						 : "none");
		if (s.cfg.model)
			printf("model: %s\n", s.cfg.model);
		if (s.cfg.url)
			printf("url: %s\n", s.cfg.url);
		if (st.records > st.with_vector)
			printf("vectors: %lld of %lld records (%lld without: "
			       "run 'cairn reindex')\n",
			       st.with_vector, st.records,
			       st.records - st.with_vector);
		else
			printf("vectors: %lld of %lld records\n",
			       st.with_vector, st.records);
		if (st.identity[0])
			printf("identity: %s\n", st.identity);
	}
	vector_settings_release(&s);
	return EXIT_OK;
}

/* What the reindex options asked for. */
struct reindex_opts {
	struct embed_config nc; /* the new settings, when setting */
	const char *model;      /* --model as given, or the pulled file */
	long batch;
	int yes, status, setting;
	char named[4300];       /* the file of a model given by name */
};

/*
 * Parse the reindex options into o (a model named by its catalogue name
 * resolved to its file). -1 when the command goes on, else its exit code.
 */
static int reindex_args(int argc, char **argv, struct reindex_opts *o)
{
	enum { O_PROVIDER = 256, O_MODEL, O_URL, O_KEYENV, O_QI, O_PI,
	       O_POOL, O_THREADS, O_TIMEOUT, O_BATCH, O_STATUS, O_JSON };
	static const struct option lo[] = {
		{ "provider", 1, 0, O_PROVIDER },
		{ "model", 1, 0, O_MODEL },
		{ "url", 1, 0, O_URL },
		{ "api-key-env", 1, 0, O_KEYENV },
		{ "query-instruction", 1, 0, O_QI },
		{ "passage-instruction", 1, 0, O_PI },
		{ "pooling", 1, 0, O_POOL },
		{ "threads", 1, 0, O_THREADS },
		{ "timeout-ms", 1, 0, O_TIMEOUT },
		{ "batch", 1, 0, O_BATCH },
		{ "yes", 0, 0, 'y' },
		{ "status", 0, 0, O_STATUS },
		{ "json", 0, 0, O_JSON },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct embed_config *nc = &o->nc;
	int c;

	nc->pooling = -1;
	while ((c = cli_getopt(argc, argv, "yh", lo)) != -1) {
		switch (c) {
		case O_PROVIDER: nc->provider = optarg; o->setting = 1; break;
		case O_MODEL: o->model = optarg; o->setting = 1; break;
		case O_URL: nc->url = optarg; o->setting = 1; break;
		case O_KEYENV: nc->api_key_env = optarg; o->setting = 1; break;
		case O_QI: nc->query_instruction = optarg; o->setting = 1; break;
		case O_PI: nc->passage_instruction = optarg; o->setting = 1; break;
		case O_POOL:
			nc->pooling = parse_pooling(optarg);
			if (nc->pooling < -1)
				return cli_usage("reindex", "--pooling is mean, "
						 "cls or last");
			o->setting = 1;
			break;
		case O_THREADS:
			nc->threads = atoi(optarg);
			if (nc->threads < 1 || nc->threads > 1024)
				return cli_usage("reindex", "--threads is 1..1024");
			o->setting = 1;
			break;
		case O_TIMEOUT:
			nc->timeout_ms = atoi(optarg);
			if (nc->timeout_ms < 1)
				return cli_usage("reindex", "--timeout-ms is a "
						 "positive number");
			o->setting = 1;
			break;
		case O_BATCH:
			o->batch = atol(optarg);
			if (o->batch < 1 || o->batch > 1024)
				return cli_usage("reindex", "--batch is 1..1024");
			break;
		case 'y': o->yes = 1; break;
		case O_STATUS: o->status = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(reindex_help);
		default: return cli_usage("reindex", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage("reindex", "unexpected argument '%s'",
				 argv[optind]);
	if (o->model && (!nc->provider || strcmp(nc->provider, "gguf") == 0)) {
		/* a model by name (cairn model pull): the gguf provider with
		   the catalogue's instructions, unless given */
		const cairn_model_entry *me = NULL;
		int r = cli_model_resolve(o->model, o->named, sizeof(o->named), &me);

		if (r < 0)
			return EXIT_ERR;
		if (r > 0 && me && strcmp(me->kind, "embedding") != 0)
			return cli_usage("reindex", "'%s' is a %s, not an "
					 "embedding model (cairn recall "
					 "--rerank-model)", o->model, me->kind);
		if (r > 0) {
			nc->provider = "gguf";
			o->model = o->named;
			if (me && !nc->query_instruction)
				nc->query_instruction = me->query_instruction;
			if (me && !nc->passage_instruction)
				nc->passage_instruction = me->passage_instruction;
		}
	}
	if (o->setting && !nc->provider)
		return cli_usage("reindex", "settings need --provider (or "
				 "--model NAME of a pulled model)");
	if (o->status && o->setting)
		return cli_usage("reindex", "--status changes nothing: drop "
				 "the other options");
	return -1;
}

/* --provider none: drop every vector (asking first) and the settings. */
static int reindex_off(cairn_db *db, const struct reindex_opts *o)
{
	struct vector_stats st;
	long long dropped = 0;
	int rc;

	rc = vector_stats(db, &st);
	if (rc)
		return cli_db_fail(db, rc);
	if (st.with_vector > 0 && !o->yes &&
	    !ask_yes("drop all vectors and the embedding settings?"))
		return cli_fail("this drops %lld vectors: rerun with "
				"--yes", st.with_vector);
	rc = vector_drop_all(db, &dropped);
	if (rc == CAIRN_OK)
		rc = vector_settings_save(db, &o->nc);
	if (rc)
		return cli_db_fail(db, rc);
	if (cli_state.json)
		printf("{\"provider\":\"none\",\"dropped\":%lld}\n",
		       dropped);
	else
		printf("embedding off: %lld vectors dropped\n", dropped);
	return EXIT_OK;
}

/*
 * The embedder to reindex with: the new settings (the model file made
 * absolute into *model_abs) or the store's own (loaded into s).
 */
static int reindex_embedder(cairn_db *db, struct reindex_opts *o,
			    struct vector_settings *s, char **model_abs,
			    struct embedder **e)
{
	char err[512];
	int rc;

	if (o->setting) {
		const char *model = o->model;

		if (!model)
			return cli_usage("reindex", "--provider %s needs --model",
					 o->nc.provider);
		if (strcmp(o->nc.provider, "http") != 0) {
			*model_abs = abs_path(model);
			if (!*model_abs)
				return cli_fail("cannot find model file '%s'",
						model);
			model = *model_abs;
		}
		o->nc.model = model;
		rc = embed_open(&o->nc, e, err, sizeof(err));
	} else {
		rc = vector_settings_load(db, s);
		if (rc)
			return cli_db_fail(db, rc);
		if (!vector_settings_enabled(s))
			return cli_fail("no embedding model configured: run "
					"'cairn reindex --provider P --model M' "
					"(see --help)");
		rc = embed_open(&s->cfg, e, err, sizeof(err));
	}
	if (rc)
		return cli_fail("%s", err);
	return EXIT_OK;
}

/*
 * Switching identity drops vectors: ask first (or --yes). The embedder's
 * identity goes to want.
 */
static int reindex_confirm(cairn_db *db, struct embedder *e, int yes,
			   char *want, size_t wsize)
{
	struct vector_stats st;
	char have[1200];
	long long stored;
	int rc;

	rc = vector_get_identity(db, "main", have, sizeof(have));
	if (rc == CAIRN_OK)
		rc = embed_identity_string(embed_identity(e), want, wsize);
	if (rc)
		return cli_db_fail(db, rc);
	rc = vector_stats(db, &st);
	if (rc)
		return cli_db_fail(db, rc);
	stored = st.with_vector;
	if (have[0] && strcmp(have, want) != 0 && stored > 0 && !yes) {
		char q[2600];

		snprintf(q, sizeof(q),
			 "the store's %lld vectors were made by %s; drop them "
			 "and embed with %s?",
			 stored, have, want);
		if (!ask_yes(q))
			return cli_fail("the store's %lld vectors were made by "
					"another identity (%s); rerun with "
					"--yes to drop them and embed with %s",
					stored, have, want);
	}
	return EXIT_OK;
}

/* The summary line, or the JSON object, of a finished reindex. */
static void reindex_report(const struct vector_reindex_result *res,
			   const char *want)
{
	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb,
			  "{\"embedded\":%lld,\"total\":%lld,\"dropped\":%lld,"
			  "\"with_vector\":%lld,\"seconds\":%.3f,"
			  "\"per_second\":%.1f,\"identity\":",
			  res->embedded, res->total, res->dropped, res->have,
			  res->seconds,
			  res->seconds > 0 ? res->embedded / res->seconds : 0.0);
		identity_json(&sb, want);
		sbuf_addc(&sb, '}');
		cli_print_json(&sb);
		sbuf_release(&sb);
	} else {
		printf("reindexed: %lld embedded in %.1f s (%.1f/s), %lld "
		       "records have vectors%s\n",
		       res->embedded, res->seconds,
		       res->seconds > 0 ? res->embedded / res->seconds : 0.0,
		       res->have, res->dropped ? " (old identity dropped)" : "");
	}
}

int cmd_reindex(int argc, char **argv)
{
	struct reindex_opts o;
	struct vector_settings s;
	struct vector_reindex_result res;
	struct embedder *e = NULL;
	struct prog pr;
	cairn_db *db = NULL;
	char *model_abs = NULL, want[1200];
	int rc, ret;

	memset(&o, 0, sizeof(o));
	memset(&s, 0, sizeof(s));
	ret = reindex_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = EXIT_OK;
	if (cli_open(&db, 0))
		return EXIT_ERR;
	if (o.status) {
		ret = print_status(db);
		goto out;
	}
	if (o.setting && strcmp(o.nc.provider, "none") == 0) {
		ret = reindex_off(db, &o);
		goto out;
	}
	ret = reindex_embedder(db, &o, &s, &model_abs, &e);
	if (ret == EXIT_OK && o.setting) {
		/* a model that cannot embed is refused before its settings
		 * are saved or any vector dropped (issue 31: NaN) */
		rc = vector_probe(db, e);
		if (rc) {
			cli_db_fail(db, rc);
			ret = cli_fail("this model is refused: nothing was "
				       "changed (settings and vectors as "
				       "they were)");
		}
	}
	if (ret == EXIT_OK)
		ret = reindex_confirm(db, e, o.yes, want, sizeof(want));
	if (ret != EXIT_OK)
		goto out;
	if (o.setting) {
		rc = vector_settings_save(db, &o.nc);
		if (rc) {
			ret = cli_db_fail(db, rc);
			goto out;
		}
	}
	memset(&pr, 0, sizeof(pr));
	pr.t0 = pr.last = (util_now_ms() / 1e3);
	pr.tty = isatty(2);
	rc = vector_reindex(db, e, (size_t)o.batch, on_progress, &pr, &res);
	if (rc) {
		ret = cli_db_fail(db, rc);
		if (rc == CAIRN_CORRUPT) /* NaN or infinity: never resumable */
			fprintf(stderr, "cairn: this model cannot be used: "
					"%lld of %lld records embedded before "
					"it failed; recall stays lexical "
					"until 'cairn reindex' with another "
					"model (or --provider none)\n",
				res.embedded, res.total);
		else
			fprintf(stderr, "cairn: %lld of %lld records embedded "
					"before the error; run 'cairn reindex' "
					"again to resume\n",
				res.embedded, res.total);
		goto out;
	}
	if (pr.printed != res.embedded) /* the last line, if not yet shown */
		on_progress(&pr, res.embedded, res.embedded);
	if (res.dropped > 0)
		fprintf(stderr, "cairn: dropped %lld vectors of the previous "
				"identity\n",
			res.dropped);
	reindex_report(&res, want);
out:
	embed_close(e);
	vector_settings_release(&s);
	free(model_abs);
	cairn_db_close(db);
	return ret;
}

/* ----------------------------------------------------------------- model */

static void str_out(struct sbuf *sb, const struct gguf_str *s)
{
	json_add_str(sb, s->s, (size_t)s->len);
}

static const char *type_name(uint32_t t)
{
	switch (t) {
	case GGML_TYPE_F32: return "F32";
	case GGML_TYPE_F16: return "F16";
	case GGML_TYPE_Q4_0: return "Q4_0";
	case GGML_TYPE_Q4_1: return "Q4_1";
	case GGML_TYPE_Q5_0: return "Q5_0";
	case GGML_TYPE_Q5_1: return "Q5_1";
	case GGML_TYPE_Q8_0: return "Q8_0";
	case GGML_TYPE_Q8_1: return "Q8_1";
	case GGML_TYPE_Q2_K: return "Q2_K";
	case GGML_TYPE_Q3_K: return "Q3_K";
	case GGML_TYPE_Q4_K: return "Q4_K";
	case GGML_TYPE_Q5_K: return "Q5_K";
	case GGML_TYPE_Q6_K: return "Q6_K";
	case GGML_TYPE_Q8_K: return "Q8_K";
	case GGML_TYPE_BF16: return "BF16";
	default: return "other";
	}
}

static const char *pool_name(uint32_t p)
{
	static const char *const names[] = { "none", "mean", "cls", "last",
					     "rank" };

	return p < 5 ? names[p] : "unknown";
}

/* "<arch>.<suffix>" as u32; 0 when absent. */
static uint32_t arch_u32(const struct gguf *g, const struct gguf_str *arch,
			 const char *suffix, int *found)
{
	char key[256];
	uint32_t v = 0;

	snprintf(key, sizeof(key), "%.*s.%s", (int)(arch->len < 200 ? arch->len : 200),
		 arch->s, suffix);
	*found = gguf_get_u32(g, key, &v) == CAIRN_OK;
	return *found ? v : 0;
}

static int model_info(int argc, char **argv)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	static const char *const fields[] = { "embedding_length", "block_count",
					      "attention.head_count",
					      "context_length",
					      "feed_forward_length" };
	static const char *const labels[] = { "dims", "layers", "heads",
					      "context", "ffn" };
	struct gguf *g = NULL;
	struct gguf_str arch = { "", 0 }, name = { "", 0 }, tok = { "", 0 };
	uint64_t ntok = 0, counts[GGML_TYPE_COUNT + 1];
	uint32_t vals[5], pool = 0;
	int found[5], pool_found = 0, etype = 0, c, rc, ret = EXIT_OK, t;
	const void *data = NULL;
	char err[512], key[256], named[4300];
	const char *sha;
	size_t i;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case 'j': cli_state.json = 1; break;
		case 'h': return cli_help(model_help);
		default: return cli_usage("model info", "unknown option");
		}
	}
	if (optind + 1 != argc)
		return cli_usage("model info", "give one FILE.gguf or NAME");
	{
		/* a pulled model by its name */
		const cairn_model_entry *me;
		int r = cli_model_resolve(argv[optind], named, sizeof(named), &me);

		if (r < 0)
			return EXIT_ERR;
		if (r > 0)
			argv[optind] = named;
	}
	rc = gguf_open(argv[optind], &g, err, sizeof(err));
	if (rc)
		return cli_fail("%s", err);
	gguf_get_str(g, "general.architecture", &arch);
	gguf_get_str(g, "general.name", &name);
	gguf_get_str(g, "tokenizer.ggml.model", &tok);
	if (gguf_get_arr(g, "tokenizer.ggml.tokens", &etype, &ntok, &data) !=
	    CAIRN_OK)
		ntok = 0;
	for (i = 0; i < ARRAY_SIZE(fields); i++)
		vals[i] = arch_u32(g, &arch, fields[i], &found[i]);
	pool = arch_u32(g, &arch, "pooling_type", &pool_found);
	memset(counts, 0, sizeof(counts));
	for (i = 0; i < gguf_n_tensors(g); i++) {
		const struct gguf_tensor *te = gguf_tensor_at(g, i);

		counts[te->type < GGML_TYPE_COUNT ? te->type : GGML_TYPE_COUNT]++;
	}
	sha = gguf_sha256(g);
	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;
		int first = 1;

		sbuf_adds(&sb, "{\"file\":");
		json_add_strz(&sb, argv[optind]);
		sbuf_adds(&sb, ",\"architecture\":");
		str_out(&sb, &arch);
		sbuf_adds(&sb, ",\"name\":");
		str_out(&sb, &name);
		for (i = 0; i < ARRAY_SIZE(fields); i++) {
			sbuf_addf(&sb, ",\"%s\":", labels[i]);
			if (found[i])
				sbuf_addf(&sb, "%u", vals[i]);
			else
				sbuf_adds(&sb, "null");
		}
		sbuf_addf(&sb, ",\"pooling\":\"%s\",\"pooling_in_file\":%s,"
			       "\"tokenizer\":",
			  pool_found ? pool_name(pool) : "mean",
			  pool_found ? "true" : "false");
		str_out(&sb, &tok);
		sbuf_addf(&sb, ",\"vocab_size\":%llu,\"tensors\":%zu,"
			       "\"tensor_types\":{",
			  (unsigned long long)ntok, gguf_n_tensors(g));
		for (t = 0; t <= GGML_TYPE_COUNT; t++) {
			if (!counts[t])
				continue;
			sbuf_addf(&sb, "%s\"%s\":%llu", first ? "" : ",",
				  type_name((uint32_t)t),
				  (unsigned long long)counts[t]);
			first = 0;
		}
		sbuf_adds(&sb, "},\"family\":");
		snprintf(key, sizeof(key), "%.*s",
			 (int)(name.len < 200 ? name.len : 200), name.s);
		json_add_strz(&sb, embed_family_of(key[0] ? key
							 : argv[optind])->name);
		sbuf_adds(&sb, ",\"sha256\":");
		json_add_strz(&sb, sha);
		sbuf_addc(&sb, '}');
		cli_print_json(&sb);
		sbuf_release(&sb);
	} else {
		printf("file: %s\n", argv[optind]);
		printf("architecture: %.*s\n", (int)arch.len, arch.s);
		printf("name: %.*s\n", (int)name.len, name.s);
		for (i = 0; i < ARRAY_SIZE(fields); i++)
			if (found[i])
				printf("%s: %u\n", labels[i], vals[i]);
		printf("pooling: %s%s\n", pool_found ? pool_name(pool) : "mean",
		       pool_found ? "" : " (absent: the default)");
		printf("tokenizer: %.*s, %llu tokens\n", (int)tok.len, tok.s,
		       (unsigned long long)ntok);
		printf("tensors: %zu (", gguf_n_tensors(g));
		for (t = 0, c = 0; t <= GGML_TYPE_COUNT; t++) {
			if (!counts[t])
				continue;
			printf("%s%s %llu", c++ ? ", " : "",
			       type_name((uint32_t)t),
			       (unsigned long long)counts[t]);
		}
		printf(")\n");
		snprintf(key, sizeof(key), "%.*s",
			 (int)(name.len < 200 ? name.len : 200), name.s);
		printf("instructions: %s\n",
		       embed_family_of(key[0] ? key : argv[optind])->name);
		printf("sha256: %s\n", sha ? sha : "?");
	}
	gguf_close(g);
	return ret;
}

static int model_embed(int argc, char **argv)
{
	enum { O_PROVIDER = 256, O_MODEL, O_URL, O_KEYENV, O_TIMEOUT, O_QUERY,
	       O_COSINE, O_JSON };
	static const struct option lo[] = {
		{ "provider", 1, 0, O_PROVIDER },
		{ "model", 1, 0, O_MODEL },
		{ "url", 1, 0, O_URL },
		{ "api-key-env", 1, 0, O_KEYENV },
		{ "timeout-ms", 1, 0, O_TIMEOUT },
		{ "query", 0, 0, O_QUERY },
		{ "cosine", 0, 0, O_COSINE },
		{ "json", 0, 0, O_JSON },
		{ "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct embed_config cfg;
	struct vector_settings s;
	struct embedder *e = NULL;
	cairn_db *db = NULL;
	float *v = NULL;
	char err[512], ident[1200];
	int c, rc, ret = EXIT_OK, query = 0, cosine = 0, n, i, j, dim;

	memset(&cfg, 0, sizeof(cfg));
	memset(&s, 0, sizeof(s));
	cfg.pooling = -1;
	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_PROVIDER: cfg.provider = optarg; break;
		case O_MODEL: cfg.model = optarg; break;
		case O_URL: cfg.url = optarg; break;
		case O_KEYENV: cfg.api_key_env = optarg; break;
		case O_TIMEOUT: cfg.timeout_ms = atoi(optarg); break;
		case O_QUERY: query = 1; break;
		case O_COSINE: cosine = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(model_help);
		default: return cli_usage("model embed", "unknown option");
		}
	}
	n = argc - optind;
	if (n < 1 || n > EMBED_CLI_MAX_TEXTS)
		return cli_usage("model embed", "give 1..%d texts",
				 EMBED_CLI_MAX_TEXTS);
	if (cosine && n != 2)
		return cli_usage("model embed", "--cosine needs two texts");
	if (!cfg.provider) {
		char *dir = NULL;
		cairn_open_opts o;

		/* the workspace's settings when there is one, else env */
		if (cairn_workspace_find(NULL, &dir) == CAIRN_OK) {
			memset(&o, 0, sizeof(o));
			o.no_global = 1;
			if (cairn_db_open(dir, &o, &db) != CAIRN_OK) {
				cairn_free(dir);
				ret = cli_fail("%s", cairn_errmsg(db));
				goto out;
			}
		}
		cairn_free(dir);
		rc = vector_settings_load(db, &s);
		if (rc) {
			ret = cli_fail("%s", cairn_errmsg(db));
			goto out;
		}
		cfg = s.cfg;
	}
	rc = embed_open(&cfg, &e, err, sizeof(err));
	if (rc) {
		ret = cli_fail("%s", err);
		goto out;
	}
	dim = embed_identity(e)->dim;
	v = calloc((size_t)n * (size_t)dim, sizeof(*v));
	if (!v) {
		ret = cli_fail("out of memory");
		goto out;
	}
	rc = embed_texts(e, query, (const char *const *)(argv + optind),
			 (size_t)n, v, err, sizeof(err));
	if (rc) {
		ret = cli_fail("%s", err);
		goto out;
	}
	embed_identity_string(embed_identity(e), ident, sizeof(ident));
	if (cosine) {
		double d = 0;

		for (j = 0; j < dim; j++)
			d += (double)v[j] * v[dim + j];
		if (cli_state.json)
			printf("{\"cosine\":%.6f,\"identity\":%s}\n", d, ident);
		else
			printf("%.6f\n", d);
		goto out;
	}
	{
		struct sbuf sb = SBUF_INIT;

		if (cli_state.json)
			sbuf_addf(&sb, "{\"identity\":%s,\"vectors\":[", ident);
		for (i = 0; i < n; i++) {
			if (cli_state.json && i)
				sbuf_addc(&sb, ',');
			sbuf_addc(&sb, '[');
			for (j = 0; j < dim; j++)
				sbuf_addf(&sb, "%s%.6g", j ? "," : "",
					  v[(size_t)i * dim + j]);
			sbuf_addc(&sb, ']');
			if (!cli_state.json)
				sbuf_addc(&sb, '\n');
		}
		if (cli_state.json) {
			sbuf_adds(&sb, "]}");
			cli_print_json(&sb);
		} else if (sb.err) {
			ret = cli_fail("out of memory");
		} else {
			fputs(sbuf_str(&sb), stdout);
		}
		sbuf_release(&sb);
	}
out:
	free(v);
	embed_close(e);
	vector_settings_release(&s);
	cairn_db_close(db);
	return ret;
}

int cmd_model(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0)
		return argc < 2 ? cli_usage("model", "give a subcommand: pull, "
						     "list, rm, info or embed")
				: cli_help(model_help);
	if (strcmp(argv[1], "info") == 0)
		return model_info(argc - 1, argv + 1);
	if (strcmp(argv[1], "embed") == 0)
		return model_embed(argc - 1, argv + 1);
	{
		int ret = cli_model_sub(argc, argv); /* cli_model.c */

		if (ret >= 0)
			return ret;
	}
	return cli_usage("model", "unknown subcommand '%s' (pull, list, rm, "
			 "info, embed)", argv[1]);
}
