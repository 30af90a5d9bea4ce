/*
 * recall_bench.c -- recall latency, load rate and index size of cairn
 * against a plain SQLite FTS5 table, in one run (STYLE.md 8).
 *
 * Layer: a program on the public API (cairn.h) and SQLite; nothing of
 * src/ is called directly. Built and run by bench/run (make bench).
 *
 * What it does:
 *   1. corpus:    N records (--n, default 100000) generated from a fixed
 *                 seed: engineering notes in English (a few thousand
 *                 English-like words, Zipf-distributed, plus real
 *                 function and engineering words at the head) and ~15%
 *                 in Chinese (a word list below), a third of those mixed
 *                 with English words. Titles 2-8 words, bodies 20-120.
 *   2. queries:   Q (--q, default 300): 80% answerable (3-8 distinct words
 *                 of one record's own text; that record is the "source"),
 *                 every RANDOM_EVERY-th query random words from the whole
 *                 vocabulary.
 *   3. candidate: a cairn store in a temporary directory, records written
 *                 with cairn_record_write in batches of BATCH; each query
 *                 through cairn_recall(k=10, no_receipt=1).
 *   4. baseline:  a plain SQLite database, fts5(title, body,
 *                 tokenize='porter unicode61'), the same records, each
 *                 query an OR of its double-quoted words, ORDER BY
 *                 bm25(t) LIMIT 10 (statement prepared once), rowids
 *                 first and then the ten winners' text; and a naive form
 *                 that selects the text in the ranked query (timed and
 *                 hashed, not in the ratios).
 *   5. timing:    both stores closed after loading and reopened; each
 *                 query then runs on every engine in turn (rotating order),
 *                 so load on a shared machine slows them alike.
 *   6. report:    load time and rate, per-query wall time (p50, p95,
 *                 mean after WARMUP untimed rounds), database bytes after
 *                 close (WAL checkpointed), the share of answerable
 *                 queries whose source is in the top 10, the share of
 *                 hits that are boosted kinds, SHA-256 hashes of
 *                 the corpus, the queries and each engine's result ids,
 *                 and the candidate/baseline ratios; JSON to --out.
 *
 * --keep leaves the two stores in their temporary directory; --reuse DIR
 * queries the stores a --keep run of the same --n/--seed left there, with
 * no load (its load figures are 0), for before/after timing of a change;
 * --dump-queries FILE writes the query texts, one a line.
 *
 * Determinism: the corpus, queries and record ids ("r0000042") depend on
 * --seed only, so the result hashes change exactly when an engine's
 * answers change. Timings, of course, do not hash.
 *
 * Must never: write outside its temporary directory, --out and
 * --dump-queries, or report a ratio from engines that did not hold the
 * same records.
 */
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqlite3.h>

#include "bench_util.h"
#include "cairn.h"

#define DEFAULT_N 100000   /* records */
#define DEFAULT_Q 300      /* queries */
#define DEFAULT_SEED 20240601u
#define BATCH 5000         /* records per transaction, both engines */
#define WARMUP 20          /* untimed queries before timing */
#define TOPK 10            /* hits asked of each engine */
#define N_EN 4000          /* English vocabulary size */
#define ZIPF_S 1.05        /* Zipf exponent of word draws */
#define ZH_SHARE 0.15      /* share of records in Chinese */
#define RANDOM_EVERY 5     /* every 5th query is made of random words */
#define MAX_WORDS 160      /* vocabulary words in one record, at most */

/* ================================================================== PRNG */

struct rng {
	uint64_t s; /* xorshift64* state, never 0 */
};

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	r->s = splitmix64(seed);
	if (r->s == 0)
		r->s = 1;
}

static uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1). */
static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n). */
static size_t rng_below(struct rng *r, size_t n)
{
	return (size_t)(rng_unit(r) * (double)n);
}

/* Uniform in [lo, hi]. */
static size_t rng_range(struct rng *r, size_t lo, size_t hi)
{
	return lo + rng_below(r, hi - lo + 1);
}

/* ============================================================ vocabulary */

/*
 * The head of the English vocabulary, most frequent first: function words
 * (ranks below EN_STOP are skipped in titles), then common engineering
 * words. Generated words fill the ranks after these.
 */
#define EN_STOP 40
static const char *const en_head[] = {
	/* function words: EN_STOP of them */
	"the", "to", "a", "of", "and", "is", "in", "for", "it", "on",
	"we", "that", "with", "this", "be", "not", "when", "at", "as", "by",
	"from", "are", "was", "after", "but", "or", "if", "so", "all", "an",
	"has", "have", "should", "can", "now", "only", "then", "into", "than", "our",
	/* engineering words */
	"database", "server", "client", "config", "deploy", "cache", "request",
	"timeout", "error", "retry", "build", "test", "release", "version",
	"migration", "schema", "index", "query", "latency", "memory", "thread",
	"process", "network", "socket", "queue", "worker", "service", "endpoint",
	"token", "session", "user", "login", "permission", "certificate",
	"backup", "restore", "replica", "cluster", "node", "shard", "leader",
	"failover", "rollback", "upgrade", "patch", "bug", "crash", "leak",
	"lock", "deadlock", "transaction", "commit", "branch", "merge", "review",
	"pipeline", "container", "image", "kernel", "driver", "disk", "file",
	"directory", "path", "log", "metric", "alert", "dashboard", "monitor",
	"trace", "span", "profile", "benchmark", "throughput", "bandwidth",
	"compression", "encoding", "parser", "tokenizer", "compiler", "linker",
	"library", "package", "dependency", "module", "function", "struct",
	"pointer", "buffer", "allocator", "heap", "stack", "signal", "handler",
	"callback", "hook", "plugin", "schedule", "cron", "job", "batch",
	"stream", "partition", "offset", "consumer", "producer", "topic",
	"gateway", "proxy", "route", "balancer", "limit", "quota", "tenant",
	"account", "region", "zone", "storage", "bucket", "object", "snapshot",
	"checksum", "hash", "signature", "key", "secret", "vault", "policy",
	"rule", "decision", "owner", "team", "meeting", "incident",
	"postmortem", "root", "cause", "fix", "workaround", "regression",
	"flaky", "staging", "production", "canary", "rollout", "feature",
	"flag", "default", "option", "setting", "threshold", "sample", "vector",
	"model", "embedding", "ranking", "recall", "precision", "score",
	"weight", "floor", "baseline", "candidate", "ratio", "slow", "fast",
	"large", "small", "missing", "broken", "stale", "fresh", "old", "new",
	"first", "last", "every", "never", "always", "before", "because",
	"instead", "again", "still", "use", "run", "check", "keep", "drop",
	"add", "remove", "change", "move", "open", "close", "read", "write",
	"send", "wait", "start", "stop", "fail", "pass", "set", "get",
};

