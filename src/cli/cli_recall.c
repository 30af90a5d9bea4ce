/*
 * cli_recall.c -- `cairn recall`, `cairn receipt` and `cairn calibrate`.
 *
 * Layer: top (the cairn command). Output: human text by default, one JSON
 * object with --json. An empty recall is a success (exit 0) that says so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define EXIT_USAGE 2
#define SNIPPET_LINES 3    /* body lines shown per hit */
#define SNIPPET_BYTES 240  /* at most this much of them */
#define PROBE_MAX_LINE ((size_t)1 << 20)

/* Append s (n bytes) to sb with comma separation, for repeatable options. */
static const char recall_help[] =
	"usage: cairn recall [options] QUESTION\n"
	"\n"
	"Find the records that answer QUESTION: BM25 over titles and bodies\n"
	"(Chinese segmented with jieba's dictionary, Traditional folded to\n"
	"Simplified, English stemmed), kind and status weights breaking ties,\n"
	"with a no-match floor on the answerability -- the share of the\n"
	"question's informative words (by IDF; a Chinese word by what its\n"
	"English glosses can match) the best record matches: when no record\n"
	"matches enough of the question, the answer is empty. Only 'accepted' and 'unverified' records are searched\n"
	"unless --status says otherwise. Every recall writes a receipt (see\n"
	"'cairn receipt') and marks the returned records as seen.\n"
	"\n"
	"When an embedding model is configured and records have vectors (see\n"
	"'cairn reindex'), recall is hybrid: BM25 and dense pools fused by\n"
	"their standardised scores, an overwhelming BM25 first place pinned, a\n"
	"calibrated cosine floor, time decay by kind and at most 2 chunks per\n"
	"source file (docs/RANKING.md). Until 'cairn calibrate' has measured a\n"
	"cosine floor for the model, the cosine orders the hits lexical\n"
	"evidence keeps and adds none.\n"
	"\n"
	"options:\n"
	"  -k N              return at most N records (default 5; more than\n"
	"                    100 is lowered to 100)\n"
	"  --kind K[,K]      only these kinds (repeatable)\n"
	"  --status S[,S]    only these statuses (repeatable; 'all' for every one)\n"
	"  --explain         show each hit's BM25 rank and raw score, matched\n"
	"                    terms, lexical signal, answerability (matched and\n"
	"                    question IDF mass, the part the store never\n"
	"                    says), floor decision and weight;\n"
	"                    with vectors also dense rank and cosine, RRF\n"
	"                    contribution, pin, relevance, decay, final score\n"
	"  --no-floor        also return hits at or below the floor\n"
	"  --rerank[=FILE]   rescore the top 10 with a cross-encoder (a BERT or\n"
	"                    XLM-R GGUF with rank pooling, e.g.\n"
	"                    bge-reranker-base) and fuse its order 1:1 by\n"
	"                    reciprocal rank; without FILE the configured one\n"
	"                    ($CAIRN_RERANK_MODEL, else the store's\n"
	"                    rerank.model). A configured model reranks every\n"
	"                    recall; off when none is\n"
	"  --no-rerank       do not rerank, even with a configured model\n"
	"  --json            one JSON object: hits, floor, answer, receipt id\n"
	"\n"
	"exit status: 0 (also when nothing matched), 1 error, 2 usage\n";

