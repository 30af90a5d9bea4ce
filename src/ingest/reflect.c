/*
 * reflect.c -- reflection (seed 003): lasting statements in a
 * session's messages become candidates: the user's imperative rules
 * (English and Chinese), stated decisions, and facts about the environment.
 * Also the optional external command (--llm-cmd) and the strict check of
 * what it prints.
 *
 * Layer: beside capture.c (which walks the transcript and writes); on json
 * and util only. Pure functions over text, except reflect_run_cmd().
 *
 * Holds: reflect_text() (sentences -> rule/decision/fact with a slug key),
 * reflect_llm_parse() (the strict check of one --llm-cmd line) and
 * reflect_run_cmd() (a command with input, output and a deadline).
 *
 * How: a message is cut into sentences (. ! ? 。！？；; and line breaks);
 * each sentence is tried against the rules, then decisions, then facts
 * (first match wins). Rules come only from the user's words; an assistant's
 * decision needs a stated reason ("because", "since", 因為). Questions are
 * never statements. The key is the kind plus a slug of the sentence's
 * words (English stop words dropped, Chinese kept), so the same sentence
 * said again gives the same key.
 *
 * Must never: match inside a question, take a one-off instruction ("don't
 * change that file") for a rule, run the external command through anything
 * but /bin/sh -c with a deadline, block on a command that does not read its
 * input, or accept its output without checking every field.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "internal.h"
#include "json.h"

#define SENT_MIN 6    /* bytes: shorter sentences say nothing lasting */
#define SENT_MAX 400  /* bytes: longer ones are paragraphs, not statements */
#define SLUG_MAX 48   /* bytes of a key's slug, cut between words */
#define SLUG_WORDS 5  /* significant words in a key's slug */
#define SLUG_CJK 12   /* CJK characters in a key's slug */

/* ============================================================ helpers */

/* Does s start with p (ASCII case-insensitive)? */
static int starts(const char *s, const char *p)
{
	return strncasecmp(s, p, strlen(p)) == 0;
}

/* Does lower-case text l contain any of the phrases (| separated)? */
static int has_any(const char *l, const char *list)
{
	char w[64];
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, "|");

		snprintf(w, sizeof(w), "%.*s", (int)n, p);
		if (n && strstr(l, w))
			return 1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* Does l start with any of the phrases (| separated)? Returns its length. */
static size_t starts_any(const char *l, const char *list)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, "|");

		if (n && strncmp(l, p, n) == 0)
			return n;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* ============================================================ slugs */

static const char *const stop[] = {
	"the", "a", "an", "to", "of", "please", "you", "we", "our", "us",
	"should", "will", "ll", "is", "are", "be", "it", "this", "that",
	"and", "or", "so", "just", "also", "really", "i", "me", "my", "let",
	"s", "re", "for", "in", "on", "at", "with", "as", "by", "from",
	"ok", "okay", "remember", "important", "note", "then", "here", "there",
	"lets", "were", "ill", "youre", "its", "thats", "decided", "decide",
	"think", "guess", "believe", "now", "going", "forward", "future",
	"agreed", "has", "have", "been", "was", "do", "does", "all", "time",
	"every", "can", "would", "could", "need", "needs", "want", "them",
	"they", "which", "when", "before", "after", "because", "since",
	NULL
};

static int is_stop(const char *w, size_t n)
{
	size_t i;

	for (i = 0; stop[i]; i++)
		if (strlen(stop[i]) == n && strncmp(stop[i], w, n) == 0)
			return 1;
	return 0;
}

/* Is p (3 bytes) a CJK ideograph (U+3400..U+9FFF, U+F900..U+FAFF)? */
static int cjk_ideograph(const unsigned char *p)
{
	unsigned c;

	if (!(p[0] >= 0xE0 && p[0] < 0xF0) || (p[1] & 0xC0) != 0x80 ||
	    (p[2] & 0xC0) != 0x80)
		return 0;
	c = ((unsigned)(p[0] & 0x0F) << 12) | ((unsigned)(p[1] & 0x3F) << 6) |
	    (p[2] & 0x3F);
	return (c >= 0x3400 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF);
}

