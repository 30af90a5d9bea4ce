/*
 * hook_server.c -- the prompt hook answered by a running `cairn mcp`; see
 * hook_server.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "embed.h"
#include "hook_server.h"
#include "json.h"
#include "vector.h"

/* sa for dir/hook.sock; 0 when the path does not fit a socket address. */
static int sock_addr(const char *dir, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	return snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir,
			HOOK_SOCK) < (int)sizeof(sa->sun_path);
}

void hook_server_open(cairn_db *db, struct hook_server *hs)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, tries;

	memset(hs, 0, sizeof(*hs));
	hs->fd = -1;
	if (!cairn_db_dir(db) || !sock_addr(cairn_db_dir(db), &sa))
		return;
	if (lstat(sa.sun_path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		/* a symbolic link or a file in its place: not ours to remove */
		fprintf(stderr, "cairn: not answering the hook: '%s' is not a "
			"socket (a symbolic link?); remove it\n", sa.sun_path);
		return;
	}
	for (tries = 0; tries < 2; tries++) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return;
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(fd);
		fd = -1;
		if (errno != EADDRINUSE)
			return;
		/* a live server answers a connect; a stale socket refuses */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
		    errno != ECONNREFUSED) {
			close(fd);
			return;
		}
		close(fd);
		fd = -1;
		if (unlink(sa.sun_path) != 0)
			return;
	}
	if (fd < 0)
		return;
	if (chmod(sa.sun_path, 0600) != 0 || lstat(sa.sun_path, &st) != 0 ||
	    listen(fd, 16) != 0) {
		close(fd);
		(void)unlink(sa.sun_path);
		return;
	}
	/* accept() must not block the MCP loop if the client gave up */
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	hs->fd = fd;
	hs->ino = st.st_ino;
	memcpy(hs->path, sa.sun_path, sizeof(hs->path));
}

void hook_server_warm(cairn_db *db)
{
	struct embedder *e = NULL;
	cairn_recall_opts o;
	cairn_result *res = NULL;

	if (vector_embedder(db, &e) != CAIRN_OK ||
	    (e && strcmp(embed_identity(e)->provider, "gguf") != 0))
		return; /* a model behind a network: not asked at start-up */
	memset(&o, 0, sizeof(o));
	o.k = 1;
	o.no_receipt = 1; /* writes nothing: no receipt, no last_seen */
	if (cairn_recall(db, "warm", &o, &res) == CAIRN_OK)
		cairn_result_free(res);
}

void hook_server_unlink(const struct hook_server *hs)
{
	struct stat st;

	if (hs->fd >= 0 && lstat(hs->path, &st) == 0 && st.st_ino == hs->ino)
		(void)unlink(hs->path);
}

void hook_server_close(struct hook_server *hs)
{
	hook_server_unlink(hs);
	if (hs->fd >= 0)
		close(hs->fd);
	hs->fd = -1;
}

/* Read one line (up to max bytes) from fd within ms; NULL if none came. */
static char *read_line(int fd, size_t max, long ms, size_t *len)
{
	struct sbuf sb = SBUF_INIT;
	char buf[8192];
	double end = util_now_ms() + (double)ms;

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		double left = end - util_now_ms();
		ssize_t got;
		char *nl;

		if (left <= 0 || poll(&p, 1, (int)left + 1) <= 0)
			break;
		got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break; /* a reply ends at the end of the stream */
		sbuf_add(&sb, buf, (size_t)got);
		if (sb.err || sb.len > max)
			break;
		nl = memchr(sb.buf, '\n', sb.len);
		if (nl) {
			sb.len = (size_t)(nl - sb.buf);
			sb.buf[sb.len] = '\0';
			*len = sb.len;
			return sbuf_detach(&sb, NULL);
		}
	}
	sbuf_release(&sb);
	return NULL;
}

/* The reply to one request, into r. */
static void answer(cairn_db *db, const char *req, size_t len, struct sbuf *r)
{
	struct hook_opts o;
	struct hook_result res;
	struct sbuf out = SBUF_INIT;
	struct json *j = NULL;
	size_t chars = 0;
	double num;
	int rc, spool;

	memset(&o, 0, sizeof(o));
	memset(&res, 0, sizeof(res));
	if (json_parse(req, len, &j, NULL, 0) != CAIRN_OK ||
	    j->type != JSON_OBJECT) {
		sbuf_adds(r, "{\"error\":\"the request is not a JSON object\"}");
		goto done;
	}
	o.budget = HOOK_DEFAULT_BUDGET;
	if (json_get_num(j, "budget", &num) && num >= 1 &&
	    num <= 1e9)
		o.budget = (size_t)num;
	if (json_get_num(j, "k", &num) && num >= 0 &&
	    num <= HOOK_MAX_K)
		o.k = (int)num;
	/* receipts as the hook process writes them: spooled (receipt.h) */
	spool = cairn_db_spool_receipts(db, 1);
	rc = hook_answer(db, json_get_str(j, "event"), json_get_str(j, "prompt"),
			 &o, &out, &res, &chars);
	cairn_db_spool_receipts(db, spool);
	if (rc) {
		sbuf_adds(r, "{\"error\":");
		json_add_strz(r, cairn_errmsg(db));
		sbuf_addc(r, '}');
		goto done;
	}
	sbuf_adds(r, "{\"out\":");
	json_add_str(r, out.buf ? out.buf : "", out.len);
	sbuf_addf(r, ",\"found\":%zu,\"injected\":%zu,\"chars\":%zu,"
		  "\"receipt\":", res.found, res.injected, chars);
	json_add_strz(r, res.receipt);
	sbuf_addc(r, '}');
done:
	sbuf_addc(r, '\n');
	json_free(j);
	sbuf_release(&out);
}

void hook_server_answer(cairn_db *db, struct hook_server *hs)
{
	struct sbuf r = SBUF_INIT;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	char *req;
	size_t len = 0;
	int c;

	c = accept4(hs->fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0 ||
	    cred.uid != geteuid()) {
		close(c);
		return;
	}
	req = read_line(c, HOOK_SERVER_MAX_REQUEST, HOOK_SERVER_READ_MS, &len);
	if (req)
		answer(db, req, len, &r);
	cairn_free(req);
	if (!r.err) /* a hook that gave up has its own answer by now */
		(void)util_send_all(c, r.buf, r.len);
	sbuf_release(&r);
	close(c);
}

int hook_server_ask(const char *dir, const char *req, size_t len,
		    long wait_ms, char **reply)
{
	struct sockaddr_un sa;
	struct stat st;
	size_t n = 0;
	int fd;

	*reply = NULL;
	if (wait_ms <= 0 || len > HOOK_SERVER_MAX_REQUEST ||
	    !sock_addr(dir, &sa))
		return -1;
	/* only our own socket: a symbolic link (a cloned repository could
	 * ship one to another server) or anyone else's socket is refused */
	if (lstat(sa.sun_path, &st) != 0)
		return -1;
	if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return -2;
	/* non-blocking connect: a server whose queue is full is not waited
	 * for; the request then fits the socket's buffer */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    util_send_all(fd, req, len) != 0 ||
	    util_send_all(fd, "\n", 1) != 0) {
		close(fd);
		return -1;
	}
	*reply = read_line(fd, HOOK_SERVER_MAX_REPLY, wait_ms, &n);
	close(fd);
	return *reply ? 0 : -1;
}
