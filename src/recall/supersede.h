/*
 * supersede.h -- the finder of records a new one may replace
 * (cairn_supersede_suggest, cairn_suggestions_free in cairn.h): same kind
 * and scope, same key family when the record has a key, and a lexical
 * similarity of at least SUPERSEDE_SUGGEST_MIN, at most
 * SUPERSEDE_SUGGEST_MAX of them, same family first.
 *
 * Layer: recall (it recalls); the link itself is lifecycle.h's.
 */
#ifndef CAIRN_SUPERSEDE_H
#define CAIRN_SUPERSEDE_H

#include "cairn.h"

#define SUPERSEDE_SUGGEST_MAX 10   /* replacements listed at most */
#define SUPERSEDE_SUGGEST_MIN 0.5  /* lexical similarity a suggestion needs */

#endif /* CAIRN_SUPERSEDE_H */