static void print_hit_human(size_t i, const cairn_hit *h, int explain)
{
	const cairn_record *r = h->rec;
	struct sbuf src = SBUF_INIT;
	const char *b = r->body;
	size_t shown = 0;
	int lines = 0;

	util_source_text(&src, r);
	printf("%zu. [%s · %s] %s\n", i + 1, r->kind, r->status,
	       *r->title ? r->title : "(untitled)");
	printf("   %s%s%s · relevance %.2f · id %s\n", sbuf_str(&src),
	       r->time ? " · " : "", r->time ? r->time : "", h->relevance,
	       r->id);
	if (h->drift)
		printf("   ⚠ %s (cairn check)\n", h->drift);
	/* the first lines of the real body */
	while (*b && lines < SNIPPET_LINES && shown < SNIPPET_BYTES) {
		size_t n = strcspn(b, "\n");

		if (n > SNIPPET_BYTES - shown)
			n = SNIPPET_BYTES - shown;
		/* do not cut a UTF-8 sequence in half */
		while (n > 0 && b[n] && ((unsigned char)b[n] & 0xC0) == 0x80)
			n--;
		if (n > 0) {
			printf("   %.*s\n", (int)n, b);
			lines++;
		}
		shown += n;
		b += n;
		while (*b && *b != '\n')
			b++; /* rest of a cut line */
		if (*b == '\n')
			b++;
	}
	if (explain && h->explain) {
		const char *e = h->explain;

		while (*e) {
			size_t n = strcspn(e, "\n");

			printf("   | %.*s\n", (int)n, e);
			e += n;
			if (*e)
				e++;
		}
	}
	sbuf_release(&src);
}

void cli_result_json(struct sbuf *sb, const cairn_result *res, int explain)
{
	size_t i;

	sbuf_adds(sb, "{\"receipt\":");
	json_add_strz(sb, res->receipt_id[0] ? res->receipt_id : NULL);
	sbuf_adds(sb, ",\"floor\":");
	json_add_num(sb, res->floor);
	sbuf_addf(sb, ",\"floor_calibrated\":%s,\"dropped\":%zu,\"terms\":",
		  res->floor_calibrated ? "true" : "false", res->dropped);
	json_add_strz(sb, res->terms);
	sbuf_adds(sb, ",\"idf_mass\":");
	json_add_num(sb, res->idf_mass);
	sbuf_adds(sb, ",\"answer\":");
	json_add_num(sb, round(res->answer * 1e4) / 1e4);
	sbuf_adds(sb, ",\"answer_unseen\":");
	json_add_num(sb, round(res->answer_unseen * 1e4) / 1e4);
	sbuf_addf(sb, ",\"chance\":{\"words\":%zu,\"expected\":",
		  res->chance_words);
	json_add_num(sb, round(res->chance_expected * 1e4) / 1e4);
	sbuf_adds(sb, ",\"all_expected\":");
	json_add_num(sb, round(res->chance_all_expected * 1e4) / 1e4);
	sbuf_adds(sb, ",\"pair_expected\":");
	json_add_num(sb, round(res->chance_pair_expected * 1e4) / 1e4);
	sbuf_addf(sb, ",\"met\":%zu,\"together\":%zu,"
		  "\"together_expected\":",
		  res->chance_met, res->chance_together);
	json_add_num(sb, round(res->chance_together_expected * 1e4) / 1e4);
	sbuf_addf(sb, ",\"unrelated\":%s}",
		  res->chance_only ? "true" : "false");
	sbuf_addf(sb, ",\"lone\":{\"hits\":%zu,\"answer\":", res->lone);
	json_add_num(sb, round(res->answer_lone * 1e4) / 1e4);
	sbuf_addc(sb, '}');
	sbuf_addf(sb, ",\"hybrid\":%s", res->hybrid ? "true" : "false");
	if (res->hybrid) {
		sbuf_adds(sb, ",\"cos_floor\":");
		json_add_num(sb, res->cos_floor);
		sbuf_addf(sb, ",\"cos_floor_calibrated\":%s,"
			  "\"dropped_dup\":%zu",
			  res->cos_floor_calibrated ? "true" : "false",
			  res->dropped_dup);
	}
	sbuf_addf(sb, ",\"reranked\":%s", res->reranked ? "true" : "false");
	if (res->reranked) {
		sbuf_adds(sb, ",\"rerank\":{\"model\":");
		json_add_strz(sb, res->rerank_model);
		sbuf_addf(sb, ",\"scored\":%zu,\"ms\":", res->rerank_n);
		json_add_num(sb, round(res->rerank_ms * 1e3) / 1e3);
		sbuf_adds(sb, ",\"load_ms\":");
		json_add_num(sb, round(res->rerank_load_ms * 1e3) / 1e3);
		sbuf_addc(sb, '}');
	}
	sbuf_adds(sb, ",\"notice\":");
	json_add_strz(sb, res->notice);
	sbuf_adds(sb, ",\"hits\":[");
	for (i = 0; i < res->n; i++) {
		const cairn_hit *h = &res->hits[i];

		if (i)
			sbuf_addc(sb, ',');
		sbuf_adds(sb, "{\"record\":");
		cli_record_json(sb, h->rec, 1);
		sbuf_adds(sb, ",\"score\":");
		json_add_num(sb, h->score);
		sbuf_adds(sb, ",\"relevance\":");
		json_add_num(sb, h->relevance);
		sbuf_adds(sb, ",\"lexical\":");
		json_add_num(sb, h->lexical);
		sbuf_adds(sb, ",\"answer\":");
		json_add_num(sb, round(h->answer * 1e4) / 1e4);
		sbuf_adds(sb, ",\"bm25\":");
		json_add_num(sb, h->bm25);
		sbuf_addf(sb, ",\"bm25_rank\":%d,\"weight\":", h->bm25_rank);
		json_add_num(sb, h->weight);
		sbuf_adds(sb, ",\"matched\":");
		json_add_strz(sb, h->matched);
		if (h->drift) {
			sbuf_adds(sb, ",\"drift\":");
			json_add_strz(sb, h->drift);
			sbuf_adds(sb, ",\"drift_weight\":");
			json_add_num(sb, h->drift_weight);
		}
		if (res->hybrid) {
			sbuf_addf(sb, ",\"dense_rank\":%d,\"cosine\":",
				  h->dense_rank);
			json_add_num(sb, h->cosine);
			sbuf_addf(sb, ",\"has_vector\":%s,\"rrf\":",
				  h->has_vector ? "true" : "false");
			json_add_num(sb, h->rrf);
			sbuf_addf(sb, ",\"pinned\":%s,\"exact_key\":%s,"
				  "\"decay\":",
				  h->pinned ? "true" : "false",
				  h->exact_key ? "true" : "false");
			json_add_num(sb, h->decay);
			sbuf_adds(sb, ",\"basis\":");
			json_add_strz(sb, h->basis);
		}
		if (h->rerank_rank > 0) {
			sbuf_adds(sb, ",\"rerank\":");
			json_add_num(sb, h->rerank);
			sbuf_addf(sb, ",\"rerank_rank\":%d,\"rerank_from\":%d",
				  h->rerank_rank, h->rerank_from);
		}
		if (explain) {
			sbuf_adds(sb, ",\"explain\":");
			json_add_strz(sb, h->explain);
		}
		sbuf_addc(sb, '}');
	}
	sbuf_adds(sb, "]}");
}

