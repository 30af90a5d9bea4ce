/*
 * bench_util.c -- helpers shared by the benchmark programs: monotonic time,
 * the machine's CPU model, a JSON string writer, SHA-256 hex digests and
 * recursive removal of a temporary directory.
 */
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

void bench_cpu_model(char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(out, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && p) {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, size, "%s", p);
			break;
		}
	}
	fclose(f);
}

/* Print s as a JSON string (the few characters that need escaping). */
void bench_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

double bench_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_sha_hex(EVP_MD_CTX *ctx, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	EVP_DigestFinal_ex(ctx, md, &len);
	for (i = 0; i < len && i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	out[2 * i] = '\0';
}

int bench_rm_entry(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

double bench_loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double v = -1;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
