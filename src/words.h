/*
 * words.h -- the spec's vocabulary, defined once (SPEC 3).
 *
 * Layer: the bottom (no SQLite, no allocation): X-macro lists that every
 * module takes its kinds, statuses and origins from -- the store's
 * validation, rank's kind table and default weights, seed's kinds, the
 * vector index's filters, the MCP tool schemas and the command's --help.
 * The SQL CHECK constraints of the shipped migrations cannot be generated
 * (a shipped migration is never edited): unit_store checks that they name
 * exactly these words, so a word added here without a migration fails.
 *
 * Each list is LIST(X, SEP): X(name, ...) once per word, SEP between two
 * words, in the order --help and the docs print them (never reorder).
 * The second column: for CAIRN_KINDS the kind's default weight (SPEC 5.2;
 * 1.0 is neutral; rank.weight.KIND in the store's meta overrides it), for
 * CAIRN_STATUSES 1 when default recall searches the status (SPEC 3:
 * accepted and unverified), for CAIRN_SCOPES the schema that holds it,
 * for CAIRN_ORIGINS nothing.
 */
#ifndef CAIRN_WORDS_H
#define CAIRN_WORDS_H

#define CAIRN_KINDS(X, SEP)                                                  \
	X(decision, 2.0) SEP X(adr, 2.0) SEP X(fact, 1.0) SEP                \
	X(rule, 1.0) SEP X(procedure, 1.0) SEP X(capability, 1.0) SEP        \
	X(finding, 1.0) SEP X(history, 1.0) SEP X(event, 1.0) SEP            \
	X(note, 1.0)

#define CAIRN_STATUSES(X, SEP)                                               \
	X(candidate, 0) SEP X(accepted, 1) SEP X(unverified, 1) SEP          \
	X(stale, 0) SEP X(superseded, 0) SEP X(historical, 0) SEP            \
	X(false, 0) SEP X(retired, 0) SEP X(rejected, 0)

/* workspace and machine records live in the workspace store, global ones
 * in the user's (the second column: the schema) */
#define CAIRN_SCOPES(X, SEP)                                                 \
	X(workspace, main) SEP X(global, global) SEP X(machine, main)

#define CAIRN_ORIGINS(X, SEP)                                                \
	X(file, ) SEP X(human, ) SEP X(agent, ) SEP X(capture, ) SEP         \
	X(reflection, )

/* ------------------------------------------------------------ expansions */

#define WORDS_COMMA_ ,
#define WORDS_STR_(w, x) #w
#define WORDS_JSON_(w, x) "\"" #w "\""

/* array initialiser: { WORDS_ARRAY(CAIRN_KINDS) } = "decision", "adr", ... */
#define WORDS_ARRAY(LIST) LIST(WORDS_STR_, WORDS_COMMA_)
/* one string, each word after a space: " decision adr ... note" */
#define WORDS_SPACED(LIST) LIST(" " WORDS_STR_, )
/* one string, the words joined by ", ": "decision, adr, ..., note" */
#define WORDS_LISTED(LIST) LIST(WORDS_STR_, ", ")
/* a JSON array of strings: "[\"decision\",\"adr\",...]" */
#define WORDS_JSON(LIST) "[" LIST(WORDS_JSON_, ",") "]"

#endif