/*
 * kind ":" slug of a sentence into key (size bytes): its first SLUG_WORDS
 * significant words (ASCII letters and digits, lower case, stop words
 * dropped) and at most SLUG_CJK Chinese characters, joined by '-', at
 * most SLUG_MAX bytes, cut between words. Anything else (dashes, quotes,
 * emoji, other scripts) only separates words, so a key holds
 * [a-z0-9._'-] and CJK ideographs: "rule:never-push-main-directly-always".
 * A sentence with no such word gets 12 hex digits of its hash.
 */
static void make_key(const char *kind, const char *s, char *key, size_t size)
{
	size_t len, start, words = 0, cjk = 0;
	const unsigned char *p = (const unsigned char *)s;
	int in_run = 0; /* 1: the last character read was an ideograph */

	snprintf(key, size, "%s:", kind);
	len = start = strlen(key);
	if (size > start + SLUG_MAX + 1)
		size = start + SLUG_MAX + 1;
	while (*p) {
		if (isalnum(*p)) {
			const unsigned char *q = p;
			char wbuf[64];
			size_t n, i, wl = 0;

			in_run = 0;
			while (isalnum(*q) || *q == '\'' || *q == '.' || *q == '_') {
				if ((*q == '.' || *q == '\'') && !isalnum(q[1]))
					break;
				q++;
			}
			n = (size_t)(q - p);
			/* the word lower-cased, apostrophes dropped */
			for (i = 0; i < n && wl + 1 < sizeof(wbuf); i++)
				if (p[i] != '\'')
					wbuf[wl++] = (char)tolower(p[i]);
			wbuf[wl] = '\0';
			p = q;
			if (is_stop(wbuf, wl) || words >= SLUG_WORDS)
				continue;
			/* a whole word or none: the key is cut between words */
			if (len + (len > start) + wl >= size)
				break;
			if (len > start && key[len - 1] != '-')
				key[len++] = '-';
			memcpy(key + len, wbuf, wl);
			len += wl;
			words++;
		} else if (cjk_ideograph(p)) {
			/* a run of ideographs is one word: taken whole while
			 * the key holds at most SLUG_CJK of them (a first run
			 * that is longer: its first SLUG_CJK) */
			if (!in_run) {
				const unsigned char *q = p;
				size_t run = 0;

				while (cjk_ideograph(q)) {
					q += 3;
					run++;
				}
				if (cjk > 0 && cjk + run > SLUG_CJK)
					cjk = SLUG_CJK; /* no more of them */
			}
			if (cjk < SLUG_CJK) {
				int join = len > start &&
					   ((unsigned char)key[len - 1] & 0x80);

				if (len + 4 >= size)
					break;
				if (len > start && !join && key[len - 1] != '-')
					key[len++] = '-';
				memcpy(key + len, p, 3);
				len += 3;
				cjk++;
			}
			p += 3;
			in_run = 1;
			/* a run of ideographs is one word: a break after it */
			if (!cjk_ideograph(p) && len > start &&
			    key[len - 1] != '-' && len + 1 < size)
				key[len++] = '-';
		} else {
			size_t want = *p >= 0xC0 ? util_u8len(*p) : 1, l = 1;

			in_run = 0;
			/* never past the end of a cut sequence */
			while (l < want && (p[l] & 0xC0) == 0x80)
				l++;
			p += l;
			if (len > start && key[len - 1] != '-' && len + 1 < size)
				key[len++] = '-';
		}
	}
	while (len > start && key[len - 1] == '-')
		len--;
	key[len] = '\0';
	if (len == start) {
		char hex[65];

		util_sha256_hex(s, strlen(s), hex);
		snprintf(key + start, size - start, "%.12s", hex);
	}
}

/* ============================================================ titles */

/*
 * Filler a person leaves out of a title, at the start of a sentence (case
 * ignored; a space, comma or colon after it): "Also, we decided to use
 * Redis" is titled "Use Redis".
 */
static const char *const filler_en[] = {
	"also", "so", "and", "but", "oh", "ok", "okay", "well", "btw", "fyi",
	"by the way", "one more thing", "please", "just", "note that", "note",
	"remember that", "remember to", "remember", "important", "i think that",
	"i think", "i guess", "i believe", "in my opinion",
	"we decided that", "we decided to", "we've decided to",
	"we have decided to", "we decided", "we agreed that", "we agreed to",
	"we're going to", "we are going to", "we will", "we'll", "we should",
	"from now on", "going forward", "in the future", NULL
};