int cmd_recall(int argc, char **argv)
{
	enum { O_KIND = 256, O_STATUS, O_EXPLAIN, O_NOFLOOR, O_JSON,
	       O_RERANK, O_NORERANK };
	static const struct option lo[] = {
		{ "kind", 1, 0, O_KIND },	  { "status", 1, 0, O_STATUS },
		{ "explain", 0, 0, O_EXPLAIN }, { "no-floor", 0, 0, O_NOFLOOR },
		{ "json", 0, 0, O_JSON },	  { "help", 0, 0, 'h' },
		{ "rerank", 2, 0, O_RERANK },	  { "no-rerank", 0, 0, O_NORERANK },
		{ 0, 0, 0, 0 }
	};
	struct sbuf kinds = SBUF_INIT, statuses = SBUF_INIT, q = SBUF_INIT;
	cairn_recall_opts o;
	cairn_result *res = NULL;
	cairn_db *db = NULL;
	char *end;
	double hit_floor;
	int c, i, rc, ret = EXIT_OK;
	size_t h;

	memset(&o, 0, sizeof(o));
	while ((c = cli_getopt(argc, argv, "k:h", lo)) != -1) {
		switch (c) {
		case 'k':
		{
			long k = strtol(optarg, &end, 10);

			if (*end || end == optarg || k < 1) {
				ret = cli_usage("recall", "-k must be a number "
						"of at least 1");
				goto out;
			}
			/* docs/RELIABILITY.md: a larger k is lowered to 100 */
			o.k = k > 100 ? 100 : (int)k;
			break;
		}
		case O_KIND: cli_add_csv(&kinds, optarg); break;
		case O_STATUS: cli_add_csv(&statuses, optarg); break;
		case O_EXPLAIN: o.explain = 1; break;
		case O_NOFLOOR: o.no_floor = 1; break;
		case O_RERANK:
			o.rerank = 1;
			o.rerank_model = optarg;
			if (optarg && !*optarg) {
				ret = cli_usage("recall", "--rerank= needs a "
						"file");
				goto out;
			}
			break;
		case O_NORERANK: o.rerank = -1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': ret = cli_help(recall_help); goto out;
		default: ret = cli_usage("recall", "unknown option"); goto out;
		}
	}
	if (optind >= argc) {
		ret = cli_usage("recall", "no question given");
		goto out;
	}
	/* several words without quotes form one question */
	for (i = optind; i < argc; i++) {
		if (i > optind)
			sbuf_addc(&q, ' ');
		sbuf_adds(&q, argv[i]);
	}
	o.kinds = kinds.len ? kinds.buf : NULL;
	o.statuses = statuses.len ? statuses.buf : NULL;
	if (cli_open(&db, 0)) {
		ret = EXIT_ERR;
		goto out;
	}
	rc = cairn_recall(db, sbuf_str(&q), &o, &res);
	if (rc) {
		ret = cli_db_fail(db, rc);
		goto out;
	}
	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;

		cli_result_json(&sb, res, o.explain);
		cli_print_json(&sb);
		sbuf_release(&sb);
		goto out;
	}
	if (res->notice)
		fprintf(stderr, "cairn: note: %s\n", res->notice);
	if (res->n == 0 && res->hybrid) {
		printf("no record answers this (cosine floor %.2f%s",
		       res->cos_floor,
		       res->cos_floor_calibrated ? ", calibrated" : "");
		if (res->dropped)
			printf("; %zu weaker match%s below the floors",
			       res->dropped, res->dropped == 1 ? "" : "es");
		printf(")\n");
	} else if (res->n == 0) {
		printf("no record answers this (floor %.2f%s", res->floor,
		       res->floor_calibrated ? ", calibrated" : "");
		if (res->dropped)
			printf("; %zu weaker match%s below it", res->dropped,
			       res->dropped == 1 ? "" : "es");
		printf(")\n");
	}
	for (h = 0; h < res->n; h++) {
		if (h)
			printf("\n");
		print_hit_human(h, &res->hits[h], o.explain);
	}
	/* the question is answered above the floor; each hit must then be
	 * above the lower of the floor and the default (docs/RANKING.md) */
	hit_floor = res->floor < CAIRN_DEFAULT_FLOOR ? res->floor
						     : CAIRN_DEFAULT_FLOOR;
	if (o.explain && res->hybrid)
		printf("\nterms searched: %s\nmode: hybrid (BM25 + dense, "
		       "docs/RANKING.md)\n%scosine floor: %.2f (%s); lexical "
		       "floor: %.2f (%s) for the question, each hit's answer "
		       "above %.2f; %zu hit%s dropped by the floors, %zu "
		       "by the per-source limit\n",
		       res->terms, o.no_floor ? "floors off (--no-floor), "
						"in force they would be: " : "",
		       res->cos_floor,
		       res->cos_floor_calibrated ? "calibrated"
						 : "not calibrated",
		       res->floor,
		       res->floor_calibrated ? "calibrated"
					     : "default, not calibrated",
		       hit_floor, res->dropped, res->dropped == 1 ? "" : "s",
		       res->dropped_dup);
	else if (o.explain)
		printf("\nterms searched: %s\n%sfloor: %.2f (%s) for the "
		       "question, each hit above %.2f; %zu hit%s dropped by "
		       "it\n",
		       res->terms, o.no_floor ? "floors off (--no-floor), "
						"in force they would be: " : "",
		       res->floor,
		       res->floor_calibrated ? "calibrated"
					     : "default, not calibrated",
		       hit_floor, res->dropped, res->dropped == 1 ? "" : "s");
	if (o.explain)
		printf("answerability: %.4f, the best hit's share of the "
		       "question's informative IDF mass (%.4f of it never said "
		       "in the store); %s\n",
		       res->answer, res->answer_unseen,
		       o.no_floor ? "--no-floor: the hits are shown whatever "
				    "it is"
				  : "answered when above the floor");
	if (o.explain && res->chance_words > 1) {
		printf("chance: %zu specific words (in under max(1/sqrt(N), "
		       "%g%%) of the records); chance would put their pairs in "
		       "one record %.2f times and all of them %.4f times; the "
		       "pairs it puts together less than once (%.2f times) "
		       "meet %zu times in the store's records",
		       res->chance_words, CAIRN_CHANCE_SHARE * 100,
		       res->chance_expected, res->chance_all_expected,
		       res->chance_pair_expected, res->chance_met);
		if (res->chance_together >= 2)
			printf("; one record of the pool holds %zu of them "
			       "(chance: %.4f times)",
			       res->chance_together,
			       res->chance_together_expected);
		printf("%s\n",
		       res->chance_only
			       ? ": no more than chance, the words are "
				 "unrelated in this store: answerability 0"
		       : res->chance_expected < CAIRN_CHANCE_POWER
			       ? " (too rare to meet by chance: no test)"
		       : res->chance_all_expected >= 1
			       ? " (a record of them all would be no more "
				 "than chance: no test)"
			       : ": more than chance");
	}
	if (o.explain && res->lone)
		printf("lone words: %zu hit%s held one word of the question "
		       "while a heavier one was missing: a word in common by "
		       "chance, answerability 0 (best before: %.4f)\n",
		       res->lone, res->lone == 1 ? "" : "s", res->answer_lone);
	if (o.explain && res->reranked)
		printf("rerank: %s scored the top %zu in %.1f ms (model load "
		       "%.1f ms); fused 1:1 by reciprocal rank with the order "
		       "above\n",
		       res->rerank_model, res->rerank_n, res->rerank_ms,
		       res->rerank_load_ms);
	if (res->receipt_id[0])
		printf("%sreceipt %s\n", res->n ? "\n" : "", res->receipt_id);