/*
 * Chinese words (2-4 characters), common function words first, then the
 * vocabulary of engineering notes. Duplicates are skipped when loading.
 */
#define ZH_STOP 40
static const char *const zh_words[] = {
	/* function words and very common words: ZH_STOP of them */
	"我们", "需要", "这个", "问题", "因为", "所以", "但是", "如果", "已经", "可以",
	"应该", "没有", "现在", "然后", "还是", "一个", "进行", "使用", "通过", "之后",
	"之前", "时候", "其中", "相关", "目前", "可能", "必须", "主要", "直接", "其他",
	"一些", "所有", "同时", "以及", "或者", "不是", "发现", "情况", "方式", "部分",
	/* engineering notes */
	"数据库", "服务器", "客户端", "配置", "部署", "缓存", "接口", "测试", "日志", "性能",
	"内存", "线程", "进程", "网络", "请求", "响应", "超时", "错误", "异常", "版本",
	"升级", "回滚", "发布", "监控", "告警", "用户", "权限", "认证", "证书", "加密",
	"存储", "文件", "目录", "路径", "索引", "查询", "事务", "连接", "集群", "节点",
	"负载", "均衡", "容器", "镜像", "调度", "队列", "消息", "分布式", "同步", "异步",
	"并发", "死锁", "延迟", "吞吐量", "带宽", "磁盘", "备份", "恢复", "迁移", "脚本",
	"命令", "参数", "变量", "函数", "模块", "组件", "框架", "依赖", "编译", "构建",
	"打包", "流水线", "代码", "审查", "合并", "分支", "提交", "仓库", "文档", "注释",
	"规范", "格式", "字段", "主键", "外键", "分片", "副本", "选举", "心跳", "故障",
	"宕机", "重启", "排查", "定位", "修复", "补丁", "漏洞", "安全", "防火墙", "域名",
	"端口", "协议", "编码", "解码", "序列化", "压缩", "解析", "算法", "排序", "哈希",
	"向量", "模型", "训练", "推理", "特征", "样本", "指标", "阈值", "采样", "统计",
	"报表", "接入", "网关", "代理", "路由", "限流", "熔断", "降级", "重试", "回调",
	"插件", "扩展", "内核", "驱动", "系统", "平台", "环境", "生产", "开发", "灰度",
	"上线", "下线", "流量", "峰值", "容量", "扩容", "成本", "资源", "配额", "租户",
	"账号", "会话", "签名", "校验", "摘要", "快照", "元数据", "时间戳", "时区", "定时任务",
	"后台", "前端", "后端", "页面", "按钮", "样式", "渲染", "浏览器", "移动端", "服务端",
	"微服务", "重构", "优化", "瓶颈", "热点", "内存泄漏", "垃圾回收", "堆栈", "指针", "对象",
	"实例", "类型", "结构体", "数组", "链表", "字符串", "正则", "分词", "词典", "中文",
	"英文", "检索", "召回", "排名", "相关性", "评估", "基准", "对比", "实验", "结论",
	"方案", "设计", "架构", "需求", "评审", "决策", "记录", "经验", "教训", "原因",
	"影响", "风险", "结果", "目标", "计划", "进度", "里程碑", "团队", "同事", "负责人",
	"会议", "讨论", "决定", "确认", "反馈", "客户", "产品", "功能", "特性", "工单",
	"周报", "复盘", "总结", "背景", "步骤", "流程", "规则", "约定", "标准", "例外",
	"注意", "默认", "手动", "自动", "批量", "增量", "全量", "实时", "离线", "上游",
	"下游", "数据", "信息", "内容", "结构", "层级", "状态", "事件", "触发", "通知",
	"订阅", "消费者", "生产者", "操作", "维护", "运维", "值班", "上报", "处理", "检查",
	"验证", "修改", "删除", "新增", "更新", "导入", "导出", "启动", "停止", "关闭",
	"打开", "等待", "失败", "成功", "稳定", "缓慢", "快速", "明显", "严重", "临时",
	"长期", "每天", "每周", "昨天", "今天", "明天", "上周", "下周", "凌晨", "晚上",
	"线上", "线下", "机器", "机房", "硬件", "软件", "工具", "命令行", "终端", "容错",
	"一致性", "可用性", "隔离", "持久化", "快照隔离", "读写", "写入", "读取", "延时", "抖动",
};

struct vocab {
	const char **w; /* words by rank */
	size_t n;       /* count */
	size_t nstop;   /* ranks below this are function words */
	double *cdf;    /* Zipf cumulative distribution over ranks */
};

static struct vocab en, zh;
static char *en_arena; /* generated English words */

/* A Zipf cumulative distribution over n ranks. */
static double *zipf_cdf(size_t n, double s)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;
	size_t i;

	if (!cdf)
		return NULL;
	for (i = 0; i < n; i++) {
		sum += 1.0 / pow((double)(i + 1), s);
		cdf[i] = sum;
	}
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

/* A rank drawn from v's Zipf distribution, at or above `from`. */
static size_t zipf_draw(const struct vocab *v, struct rng *r, size_t from)
{
	for (;;) {
		double u = rng_unit(r);
		size_t lo = 0, hi = v->n - 1;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v->cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= from)
			return lo;
	}
}

static int word_known(const char *const *w, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(w[i], s) == 0)
			return 1;
	return 0;
}

/*
 * Build both vocabularies. English: en_head, then generated words of 2-3
 * syllables until N_EN, unique. Chinese: zh_words without duplicates.
 * Generated words are checked against all earlier ones by a small open
 * hash, so the vocabulary depends on the seed only.
 */