/* The same for Chinese (no separator needed). */
static const char *const filler_zh[] = {
	"另外", "還有", "还有", "我們決定了", "我们决定了", "我們決定", "我们决定",
	"決定", "决定", "從現在開始", "从现在开始", "以後", "以后", "今後", "今后",
	"記住", "记住", "記得", "记得", "請", "请", "我覺得", "我觉得", "我認為",
	"我认为", "提醒一下", "注意", NULL
};

/* Trailing filler: "Run the tests first from now on". */
static const char *const filler_tail[] = {
	" from now on", " going forward", " in the future", NULL
};

/* Skip separators after a filler: spaces, ',', ':', '-', '，', '：', '、'. */
static const char *skip_sep(const char *p)
{
	for (;;) {
		if (*p == ' ' || *p == ',' || *p == ':' || *p == '-')
			p++;
		else if (!strncmp(p, "\xEF\xBC\x8C", 3) ||
			 !strncmp(p, "\xEF\xBC\x9A", 3) ||
			 !strncmp(p, "\xE3\x80\x81", 3))
			p += 3;
		else
			return p;
	}
}

/*
 * The title of a statement s (the sentence as said): leading filler and
 * lasting markers dropped, a final full stop dropped, the first letter
 * upper case. s itself when that would leave less than three bytes.
 */
static void make_title(const char *s, char *out, size_t size)
{
	const char *p = s;
	size_t n, i;
	int again = 1;

	while (again) {
		again = 0;
		for (i = 0; filler_en[i]; i++) {
			size_t l = strlen(filler_en[i]);

			if (!strncasecmp(p, filler_en[i], l) &&
			    (p[l] == ' ' || p[l] == ',' || p[l] == ':')) {
				p = skip_sep(p + l);
				again = 1;
				break;
			}
		}
		for (i = 0; !again && filler_zh[i]; i++) {
			size_t l = strlen(filler_zh[i]);

			if (!strncmp(p, filler_zh[i], l) && p[l]) {
				p = skip_sep(p + l);
				again = 1;
			}
		}
	}
	n = strlen(p);
	while (n > 0 && (p[n - 1] == '.' || p[n - 1] == ' '))
		n--;
	if (n >= 3 && !memcmp(p + n - 3, "\xE3\x80\x82", 3)) /* 。 */
		n -= 3;
	for (i = 0; filler_tail[i]; i++) {
		size_t l = strlen(filler_tail[i]);

		if (n > l && !strncasecmp(p + n - l, filler_tail[i], l)) {
			n -= l;
			while (n > 0 && (p[n - 1] == ',' || p[n - 1] == ' '))
				n--;
			break;
		}
	}
	if (n < 3) {
		p = s;
		n = strlen(s);
	}
	if (n >= size)
		n = size - 1;
	while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
		n--;
	memcpy(out, p, n);
	out[n] = '\0';
	if (out[0] >= 'a' && out[0] <= 'z')
		out[0] = (char)(out[0] - 'a' + 'A');
}

/* ============================================================ rules */

/* English lead-ins stripped before matching. */
static const char lead_en[] =
	"please |pls |and |also, |also |but |so, |so |oh and |ok, |ok |okay, |okay |"
	"remember: |remember, |remember that |remember to |important: |"
	"important - |note: |rule: |fyi: |fyi |btw |just |one more thing: |";

/* Chinese lead-ins. */
static const char lead_zh[] =
	"請|请|記得|记得|注意：|注意，|注意|還有，|还有，|還有|还有|另外，|另外|"
	"提醒一下，|提醒一下|拜託|拜托|";

/* Lasting markers: a sentence carrying one is meant beyond this task. */
static const char lasting_en[] = "from now on|going forward|in the future|every time|at all times|";
static const char lasting_zh[] = "以後|以后|從現在開始|从现在开始|今後|今后|每次|永遠|永远|";

