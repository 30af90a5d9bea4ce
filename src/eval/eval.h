/*
 * eval.h -- the evaluation engine behind `cairn eval` (SPEC 8).
 *
 * Layer: beside recall and seed, above store. Reads a dataset folder
 * (corpus.jsonl, queries.jsonl, optional probes.jsonl), loads the corpus into
 * a temporary store of its own, optionally calibrates the no-match floor
 * from the probes, runs every query through cairn_recall() and scores the
 * hits against the labelled answers: recall@1/3/5/10, MRR, nDCG@10, the
 * no-answer empty rate and, with eval_opts.hook, the hook's injection hit
 * rate: each query is also recalled and rendered by the hook's own
 * functions (hook.h: hook_prompt_recall, hook_prompt_render: budget,
 * floor, one entry per source), and a query counts when an answer is among
 * the entries of that block.
 *
 * A seeded workspace (a folder with docs/ and no corpus.jsonl, or any
 * folder with docs/ under eval_opts.seed) is measured seeding included: a
 * copy of DIR/docs is seeded with cairn_seed() (no git) into the temporary
 * store, answer ids are paths relative to DIR ("docs/decisions/x.md"), and
 * a hit counts for the file its record was seeded from (src_path). A file
 * seeds into several chunk records, so recall is asked for
 * k x EVAL_SEED_ASK hits and the first k distinct files are kept: the rank
 * of a file is its position among distinct files, not among chunks.
 *
 * Invariants: the numbers depend only on the dataset, the options and the
 * engine; the temporary store is fresh for every run (a "frozen copy of the
 * corpus", SPEC 8) and is removed afterwards, on error too.
 *
 * Must never: open, read or write the user's workspace or global store;
 * calibrate on the queries it scores (only on probes.jsonl); print anything
 * (progress goes through a callback, output is the caller's business).
 */
#ifndef CAIRN_EVAL_H
#define CAIRN_EVAL_H

#include <stddef.h>

#include "internal.h"

#define EVAL_MAX_LINE ((size_t)4 << 20) /* 4 MiB: longest line of a .jsonl file */
#define EVAL_MAX_ANSWERS 10000          /* answer ids of one query */
#define EVAL_DEFAULT_K 10               /* hits asked of recall per query */
#define EVAL_MAX_K 100                  /* cairn_recall's own limit */
#define EVAL_MISS_K 3                   /* --misses: queries without an answer in the top this many */
#define EVAL_BATCH 1000                 /* corpus rows per transaction */
#define EVAL_SEED_ASK 3                 /* seeded: hits asked = k x this (chunks per file) */
#define EVAL_COPY_DEPTH 32              /* seeded: folder levels of docs/ copied (as seed walks) */

/* ------------------------------------------------------------ one query */

/* The score of one answerable query against the ids recall returned. */
struct eval_qscore {
	size_t rank;  /* 1-based position of the first relevant hit; 0: none returned */
	double rr;    /* reciprocal rank: 1/rank when rank is 1..10, else 0 */
	double ndcg;  /* nDCG@10, binary relevance, in 0..1 */
};

/*
 * Score one query. returned: the n ids recall gave, best first; answers:
 * the na relevant ids (order and duplicates do not matter). Fills *out:
 *   rank  the first position i (1-based, i <= n) whose id is an answer;
 *   rr    1/rank when 1 <= rank <= 10, else 0 (MRR@10);
 *   ndcg  DCG@10 / IDCG@10 with binary relevance: DCG sums 1/log2(i+1) over
 *         the positions i <= 10 that hold an answer (an id counted once, at
 *         its first position), IDCG is the same sum over positions
 *         1..min(distinct answers, 10).
 * With na == 0 (a no-answer query) every figure is 0. Allocates nothing.
 */
void eval_score_query(const char *const *returned, size_t n,
		      const char *const *answers, size_t na,
		      struct eval_qscore *out);

/* --------------------------------------------------------------- totals */

/*
 * Summed figures over a set of queries (the whole run, or one category).
 * Rates are sums divided by `answerable`; see eval_metric().
 */