static int vocab_init(uint64_t seed)
{
	static const char *const onset[] = {
		"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p",
		"r", "s", "t", "v", "w", "z", "st", "tr", "pl", "gr", "br",
		"ch", "sh", "th", "cr", "fl", "sp", "dr",
	};
	static const char *const vowel[] = {
		"a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "ee",
	};
	static const char *const coda[] = {
		"", "", "", "n", "r", "s", "t", "l", "m", "x", "ck", "nd", "st",
	};
	enum { HASH_SLOTS = 16384 };
	size_t nhead = sizeof(en_head) / sizeof(en_head[0]);
	size_t nzh = sizeof(zh_words) / sizeof(zh_words[0]);
	const char **slot = calloc(HASH_SLOTS, sizeof(*slot));
	char *p;
	struct rng r;
	size_t i;

	if (!slot)
		return -1;
	rng_seed(&r, seed ^ 0x766F636162ull);
	en.w = calloc(N_EN, sizeof(*en.w));
	en_arena = malloc((size_t)N_EN * 24);
	zh.w = calloc(nzh, sizeof(*zh.w));
	if (!en.w || !en_arena || !zh.w)
		return -1;
	p = en_arena;
	for (i = 0; i < N_EN; i++) {
		for (;;) {
			char buf[24];
			const char *w = buf;
			size_t h = 5381, k, nsyl = rng_range(&r, 2, 3);

			if (i < nhead) {
				w = en_head[i];
			} else {
				buf[0] = '\0';
				for (k = 0; k < nsyl; k++) {
					strcat(buf, onset[rng_below(&r, sizeof(onset) / sizeof(onset[0]))]);
					strcat(buf, vowel[rng_below(&r, sizeof(vowel) / sizeof(vowel[0]))]);
				}
				strcat(buf, coda[rng_below(&r, sizeof(coda) / sizeof(coda[0]))]);
			}
			for (k = 0; w[k]; k++)
				h = h * 33 + (unsigned char)w[k];
			h %= HASH_SLOTS;
			while (slot[h] && strcmp(slot[h], w) != 0)
				h = (h + 1) % HASH_SLOTS;
			if (slot[h]) {
				if (i < nhead) {
					fprintf(stderr, "duplicate head word '%s'\n", w);
					return -1;
				}
				continue; /* generated a known word: draw again */
			}
			strcpy(p, w);
			en.w[i] = slot[h] = p;
			p += strlen(p) + 1;
			break;
		}
	}
	en.n = N_EN;
	en.nstop = EN_STOP;
	for (i = 0; i < nzh; i++)
		if (!word_known(zh.w, zh.n, zh_words[i]))
			zh.w[zh.n++] = zh_words[i];
	zh.nstop = ZH_STOP;
	free(slot);
	en.cdf = zipf_cdf(en.n, ZIPF_S);
	zh.cdf = zipf_cdf(zh.n, ZIPF_S);
	return en.cdf && zh.cdf ? 0 : -1;
}

/* ================================================================ corpus */

/* A word id: English ranks as they are, Chinese ranks + N_EN. */
#define ZH_ID(rank) ((uint32_t)(N_EN + (rank)))
#define IS_ZH(id) ((id) >= N_EN)

static const char *word_text(uint32_t id)
{
	return IS_ZH(id) ? zh.w[id - N_EN] : en.w[id];
}

/* A growable string. */
struct str {
	char *b;    /* NUL-terminated text */
	size_t n;   /* bytes, without the NUL */
	size_t cap; /* allocated */
};

static void str_add(struct str *s, const char *t, size_t len)
{
	if (s->n + len + 1 > s->cap) {
		size_t ncap = s->cap ? 2 * s->cap : 256;

		while (ncap < s->n + len + 1)
			ncap *= 2;
		s->b = realloc(s->b, ncap);
		if (!s->b) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
		s->cap = ncap;
	}
	memcpy(s->b + s->n, t, len);
	s->n += len;
	s->b[s->n] = '\0';
}

static void str_adds(struct str *s, const char *t)
{
	str_add(s, t, strlen(t));
}

/* Append word text, capitalising its first (ASCII) letter when asked. */
static void str_add_word(struct str *s, uint32_t id, int cap)
{
	const char *w = word_text(id);

	if (cap && *w >= 'a' && *w <= 'z') {
		char c = (char)(*w - 'a' + 'A');

		str_add(s, &c, 1);
		w++;
	}
	str_adds(s, w);
}

struct doc {
	int zh;                   /* 1: a Chinese record */
	const char *kind;         /* record kind */
	struct str title, body;   /* text */
	uint32_t words[MAX_WORDS]; /* distinct vocabulary word ids used */
	size_t nwords;            /* count */
};

static void doc_note_word(struct doc *d, uint32_t id)
{
	size_t i;

	for (i = 0; i < d->nwords; i++)
		if (d->words[i] == id)
			return;
	if (d->nwords < MAX_WORDS)
		d->words[d->nwords++] = id;
}

/* An engineering identifier or path made of two vocabulary words. */
static void add_identifier(struct str *s, struct rng *r)
{
	const char *a = en.w[zipf_draw(&en, r, EN_STOP)];
	const char *b = en.w[zipf_draw(&en, r, EN_STOP)];
	char buf[96];

	switch (rng_below(r, 3)) {
	case 0:
		snprintf(buf, sizeof(buf), "%s_%s", a, b);
		break;
	case 1:
		snprintf(buf, sizeof(buf), "src/%s/%s.c", a, b);
		break;
	default:
		snprintf(buf, sizeof(buf), "%s%c%s", a,
			 (char)(b[0] - 'a' + 'A'), b + 1);
		break;
	}
	str_adds(s, buf);
}

/*
 * Record kinds and their shares. cairn weighs decision (2.0) and a fact
 * of confidence 1.0 (1.7) above the rest (SPEC 5.2); the report shows
 * how much of each engine's top 10 those two kinds take.
 */
static const char *const kinds[] = { "note", "decision", "finding", "fact",
				     "procedure" };
static const double kind_cdf[] = { 0.70, 0.80, 0.88, 0.95, 1.0 };

static int kind_boosted(const char *k)
{
	return k == kinds[1] || k == kinds[3];
}

/*
 * Generate record i into d (text cleared first): the same i and seed give
 * the same record, so queries can regenerate their source.
 */
