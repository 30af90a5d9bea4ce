/*
 * cli_model.c -- `cairn model pull | list | rm`: models by
 * name from the built-in catalogue, downloaded only when a person asks,
 * and the catalogue names that `cairn reindex --model` and `cairn setup
 * claude-code --model` take.
 *
 * Layer: top (the cairn command), on the cairn_model_* functions of
 * cairn.h alone.
 * Output: one line per model or a JSON value (--json) on stdout; the
 * progress bar of a pull on stderr, only when stderr is a terminal.
 *
 * Must never: download anything but what the command names.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"

#define EXIT_OK 0
#define EXIT_ERR 1
#define RECOMMEND_SAMPLE 2000 /* records looked at by list --recommend */
#define BAR_WIDTH 30

static const char pull_help[] =
	"usage: cairn model pull NAME|URL [--sha256 HEX] [--name NAME]\n"
	"                        [--max-size SIZE] [--json]\n"
	"\n"
	"Download a GGUF model: NAME from the catalogue (cairn model list) or\n"
	"an http(s) URL of a .gguf file, into $XDG_CACHE_HOME/cairn/models\n"
	"(~/.cache/cairn/models; $CAIRN_MODEL_DIR overrides). Catalogue names\n"
	"come from Hugging Face ($HF_ENDPOINT sets a mirror). An interrupted\n"
	"pull resumes where it stopped; the file is written as NAME.gguf.part\n"
	"and renamed when complete; it resumes only when the server confirms\n"
	"the file is unchanged (If-Range with the ETag or Last-Modified kept\n"
	"in NAME.gguf.part.if-range), else it starts again. An answer longer\n"
	"than the bound (a catalogue model's listed size + 25 %, 4 GiB for a\n"
	"URL, or --max-size) is cut and removed, and a transfer slower than\n"
	"4 kB/s over 60 s ($CAIRN_PULL_STALL_S) is cut and resumed.\n"
	"Its SHA-256 is checked against --sha256,\n"
	"or recorded at the first download (NAME.json) and checked on every\n"
	"later pull; it is part of every vector's identity. A bar shows the\n"
	"progress on a terminal. Nothing else in cairn downloads anything.\n"
	"Then: cairn reindex --model NAME.\n"
	"\n"
	"options:\n"
	"      --sha256 HEX  the file must hash to this (64 hex digits)\n"
	"      --name NAME   a URL's model: keep it as NAME (default: the file\n"
	"                    name less .gguf)\n"
	"      --max-size SIZE  the most bytes the file may have (K, M, G:\n"
	"                    KiB, MiB, GiB)\n"
	"      --json        one JSON object on stdout\n"
	"\n"
	"exit status: 0 done, 1 error (404, wrong hash, no network, disk\n"
	"full, too big), 2 usage\n";

static const char list_help[] =
	"usage: cairn model list [--recommend] [--json]\n"
	"\n"
	"The catalogue: each model's name, kind (embedding or reranker),\n"
	"download size, dimensions, pooling, languages, whether it is pulled,\n"
	"and its source (Hugging Face repository and file); then models pulled\n"
	"from a URL. --recommend looks at the current workspace's records\n"
	"(how many are in Chinese) and $LANG, and names the models to pull.\n"
	"\n"
	"exit status: 0 done, 1 error, 2 usage\n";

static const char rm_help[] =
	"usage: cairn model rm NAME\n"
	"\n"
	"Remove a pulled model: NAME.gguf, its record NAME.json and a partial\n"
	"download. Vectors made with it stay in the stores; recall and\n"
	"reindex then say the model file is missing.\n"
	"\n"
	"exit status: 0 removed, 1 error or not installed, 2 usage\n";

/* ------------------------------------------------------------- progress */

struct bar {
	const char *name;
	double t0;
	int shown;
};

