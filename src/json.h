/*
 * json.h -- a small JSON reader (DOM with limits) and writer helpers.
 *
 * Layer: bottom, beside util. Used by import/export, eval, the MCP server
 * and the hook. Untrusted input never aborts: every error is returned with a
 * message that names the byte offset.
 */
#ifndef CAIRN_JSON_H
#define CAIRN_JSON_H

#include <stddef.h>

#include "internal.h"

#define JSON_MAX_DEPTH 64              /* nesting limit: deeper input is CAIRN_INVALID */
#define JSON_MAX_INPUT ((size_t)64 << 20) /* 64 MiB: larger input is CAIRN_TOOBIG */

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

/*
 * One node. Arrays and objects hold their children as a singly linked list
 * (child -> next -> ...); object members carry their key.
 */
struct json {
	enum json_type type; /* what this node is */
	char *key;           /* member name inside an object, else NULL */
	size_t keylen;       /* bytes in key */
	char *str;           /* JSON_STRING: decoded UTF-8, NUL-terminated;
				JSON_NUMBER: NULL, or for an integer over 2^53
				(which a double cannot hold exactly) its text
				as written, which the writer writes back */
	size_t len;          /* STRING, NUMBER: bytes of str; ARRAY/OBJECT:
				child count */
	double num;          /* JSON_NUMBER: the value */
	struct json *child;  /* ARRAY/OBJECT: first child */
	struct json *next;   /* next sibling */
};

/*
 * Parse len bytes of JSON text (exactly one value, surrounding whitespace
 * allowed). On success *out owns the tree (free with json_free). On error
 * returns CAIRN_INVALID (syntax, invalid UTF-8, bad escape, lone surrogate,
 * depth over JSON_MAX_DEPTH), CAIRN_TOOBIG (len over JSON_MAX_INPUT) or
 * CAIRN_NOMEM, and writes "... at byte N" into err (if errsize > 0).
 */
int json_parse(const char *text, size_t len, struct json **out, char *err,
	       size_t errsize);

/* Free a node and everything under it (not its siblings), iteratively. NULL is a no-op. */
void json_free(struct json *j);

/* Member of an object by key, or NULL (also when obj is not an object). */
const struct json *json_get(const struct json *obj, const char *key);
/* The string of a JSON_STRING node, else NULL. */
const char *json_str(const struct json *j);
/* Member `key` of obj as a string, else NULL. */
const char *json_get_str(const struct json *obj, const char *key);
/* Member `key` as a number: returns 1 and sets *out, or 0 if absent/not a number. */
int json_get_num(const struct json *obj, const char *key, double *out);

/* ------------------------------------------------------------ writer */

/* Append s (len bytes of UTF-8) as a quoted, escaped JSON string. */
void json_add_str(struct sbuf *sb, const char *s, size_t len);
/* Same for a NUL-terminated string; NULL writes `null`. */
void json_add_strz(struct sbuf *sb, const char *s);
/* Append a number: integers exactly, others with up to 17 significant digits. */
void json_add_num(struct sbuf *sb, double v);
/*
 * A record's provenance as one JSON object: {"path","heading","line",
 * "commit","session","tool"} (absent fields null). The CLI's --json and
 * the MCP server write the same object.
 */
void json_add_source(struct sbuf *sb, const cairn_record *r);
/* Append the tree j as compact JSON (keys in their original order). */
void json_add_tree(struct sbuf *sb, const struct json *j);

#endif /* CAIRN_JSON_H */