/* Is the (lower-case) English sentence a lasting rule? */
static int rule_en(const char *l)
{
	int lasting = has_any(l, lasting_en);
	size_t k = 0;

	if (starts(l, "never mind") || starts(l, "nevermind"))
		return 0;
	if (starts_any(l, "never |always |don't ever |do not ever |dont ever |"
		       "you must |we must |must |you should always |"
		       "you should never |we should always |we should never |"
		       "we always |we never |under no circumstances|"
		       "make sure to always |make sure you always |"
		       "make sure you never |make sure to never |"
		       "you may never |no one may |nobody may |nobody should |"
		       "no one should |it is forbidden |it's forbidden |"))
		return 1;
	if (lasting) {
		/* "from now on I'll handle it": the speaker's own plan */
		const char *m = l;

		while (*m && (k = starts_any(m, lasting_en)) == 0)
			m++;
		m += k;
		while (*m == ',' || *m == ' ')
			m++;
		return !starts_any(m, "i |i'll |i will |i'm |i am |im |ill ");
	}
	k = starts_any(l, "don't |do not |dont |stop |avoid ");
	if (k && has_any(l + k, "prod|production|main branch| main | master|"
			 "without |before |ever |again|in this repo|"
			 "in this project|in this codebase|anymore|any more|"
			 "force-push|force push|--force|--no-verify| live "))
		return 1;
	return 0;
}

/* Chinese rule: an imperative at the start, or a strong marker anywhere. */
static int rule_zh(const char *s)
{
	if (strstr(s, "不要緊") || strstr(s, "不要紧") || strstr(s, "要不要") ||
	    strstr(s, "不一定"))
		return 0;
	if (starts_any(s, "不要|別再|别再|別動|别动|別碰|别碰|別用|别用|別把|别把|"
		       "別在|别在|不准|不許|不许|不可以|不能|禁止|千萬|千万|絕對|"
		       "绝对|永遠|永远|一定要|務必|务必|必須|必须|切勿|請勿|请勿|"
		       "總是|总是|每次|嚴禁|严禁|"))
		return 1;
	if (has_any(s, "禁止|務必|务必|切勿|請勿|请勿|一定要|必須|必须|永遠不要|"
		    "永远不要|千萬不要|千万不要|絕對不要|绝对不要|絕對不能|绝对不能|"
		    "不准|不許|不许|嚴禁|严禁|"))
		return 1;
	return has_any(s, lasting_zh) && has_any(s, "不要|要|別|别|不能|都");
}

/* ============================================================ decisions */

static int reason_en(const char *l)
{
	return has_any(l, " because | since | so that | as it | as they |"
		       " instead of | rather than | due to |, because|, since ");
}

static int reason_zh(const char *s)
{
	return has_any(s, "因為|因为|由於|由于|所以|以便|比較|比较|");
}

static int decision_en(const char *l, int from_user)
{
	if (has_any(l, "haven't decided|have not decided|not decided|undecided|"
		    "if we decide|before we decide|can't decide|cannot decide|"
		    "should we|do we|would we"))
		return 0;
	if (has_any(l, "let's go with |lets go with |let us go with |"
		    "we're going with |we are going with |we'll go with |"
		    "we will go with |we decided |we've decided |we have decided |"
		    "decision: |the decision is |we chose |we picked |"
		    "let's stick with |we'll stick with |we will stick with |"
		    "we settled on |"))
		return from_user || reason_en(l);
	if (has_any(l, "let's use |lets use |we'll use |we will use |"
		    "we're going to use |we are going to use |we use |"
		    "we'll switch to |we will switch to |let's switch to |"
		    "we're switching to |we are switching to |"))
		return reason_en(l) || (from_user && has_any(l, "going forward|from now on|for all |for every |"));
	return 0;
}

static int decision_zh(const char *s, int from_user)
{
	if (has_any(s, "還沒決定|还没决定|沒決定|没决定|未決定|未决定|你決定|你决定|"
		    "你來決定|你来决定|決定不了|决定不了|再決定|再决定|由你|決定權|决定权|"
		    "要不要|是否"))
		return 0;
	if (has_any(s, "決定|决定|定案|拍板"))
		return from_user || reason_zh(s);
	if (has_any(s, "我們用|我们用|就用|改用|採用|采用|選用|选用|統一用|统一用|"
		    "我們選|我们选|選擇用|选择用"))
		return reason_zh(s) || (from_user && has_any(s, "以後|以后|統一|统一"));
	return 0;
}

/* ============================================================ facts */

/* Nouns that make a statement about the environment. */
static const char env_nouns[] =
	"db|database|server|host|staging|production|prod |cluster|bucket|"
	"registry|endpoint|api |redis|postgres|mysql|mongo|queue|cache|vpn|"
	"proxy|dns|domain|runner|instance|vm |machine|backend|frontend|gateway|"
	"broker|kafka|elasticsearch|cdn|mirror|grafana|sentry|dashboard|"
	"service|port|ci |jenkins|smtp|ldap|bastion|";

