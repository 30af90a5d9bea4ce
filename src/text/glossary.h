/*
 * glossary.h -- a built-in Chinese -> English glossary of software
 * engineering and operations terms, for recall's glosses (
 * Chinese questions about English records).
 *
 * Layer: bottom, beside bilingual.c. No I/O, no allocation, no SQLite.
 *
 * CC-CEDICT (bilingual.h) is a general dictionary loaded from a file the
 * user provides; its glosses of engineering words are often the everyday
 * sense (明文 "to state in writing", not "plaintext"), and without the
 * file there are none. This table holds the engineering sense of a few
 * hundred words, written for cairn, always present. Keys are Simplified
 * (the tokenizer folds Traditional into Simplified character by character,
 * so Taiwan usage such as 资料库 for 資料庫 or 伺服器 is listed as such),
 * two characters or more; values are English words separated by spaces,
 * which recall tokenises as it tokenises records.
 *
 * Invariants: the table is constant; keys are unique (tests/unit_glossary.c
 * checks it, with valid UTF-8, Han-only keys and ASCII values).
 * Must never: allocate, or read outside the key it is given.
 */
#ifndef CAIRN_GLOSSARY_H
#define CAIRN_GLOSSARY_H

#include <stddef.h>

#define GLOSSARY_VERSION 1 /* bump when an entry changes */

/* The English words of zh[0, len) (not NUL-terminated), or NULL. */
const char *glossary_lookup(const char *zh, size_t len);

/* Entry i (0-based) for tests: its key in *zh and words in *en; 0 past the end. */
int glossary_entry(size_t i, const char **zh, const char **en);

#endif