struct eval_metrics {
	size_t answerable;      /* queries with at least one answer */
	size_t no_answer;       /* queries whose answers list is empty */
	size_t no_answer_empty; /* no-answer queries for which recall returned nothing */
	size_t hit1;            /* answerable queries found at rank 1 */
	size_t hit3;            /* ... within the top 3 */
	size_t hit5;            /* ... within the top 5 */
	size_t hit10;           /* ... within the top 10 */
	size_t hooked;          /* queries rendered as the hook would (eval_opts.hook) */
	size_t injected;        /* answerable ones with an answer in the hook's block */
	size_t nothing_injected; /* no-answer ones for which the hook injected nothing */
	size_t hook_prompts;    /* hooked queries whose block held an entry */
	size_t hook_entries;    /* entries over all blocks */
	size_t hook_relevant;   /* entries that are an answer of their query */
	size_t hook_chars;      /* characters of the blocks, over all hooked queries */
	double rr_sum;          /* sum of reciprocal ranks (MRR@10 numerator) */
	double ndcg_sum;        /* sum of nDCG@10 */
	size_t stale_queries;   /* queries (all kinds) that returned a stale record */
	size_t stale_hits;      /* stale records returned, summed over queries */
};

/* Which rate eval_metric() computes. */
enum eval_metric_kind {
	EVAL_R1,        /* recall@1 */
	EVAL_R3,        /* recall@3 */
	EVAL_R5,        /* recall@5 */
	EVAL_R10,       /* recall@10 */
	EVAL_MRR,       /* mean reciprocal rank (@10) */
	EVAL_NDCG10,    /* mean nDCG@10 */
	EVAL_INJECTION, /* injection hit rate (needs hooked queries) */
	EVAL_NOTHING_INJECTED, /* no-answer queries with nothing injected, of all no-answer ones */
	EVAL_STALE_HIT, /* queries that returned a stale record, of all queries (must be 0) */
};

/*
 * One rate of m: the sum over answerable queries divided by their number
 * (EVAL_NOTHING_INJECTED: over no-answer queries). Returns a negative
 * number when undefined: no answerable (no-answer) query, or an injection
 * figure without hooked queries.
 */
double eval_metric(const struct eval_metrics *m, enum eval_metric_kind kind);

/*
 * Is r a record default recall must never return (SPEC 5.5, the
 * stale-hit rate)? 1 when its status is not one of the default filter's
 * (accepted, unverified) -- stale, superseded, historical, false, retired,
 * rejected, candidate -- or when another record supersedes it.
 */
int eval_record_stale(const cairn_record *r);

/* Add one query's stale hits (stale records among the hits it returned,
 * recall's and the hook block's) to m. */
void eval_metrics_add_stale(struct eval_metrics *m, size_t stale);

/* Add one query's outcome to m: na answers, nreturned hits, its score. */
void eval_metrics_add(struct eval_metrics *m, size_t na, size_t nreturned,
		      const struct eval_qscore *s);

/*
 * Add one query's hook outcome to m: na answers, ninjected entries in the
 * block the hook rendered, hit 1 when one of them is an answer.
 */
void eval_metrics_add_hook(struct eval_metrics *m, size_t na,
			   size_t ninjected, int hit);

/*
 * Add one query's block to m: its entries, those of them that are answers,
 * its length in characters (all 0 when nothing was injected).
 */
void eval_metrics_add_block(struct eval_metrics *m, size_t entries,
			    size_t relevant, size_t chars);

/* ------------------------------------------------------------------ run */

/* What eval_run() reports while it works. */
enum eval_phase {
	EVAL_PHASE_LOAD,  /* done/total: corpus rows written, or files seeded */
	EVAL_PHASE_QUERY, /* done/total: queries answered */
};

/* Options of one run; zero-initialise, NULL means the defaults. */
struct eval_opts {
	const char *split; /* only queries whose "split" equals it, or (no split field) whose id starts with it */
	int per_group;     /* 1: one store per "group" value, results pooled over queries */
	int no_floor;      /* 1: recall with no_floor, and no calibration */
	int seed;          /* 1: seed DIR/docs even when corpus.jsonl exists */
	int k;             /* hits asked per query; 0: EVAL_DEFAULT_K; 1..EVAL_MAX_K */
	int hook;          /* 1: also render each query's hook block (injection figures) */
	size_t hook_budget; /* the hook's character budget; 0: HOOK_DEFAULT_BUDGET */
	int hook_k;        /* the hook's entries per prompt; 0: HOOK_DEFAULT_K */
	int hook_sweep;    /* 1 (with hook): keep each query's hook candidates
			      without the hook's answerability floor, for
			      eval_hook_sweep() */
	const char *tmpdir; /* where the temporary store goes; NULL: $TMPDIR, else /tmp */
	const char *statuses; /* statuses recall asks for; NULL: the default
				 (tests: "all" shows that the stale-hit rate
				 sees what the default filter keeps out) */
	const char *offtopic; /* a file of off-topic questions (one a line, '#'
				 comments), asked of every store; NULL: none */
	int (*progress)(void *user, enum eval_phase phase, size_t done,
			size_t total); /* after every row and query, or NULL; non-zero stops the run */
	void *user;        /* passed to progress */
};