out:
	cairn_result_free(res);
	cairn_db_close(db);
	sbuf_release(&kinds);
	sbuf_release(&statuses);
	sbuf_release(&q);
	return ret;
}

/* ----------------------------------------------------------------- receipt */

static const char receipt_help[] =
	"usage: cairn receipt [--json] ID\n"
	"\n"
	"Show a recall receipt: the SHA-256 of the normalised question, the\n"
	"returned records in order (id, kind and title as they are now) with\n"
	"their per-signal figures, the\n"
	"provider and revision (engine, tokenizer and dictionary identity,\n"
	"database state) and the time. A receipt says what was returned, not\n"
	"what the agent read.\n";

int cmd_receipt(int argc, char **argv)
{
	static const struct option lo[] = { { "json", 0, 0, 'j' },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	cairn_db *db = NULL;
	struct json *j = NULL;
	char *out = NULL, err[128];
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(receipt_help);
		if (c == 'j')
			cli_state.json = 1;
		else
			return cli_usage("receipt", "unknown option");
	}
	if (optind + 1 != argc)
		return cli_usage("receipt", "expected exactly one receipt ID");
	if (cli_open(&db, 0))
		return EXIT_ERR;
	rc = cairn_receipt_json(db, argv[optind], &out);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else if (cli_state.json) {
		printf("%s\n", out);
	} else if (json_parse(out, strlen(out), &j, err, sizeof(err)) ==
		   CAIRN_OK) {
		const struct json *hits = json_get(j, "hits"), *h;
		int n = 0;

		printf("receipt:   %s\n", json_get_str(j, "id"));
		printf("time:      %s\n", json_get_str(j, "time"));
		printf("query:     sha256 %s\n", json_get_str(j, "query_sha256"));
		printf("provider:  %s\n", json_get_str(j, "provider"));
		printf("revision:  %s\n", json_get_str(j, "revision"));
		printf("returned:  %zu record%s\n", hits ? hits->len : 0,
		       hits && hits->len == 1 ? "" : "s");
		for (h = hits ? hits->child : NULL; h; h = h->next) {
			double rank = 0, rel = 0, sc = 0, drank = 0, cos = 0,
			       rrank = 0;

			const char *id = json_get_str(h, "id");
			cairn_record *r = NULL;

			json_get_num(h, "bm25_rank", &rank);
			json_get_num(h, "relevance", &rel);
			json_get_num(h, "score", &sc);
			/* what was returned, as a person reads it: the
			 * record's kind and title (as it is now) */
			if (id && cairn_record_get(db, id, &r) == CAIRN_OK) {
				const char *t = *r->title ? r->title : r->body;

				printf("  %d. %s  %s  %.*s\n", ++n, id, r->kind,
				       (int)strcspn(t, "\n"), t);
			} else {
				printf("  %d. %s  (no longer in the store)\n",
				       ++n, id ? id : "?");
			}
			cairn_record_free(r);
			printf("     bm25 rank %.0f  ", rank);
			if (json_get_num(h, "dense_rank", &drank)) {
				json_get_num(h, "cosine", &cos);
				printf("dense rank %.0f  cosine %.4f  ", drank, cos);
			}
			printf("relevance %.2f  score %.2f", rel, sc);
			if (json_get_num(h, "rerank_rank", &rrank))
				printf("  rerank rank %.0f", rrank);
			printf("\n");
		}
	}
	json_free(j);
	cairn_free(out);
	cairn_db_close(db);
	return ret;
}