static void human(long long n, char *buf, size_t size)
{
	if (n >= 1000000000LL)
		snprintf(buf, size, "%.2f GB", n / 1e9);
	else if (n >= 1000000)
		snprintf(buf, size, "%.1f MB", n / 1e6);
	else if (n >= 1000)
		snprintf(buf, size, "%.0f kB", n / 1e3);
	else
		snprintf(buf, size, "%lld B", n);
}

static void on_bar(void *user, long long have, long long total)
{
	struct bar *b = user;
	char h[32], t[32];
	double el = (util_now_ms() - b->t0) / 1e3;
	int i, fill = total > 0 ? (int)(BAR_WIDTH * (double)have / total) : 0;

	human(have, h, sizeof(h));
	human(total, t, sizeof(t));
	if (fill > BAR_WIDTH)
		fill = BAR_WIDTH;
	fprintf(stderr, "\r%s [", b->name);
	for (i = 0; i < BAR_WIDTH; i++)
		fputc(i < fill ? '#' : '.', stderr);
	if (total > 0)
		fprintf(stderr, "] %3d%% %s of %s", (int)(100.0 * have / total),
			h, t);
	else
		fprintf(stderr, "] %s", h);
	if (el > 0.5)
		fprintf(stderr, ", %.1f MB/s", have / 1e6 / el);
	fputs("\033[K", stderr);
	fflush(stderr);
	b->shown = 1;
}

/* ----------------------------------------------------------------- pull */

int cli_model_pull_run(const char *what, const char *sha, const char *name,
		       long long max_size, int quiet_ok, char *path,
		       size_t pathsize)
{
	cairn_pull_opts o;
	cairn_pull_result r;
	struct bar b;
	char sz[32];
	int rc;

	memset(&o, 0, sizeof(o));
	memset(&b, 0, sizeof(b));
	o.sha256 = sha;
	o.name = name;
	o.max_size = max_size;
	b.name = strrchr(what, '/') ? strrchr(what, '/') + 1 : what;
	b.t0 = util_now_ms();
	if (isatty(2)) {
		o.progress = on_bar;
		o.user = &b;
	}
	rc = cairn_model_pull(what, &o, &r);
	if (b.shown)
		fputs("\n", stderr);
	if (rc)
		return cli_fail("model pull: %s", r.error);
	if (path)
		snprintf(path, pathsize, "%s", r.path);
	human(r.size, sz, sizeof(sz));
	if (cli_state.json && !quiet_ok) {
		struct sbuf sb = SBUF_INIT;

		sbuf_adds(&sb, "{\"name\":");
		json_add_strz(&sb, r.name);
		sbuf_adds(&sb, ",\"path\":");
		json_add_strz(&sb, r.path);
		sbuf_adds(&sb, ",\"source\":");
		json_add_strz(&sb, r.url);
		sbuf_addf(&sb, ",\"sha256\":\"%s\",\"size\":%lld,\"pinned\":%s,"
			       "\"already\":%s,\"transfers\":%d,"
			       "\"resumed_from\":%lld}",
			  r.sha256, r.size, r.pinned ? "true" : "false",
			  r.already ? "true" : "false", r.transfers,
			  r.resumed_from);
		cli_print_json(&sb);
		sbuf_release(&sb);
	} else if (r.already) {
		printf("%s: already pulled (%s, sha256 %s%s)\n  %s\n", r.name,
		       sz, r.sha256, r.pinned ? ", as pinned" : "", r.path);
	} else {
		printf("%s: pulled %s%s, sha256 %s%s\n  %s\n", r.name, sz,
		       r.resumed_from ? " (resumed)" : "", r.sha256,
		       r.pinned ? " (as pinned)" : " (recorded)", r.path);
	}
	return EXIT_OK;
}