/* One query and what recall returned for it. */
struct eval_qresult {
	char *id;            /* the query id */
	char *text;          /* the question */
	char *category;      /* its category ("" when the row has none) */
	char *group;         /* its group, or NULL */
	char **answers;      /* the nanswers relevant corpus ids */
	size_t nanswers;     /* 0 for a no-answer query */
	char **returned;     /* the ids recall returned, best first (seeded: distinct file paths) */
	size_t nreturned;    /* how many */
	size_t nhits;        /* records recall returned (seeded: chunks, before de-duplication) */
	char **injected;     /* with eval_opts.hook: the ids (seeded: files) of the block's entries */
	size_t ninjected;    /* how many (0: the hook would print nothing) */
	int hook_hit;        /* 1: an answer is among them */
	size_t hook_relevant; /* entries that are answers */
	cairn_result *hook_res; /* hook_sweep: the hook's recall without its
				   answerability floor (hook_select's input) */
	size_t hook_chars;   /* characters of the block (0: nothing injected) */
	int hooked;          /* 1: the hook block was rendered for this query */
	size_t stale;        /* stale records among the hits (eval_record_stale),
				recall's and the hook block's */
	struct eval_qscore score; /* zero for a no-answer query */
	double answer;       /* recall's answerability of the question (result.answer) */
	double lexical;      /* the highest lexical signal of its hits */
	double unseen;       /* result.answer_unseen */
	double cosine;       /* the highest cosine of its hits (hybrid; else 0) */
	double *ret_answer;  /* answerability of each returned hit, nreturned entries */
};

/* Figures for one category value. */
struct eval_category {
	char *name;            /* the category ("" when rows have none) */
	struct eval_metrics m; /* its totals */
};

/* The outcome of eval_run(). Free with eval_report_free(). */
struct eval_report {
	struct eval_metrics all;     /* every evaluated query */
	struct eval_category *cats;  /* one per category, in order of first appearance */
	size_t ncats;                /* entries in cats */
	struct eval_qresult *q;      /* every evaluated query, in queries.jsonl order */
	size_t nq;                   /* entries in q */
	size_t corpus;               /* corpus rows loaded (seeded: files seeded) */
	size_t redacted;             /* corpus rows stored with secrets masked */
	size_t probes;               /* probe questions used for calibration (summed over stores) */
	size_t stores;               /* temporary stores built (1, or the number of groups) */
	size_t unknown_answers;      /* answer ids that name no corpus row (seeded: file) of the query's store */
	int seeded;                  /* 1: the store was seeded from DIR/docs */
	size_t seed_files;           /* seeded: Markdown files read */
	size_t seed_records;         /* seeded: records they produced */
	double seed_s;               /* seeded: seconds inside cairn_seed() */
	int floor_known;             /* 0 with no_floor, or when no query was run */
	int calibrated;              /* stores whose floor came from the probes */
	double floor;                /* the floor used; per group: the mean over stores */
	double floor_min;            /* lowest floor over stores */
	double floor_max;            /* highest floor over stores */
	int cos_known;               /* stores whose recall was hybrid (a cosine floor applied) */
	int cos_calibrated;          /* of them, stores whose cosine floor was calibrated */
	double cos_floor;            /* the cosine floor used; per group: the mean */
	double cos_floor_min;        /* lowest over those stores */
	double cos_floor_max;        /* highest over those stores */
	int k;                       /* hits asked per query */
	int hooked;                  /* 1: injection figures were measured (eval_opts.hook) */
	size_t hook_budget;          /* the budget they were rendered with */
	int hook_k;                  /* the hook's entries per prompt */
	size_t stale_records;        /* records in the stores that default recall
					must not return (eval_record_stale) */
	size_t embedded;             /* records given vectors (a provider is configured:
					CAIRN_EMBED_*; recall is then hybrid) */
	char embed_identity[1200];   /* the vector identity used, "" when lexical only */
	double load_s;               /* seconds spent loading, embedding and calibrating */
	double query_s;              /* seconds spent answering queries */
	double elapsed_s;            /* seconds for the whole run */
	size_t offtopic;             /* off-topic questions asked (eval_opts.offtopic; summed over stores) */
	size_t offtopic_quiet;       /* of them, those recall returned nothing for */
};

