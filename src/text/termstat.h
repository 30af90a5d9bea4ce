/*
 * termstat.h -- two files recall keeps next to the store: the document
 * counts it has already asked FTS5 for (cairn.db-terms, global.db-terms)
 * and every row's length (cairn.db-lengths, below).
 *
 * Layer: bottom (files only; no SQLite). Above it: recall.c.
 *
 * Why: a term's document count comes from fts5vocab, which walks the
 * term's whole position list; for the common words of a prompt that is
 * ~40% of a hook call's instructions on 10k records. The counts change
 * only when the records do, so each process that had to count appends
 * what it counted, and the next one reads it back.
 *
 * The key: the schema's records revision (meta records.revision, moved by
 * every transaction that changes a record), its record count and the
 * database file's device and inode. A file whose header names another
 * key is not read; the first writer with a newer revision (or another
 * file or count) starts it again. Recall reads both the key and the
 * counts in one read transaction, and does not use the file inside a
 * caller's transaction (uncommitted rows are counted but not yet a
 * revision). A write made outside cairn's connection that keeps the
 * record count is not seen -- as for the receipts' revision.
 *
 * Invariants: a count is only read back under the key it was counted
 * under; a torn line (a writer killed mid-write) or a malformed one is
 * skipped; a file past TERMSTAT_MAX bytes is started again. Appends hold
 * an exclusive flock(2) and give up rather than wait.
 */
/*
 * The second file, cairn.db-lengths (global.db-lengths): each row's length
 * in tokens (FTS5's docsize, all columns), a uint32 per rowid, under the
 * same key, written whole to a temporary file and renamed (so a mapping
 * of the old one stays intact) and memory-mapped by recall, which would
 * otherwise run a docsize query per candidate row (~20% of a 100k-record
 * recall). TERMSTAT_NO_ROW marks a rowid with no row.
 */
#ifndef CAIRN_TERMSTAT_H
#define CAIRN_TERMSTAT_H

#include <stddef.h>
#include <stdint.h>

#define TERMSTAT_SUFFIX "-terms"          /* after the database file's name */
#define TERMSTAT_MAX (1u << 20)           /* bytes; larger: started again */
#define TERMSTAT_MAX_TERM 256             /* longer terms are not kept */

struct termstat_key {
	long long revision; /* meta records.revision of the schema */
	long long ndocs;    /* rows of the schema's records table */
	uint64_t dev, ino;  /* the database file */
};

/*
 * For each of the n terms (text[i], len[i] bytes) whose df[i] is < 0,
 * set df[i] from the file at path when its key is k. Missing file or
 * other key: nothing set. Returns how many were set.
 */
size_t termstat_get(const char *path, const struct termstat_key *k, size_t n,
		    char *const *text, const size_t *len, long long *df);

/*
 * Append the counts of the terms with put[i] set (df[i] >= 0) under key k:
 * to the file if it has key k, else start it again with k -- unless it
 * names the same database file at a newer revision (this process read an
 * older snapshot). Failures are silent: the file only saves work.
 */
void termstat_put(const char *path, const struct termstat_key *k, size_t n,
		  char *const *text, const size_t *len, const long long *df,
		  const unsigned char *put);

#define TERMSTAT_LEN_SUFFIX "-lengths"   /* after the database file's name */
#define TERMSTAT_NO_ROW 0xffffffffu
#define TERMSTAT_MAX_ROWID (1u << 24)     /* larger rowids: no lengths file */

struct termstat_lengths {
	const uint32_t *len; /* len[rowid], n of them */
	size_t n;
	void *map;           /* the mapping (for termstat_lengths_close) */
	size_t maplen;
};

/*
 * Map the lengths file at path if its header names key k; 0 and *out,
 * or -1 (missing, other key, short, unreadable).
 */
int termstat_lengths_open(const char *path, const struct termstat_key *k,
			  struct termstat_lengths *out);

/* Unmap; a zeroed or closed struct is harmless. */
void termstat_lengths_close(struct termstat_lengths *l);

/*
 * Write len[0, n) under key k to path (temporary file, rename; stale
 * temporary files of dead writers removed first). 0, or -1.
 */
int termstat_lengths_write(const char *path, const struct termstat_key *k,
			   const uint32_t *len, size_t n);

#endif