/* A concrete token: a host name, URL, address, port or version. */
static int concrete(const char *s)
{
	const char *p;

	for (p = s; *p; p++) {
		if (isdigit((unsigned char)*p))
			return 1;
		if ((*p == '.' || *p == ':' || *p == '/') &&
		    isalnum((unsigned char)p[1]) && p > s &&
		    isalnum((unsigned char)p[-1]))
			return 1;
	}
	return 0;
}

static int fact_en(const char *l)
{
	const char *v;
	static const char *const verbs[] = {
		" is at ", " are at ", " lives at ", " is reachable at ",
		" is hosted on ", " is hosted at ", " is located at ",
		" is available at ", " runs on ", " is running on ",
		" listens on ", " is on port ", " is served from ",
		" points to ", " resolves to ", " is behind ", NULL
	};
	size_t i;

	if (has_any(l, "i think|maybe|probably|might be|not sure"))
		return 0;
	for (i = 0; verbs[i]; i++) {
		v = strstr(l, verbs[i]);
		if (v) {
			char subj[160];
			size_t n = (size_t)(v - l) < sizeof(subj) - 2 ? (size_t)(v - l) : sizeof(subj) - 2;

			memcpy(subj, l, n);
			subj[n] = ' ';
			subj[n + 1] = '\0';
			if (has_any(subj, env_nouns) && concrete(v + strlen(verbs[i])))
				return 1;
		}
	}
	/* "<the build server> is <a host name or address>", nothing after it */
	v = strstr(l, " is ");
	if (v) {
		const char *t = v + 4;
		size_t tl = strcspn(t, " ");

		if (t[tl] == ' ' && t[tl + 1] == '\0') {
			char subj[160];
			size_t n = (size_t)(v - l) < sizeof(subj) - 2 ? (size_t)(v - l) : sizeof(subj) - 2;

			memcpy(subj, l, n);
			subj[n] = ' ';
			subj[n + 1] = '\0';
			if (has_any(subj, env_nouns) && (memchr(t, '.', tl) || memchr(t, ':', tl)) &&
			    concrete(t))
				return 1;
		}
	}
	/* requirements with a version: "Node 20 is required", "requires Python 3.11" */
	if ((strstr(l, " is required") || strstr(l, " are required") ||
	     strstr(l, "requires ") || strstr(l, " only works with ") ||
	     strstr(l, " needs ")) &&
	    has_any(l, "node|python|java|jdk|go |golang|rust|ruby|php|npm|gcc|"
		    "clang|cmake|postgres|docker|openssl|glibc|xcode|kernel|"
		    "terraform|kubectl|helm") &&
	    concrete(l))
		return 1;
	return 0;
}

static int fact_zh(const char *s, const char *l)
{
	if (has_any(s, "可能|也許|也许|大概|好像|應該是|应该是"))
		return 0;
	if (has_any(s, "資料庫|数据库|伺服器|服务器|主機|主机|集群|叢集|環境|环境|") ||
	    has_any(l, env_nouns)) {
		const char *m[] = { "位於", "位于", "的位址是", "的地址是", "網址是",
				    "网址是", "跑在", "部署在", "架在", "在 ", "是 ",
				    "連到", "连到", "端口是", "埠是", NULL };
		size_t i;

		for (i = 0; m[i]; i++) {
			const char *p = strstr(s, m[i]);

			if (p && concrete(p))
				return 1;
		}
	}
	if (has_any(s, "需要|要求|必須用|必须用|只能用") &&
	    has_any(l, "node|python|java|jdk|go |rust|ruby|php|npm|gcc|clang|"
		    "cmake|postgres|docker|openssl") && concrete(s))
		return 1;
	return 0;
}

/* ============================================================ sentences */

/* Is the sentence a question? */
static int question(const char *s, size_t n, char term)
{
	if (term == '?')
		return 1;
	if (n >= 3 && (!memcmp(s + n - 3, "嗎", 3) || !memcmp(s + n - 3, "吗", 3) ||
		       !memcmp(s + n - 3, "呢", 3)))
		return 1;
	return starts(s, "should ") || starts(s, "can ") || starts(s, "could ") ||
	       (starts(s, "do ") && !starts(s, "do not ")) || starts(s, "does ") || starts(s, "why ") ||
	       starts(s, "how ") || starts(s, "what ") || starts(s, "is ") ||
	       starts(s, "are ") || starts(s, "would ") || starts(s, "shall ");
}