static void doc_gen(struct doc *d, size_t i, uint64_t seed)
{
	struct rng r;
	size_t k, nt, nb, done;
	double u;
	int mixed;

	rng_seed(&r, seed * 0x100000001B3ull + i);
	d->title.n = d->body.n = 0;
	str_add(&d->title, "", 0);
	str_add(&d->body, "", 0);
	d->nwords = 0;
	d->zh = rng_unit(&r) < ZH_SHARE;
	mixed = d->zh && rng_below(&r, 3) == 0;
	u = rng_unit(&r);
	for (k = 0; u > kind_cdf[k]; k++)
		;
	d->kind = kinds[k];
	if (!d->zh) {
		nt = rng_range(&r, 3, 8);
		for (k = 0; k < nt; k++) {
			uint32_t id = (uint32_t)zipf_draw(&en, &r, EN_STOP);

			if (k)
				str_adds(&d->title, " ");
			str_add_word(&d->title, id, k == 0);
			doc_note_word(d, id);
		}
		nb = rng_range(&r, 20, 120);
		for (done = 0; done < nb;) {
			size_t ns = rng_range(&r, 5, 16);

			if (d->body.n)
				str_adds(&d->body, " ");
			for (k = 0; k < ns && done < nb; k++, done++) {
				uint32_t id = (uint32_t)zipf_draw(&en, &r, 0);

				if (k)
					str_adds(&d->body, " ");
				str_add_word(&d->body, id, k == 0);
				doc_note_word(d, id);
			}
			if (rng_below(&r, 12) == 0) {
				str_adds(&d->body, " in ");
				add_identifier(&d->body, &r);
			}
			str_adds(&d->body, rng_below(&r, 8) == 0 ? ":" : ".");
		}
		return;
	}
	nt = rng_range(&r, 2, 5);
	for (k = 0; k < nt; k++) {
		uint32_t id = ZH_ID(zipf_draw(&zh, &r, ZH_STOP));

		str_add_word(&d->title, id, 0);
		doc_note_word(d, id);
	}
	nb = rng_range(&r, 20, 120);
	for (done = 0; done < nb;) {
		size_t ns = rng_range(&r, 4, 12);
		int prev_en = 0;

		for (k = 0; k < ns && done < nb; k++, done++) {
			uint32_t id;

			if (mixed && rng_below(&r, 5) == 0) {
				id = (uint32_t)zipf_draw(&en, &r, EN_STOP);
				if (d->body.n)
					str_adds(&d->body, " ");
				str_add_word(&d->body, id, 0);
				prev_en = 1;
			} else {
				id = ZH_ID(zipf_draw(&zh, &r, 0));
				if (prev_en)
					str_adds(&d->body, " ");
				str_add_word(&d->body, id, 0);
				prev_en = 0;
			}
			doc_note_word(d, id);
			if (k + 1 < ns && rng_below(&r, 6) == 0) {
				str_adds(&d->body, "，");
				prev_en = 0;
			}
		}
		str_adds(&d->body, "。");
	}
}

/* ================================================================ queries */

struct query {
	char *text;    /* for cairn: natural text */
	char *match;   /* for the baseline: "w1" OR "w2" ... */
	long source;   /* the record it was drawn from, or -1 (random words) */
	int zh;        /* 1: drawn from a Chinese record */
};

/* Natural text and an FTS5 OR expression for a list of word ids. */
static void query_fill(struct query *q, const uint32_t *ids, size_t n)
{
	struct str t = { NULL, 0, 0 }, m = { NULL, 0, 0 };
	size_t i;
	int prev_zh = 0;

	str_add(&t, "", 0);
	str_add(&m, "", 0);
	for (i = 0; i < n; i++) {
		/* Chinese words run together, as Chinese is written */
		if (i && !(IS_ZH(ids[i]) && prev_zh))
			str_adds(&t, " ");
		str_adds(&t, word_text(ids[i]));
		prev_zh = IS_ZH(ids[i]);
		if (i)
			str_adds(&m, " OR ");
		str_adds(&m, "\"");
		str_adds(&m, word_text(ids[i]));
		str_adds(&m, "\"");
	}
	q->text = t.b;
	q->match = m.b;
}

static void queries_gen(struct query *qs, size_t nq, size_t n, uint64_t seed,
			struct doc *scratch)
{
	struct rng r;
	size_t i;

	rng_seed(&r, seed ^ 0x7175657279ull);
	for (i = 0; i < nq; i++) {
		uint32_t ids[8];
		size_t k, want = rng_range(&r, 3, 8);

		if (i % RANDOM_EVERY == RANDOM_EVERY - 1) {
			/* random words, uniform over the vocabulary */
			want = rng_range(&r, 3, 6);
			for (k = 0; k < want; k++)
				ids[k] = rng_below(&r, 5) == 0
						 ? ZH_ID(rng_range(&r, ZH_STOP, zh.n - 1))
						 : (uint32_t)rng_range(&r, EN_STOP, en.n - 1);
			qs[i].source = -1;
			qs[i].zh = 0;
			query_fill(&qs[i], ids, want);
			continue;
		}
		qs[i].source = (long)rng_below(&r, n);
		doc_gen(scratch, (size_t)qs[i].source, seed);
		qs[i].zh = scratch->zh;
		if (want > scratch->nwords)
			want = scratch->nwords;
		/* a partial Fisher-Yates shuffle of the record's words */
		for (k = 0; k < want; k++) {
			size_t j = k + rng_below(&r, scratch->nwords - k);
			uint32_t tmp = scratch->words[k];

			scratch->words[k] = scratch->words[j];
			scratch->words[j] = tmp;
			ids[k] = scratch->words[k];
		}
		query_fill(&qs[i], ids, want);
	}
}

/* ================================================================ helpers */

static long long file_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

/* Bytes of a database and its -wal, if one is left. */
static long long db_bytes(const char *path)
{
	char wal[1300];

	snprintf(wal, sizeof(wal), "%s-wal", path);
	return file_bytes(path) + file_bytes(wal);
}

struct timing {
	double p50_ms, p95_ms, mean_ms; /* per-query wall time */
	double load_s, rate;            /* load time, records per second */
	long long db_bytes;             /* after close */
	size_t found, found_en, found_zh; /* answerable queries with the source in the top 10 */
	size_t empty_random;            /* random-word queries with no hit */
	size_t hits;                    /* hits returned over all queries */
	size_t boosted;                 /* of which decisions and facts */
	char hash[65];                  /* SHA-256 of all result ids */
};

struct corpus {
	char **title, **body; /* record text */
	const char **kind;    /* record kind */
	char *ok;             /* 1: cairn accepted the record */
	size_t n;             /* records */
	size_t nzh;           /* of which Chinese */
};

/* Nearest-rank percentile of sorted v. */
static double pct(const double *v, size_t n, double p)
{
	size_t i = (size_t)ceil(p * (double)n);

	return v[i ? i - 1 : 0];
}

static void summarise(struct timing *t, double *ms, size_t n)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += ms[i];
	qsort(ms, n, sizeof(*ms), bench_cmp_double);
	t->p50_ms = pct(ms, n, 0.50);
	t->p95_ms = pct(ms, n, 0.95);
	t->mean_ms = sum / (double)n;
}