/* SIZE of --max-size: bytes, or with K, M, G (KiB, MiB, GiB); 0 or -1. */
static int parse_max_size(const char *s, long long *out)
{
	char *end = NULL;
	long long v, mul = 1;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || v <= 0)
		return -1;
	if (*end == 'K' || *end == 'k')
		mul = 1LL << 10;
	else if (*end == 'M' || *end == 'm')
		mul = 1LL << 20;
	else if (*end == 'G' || *end == 'g')
		mul = 1LL << 30;
	else if (*end)
		return -1;
	if (*end && end[1])
		return -1;
	if (v > (1LL << 50) / mul)
		return -1; /* a petabyte is no model */
	*out = v * mul;
	return 0;
}

static int model_pull(int argc, char **argv)
{
	enum { O_SHA = 256, O_NAME, O_JSON, O_MAX };
	static const struct option lo[] = { { "sha256", 1, 0, O_SHA },
					    { "name", 1, 0, O_NAME },
					    { "max-size", 1, 0, O_MAX },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const char *sha = NULL, *name = NULL;
	long long max_size = 0;
	int c;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_SHA: sha = optarg; break;
		case O_NAME: name = optarg; break;
		case O_MAX:
			if (parse_max_size(optarg, &max_size))
				return cli_usage("model pull", "--max-size takes "
						 "a size in bytes, or with K, "
						 "M or G (KiB, MiB, GiB)");
			break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(pull_help);
		default: return cli_usage("model pull", "unknown option");
		}
	}
	if (optind + 1 != argc)
		return cli_usage("model pull", "give one NAME or URL");
	return cli_model_pull_run(argv[optind], sha, name, max_size, 0, NULL,
				  0);
}

/* ----------------------------------------------------------------- list */

/* Does the UTF-8 sequence at s (n bytes) encode a Han character? */
static int is_han(const unsigned char *s, size_t n)
{
	unsigned cp;

	if (n != 3)
		return 0;
	cp = ((unsigned)(s[0] & 0x0f) << 12) | ((unsigned)(s[1] & 0x3f) << 6) |
	     (s[2] & 0x3f);
	return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf);
}

/* Is a text mostly Chinese: at least as many Han characters as Latin words? */
static int mostly_han(const char *t)
{
	const unsigned char *s = (const unsigned char *)t;
	long han = 0, words = 0;
	int in_word = 0;

	while (s && *s) {
		size_t n = util_u8len(*s);

		if (n == 1) {
			int letter = (*s >= 'a' && *s <= 'z') ||
				     (*s >= 'A' && *s <= 'Z');

			if (letter && !in_word)
				words++;
			in_word = letter;
		} else {
			in_word = 0;
			han += is_han(s, n);
		}
		while (n-- && *s)
			s++;
	}
	return han > 0 && han >= words;
}

/* The share of the workspace's records that are mostly Chinese; -1: no store. */
static double han_share(long *sampled)
{
	cairn_filter f;
	cairn_record **v = NULL;
	cairn_open_opts o;
	cairn_db *db = NULL;
	char *dir = NULL;
	size_t n = 0, i;
	long han = 0;
	double share = -1;

	*sampled = 0;
	if (cairn_workspace_find(NULL, &dir) != CAIRN_OK)
		return -1;
	memset(&o, 0, sizeof(o));
	if (cairn_db_open(dir, &o, &db) == CAIRN_OK) {
		memset(&f, 0, sizeof(f));
		f.limit = RECOMMEND_SAMPLE;
		if (cairn_record_list(db, &f, &v, &n) == CAIRN_OK) {
			for (i = 0; i < n; i++) {
				han += mostly_han(v[i]->title) ||
				       mostly_han(v[i]->body);
			}
			share = n ? (double)han / (double)n : 0;
			*sampled = (long)n;
			cairn_record_list_free(v, n);
		}
	}
	cairn_db_close(db);
	cairn_free(dir);
	return share;
}

static const char *user_locale(void)
{
	const char *v[] = { "LC_ALL", "LC_MESSAGES", "LANG" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		const char *s = getenv(v[i]);

		if (s && *s)
			return s;
	}
	return NULL;
}