/* Try one sentence (s, n bytes, trimmed). */
static size_t one_sentence(const char *s, size_t n, char term, int from_user,
			   unsigned what, struct reflect_stmt *out)
{
	char raw[SENT_MAX + 1], low[SENT_MAX + 8];
	const char *r = raw, *l;
	size_t i, k;
	int cjk = 0;

	if (n < SENT_MIN || n > SENT_MAX)
		return 0;
	memcpy(raw, s, n);
	raw[n] = '\0';
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)raw[i]);
	low[n] = ' '; /* a trailing blank lets " word " phrases match at the end */
	low[n + 1] = '\0';
	for (i = 0; i < n; i++)
		if ((unsigned char)raw[i] >= 0xE0) {
			cjk = 1;
			break;
		}
	if (question(raw, n, term))
		return 0;
	if (!cjk) {
		/* "Never ever", "Always!": too short to say what */
		size_t words = 0;

		for (i = 0; i < n; i++)
			if (raw[i] != ' ' && (i == 0 || raw[i - 1] == ' '))
				words++;
		if (words < 3)
			return 0;
	}
	/* lead-ins: "Please never ...", "請不要 ..." */
	l = low;
	for (;;) {
		k = starts_any(l, lead_en);
		if (!k)
			k = starts_any(l, lead_zh);
		if (!k)
			break;
		l += k;
		r += k;
		while (*l == ' ' || *l == ',') {
			l++;
			r++;
		}
	}
	if (!*r)
		return 0;
	memset(out, 0, sizeof(*out));
	if (from_user && (what & CAPTURE_RULES) &&
	    (rule_en(l) || (cjk && rule_zh(r)))) {
		snprintf(out->kind, sizeof(out->kind), "rule");
	} else if ((what & CAPTURE_REFLECT) &&
		   (decision_en(l, from_user) || (cjk && decision_zh(r, from_user)))) {
		snprintf(out->kind, sizeof(out->kind), "decision");
	} else if ((what & CAPTURE_REFLECT) &&
		   (fact_en(l) || (cjk && fact_zh(r, l)))) {
		snprintf(out->kind, sizeof(out->kind), "fact");
	} else {
		return 0;
	}
	make_title(r, out->title, sizeof(out->title));
	make_key(out->kind, out->title, out->key, sizeof(out->key));
	snprintf(out->text, sizeof(out->text), "%s", raw);
	/* the sentence as said, with its full stop back */
	if (term && term != '\n' && strlen(out->text) + 1 < sizeof(out->text)) {
		size_t tl = strlen(out->text);

		out->text[tl] = term == '!' ? '!' : '.';
		out->text[tl + 1] = '\0';
		if (cjk && (unsigned char)raw[n - 1] >= 0x80)
			out->text[tl] = '\0';
	}
	return 1;
}

/* Keep out[found] unless its key is already among the first found. */
static size_t keep_new(struct reflect_stmt *out, size_t found)
{
	size_t i;

	/* the same statement twice in one message counts once */
	for (i = 0; i < found; i++)
		if (!strcmp(out[i].key, out[found].key))
			return found;
	return found + 1;
}

/* Find lasting statements in one message (capture.h). */
size_t reflect_text(const char *text, int from_user, unsigned what,
		    struct reflect_stmt *out, size_t max)
{
	const char *p = text;
	size_t found = 0;

