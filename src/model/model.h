/*
 * model.h -- the model catalogue and `cairn model pull`'s downloads
 * (model.c), behind the cairn_model_* functions of cairn.h.
 *
 * Layer: beside embed.h, on libcurl (loaded with dlopen() on the first
 * download), libcrypto and json.h. Nothing in the library calls it on its
 * own: only the commands that a person runs (cairn model pull, cairn setup
 * claude-code --model) download anything.
 */
#ifndef CAIRN_MODEL_H
#define CAIRN_MODEL_H

#include <stddef.h>

#define MODEL_NAME_MAX 128     /* bytes of a model name */
#define MODEL_TRIES 4          /* transfers of one pull: the first + 3 resumes */
#define MODEL_BACKOFF_MS 300   /* wait before the first resume; doubles */
#define MODEL_CONNECT_MS 15000 /* connect timeout per transfer */
#define MODEL_STALL_S 60       /* a transfer under 1 byte/s this long is cut */
#define MODEL_MANIFEST_MAX ((size_t)64 << 10) /* bytes of NAME.json */

/*
 * Is s a valid model name: 1..MODEL_NAME_MAX-1 bytes of letters, digits
 * and . _ - , not starting with '.' or '-'? (1 or 0)
 */
int model_name_valid(const char *s);

/* SHA-256 of the file at path into hex[65]; 0, or -1 with errno set. */
int model_sha256_file(const char *path, char hex[65]);

#endif /* CAIRN_MODEL_H */