static void entry_json(struct sbuf *sb, const cairn_model_entry *e,
		       int installed, const char *path)
{
	sbuf_adds(sb, "{\"name\":");
	json_add_strz(sb, e->name);
	sbuf_adds(sb, ",\"kind\":");
	json_add_strz(sb, e->kind);
	sbuf_adds(sb, ",\"repo\":");
	json_add_strz(sb, e->repo);
	sbuf_adds(sb, ",\"file\":");
	json_add_strz(sb, e->file);
	sbuf_addf(sb, ",\"size\":%lld,\"dims\":%d,\"pooling\":", e->size,
		  e->dims);
	json_add_strz(sb, e->pooling);
	sbuf_adds(sb, ",\"query_instruction\":");
	json_add_strz(sb, e->query_instruction);
	sbuf_adds(sb, ",\"passage_instruction\":");
	json_add_strz(sb, e->passage_instruction);
	sbuf_adds(sb, ",\"languages\":");
	json_add_strz(sb, e->languages);
	sbuf_adds(sb, ",\"note\":");
	json_add_strz(sb, e->note);
	sbuf_addf(sb, ",\"installed\":%s,\"path\":", installed ? "true" : "false");
	if (installed)
		json_add_strz(sb, path);
	else
		sbuf_adds(sb, "null");
	sbuf_addc(sb, '}');
}

/* Pulled models that are not in the catalogue (from a URL): NAME.json files. */
static void list_others(struct sbuf *sb, int json, int *first)
{
	char dir[4096], path[4300];
	struct dirent *de;
	DIR *d;

	if (cairn_model_dir(dir, sizeof(dir)) != CAIRN_OK)
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char name[256], sha[65];
		size_t n = strlen(de->d_name);

		if (n <= 5 || n - 5 >= sizeof(name) ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		memcpy(name, de->d_name, n - 5);
		name[n - 5] = '\0';
		if (cairn_model_lookup(name) ||
		    cairn_model_installed(name, dir, path, sizeof(path), sha) !=
			    CAIRN_OK)
			continue;
		if (json) {
			sbuf_adds(sb, *first ? "{\"name\":" : ",{\"name\":");
			json_add_strz(sb, name);
			sbuf_adds(sb, ",\"kind\":null,\"installed\":true,"
				      "\"path\":");
			json_add_strz(sb, path);
			sbuf_addf(sb, ",\"sha256\":\"%s\"}", sha);
		} else {
			if (*first)
				sbuf_adds(sb, "\npulled from a URL:\n");
			sbuf_addf(sb, "  %-22s %s\n", name, path);
		}
		*first = 0;
	}
	closedir(d);
}