	if (!text || !max)
		return 0;
	if (!what)
		what = CAPTURE_ALL;
	while (*p && found < max) {
		const char *e = p;
		char term = 0;
		size_t adv = 0, n;
		int in_code = 0;

		/* the end of the sentence */
		while (*e) {
			if (*e == '`')
				in_code = !in_code;
			if (*e == '\n') {
				term = '\n';
				adv = 1;
				break;
			}
			if (!in_code && (*e == '!' || *e == '?' || *e == ';') ) {
				term = *e;
				adv = 1;
				break;
			}
			if (!in_code && *e == '.' && (e[1] == ' ' || e[1] == '\0' || e[1] == '\n')) {
				term = '.';
				adv = 1;
				break;
			}
			if (((unsigned char)*e == 0xE3 || (unsigned char)*e == 0xEF) &&
			    e[1] && e[2] &&
			    (!memcmp(e, "。", 3) || !memcmp(e, "！", 3) ||
			     !memcmp(e, "？", 3) || !memcmp(e, "；", 3))) {
				term = !memcmp(e, "？", 3) ? '?' :
				       !memcmp(e, "！", 3) ? '!' : '.';
				adv = 3;
				break;
			}
			e++;
		}
		n = (size_t)(e - p);
		/* trim, and markdown bullets and emphasis */
		while (n > 0 && (isspace((unsigned char)*p) || *p == '-' ||
				 *p == '*' || *p == '>' || *p == '#')) {
			p++;
			n--;
		}
		while (n > 0 && (isspace((unsigned char)p[n - 1]) || p[n - 1] == '*'))
			n--;
		if (n > 0 && one_sentence(p, n, term, from_user, what, &out[found])) {
			const char *a = NULL, *q;

			found = keep_new(out, found);
			/* two facts joined: "X is at H and Node 20 is required" */
			for (q = p; q + 5 <= p + n; q++)
				if (!memcmp(q, " and ", 5))
					a = q;
			if (a && found < max &&
			    !strcmp(out[found - 1].kind, "fact") &&
			    one_sentence(a + 5, (size_t)(p + n - a - 5), term,
					 from_user, CAPTURE_REFLECT, &out[found]) &&
			    !strcmp(out[found].kind, "fact"))
				found = keep_new(out, found);
		}
		p = e + adv;
		if (!*e)
			break;
	}
	return found;
}

/* ============================================================ --llm-cmd */

/* One line from an --llm-cmd, checked strictly (capture.h). */
int reflect_llm_parse(const char *line, size_t len,
		      struct reflect_llm_cand *out, char *err, size_t errsize)
{
	static const char *const kinds[] = { "rule", "decision", "fact",
					     "capability", "procedure", NULL };
	struct json *j = NULL, *m;
	const char *kind, *key, *title, *body;
	size_t i, kl;
	int rc = CAIRN_INVALID;

	memset(out, 0, sizeof(*out));
	if (json_parse(line, len, &j, NULL, 0) != CAIRN_OK || j->type != JSON_OBJECT) {
		snprintf(err, errsize, "not a JSON object");
		goto out;
	}
	for (m = j->child; m; m = m->next) {
		if (strcmp(m->key, "kind") && strcmp(m->key, "key") &&
		    strcmp(m->key, "title") && strcmp(m->key, "body")) {
			snprintf(err, errsize, "unknown member \"%.40s\"", m->key);
			goto out;
		}
		if (m->type != JSON_STRING) {
			snprintf(err, errsize, "\"%s\" must be a string", m->key);
			goto out;
		}
	}
	kind = json_get_str(j, "kind");
	key = json_get_str(j, "key");
	title = json_get_str(j, "title");
	body = json_get_str(j, "body");
	if (!kind || !key || !title || !body) {
		snprintf(err, errsize, "kind, key, title and body are required");
		goto out;
	}
	for (i = 0; kinds[i] && strcmp(kinds[i], kind); i++)
		;
	if (!kinds[i]) {
		snprintf(err, errsize, "kind must be rule, decision, fact, "
			 "capability or procedure");
		goto out;
	}
	kl = strlen(key);
	if (kl < 3 || kl > 160 || strncmp(key, kind, strlen(kind)) ||
	    key[strlen(kind)] != ':' || !key[strlen(kind) + 1]) {
		snprintf(err, errsize, "key must be \"%s:...\" of 3 to 160 bytes", kind);
		goto out;
	}
	for (i = 0; i < kl; i++)
		if ((unsigned char)key[i] <= ' ' || key[i] == 0x7f) {
			snprintf(err, errsize, "key holds a blank or control character");
			goto out;
		}
	if (!*title || strlen(title) > 200 || strpbrk(title, "\n\r")) {
		snprintf(err, errsize, "title must be one line of 1 to 200 bytes");
		goto out;
	}
	if (!*body || strlen(body) > 4000) {
		snprintf(err, errsize, "body must be 1 to 4000 bytes");
		goto out;
	}
	if (util_utf8_invalid_at(key, kl) >= 0 ||
	    util_utf8_invalid_at(title, strlen(title)) >= 0 ||
	    util_utf8_invalid_at(body, strlen(body)) >= 0) {
		snprintf(err, errsize, "invalid UTF-8");
		goto out;
	}
	out->kind = util_strdup(kind);
	out->key = util_strdup(key);
	out->title = util_strdup(title);
	out->body = util_strdup(body);
	if (!out->kind || !out->key || !out->title || !out->body) {
		cairn_free(out->kind);
		cairn_free(out->key);
		cairn_free(out->title);
		cairn_free(out->body);
		memset(out, 0, sizeof(*out));
		rc = CAIRN_NOMEM;
		snprintf(err, errsize, "out of memory");
		goto out;
	}
	rc = CAIRN_OK;
out:
	json_free(j);
	return rc;
}