/* --------------------------------------------------------------- calibrate */

static const char calibrate_help[] =
	"usage: cairn calibrate [--probes FILE] [--json]\n"
	"\n"
	"Measure the no-match floor from questions this store cannot answer.\n"
	"FILE holds one question per line: JSON Lines with a \"text\" field (as\n"
	"in probes.jsonl of the evaluation sets) or plain text; without it,\n"
	"built-in off-topic questions in English and Chinese are used. Each\n"
	"probe's answerability is the share of its informative words its best\n"
	"hit matches (see cairn recall --explain). The floor is the median\n"
	"probe answerability, rounded up to 0.01 and never below the default\n"
	"0.12 -- not the highest probe, so that one probe sharing most of its\n"
	"words with the store does not silence every real question; the probes\n"
	"above the floor are listed (recall still answers those). It is stored\n"
	"with the tokenizer identity it was measured for (a floor measured for\n"
	"another tokenizer is not used). When an embedding model is configured\n"
	"and records have vectors, the cosine floor is measured too: the\n"
	"highest cosine any probe reaches with any record, rounded up to 0.01,\n"
	"stored with the vector identity (model, revision, dimensions, pooling,\n"
	"instructions); recall uses it only with that identity, and drops a\n"
	"hit only when both its cosine and its answerability are at or below\n"
	"their floors. Without one the cosine keeps no hit on its own (it only\n"
	"orders them). Re-run it after large changes to the store or a change\n"
	"of model.\n";