static int model_list(int argc, char **argv)
{
	enum { O_RECOMMEND = 256, O_JSON };
	static const struct option lo[] = { { "recommend", 0, 0, O_RECOMMEND },
					    { "json", 0, 0, O_JSON },
					    { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	const cairn_model_entry *cat;
	struct sbuf sb = SBUF_INIT;
	char dir[4096];
	size_t n, i;
	int c, rec = 0, first = 1;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_RECOMMEND: rec = 1; break;
		case O_JSON: cli_state.json = 1; break;
		case 'h': return cli_help(list_help);
		default: return cli_usage("model list", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage("model list", "unexpected argument '%s'",
				 argv[optind]);
	if (rec) {
		const char *rr, *why, *m, *loc = user_locale();
		long sampled;
		double share = han_share(&sampled);

		m = cairn_model_recommend(share < 0 ? 0 : share, loc, &rr, &why);
		if (cli_state.json) {
			sbuf_adds(&sb, "{\"embedding\":");
			json_add_strz(&sb, m);
			sbuf_adds(&sb, ",\"reranker\":");
			json_add_strz(&sb, rr);
			sbuf_adds(&sb, ",\"why\":");
			json_add_strz(&sb, why);
			sbuf_addf(&sb, ",\"records\":%ld,\"chinese_share\":",
				  sampled);
			if (share < 0)
				sbuf_adds(&sb, "null");
			else
				sbuf_addf(&sb, "%.3f", share);
			sbuf_adds(&sb, ",\"locale\":");
			json_add_strz(&sb, loc);
			sbuf_addc(&sb, '}');
			cli_print_json(&sb);
		} else {
			if (share >= 0)
				printf("records: %ld looked at, %.0f%% mostly "
				       "Chinese; locale %s\n",
				       sampled, 100 * share, loc ? loc : "unset");
			else
				printf("no workspace store here; locale %s\n",
				       loc ? loc : "unset");
			printf("embedding: %s (%s)\nreranker:  %s\n", m, why, rr);
			printf("then: cairn model pull %s && cairn reindex "
			       "--model %s\n", m, m);
		}
		sbuf_release(&sb);
		return EXIT_OK;
	}
	cat = cairn_model_catalogue(&n);
	if (cairn_model_dir(dir, sizeof(dir)) != CAIRN_OK)
		dir[0] = '\0';
	if (cli_state.json)
		sbuf_addc(&sb, '[');
	else
		sbuf_addf(&sb, "%-22s %-9s %8s %5s %-5s %-15s %s\n", "NAME",
			  "KIND", "SIZE", "DIMS", "POOL", "LANGUAGES",
			  "PULLED");
	for (i = 0; i < n; i++) {
		char path[4300], sz[32];
		int inst = dir[0] && cairn_model_installed(cat[i].name, dir, path,
							  sizeof(path),
							  NULL) == CAIRN_OK;

		if (cli_state.json) {
			if (i)
				sbuf_addc(&sb, ',');
			entry_json(&sb, &cat[i], inst, path);
			continue;
		}
		human(cat[i].size, sz, sizeof(sz));
		sbuf_addf(&sb, "%-22s %-9s %8s %5d %-5s %-15s %s\n",
			  cat[i].name, cat[i].kind, sz, cat[i].dims,
			  cat[i].pooling, cat[i].languages, inst ? "yes" : "-");
		sbuf_addf(&sb, "  %s; huggingface.co/%s %s\n", cat[i].note,
			  cat[i].repo, cat[i].file);
	}
	first = cli_state.json ? 0 : 1;
	list_others(&sb, cli_state.json, &first);
	if (cli_state.json) {
		sbuf_addc(&sb, ']');
		cli_print_json(&sb);
	} else {
		if (dir[0])
			sbuf_addf(&sb, "\nmodel directory: %s\n", dir);
		fputs(sbuf_str(&sb), stdout);
	}
	sbuf_release(&sb);
	return EXIT_OK;
}

/* ------------------------------------------------------------------- rm */

static int model_rm(int argc, char **argv)
{
	static const struct option lo[] = { { "help", 0, 0, 'h' },
					    { 0, 0, 0, 0 } };
	char err[512];
	int c, rc;

	optind = 0;
	while ((c = cli_getopt(argc, argv, "h", lo)) != -1) {
		switch (c) {
		case 'h': return cli_help(rm_help);
		default: return cli_usage("model rm", "unknown option");
		}
	}
	if (optind + 1 != argc)
		return cli_usage("model rm", "give one NAME");
	rc = cairn_model_remove(argv[optind], NULL, err, sizeof(err));
	if (rc)
		return cli_fail("model rm: %s", err[0] ? err : cairn_errstr(rc));
	printf("%s: removed\n", argv[optind]);
	return EXIT_OK;
}

/* ------------------------------------------------------------- resolve */

int cli_model_resolve(const char *model, char *path, size_t size,
		      const cairn_model_entry **entry)
{
	const cairn_model_entry *e = cairn_model_lookup(model);
	int rc;

	*entry = e;
	if (!e && (strchr(model, '/') || access(model, F_OK) == 0))
		return 0; /* a file */
	rc = cairn_model_installed(model, NULL, path, size, NULL);
	if (rc == CAIRN_OK)
		return 1;
	if (!e)
		return 0; /* not a name we know: treated as a file */
	cli_fail("model '%s' is not pulled yet: run 'cairn model pull %s' "
		 "(%lld MB from huggingface.co/%s)",
		 model, model, e->size / 1000000, e->repo);
	return -1;
}

/* -------------------------------------------------------------- setup */

int cli_model_setup_check(const char *dir, const char *model)
{
	const cairn_model_entry *e = cairn_model_lookup(model);

	(void)dir; /* a missing store is made by setup before the model step */
	if (!e && strncmp(model, "https://", 8) != 0 &&
	    strncmp(model, "http://", 7) != 0)
		return cli_usage("setup", "--model: '%s' is not in the "
				 "catalogue (cairn model list) nor a URL",
				 model);
	if (e && strcmp(e->kind, "embedding") != 0)
		return cli_usage("setup", "--model: '%s' is a %s, not an "
				 "embedding model", model, e->kind);
	return 0;
}

int cli_model_setup(const char *dir, const char *model, const char *probes)
{
	char path[4300], *rargv[6];
	const char *name = model;
	const char *const *probe;
	size_t nprobe;
	cairn_calibration cal;
	cairn_db *db = NULL;
	int rc, ret;

	printf("model 1/3: pull %s\n", model);
	fflush(stdout);
	ret = cli_model_pull_run(model, NULL, NULL, 0, 0, path, sizeof(path));
	if (ret)
		return ret;
	if (!cairn_model_lookup(model)) {
		/* a URL: reindex by the file it was kept as */
		name = path;
	}
	if (strcmp(dir, ".") != 0 && chdir(dir) != 0)
		return cli_fail("cannot enter '%s'", dir);
	printf("model 2/3: reindex every record with %s\n", model);
	fflush(stdout);
	rargv[0] = (char *)"reindex";
	rargv[1] = (char *)"--model";
	rargv[2] = (char *)name;
	rargv[3] = (char *)"--yes";
	rargv[4] = NULL;
	if (!cairn_model_lookup(model)) {
		rargv[1] = (char *)"--provider";
		rargv[2] = (char *)"gguf";
		rargv[3] = (char *)"--model";
		rargv[4] = (char *)name;
		rargv[5] = (char *)"--yes";
	}
	optind = 0;
	ret = cmd_reindex(cairn_model_lookup(model) ? 4 : 6, rargv);
	if (ret)
		return ret;
	if (probes) {
		printf("model 3/3: calibrate with '%s'\n", probes);
		fflush(stdout);
		rargv[0] = (char *)"calibrate";
		rargv[1] = (char *)"--probes";
		rargv[2] = (char *)probes;
		optind = 0;
		return cmd_calibrate(3, rargv);
	}
	probe = cairn_default_probes(&nprobe);
	printf("model 3/3: calibrate the cosine floor with %zu built-in "
	       "off-topic questions\n", nprobe);
	fflush(stdout);
	if (cli_open(&db, 0))
		return EXIT_ERR;
	rc = cairn_calibrate_cosine(db, probe, nprobe, &cal);
	if (rc) {
		ret = cli_db_fail(db, rc);
	} else if (cal.has_cosine) {
		printf("cosine floor: %.2f (your own questions are better: "
		       "cairn calibrate --probes FILE)\n", cal.cosine_floor);
	} else {
		printf("cosine floor: not measured (no record has a vector "
		       "yet)\n");
	}
	cairn_db_close(db);
	return ret;
}

int cli_model_sub(int argc, char **argv)
{
	if (strcmp(argv[1], "pull") == 0)
		return model_pull(argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return model_list(argc - 1, argv + 1);
	if (strcmp(argv[1], "rm") == 0)
		return model_rm(argc - 1, argv + 1);
	return -1;
}
