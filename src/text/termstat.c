/*
 * termstat.c -- the files of document counts and row lengths recall keeps
 * beside the store; see termstat.h.
 *
 * Counts: text, one line each: a header "cairnTS1 REVISION NDOCS DEV INO",
 * then "DF TERM" (the term last: it is raw bytes up to the newline; terms
 * with a newline in them are not kept).
 *
 * Lengths: struct len_header (host byte order), then n uint32 values.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "termstat.h"

#define TS_MAGIC "cairnTS1"

static int header_of(const struct termstat_key *k, char *buf, size_t size)
{
	return snprintf(buf, size, TS_MAGIC " %lld %lld %" PRIu64 " %" PRIu64
			"\n", k->revision, k->ndocs, k->dev, k->ino);
}

/* Parse the header at p (up to end); 0 and *k when it is one. */
static int header_parse(const char *p, const char *end, struct termstat_key *k)
{
	char line[160];
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t n;
	unsigned long long dev, ino;
	char tail;

	if (!nl || (n = (size_t)(nl - p)) >= sizeof(line))
		return -1;
	memcpy(line, p, n);
	line[n] = '\0';
	if (sscanf(line, TS_MAGIC " %lld %lld %llu %llu%c", &k->revision,
		   &k->ndocs, &dev, &ino, &tail) != 4)
		return -1;
	k->dev = dev;
	k->ino = ino;
	return 0;
}

static int key_eq(const struct termstat_key *a, const struct termstat_key *b)
{
	return a->revision == b->revision && a->ndocs == b->ndocs &&
	       a->dev == b->dev && a->ino == b->ino;
}

size_t termstat_get(const char *path, const struct termstat_key *k, size_t n,
		    char *const *text, const size_t *len, long long *df)
{
	struct termstat_key fk;
	size_t flen = 0, set = 0, want = 0, i;
	char *buf, *p, *end;
	int fd;

	for (i = 0; i < n; i++)
		want += df[i] < 0;
	if (want == 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	buf = util_read_fd(fd, TERMSTAT_MAX, &flen);
	close(fd);
	if (!buf)
		return 0;
	end = buf + flen;
	if (header_parse(buf, end, &fk) != 0 || !key_eq(&fk, k)) {
		cairn_free(buf);
		return 0;
	}
	p = memchr(buf, '\n', flen) + 1;
	while (p < end && set < want) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *sp, *q;
		long long v;

		if (!nl)
			break; /* torn by a killed writer */
		sp = memchr(p, ' ', (size_t)(nl - p));
		if (sp && sp > p) {
			v = strtoll(p, &q, 10);
			if (q == sp && v >= 0) {
				size_t tl = (size_t)(nl - sp - 1);

				for (i = 0; i < n; i++)
					if (df[i] < 0 && len[i] == tl &&
					    memcmp(text[i], sp + 1, tl) == 0) {
						df[i] = v;
						set++;
					}
			}
		}
		p = nl + 1;
	}
	cairn_free(buf);
	return set;
}

void termstat_put(const char *path, const struct termstat_key *k, size_t n,
		  char *const *text, const size_t *len, const long long *df,
		  const unsigned char *put)
{
	struct termstat_key fk;
	struct sbuf sb = SBUF_INIT;
	char head[160], first[160];
	struct stat st;
	ssize_t got;
	size_t i;
	int fd, fresh = 0;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &st) != 0)
		goto out; /* another writer: its counts will do */
	got = pread(fd, first, sizeof(first) - 1, 0);
	if (got < 0)
		goto out;
	if (header_parse(first, first + got, &fk) == 0 && fk.dev == k->dev &&
	    fk.ino == k->ino && fk.revision > k->revision)
		goto out; /* counted at an older snapshot than the file's */
	if (header_parse(first, first + got, &fk) != 0 || !key_eq(&fk, k) ||
	    (unsigned long long)st.st_size > TERMSTAT_MAX)
		fresh = 1;
	if (fresh) {
		header_of(k, head, sizeof(head));
		sbuf_adds(&sb, head);
	}
	for (i = 0; i < n; i++) {
		if (!put[i] || df[i] < 0 || len[i] == 0 ||
		    len[i] > TERMSTAT_MAX_TERM || memchr(text[i], '\n', len[i]))
			continue;
		sbuf_addf(&sb, "%lld ", df[i]);
		sbuf_add(&sb, text[i], len[i]);
		sbuf_addc(&sb, '\n');
	}
	if (sb.err || (!fresh && sb.len == 0))
		goto out;
	if (fresh) {
		if ((ftruncate(fd, 0) != 0 ||
		     pwrite(fd, sb.buf, sb.len, 0) != (ssize_t)sb.len) &&
		    ftruncate(fd, 0) != 0) {
			/* left as it is: a torn header is no key */
		}
	} else if (lseek(fd, 0, SEEK_END) >= 0) {
		(void)util_write_all(fd, sb.buf, sb.len);
	}
out:
	sbuf_release(&sb);
	close(fd); /* releases the lock */
}

/* ------------------------------------------------------------- lengths */

#define TL_MAGIC "cairnTL1"

struct len_header {
	char magic[8];
	int64_t revision, ndocs;
	uint64_t dev, ino, n;
};

int termstat_lengths_open(const char *path, const struct termstat_key *k,
			  struct termstat_lengths *out)
{
	struct len_header h;
	struct stat st;
	void *map;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(h) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, TL_MAGIC, 8) != 0 || h.revision != k->revision ||
	    h.ndocs != k->ndocs || h.dev != k->dev || h.ino != k->ino ||
	    h.n > TERMSTAT_MAX_ROWID ||
	    (uint64_t)st.st_size != sizeof(h) + h.n * sizeof(uint32_t)) {
		close(fd);
		return -1;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	out->map = map;
	out->maplen = (size_t)st.st_size;
	out->len = (const uint32_t *)((const char *)map + sizeof(h));
	out->n = (size_t)h.n;
	return 0;
}

void termstat_lengths_close(struct termstat_lengths *l)
{
	if (l->map)
		munmap(l->map, l->maplen);
	memset(l, 0, sizeof(*l));
}

int termstat_lengths_write(const char *path, const struct termstat_key *k,
			   const uint32_t *len, size_t n)
{
	struct len_header h;
	char tmp[4300], dir[4200], *slash;
	int fd, ok;

	if (n > TERMSTAT_MAX_ROWID ||
	    snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir) ||
	    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >=
		    (int)sizeof(tmp))
		return -1;
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		util_sweep_tmp(dir, path);
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TL_MAGIC, 8);
	h.revision = k->revision;
	h.ndocs = k->ndocs;
	h.dev = k->dev;
	h.ino = k->ino;
	h.n = n;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -1;
	ok = util_write_all(fd, &h, sizeof(h)) == 0 &&
	     util_write_all(fd, len, n * sizeof(*len)) == 0;
	if (close(fd) != 0)
		ok = 0;
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}