/* The floors found, and the probes let through (--json: one object). */
static void calibrate_report(const cairn_calibration *cal, char *const *probes,
			     size_t n, const char *path)
{
	size_t i;

	if (cli_state.json) {
		struct sbuf sb = SBUF_INIT;

		sbuf_addf(&sb, "{\"floor\":%.2f,\"probes\":%zu,"
			  "\"builtin\":%s,\"probe_max\":%.4f,"
			  "\"let_through\":%zu,\"shown\":[",
			  cal->lexical_floor, n, path ? "false" : "true",
			  cal->probe_max, cal->through);
		for (i = 0; i < cal->shown; i++) {
			sbuf_addf(&sb, "%s{\"answer\":%.4f,\"text\":",
				  i ? "," : "", cal->through_answer[i]);
			json_add_strz(&sb, probes[cal->through_idx[i]]);
			sbuf_addc(&sb, '}');
		}
		sbuf_addc(&sb, ']');
		if (cal->has_cosine)
			sbuf_addf(&sb, ",\"cosine_floor\":%.2f",
				  cal->cosine_floor);
		sbuf_addc(&sb, '}');
		cli_print_json(&sb);
		sbuf_release(&sb);
	} else {
		printf("floor %.2f from %zu %sprobe questions (median "
		       "answerability; highest %.2f)\n",
		       cal->lexical_floor, n, path ? "" : "built-in ",
		       cal->probe_max);
		if (cal->through)
			printf("let through: %zu probe%s above the floor "
			       "(recall answers them):\n",
			       cal->through, cal->through == 1 ? "" : "s");
		for (i = 0; i < cal->shown; i++)
			printf("  %.2f  %s\n", cal->through_answer[i],
			       probes[cal->through_idx[i]]);
		if (cal->through > cal->shown)
			printf("  ... and %zu more\n",
			       cal->through - cal->shown);
		if (cal->has_cosine)
			printf("cosine floor %.2f for the configured vector "
			       "identity\n",
			       cal->cosine_floor);
	}
}

