/*
 * bench_util.h -- helpers shared by the benchmark programs of bench/
 * (not part of libcairn).
 */
#ifndef CAIRN_BENCH_UTIL_H
#define CAIRN_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

#include <openssl/evp.h>

struct FTW;

/* Seconds on the monotonic clock. */
double bench_now_s(void);
/* The CPU model from /proc/cpuinfo, or "unknown". */
void bench_cpu_model(char *out, size_t size);
/* Print s as a JSON string. */
void bench_json_str(FILE *f, const char *s);
/* Finish a digest into 64 lower-case hex characters. */
void bench_sha_hex(EVP_MD_CTX *ctx, char out[65]);
/* The 1-minute load average, or -1 when /proc/loadavg cannot be read. */
double bench_loadavg(void);
/* qsort() comparison of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);
/* nftw() callback that removes each entry (FTW_DEPTH | FTW_PHYS). */
int bench_rm_entry(const char *path, const struct stat *st, int flag,
	     struct FTW *ftw);

#endif /* CAIRN_BENCH_UTIL_H */