/* Run an external command with input and a deadline (capture.h). */
int reflect_run_cmd(const char *cmd, const char *in, size_t len,
		    int timeout_ms, char **out, size_t *outlen, char *err,
		    size_t errsize)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, status = 0, rc = CAIRN_OK;
	struct sigaction ign, old;
	struct sbuf sb = SBUF_INIT;
	size_t sent = 0;
	double deadline = util_now_ms() + (timeout_ms > 0 ? timeout_ms : CAPTURE_LLM_TIMEOUT_MS);
	pid_t pid;
	int killed = 0, out_open = 1;

	*out = NULL;
	*outlen = 0;
	err[0] = '\0';
	if (pipe(pin) != 0 || pipe(pout) != 0) {
		snprintf(err, errsize, "pipe: %s", strerror(errno));
		if (pin[0] >= 0) {
			close(pin[0]);
			close(pin[1]);
		}
		return CAIRN_IO;
	}
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errsize, "fork: %s", strerror(errno));
		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		sigaction(SIGPIPE, &old, NULL);
		return CAIRN_IO;
	}
	if (pid == 0) {
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		close(pin[0]);
		close(pin[1]);
		close(pout[0]);
		close(pout[1]);
		signal(SIGPIPE, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pin[0]);
	close(pout[1]);
	fcntl(pin[1], F_SETFL, fcntl(pin[1], F_GETFL) | O_NONBLOCK);
	if (len == 0) {
		close(pin[1]);
		pin[1] = -1;
	}
	while (out_open) {
		struct pollfd fds[2];
		int nf = 0, left = (int)(deadline - util_now_ms()), r;

		if (left <= 0) {
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		fds[nf].fd = pout[0];
		fds[nf].events = POLLIN;
		fds[nf++].revents = 0;
		if (pin[1] >= 0) {
			fds[nf].fd = pin[1];
			fds[nf].events = POLLOUT;
			fds[nf++].revents = 0;
		}
		r = poll(fds, (nfds_t)nf, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (nf > 1 && (fds[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			ssize_t w = write(pin[1], in + sent, len - sent);

			if (w > 0)
				sent += (size_t)w;
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				sent = len; /* it stopped reading: fine */
			if (sent >= len) {
				close(pin[1]);
				pin[1] = -1;
			}
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			char buf[8192];
			ssize_t got = read(pout[0], buf, sizeof(buf));

			if (got > 0) {
				if (sb.len + (size_t)got <= CAPTURE_LLM_MAX_OUT)
					sbuf_add(&sb, buf, (size_t)got);
			} else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
				out_open = 0;
			}
		}
	}
	if (pin[1] >= 0)
		close(pin[1]);
	close(pout[0]);
	if (!killed) {
		/* stdout closed: give it until the deadline to exit */
		while (waitpid(pid, &status, WNOHANG) == 0) {
			if (util_now_ms() > deadline) {
				kill(pid, SIGKILL);
				killed = 1;
				waitpid(pid, &status, 0);
				break;
			}
			usleep(2000);
		}
	} else {
		waitpid(pid, &status, 0);
	}
	sigaction(SIGPIPE, &old, NULL);
	if (sb.err) {
		sbuf_release(&sb);
		snprintf(err, errsize, "out of memory");
		return CAIRN_NOMEM;
	}
	if (killed) {
		snprintf(err, errsize, "the command took longer than %d ms and was stopped",
			 timeout_ms > 0 ? timeout_ms : CAPTURE_LLM_TIMEOUT_MS);
		rc = CAIRN_ERROR;
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, errsize, "the command failed (exit status %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		rc = CAIRN_ERROR;
	}
	*outlen = sb.len;
	*out = sbuf_detach(&sb, NULL);
	if (!*out) {
		*out = util_strdup("");
		if (!*out)
			return CAIRN_NOMEM;
	}
	return rc;
}
