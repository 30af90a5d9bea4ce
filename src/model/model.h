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
/*
 * A transfer slower than MODEL_LOW_SPEED_BPS on average over MODEL_STALL_S
 * seconds is cut (and resumed, MODEL_TRIES in all): a server trickling 1
 * byte a second held a pull for ever (issue 31). 4 kB/s is a 37 MB model in
 * 2.5 hours: slower than any network that can fetch a model at all.
 * CAIRN_PULL_STALL_S sets the window (tests: 1 s).
 */
#define MODEL_LOW_SPEED_BPS 4096
#define MODEL_STALL_S 60
/*
 * The size bound of a download, without --max-size: a catalogue model's
 * listed size + 25 % (the sizes are rounded, and a repository may replace
 * a file by a slightly larger one), a URL's MODEL_MAX_URL_BYTES. An endless
 * answer was written on until the disk was full (issue 31: 1 GiB and
 * counting).
 */
#define MODEL_SIZE_MARGIN 0.25
#define MODEL_MAX_URL_BYTES (4LL << 30) /* 4 GiB: bge-m3 in f32 is 2.3 GB */
#define MODEL_VALIDATOR_MAX 256         /* bytes of an ETag or HTTP date kept */
#define MODEL_MANIFEST_MAX ((size_t)64 << 10) /* bytes of NAME.json */

/*
 * Is s a valid model name: 1..MODEL_NAME_MAX-1 bytes of letters, digits
 * and . _ - , not starting with '.' or '-'? (1 or 0)
 */
int model_name_valid(const char *s);

/* SHA-256 of the file at path into hex[65]; 0, or -1 with errno set. */
int model_sha256_file(const char *path, char hex[65]);

#endif /* CAIRN_MODEL_H */
