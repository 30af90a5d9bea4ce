/*
 * rerank.h -- the optional cross-encoder rerank of a recall result
 * (SPEC 5.2 step 6; docs/RANKING.md): a BERT / XLM-R
 * sequence-classification GGUF (rank pooling, run by bert.c) scores
 * (question, title + body) for the top hits of a finished result, and
 * rank_rerank() fuses that order 1:1 by reciprocal rank with the order the
 * result already had.
 *
 * Layer: above bert.h, rank.h and store.h; below recall.c, which calls
 * rerank_result() on its final hits just before the receipt (lexical-only
 * and hybrid results alike).
 *
 * Holds: which model is configured (the option, $CAIRN_RERANK_MODEL, the
 * main store's meta 'rerank.model'), a per-handle cache of loaded models
 * (one load per file identity: path, device, inode, size, mtime; freed by
 * cairn_db_close), the timing, and each rescored hit's figures and
 * --explain line.
 *
 * Must never: change which records a result holds (only their order), move
 * an exact-key or pinned hit, or rerank when nothing asked for it (off by
 * default: no model configured means no rerank).
 */
#ifndef CAIRN_RERANK_H
#define CAIRN_RERANK_H

#include <stddef.h>

#include "cairn.h"

struct cairn_db;

#define RERANK_ENV "CAIRN_RERANK_MODEL" /* overrides the store's setting;
					 * read at open (struct store_env) */
#define RERANK_META "rerank.model"      /* main store meta key */

/*
 * Rerank res in place for query as opts asks (opts->rerank and
 * opts->rerank_model; NULL opts: as configured). Rescores the first
 * min(RANK_RERANK_TOP, n) hits after any leading exact-key / pinned ones
 * (nothing when fewer than 2), fuses, re-sorts and fills the hits' rerank
 * figures and res->reranked, rerank_n, rerank_ms, rerank_load_ms,
 * rerank_model; with opts->explain a "rerank:" line is appended to each
 * rescored hit's explain text.
 *
 * A model that was asked for (opts->rerank 1) and cannot be loaded or run
 * is an error (CAIRN_INVALID, CAIRN_IO, ... with the message on db). A
 * configured one that fails leaves the order as it was and says why in
 * res->notice. CAIRN_NOMEM.
 */
int rerank_result(struct cairn_db *db, const char *query,
		  const cairn_recall_opts *opts, cairn_result *res);

/*
 * The fusion alone (tests): scores[i] is the cross-encoder score of hit
 * first + i for i < m, where first is the number of leading exact-key or
 * pinned hits (rerank_first()) and m <= RANK_RERANK_TOP. Re-sorts those m
 * hits by 1/(k + position) + 1/(k + rerank rank) with k = RANK_RRF_K and
 * sets their rerank, rerank_rank and rerank_from. CAIRN_OK or
 * CAIRN_INVALID (m out of range).
 */
int rerank_apply(cairn_result *res, size_t first, const double *scores,
		 size_t m);

/* Number of leading hits that keep their place (exact key, pinned). */
size_t rerank_first(const cairn_result *res);

/*
 * The model path rerank_result would use for opts, into buf ("" when
 * rerank is off). CAIRN_INVALID when opts->rerank is 1 and none is set.
 */
int rerank_model_path(struct cairn_db *db, const cairn_recall_opts *opts,
		      char *buf, size_t size);

#endif /* CAIRN_RERANK_H */