/* Hash the results (record numbers, -1 padded) and score them. */
static void score_results(struct timing *t, const struct query *qs,
			  size_t nq, const long *res, const char *const *kind)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t i, j;

	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < nq; i++) {
		const long *r = res + i * TOPK;
		char line[TOPK * 12 + 16];
		int len = snprintf(line, sizeof(line), "%zu\t", i), found = 0;

		for (j = 0; j < TOPK && r[j] >= 0; j++) {
			len += snprintf(line + len, sizeof(line) - (size_t)len,
					"%s%ld", j ? "," : "", r[j]);
			found |= r[j] == qs[i].source;
			t->boosted += (size_t)kind_boosted(kind[r[j]]);
		}
		t->hits += j;
		line[len++] = '\n';
		EVP_DigestUpdate(ctx, line, (size_t)len);
		if (qs[i].source < 0) {
			t->empty_random += j == 0;
		} else if (found) {
			t->found++;
			if (qs[i].zh)
				t->found_zh++;
			else
				t->found_en++;
		}
	}
	bench_sha_hex(ctx, t->hash);
	EVP_MD_CTX_free(ctx);
}

/* Print the largest tables and indexes of a database (dbstat), if any. */
static void print_breakdown(const char *label, const char *path)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db,
			       "SELECT name, sum(pgsize) FROM dbstat GROUP BY name "
			       "ORDER BY 2 DESC LIMIT 5",
			       -1, &st, NULL) == SQLITE_OK) {
		printf("  %-6s", label);
		while (sqlite3_step(st) == SQLITE_ROW)
			printf(" %s %.1f MB;", (const char *)sqlite3_column_text(st, 0),
			       (double)sqlite3_column_int64(st, 1) / 1e6);
		printf("\n");
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* ================================================================ engines */

/*
 * Load the candidate: every record through cairn_record_write in batches
 * of BATCH, then close (checkpointing the WAL) and measure the file.
 * c->ok[i] records which writes cairn accepted.
 */
static int cairn_load(const char *dir, const struct corpus *c,
		      struct timing *t, size_t *refused)
{
	cairn_open_opts oo;
	cairn_db *db = NULL;
	char path[1200];
	double t0;
	size_t i;
	int rc;

	memset(&oo, 0, sizeof(oo));
	oo.create = 1;
	oo.no_global = 1;
	rc = cairn_db_open(dir, &oo, &db);
	if (rc)
		goto fail;
	*refused = 0;
	t0 = bench_now_s();
	for (i = 0; i < c->n; i++) {
		cairn_record r;
		char id[24];

		if (i % BATCH == 0 && (rc = cairn_begin(db)) != CAIRN_OK)
			goto fail;
		memset(&r, 0, sizeof(r));
		snprintf(id, sizeof(id), "r%07zu", i);
		r.id = id;
		r.kind = (char *)c->kind[i];
		r.title = c->title[i];
		r.body = c->body[i];
		r.confidence = -1;
		rc = cairn_record_write(db, &r, 0, NULL);
		c->ok[i] = rc == CAIRN_OK;
		if (rc == CAIRN_SECRET || rc == CAIRN_INVALID)
			(*refused)++;
		else if (rc)
			goto fail;
		if ((i % BATCH == BATCH - 1 || i + 1 == c->n) &&
		    (rc = cairn_commit(db)) != CAIRN_OK)
			goto fail;
		if (i % 20000 == 19999)
			fprintf(stderr, "  cairn: %zu records, %.1f s\n", i + 1,
				bench_now_s() - t0);
	}
	t->load_s = bench_now_s() - t0;
	t->rate = (double)c->n / t->load_s;
	cairn_db_close(db);
	snprintf(path, sizeof(path), "%s/cairn.db", dir);
	t->db_bytes = db_bytes(path);
	return 0;
fail:
	fprintf(stderr, "cairn: %s: %s\n", cairn_errstr(rc), cairn_errmsg(db));
	cairn_db_close(db);
	return -1;
}

static int sql_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

/*
 * Load the baseline with the records cairn accepted, in the same
 * batches and with the same journal settings, then close and measure.
 */
static int fts5_load(const char *path, const struct corpus *c,
		     struct timing *t)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	double t0;
	size_t i, n = 0;
	int in_tx = 0;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		goto fail_sql;
	if (sql_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "CREATE VIRTUAL TABLE t USING fts5(title, body, "
			 "tokenize='porter unicode61');"))
		goto fail;
	if (sqlite3_prepare_v2(db, "INSERT INTO t(rowid, title, body) "
				   "VALUES (?1, ?2, ?3)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail_sql;
	t0 = bench_now_s();
	for (i = 0; i < c->n; i++) {
		if (!c->ok[i])
			continue; /* cairn refused it: hold the same records */
		if (!in_tx && sql_exec(db, "BEGIN"))
			goto fail;
		in_tx = 1;
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_text(st, 2, c->title[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, c->body[i], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail_sql;
		sqlite3_reset(st);
		n++;
		if (n % BATCH == 0) {
			if (sql_exec(db, "COMMIT"))
				goto fail;
			in_tx = 0;
		}
	}
	if (in_tx && sql_exec(db, "COMMIT"))
		goto fail;
	t->load_s = bench_now_s() - t0;
	t->rate = (double)c->n / t->load_s;
	sqlite3_finalize(st);
	sqlite3_close(db);
	t->db_bytes = db_bytes(path);
	return 0;
fail_sql:
	fprintf(stderr, "fts5 baseline: %s\n", sqlite3_errmsg(db));
fail:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return -1;
}

/* The reopened engines, ready to query. */
struct engines {
	cairn_db *cairn;        /* the candidate */
	cairn_recall_opts ro;   /* k = TOPK, no receipt */
	sqlite3 *fts;           /* the baseline */
	sqlite3_stmt *plain;    /* ranked rowids */
	sqlite3_stmt *naive;    /* ranked rowids with their text */
	sqlite3_stmt *get;      /* text by rowid */
	volatile size_t sink;   /* text bytes read, so nothing is skipped */
};

/* One cairn recall; ids[] gets the hits' record numbers, -1 padded. */
static int query_cairn(struct engines *e, const struct query *q, long *ids)
{
	cairn_result *out = NULL;
	size_t j;
	int rc = cairn_recall(e->cairn, q->text, &e->ro, &out);

	if (rc) {
		fprintf(stderr, "cairn_recall '%s': %s\n", q->text,
			cairn_errmsg(e->cairn));
		return -1;
	}
	for (j = 0; j < TOPK; j++)
		ids[j] = j < out->n ? strtol(out->hits[j].rec->id + 1, NULL, 10)
				    : -1;
	cairn_result_free(out);
	return 0;
}

/*
 * One baseline query. The plain form ranks rowids only, then reads the
 * winners' text by rowid; the naive form selects the text in the ranked
 * query itself, so SQLite's sorter reads and copies the text of every
 * matching row (the shape of cairn's recall query). Same ids either way.
 */
static int query_fts5(struct engines *e, int naive, const struct query *q,
		      long *ids)
{
	sqlite3_stmt *st = naive ? e->naive : e->plain;
	size_t j, k;
	int src;

	sqlite3_bind_text(st, 1, q->match, -1, SQLITE_STATIC);
	for (j = 0; (src = sqlite3_step(st)) == SQLITE_ROW; j++) {
		if (j < TOPK)
			ids[j] = (long)sqlite3_column_int64(st, 0);
		if (naive)
			e->sink += (size_t)sqlite3_column_bytes(st, 1) +
				   (size_t)sqlite3_column_bytes(st, 2);
	}
	sqlite3_reset(st);
	if (src != SQLITE_DONE) {
		fprintf(stderr, "fts5 baseline: %s\n", sqlite3_errmsg(e->fts));
		return -1;
	}
	/* the plain form reads the winners' text: recall returns records */
	for (k = 0; !naive && k < j && k < TOPK; k++) {
		sqlite3_bind_int64(e->get, 1, ids[k]);
		if (sqlite3_step(e->get) == SQLITE_ROW)
			e->sink += (size_t)sqlite3_column_bytes(e->get, 0) +
				   (size_t)sqlite3_column_bytes(e->get, 1);
		sqlite3_reset(e->get);
	}
	for (k = 0; k < TOPK; k++)
		ids[k] = k < j ? ids[k] - 1 : -1;
	return 0;
}

/*
 * Time every query on the three engines (cairn, fts5, fts5 naive),
 * interleaved query by query in a rotating order, so that a busy machine
 * slows all of them alike and the ratios stay meaningful. WARMUP untimed
 * rounds first. res[e] gets engine e's ids, TOPK per query.
 */
static int run_queries(const char *dir, const char *fpath,
		       const struct query *qs, size_t nq,
		       struct timing *tm[3], long *res[3])
{
	struct engines e;
	cairn_open_opts oo;
	double *ms[3];
	size_t i, k;
	int rc = -1;

	memset(&e, 0, sizeof(e));
	memset(&oo, 0, sizeof(oo));
	oo.no_global = 1;
	e.ro.k = TOPK;
	e.ro.no_receipt = 1;
	for (k = 0; k < 3; k++)
		ms[k] = calloc(nq, sizeof(double));
	if (!ms[0] || !ms[1] || !ms[2])
		goto out;
	if (cairn_db_open(dir, &oo, &e.cairn)) {
		fprintf(stderr, "cairn_db_open: %s\n", cairn_errmsg(e.cairn));
		goto out;
	}
	if (sqlite3_open(fpath, &e.fts) != SQLITE_OK ||
	    sqlite3_prepare_v2(e.fts, "SELECT rowid FROM t WHERE t MATCH ?1 "
				      "ORDER BY bm25(t) LIMIT 10",
			       -1, &e.plain, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(e.fts, "SELECT rowid, title, body FROM t WHERE t "
				      "MATCH ?1 ORDER BY bm25(t) LIMIT 10",
			       -1, &e.naive, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(e.fts, "SELECT title, body FROM t WHERE rowid = ?1",
			       -1, &e.get, NULL) != SQLITE_OK) {
		fprintf(stderr, "fts5 baseline: %s\n", sqlite3_errmsg(e.fts));
		goto out;
	}
	for (i = 0; i < WARMUP + nq; i++) {
		size_t qi = i < WARMUP ? i % nq : i - WARMUP;

		for (k = 0; k < 3; k++) {
			size_t w = (i + k) % 3;
			long ids[TOPK];
			double q0 = bench_now_s();

			if (w == 0 ? query_cairn(&e, &qs[qi], ids)
				    : query_fts5(&e, w == 2, &qs[qi], ids))
				goto out;
			if (i < WARMUP)
				continue;
			ms[w][qi] = (bench_now_s() - q0) * 1e3;
			memcpy(res[w] + qi * TOPK, ids, sizeof(ids));
		}
	}
	for (k = 0; k < 3; k++)
		summarise(tm[k], ms[k], nq);
	rc = 0;
out:
	sqlite3_finalize(e.plain);
	sqlite3_finalize(e.naive);
	sqlite3_finalize(e.get);
	sqlite3_close(e.fts);
	cairn_db_close(e.cairn);
	for (k = 0; k < 3; k++)
		free(ms[k]);
	return rc;
}

/* ================================================================ report */

static void json_engine(FILE *f, const char *name, const struct timing *t,
			size_t nans, size_t nans_en, size_t nans_zh,
			size_t nrand, int last)
{
	fprintf(f,
		"  \"%s\": {\"p50_ms\": %.4f, \"p95_ms\": %.4f, \"mean_ms\": %.4f, "
		"\"load_s\": %.3f, \"records_per_s\": %.1f, \"db_bytes\": %lld, "
		"\"found_top10\": %.4f, \"found_top10_en\": %.4f, "
		"\"found_top10_zh\": %.4f, \"empty_random\": %.4f, "
		"\"hits\": %zu}%s\n",
		name, t->p50_ms, t->p95_ms, t->mean_ms, t->load_s, t->rate,
		t->db_bytes, nans ? (double)t->found / (double)nans : 0,
		nans_en ? (double)t->found_en / (double)nans_en : 0,
		nans_zh ? (double)t->found_zh / (double)nans_zh : 0,
		nrand ? (double)t->empty_random / (double)nrand : 0, t->hits,
		last ? "" : ",");
}

/* One query a line (the text cairn is asked), for profiling them alone. */
static int dump_queries(const char *path, const struct query *qs, size_t nq)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		fprintf(stderr, "recall_bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < nq; i++)
		fprintf(f, "%s\n", qs[i].text);
	if (fclose(f) != 0) {
		fprintf(stderr, "recall_bench: writing %s failed\n", path);
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: recall_bench [--n N] [--q Q] [--seed S] [--out FILE] "
		"[--tmpdir DIR] [--keep] [--reuse DIR] [--dump-queries FILE]\n");
}

int main(int argc, char **argv)
{
	size_t n = DEFAULT_N, nq = DEFAULT_Q, i, j, refused = 0;
	size_t nans = 0, nans_en = 0, nans_zh = 0, nrand = 0, overlap = 0;
	size_t nboosted = 0;
	uint64_t seed = DEFAULT_SEED;
	const char *out = "bench/results/recall.json", *tmpbase = NULL;
	const char *reuse = NULL, *dump = NULL;
	char tmp[1024], dir[1100], fpath[1200], cpu[256], date[32];
	char corpus_hash[65], query_hash[65];
	struct timing tc, tf, tn;
	struct corpus c;
	struct query *qs;
	struct doc d;
	long *res_c, *res_f, *res_n;
	EVP_MD_CTX *ctx;
	time_t now;
	FILE *f;
	int keep = 0;

	for (i = 1; i < (size_t)argc; i++) {
		const char *a = argv[i], *v = i + 1 < (size_t)argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--keep") == 0) {
			keep = 1;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		if (strcmp(a, "--n") == 0)
			n = strtoul(v, NULL, 10);
		else if (strcmp(a, "--q") == 0)
			nq = strtoul(v, NULL, 10);
		else if (strcmp(a, "--seed") == 0)
			seed = strtoull(v, NULL, 10);
		else if (strcmp(a, "--out") == 0)
			out = v;
		else if (strcmp(a, "--tmpdir") == 0)
			tmpbase = v;
		else if (strcmp(a, "--reuse") == 0)
			reuse = v;
		else if (strcmp(a, "--dump-queries") == 0)
			dump = v;
		else {
			usage();
			return 2;
		}
		i++;
	}
	if (n < 10 || nq < 10) {
		fprintf(stderr, "recall_bench: --n and --q must be at least 10\n");
		return 2;
	}
	if (vocab_init(seed)) {
		fprintf(stderr, "recall_bench: building the vocabulary failed\n");
		return 1;
	}

	/* the corpus, generated once and hashed */
	memset(&c, 0, sizeof(c));
	memset(&d, 0, sizeof(d));
	c.n = n;
	c.title = calloc(n, sizeof(*c.title));
	c.body = calloc(n, sizeof(*c.body));
	c.kind = calloc(n, sizeof(*c.kind));
	c.ok = calloc(n, 1);
	qs = calloc(nq, sizeof(*qs));
	res_c = malloc(nq * TOPK * sizeof(*res_c));
	res_f = malloc(nq * TOPK * sizeof(*res_f));
	res_n = malloc(nq * TOPK * sizeof(*res_n));
	ctx = EVP_MD_CTX_new();
	if (!c.title || !c.body || !c.kind || !c.ok || !qs || !res_c ||
	    !res_f || !res_n || !ctx) {
		fprintf(stderr, "recall_bench: out of memory\n");
		return 1;
	}
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < n; i++) {
		doc_gen(&d, i, seed);
		c.title[i] = strdup(d.title.b);
		c.body[i] = strdup(d.body.b);
		c.kind[i] = d.kind;
		c.nzh += (size_t)d.zh;
		nboosted += (size_t)kind_boosted(d.kind);
		if (!c.title[i] || !c.body[i]) {
			fprintf(stderr, "recall_bench: out of memory\n");
			return 1;
		}
		EVP_DigestUpdate(ctx, d.kind, strlen(d.kind) + 1);
		EVP_DigestUpdate(ctx, d.title.b, d.title.n + 1);
		EVP_DigestUpdate(ctx, d.body.b, d.body.n + 1);
	}
	bench_sha_hex(ctx, corpus_hash);
	queries_gen(qs, nq, n, seed, &d);
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (i = 0; i < nq; i++) {
		EVP_DigestUpdate(ctx, qs[i].text, strlen(qs[i].text) + 1);
		if (qs[i].source < 0)
			nrand++;
		else if (qs[i].zh)
			nans_zh++;
		else
			nans_en++;
	}
	nans = nans_en + nans_zh;
	bench_sha_hex(ctx, query_hash);
	printf("recall_bench: %zu records (%zu Chinese), %zu queries "
	       "(%zu answerable: %zu en, %zu zh; %zu random words)\n",
	       n, c.nzh, nq, nans, nans_en, nans_zh, nrand);
	printf("  example query: %s\n  example query: %s\n", qs[1].text,
	       qs[2].text);
	fflush(stdout);

	if (dump && dump_queries(dump, qs, nq))
		return 1;
	if (reuse) {
		snprintf(tmp, sizeof(tmp), "%s", reuse);
	} else {
		snprintf(tmp, sizeof(tmp), "%s/cairn-bench-XXXXXX",
			 tmpbase ? tmpbase
			 : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(tmp)) {
			fprintf(stderr, "recall_bench: mkdtemp %s: %s\n", tmp,
				strerror(errno));
			return 1;
		}
	}
	snprintf(dir, sizeof(dir), "%s/.cairn", tmp);
	snprintf(fpath, sizeof(fpath), "%s/fts5.db", tmp);

	memset(&tc, 0, sizeof(tc));
	memset(&tf, 0, sizeof(tf));
	memset(&tn, 0, sizeof(tn));
	if (reuse) {
		/* stores kept by an earlier --keep run of the same corpus */
		char path[1200];

		fprintf(stderr, "reusing %s (no load: load figures are 0)\n",
			tmp);
		snprintf(path, sizeof(path), "%s/cairn.db", dir);
		tc.db_bytes = db_bytes(path);
		tf.db_bytes = db_bytes(fpath);
		if (tc.db_bytes <= 0 || tf.db_bytes <= 0) {
			fprintf(stderr, "recall_bench: --reuse %s: no kept "
				"stores there\n", tmp);
			return 1;
		}
	} else {
		fprintf(stderr, "loading cairn...\n");
		if (cairn_load(dir, &c, &tc, &refused))
			return 1;
		fprintf(stderr, "loading fts5 baseline...\n");
		if (fts5_load(fpath, &c, &tf))
			return 1;
	}
	fprintf(stderr, "querying...\n");
	{
		struct timing *tm[3] = { &tc, &tf, &tn };
		long *res[3] = { res_c, res_f, res_n };

		if (run_queries(dir, fpath, qs, nq, tm, res))
			return 1;
	}
	score_results(&tc, qs, nq, res_c, c.kind);
	score_results(&tf, qs, nq, res_f, c.kind);
	score_results(&tn, qs, nq, res_n, c.kind);
	for (i = 0; i < nq; i++)
		for (j = 0; j < TOPK && res_c[i * TOPK + j] >= 0; j++) {
			size_t k;

			for (k = 0; k < TOPK && res_f[i * TOPK + k] >= 0; k++)
				overlap += res_f[i * TOPK + k] == res_c[i * TOPK + j];
		}

	bench_cpu_model(cpu, sizeof(cpu));
	now = time(NULL);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));

	printf("\n%-22s %12s %12s %8s\n", "", "cairn", "fts5", "ratio");
	printf("%-22s %12.1f %12.1f %8.2f\n", "load records/s", tc.rate,
	       tf.rate, tc.rate / tf.rate);
	printf("%-22s %12.2f %12.2f %8.2f\n", "load s", tc.load_s, tf.load_s,
	       tc.load_s / tf.load_s);
	printf("%-22s %12.3f %12.3f %8.2f\n", "recall p50 ms", tc.p50_ms,
	       tf.p50_ms, tc.p50_ms / tf.p50_ms);
	printf("%-22s %12.3f %12.3f %8.2f\n", "recall p95 ms", tc.p95_ms,
	       tf.p95_ms, tc.p95_ms / tf.p95_ms);
	printf("%-22s %12.3f %12.3f %8.2f\n", "recall mean ms", tc.mean_ms,
	       tf.mean_ms, tc.mean_ms / tf.mean_ms);
	printf("%-22s %12.1f %12.1f %8.2f\n", "db MB", (double)tc.db_bytes / 1e6,
	       (double)tf.db_bytes / 1e6,
	       (double)tc.db_bytes / (double)tf.db_bytes);
	printf("%-22s %12.3f %12.3f\n", "found in top 10",
	       (double)tc.found / (double)nans, (double)tf.found / (double)nans);
	printf("%-22s %12.3f %12.3f\n", "  english",
	       nans_en ? (double)tc.found_en / (double)nans_en : 0,
	       nans_en ? (double)tf.found_en / (double)nans_en : 0);
	printf("%-22s %12.3f %12.3f\n", "  chinese",
	       nans_zh ? (double)tc.found_zh / (double)nans_zh : 0,
	       nans_zh ? (double)tf.found_zh / (double)nans_zh : 0);
	printf("%-22s %12.3f %12.3f\n", "random: no hit",
	       nrand ? (double)tc.empty_random / (double)nrand : 0,
	       nrand ? (double)tf.empty_random / (double)nrand : 0);
	printf("%-22s %12zu %12zu\n", "hits returned", tc.hits, tf.hits);
	printf("%-22s %12.3f %12.3f   (corpus %.3f)\n", "decision+fact of hits",
	       tc.hits ? (double)tc.boosted / (double)tc.hits : 0,
	       tf.hits ? (double)tf.boosted / (double)tf.hits : 0,
	       (double)nboosted / (double)n);
	printf("%-22s %12.2f\n", "top-10 overlap/query",
	       (double)overlap / (double)nq);
	printf("fts5 naive form (text in the ranked query): p50 %.3f p95 %.3f "
	       "mean %.3f ms, same ids: %s\n",
	       tn.p50_ms, tn.p95_ms, tn.mean_ms,
	       strcmp(tn.hash, tf.hash) == 0 ? "yes" : "NO");
	printf("refused writes: %zu\n", refused);
	printf("space by object:\n");
	snprintf(fpath, sizeof(fpath), "%s/cairn.db", dir);
	print_breakdown("cairn", fpath);
	snprintf(fpath, sizeof(fpath), "%s/fts5.db", tmp);
	print_breakdown("fts5", fpath);
	printf("hashes: corpus %.16s queries %.16s cairn %.16s fts5 %.16s\n",
	       corpus_hash, query_hash, tc.hash, tf.hash);

	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "recall_bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "{\n  \"n\": %zu,\n  \"n_zh\": %zu,\n  \"queries\": %zu,\n"
		   "  \"answerable\": %zu,\n  \"answerable_zh\": %zu,\n"
		   "  \"random\": %zu,\n  \"seed\": %llu,\n  \"refused\": %zu,\n",
		n, c.nzh, nq, nans, nans_zh, nrand, (unsigned long long)seed,
		refused);
	json_engine(f, "cairn", &tc, nans, nans_en, nans_zh, nrand, 0);
	json_engine(f, "fts5", &tf, nans, nans_en, nans_zh, nrand, 0);
	fprintf(f,
		"  \"fts5_naive\": {\"p50_ms\": %.4f, \"p95_ms\": %.4f, "
		"\"mean_ms\": %.4f, \"same_ids\": %s},\n",
		tn.p50_ms, tn.p95_ms, tn.mean_ms,
		strcmp(tn.hash, tf.hash) == 0 ? "true" : "false");
	fprintf(f,
		"  \"boosted_share\": {\"corpus\": %.4f, \"cairn_hits\": %.4f, "
		"\"fts5_hits\": %.4f},\n",
		(double)nboosted / (double)n,
		tc.hits ? (double)tc.boosted / (double)tc.hits : 0,
		tf.hits ? (double)tf.boosted / (double)tf.hits : 0);
	fprintf(f,
		"  \"ratios\": {\"p50\": %.4f, \"p95\": %.4f, \"mean\": %.4f, "
		"\"db_bytes\": %.4f, \"load_s\": %.4f},\n",
		tc.p50_ms / tf.p50_ms, tc.p95_ms / tf.p95_ms,
		tc.mean_ms / tf.mean_ms,
		(double)tc.db_bytes / (double)tf.db_bytes, tc.load_s / tf.load_s);
	fprintf(f, "  \"top10_overlap_per_query\": %.4f,\n",
		(double)overlap / (double)nq);
	fprintf(f,
		"  \"hashes\": {\"corpus\": \"%s\", \"queries\": \"%s\", "
		"\"cairn\": \"%s\", \"fts5\": \"%s\", \"fts5_naive\": \"%s\"},\n",
		corpus_hash, query_hash, tc.hash, tf.hash, tn.hash);
	fprintf(f, "  \"machine\": {\"nproc\": %ld, \"cpu\": ",
		sysconf(_SC_NPROCESSORS_ONLN));
	bench_json_str(f, cpu);
	fprintf(f, ", \"sqlite\": \"%s\", \"cairn\": \"%s\"},\n",
		sqlite3_libversion(), CAIRN_VERSION);
	fprintf(f, "  \"reused_stores\": %s,\n", reuse ? "true" : "false");
	fprintf(f, "  \"date\": \"%s\"\n}\n", date);
	if (fclose(f) != 0) {
		fprintf(stderr, "recall_bench: writing %s failed\n", out);
		return 1;
	}
	printf("results: %s\n", out);

	if (keep || reuse)
		printf("kept: %s\n", tmp);
	else
		nftw(tmp, bench_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	for (i = 0; i < n; i++) {
		free(c.title[i]);
		free(c.body[i]);
	}
	for (i = 0; i < nq; i++) {
		free(qs[i].text);
		free(qs[i].match);
	}
	free(c.title);
	free(c.body);
	free(c.kind);
	free(c.ok);
	free(qs);
	free(res_c);
	free(res_f);
	free(res_n);
	free(d.title.b);
	free(d.body.b);
	free(en.w);
	free(en.cdf);
	free(en_arena);
	free(zh.w);
	free(zh.cdf);
	EVP_MD_CTX_free(ctx);
	return 0;
}