/*
 * Run the evaluation of dataset folder `dir` (see the file comment).
 * The store is seeded from dir/docs when opts->seed is set, or when dir has
 * no corpus.jsonl but has a docs/ folder; else it is loaded from
 * corpus.jsonl. On success *out holds the report (free with
 * eval_report_free()).
 * Errors (with a message in err, naming file:line for bad input):
 * CAIRN_IO (a file is missing or unreadable, the temporary store cannot be
 * made, --seed without docs/), CAIRN_INVALID (a malformed line, a duplicate
 * corpus id, a --split that matches no query, a bad option, per_group with
 * seeding, a file seeding refuses), CAIRN_TOOBIG (a line over
 * EVAL_MAX_LINE), CAIRN_NOMEM, CAIRN_ERROR (interrupted by the progress
 * callback), or any code of cairn_record_write/cairn_seed/cairn_recall.
 */
int eval_run(const char *dir, const struct eval_opts *opts,
	     struct eval_report **out /* OUT */, char *err /* OUT */,
	     size_t errsize);

/* Free a report. NULL is a no-op. */
void eval_report_free(struct eval_report *r);

/*
 * Append the report as one JSON object (the `cairn eval --json` format):
 * recall@1, recall@3, recall@5, recall@10, mrr, ndcg@10, answerable,
 * no_answer, no_answer_empty, injection_hit_rate, no_answer_nothing_injected,
 * stale_hit_rate, stale_hits, by_category (category -> the same keys),
 * dataset, corpus, queries, stale_records, floor,
 * redacted, elapsed_s, for a seeded store "seed": {"files", "records",
 * "seconds"}, with the hook "hook": {"budget", "k"}, and with off-topic
 * questions "offtopic": {"asked", "quiet", "quiet_rate"}.
 * Rates are rounded to 4 decimals; a rate with no query to divide by, the
 * injection figures without eval_opts.hook, and the floor with no_floor,
 * are null.
 */
void eval_report_json(struct sbuf *sb, const struct eval_report *r,
		      const char *dataset);

/*
 * The AUROC of the answerability score: the chance that an answerable
 * query of category cat (NULL: every category) scores above a no-answer
 * query of the whole run (ties count half). Negative when either side has
 * no query.
 */
double eval_auroc(const struct eval_report *r, const char *cat);

/* One operating point of eval_sweep(): the figures with this floor. */
struct eval_point {
	double floor;          /* hits whose answerability is at or below it are dropped */
	double r3;             /* recall@3 over answerable queries */
	double no_answer_empty; /* share of no-answer queries left empty */
	double answerable_empty; /* share of answerable queries left empty */
};

/*
 * The figures a floor f would give, from a run without the floor
 * (eval_opts.no_floor: every hit and its answerability kept), applied as
 * recall applies it: nothing when the question's answerability is at or
 * below f, else the hits above min(f, CAIRN_DEFAULT_FLOOR), order kept.
 * n points, floors 0, 1/(n-1), ... 1.
 * Returns 0, or -1 when the run applied a floor.
 */
int eval_sweep(const struct eval_report *r, struct eval_point *pts, size_t n);

/* One operating point of eval_hook_sweep(): the hook with this floor. */
struct eval_hook_point {
	double floor;      /* an entry's least answerability */
	double inject;     /* answerable queries with an answer among the entries */
	double quiet;      /* no-answer queries with no entry */
	double entries;    /* entries per query that got any */
};

/*
 * The hook's figures at n answerability floors 0, 1/(n-1), ... 1, from a
 * run with eval_opts.hook_sweep: each query's entries as the hook chooses
 * them (hook_select: k, one per source, a later one within HOOK_NEAR of
 * the first), the budget aside. Returns 0, or -1 when the
 * run kept no candidates.
 */
int eval_hook_sweep(const struct eval_report *r, struct eval_hook_point *pts,
		    size_t n);

/*
 * Append one JSON line (with its newline) for query q:
 * {"id","text","category","answers":[...],"rank","returned":[...]}, and
 * with the hook "injected":[...].
 */
void eval_qresult_json(struct sbuf *sb, const struct eval_qresult *q);

/* Append v rounded to 4 decimals as a JSON number, without trailing zeros. */
void eval_add_num4(struct sbuf *sb, double v);

#endif /* CAIRN_EVAL_H */