int cmd_calibrate(int argc, char **argv)
{
	enum { O_PROBES = 256, O_JSON };
	static const struct option lo[] = { { "probes", 1, 0, O_PROBES },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const char *path = NULL;
	cairn_db *db = NULL;
	char **probes = NULL, *line = NULL, err[256];
	size_t n = 0, cap = 0, lcap = 0, lineno = 0, i;
	ssize_t len;
	cairn_calibration cal;
	FILE *f = NULL;
	int c, rc, ret = EXIT_OK;

	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		if (c == 'h')
			return cli_help(calibrate_help);
		if (c == O_PROBES)
			path = optarg;
		else if (c == O_JSON)
			cli_state.json = 1;
		else
			return cli_usage("calibrate", "unknown option");
	}
	if (optind < argc)
		return cli_usage("calibrate", "unexpected argument '%s'",
				 argv[optind]);
	if (!path) {
		const char *const *dp = cairn_default_probes(&n);

		probes = util_calloc(n, sizeof(*probes));
		if (!probes)
			return cli_fail("out of memory");
		for (i = 0; i < n; i++) {
			probes[i] = util_strdup(dp[i]);
			if (!probes[i]) {
				n = i;
				ret = cli_fail("out of memory");
				goto out;
			}
		}
	}
	f = !path ? NULL : strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (path && !f)
		return cli_fail("cannot read '%s'", path);
	while (f && (len = getline(&line, &lcap, f)) >= 0) {
		struct json *j = NULL;
		const char *text = line;

		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if ((size_t)len > PROBE_MAX_LINE) {
			ret = cli_fail("%s:%zu: line too long", path, lineno);
			goto out;
		}
		if (line[0] == '{') {
			if (json_parse(line, (size_t)len, &j, err, sizeof(err))) {
				ret = cli_fail("%s:%zu: %s", path, lineno, err);
				goto out;
			}
			text = json_get_str(j, "text");
			if (!text) {
				json_free(j);
				ret = cli_fail("%s:%zu: no \"text\" field", path,
					       lineno);
				goto out;
			}
		}
		if (n == cap) {
			char **nv = util_realloc(probes, (cap ? 2 * cap : 16) *
								sizeof(*nv));

			if (!nv) {
				json_free(j);
				ret = cli_fail("out of memory");
				goto out;
			}
			probes = nv;
			cap = cap ? 2 * cap : 16;
		}
		probes[n] = util_strdup(text);
		json_free(j);
		if (!probes[n]) {
			ret = cli_fail("out of memory");
			goto out;
		}
		n++;
	}
	if (n == 0) {
		ret = cli_fail("'%s' holds no probe questions", path);
		goto out;
	}
	if (cli_open(&db, 0)) {
		ret = EXIT_ERR;
		goto out;
	}
	rc = cairn_calibrate_ex(db, (const char *const *)probes, n, &cal);
	if (rc) {
		ret = cli_db_fail(db, rc);
		goto out;
	}
	calibrate_report(&cal, probes, n, path);
out:
	for (i = 0; i < n; i++)
		cairn_free(probes[i]);
	cairn_free(probes);
	free(line);
	if (f && f != stdin)
		fclose(f);
	cairn_db_close(db);
	return ret;
}
