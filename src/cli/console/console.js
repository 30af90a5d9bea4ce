/*
 * console.js -- the cairn review console (cairn serve). Written for cairn;
 * no third-party code. Every stored text reaches the page through
 * textContent or createTextNode, never as markup (the server's CSP allows
 * no inline script either). The API token comes from the URL fragment
 * (#token=...), which the browser never sends; it is kept in
 * sessionStorage and sent in the X-Cairn-Token header.
 */
'use strict';

const I18N = {
  en: {
    candidates: 'Candidates', records: 'Records', hook: 'What the agent saw', quality: 'Quality',
    lang: '中文', loading: 'loading…', no_token: 'No token: open the URL that `cairn serve` printed (it ends in #token=…).',
    no_candidates: 'No candidates waiting.', approve: 'Approve', reject: 'Reject', edit: 'Edit',
    save_approve: 'Save and approve', cancel: 'Cancel', approve_supersede: 'Approve, replacing this',
    may_replace: 'May replace', group: 'Same command shape', approve_all: 'Approve all', reject_all: 'Reject all',
    forgets: 'Pending forgets: an agent asked to retire these', retire: 'Retire', keep: 'Keep',
    proposed: 'proposed', retired: 'retired', kept: 'kept', reason: 'Reason', no_reason: '(the agent gave none)',
    approved: 'approved', rejected: 'rejected', kind: 'kind', status: 'status', scope: 'scope', origin: 'origin',
    fromTeam: 'from the team, by ', proof: 'proof', source: 'provenance', confidence: 'confidence', key: 'key', created: 'created', updated: 'updated',
    revision: 'revision', last_seen: 'last seen', search: 'Search', question: 'question or words',
    any: 'any', all: 'all', results: 'results', no_results: 'Nothing above the no-match floor.',
    floor: 'floor', relevance: 'relevance', lexical: 'lexical (BM25 share)', weight: 'weight', cosine: 'cosine',
    rrf: 'fusion (RRF)', decay: 'decay', score: 'score', explain: 'ranking steps', matched: 'matched',
    back: 'Back', history: 'Revisions', supersedes: 'Replaces', superseded_by: 'Replaced by', receipts: 'Receipts that returned it',
    none: 'none', title: 'title', body: 'body', calls: 'calls', p50: 'p50 ms', p90: 'p90 ms', max: 'max ms',
    injected: 'injected', empty: 'empty', captured: 'captured', timeout: 'timeouts', error: 'errors', ignored: 'ignored',
    served: 'served by mcp', local: 'run locally', time: 'time', event: 'event', outcome: 'outcome', ms: 'ms', detail: 'detail',
    query_hash: 'prompt hash', ids: 'injected ids', no_calls: 'No hook calls logged yet.',
    no_runs: 'No evaluation runs recorded yet. Record one with: cairn eval --record DIR (appends to .cairn/eval.jsonl)',
    runs: 'runs', dataset: 'dataset', keys: 'keys: 1–4 views · / search · j/k move · a approve · r reject · e edit · ? help',
    done: 'done', failed: 'failed', hits_from: 'receipt', terms: 'terms', lang_name: 'English', hybrid: 'hybrid (BM25 + vectors)',
    lexical_only: 'lexical (BM25)', dropped: 'below the floor', on_store: 'store', store_counts: 'records'
  },
  zh: {
    candidates: '候选', records: '记录', hook: '智能体看到了什么', quality: '质量',
    lang: 'English', loading: '加载中…', no_token: '缺少令牌：请打开 `cairn serve` 打印的网址（以 #token=… 结尾）。',
    no_candidates: '没有待审批的候选。', approve: '批准', reject: '拒绝', edit: '编辑',
    save_approve: '保存并批准', cancel: '取消', approve_supersede: '批准并取代此条',
    may_replace: '可能取代', group: '相同命令形态', approve_all: '全部批准', reject_all: '全部拒绝',
    forgets: '待确认的删除：智能体请求退役这些记录', retire: '退役', keep: '保留',
    proposed: '提出于', retired: '已退役', kept: '已保留', reason: '理由', no_reason: '（智能体未说明）',
    approved: '已批准', rejected: '已拒绝', kind: '类型', status: '状态', scope: '范围', origin: '来源',
    fromTeam: '来自团队，作者 ', proof: '证明', source: '出处', confidence: '置信度', key: '键', created: '创建', updated: '更新',
    revision: '修订', last_seen: '最近返回', search: '搜索', question: '问题或关键词',
    any: '任意', all: '全部', results: '结果', no_results: '没有高于无匹配阈值的结果。',
    floor: '阈值', relevance: '相关度', lexical: '词法（BM25 占比）', weight: '权重', cosine: '余弦',
    rrf: '融合（RRF）', decay: '衰减', score: '得分', explain: '排序步骤', matched: '命中词',
    back: '返回', history: '修订历史', supersedes: '取代了', superseded_by: '被取代于', receipts: '返回过它的回执',
    none: '无', title: '标题', body: '正文', calls: '调用', p50: 'p50 毫秒', p90: 'p90 毫秒', max: '最大 毫秒',
    injected: '已注入', empty: '空', captured: '已捕获', timeout: '超时', error: '错误', ignored: '忽略',
    served: '由 mcp 提供', local: '本地运行', time: '时间', event: '事件', outcome: '结果', ms: '毫秒', detail: '详情',
    query_hash: '提示哈希', ids: '注入的记录', no_calls: '尚无钩子调用记录。',
    no_runs: '尚无评测记录。记录方式：cairn eval --record DIR（追加到 .cairn/eval.jsonl）',
    runs: '次评测', dataset: '数据集', keys: '按键：1–4 切换视图 · / 搜索 · j/k 移动 · a 批准 · r 拒绝 · e 编辑 · ? 帮助',
    done: '完成', failed: '失败', hits_from: '回执', terms: '检索词', lang_name: '中文', hybrid: '混合（BM25 + 向量）',
    lexical_only: '词法（BM25）', dropped: '低于阈值', on_store: '存储', store_counts: '条记录'
  }
};

const state = { token: null, lang: 'en', view: 'candidates', info: null, selected: 0, cards: [] };

function t(k) { return (I18N[state.lang] && I18N[state.lang][k]) || I18N.en[k] || k; }

/* el('div', {class: 'x', onclick: f}, child, 'text', ...): text is never parsed as markup */
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of kids.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function status(msg, isError) {
  const s = document.getElementById('status');
  s.textContent = msg || '';
  s.className = isError ? 'error' : '';
}

async function api(path, body) {
  const opts = { headers: { 'X-Cairn-Token': state.token }, credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  let j = null;
  try { j = await r.json(); } catch (e) { j = null; }
  if (!r.ok) {
    const m = j && j.error ? j.error.message : ('HTTP ' + r.status);
    throw new Error(m);
  }
  return j;
}

function title(r) {
  if (r.title) return r.title;
  const first = (r.body || '').split('\n')[0];
  return first.length > 90 ? first.slice(0, 90) + '…' : first;
}

function sourceText(r) {
  const s = r.source || {};
  if (s.path) {
    let x = s.path + (s.line ? ':' + s.line : '');
    if (s.commit) x += ' @' + s.commit.slice(0, 8);
    if (s.heading) x += ' > ' + s.heading;
    return x;
  }
  // a pulled record: who wrote it is the team server's stamp
  if (s.tool && s.tool.startsWith('team:') && r.kind !== 'event') return t('fromTeam') + s.tool.slice(5);
  if (s.session || s.tool) return 'session ' + (s.session || '-') + (s.tool ? ', ' + s.tool : '');
  return r.origin || '';
}

function recordLink(r) {
  return el('button', { type: 'button', class: 'link', onclick: () => go('record', r.id) }, r.id);
}

function meta(r) {
  return el('div', { class: 'meta' },
    el('span', { class: 'tag ' + r.status }, r.status),
    el('span', null, t('kind') + ': ' + r.kind),
    el('span', null, t('origin') + ': ' + r.origin),
    r.key ? el('span', null, t('key') + ': ' + r.key) : null,
    el('span', null, t('confidence') + ': ' + Number(r.confidence).toFixed(2)),
    r.proof ? el('span', null, t('proof') + ': ' + r.proof) : null,
    el('span', null, t('source') + ': ' + sourceText(r)),
    el('span', null, r.updated));
}

/* ---------------------------------------------------------- candidates */

/* "the same command shape": the API's group when it sends one, else the key
 * family (the key before its last ':', as capture writes capability:deploy:s3:<bucket>) */
function groupKey(c) {
  if (c.group) return String(c.group);
  const k = c.record.key || '';
  const i = k.lastIndexOf(':');
  return i > 0 && k.indexOf(':') < i ? c.record.kind + ' · ' + k.slice(0, i) : null;
}

async function act(path, body, okMsg) {
  try {
    const j = await api(path, body);
    status(okMsg + (j && j.failed ? ' (' + j.failed + ' ' + t('failed') + ')' : ''));
    await render();
  } catch (e) { status(e.message, true); }
}

function candidateCard(c) {
  const r = c.record;
  const card = el('article', { class: 'card', 'data-id': r.id, tabindex: '-1' });
  const editBox = el('div', { class: 'edit', hidden: true });
  const tIn = el('input', { type: 'text', value: r.title || '', 'aria-label': t('title') });
  const bIn = el('textarea', { 'aria-label': t('body') });
  bIn.value = r.body;
  editBox.append(el('label', null, t('title'), tIn), el('label', null, t('body'), bIn),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', onclick: () =>
        act('/api/edit-approve', { id: r.id, title: tIn.value, body: bIn.value }, r.id + ' ' + t('approved')) }, t('save_approve')),
      el('button', { type: 'button', onclick: () => { editBox.hidden = true; } }, t('cancel'))));
  card.append(
    el('h3', null, title(r)), meta(r),
    el('pre', { class: 'body' }, r.body),
    el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', 'data-act': 'approve',
        onclick: () => act('/api/approve', { id: r.id }, r.id + ' ' + t('approved')) }, t('approve')),
      el('button', { type: 'button', class: 'danger', 'data-act': 'reject',
        onclick: () => act('/api/reject', { id: r.id }, r.id + ' ' + t('rejected')) }, t('reject')),
      el('button', { type: 'button', 'data-act': 'edit', onclick: () => { editBox.hidden = false; tIn.focus(); } }, t('edit')),
      recordLink(r)),
    editBox);
  if (c.may_replace) addMayReplace(card, r, c.may_replace);
  return card;
}

function addMayReplace(card, r, list) {
  if (!list.length) return;
  card.append(el('div', { class: 'may-replace' }, el('h4', null, t('may_replace')),
    el('ul', null, list.map(m => el('li', null,
      recordLink(m.record), ' ', title(m.record), ' ',
      el('span', { class: 'muted' }, '(' + Number(m.similarity).toFixed(2) + (m.same_key_family ? ', key family' : '') + ') '),
      el('button', { type: 'button', 'data-act': 'supersede', onclick: () =>
        act('/api/approve-supersede', { id: r.id, old: m.record.id }, r.id + ' ' + t('approved')) }, t('approve_supersede')))))));
}

/* what each candidate may replace, card by card after the list is shown */
async function fillSuggestions(list, gen) {
  for (const c of list) {
    if (c.may_replace || state.gen !== gen) continue;
    let j;
    try { j = await api('/api/suggest?id=' + encodeURIComponent(c.record.id)); } catch (e) { continue; }
    if (state.gen !== gen) return;
    const card = document.querySelector('article.card[data-id="' + CSS.escape(c.record.id) + '"]');
    if (card) addMayReplace(card, c.record, j.may_replace || []);
  }
  if (state.gen === gen) document.body.dataset.suggested = 'yes';
}

async function viewCandidates(main) {
  const j = await api('/api/candidates');
  const list = j.candidates || [];
  main.append(el('h2', null, t('candidates') + ' (' + list.length + ')'));
  if (!list.length) { main.append(el('p', { class: 'muted' }, t('no_candidates'))); }
  const groups = new Map();
  for (const c of list) {
    const g = groupKey(c);
    if (g) { if (!groups.has(g)) groups.set(g, []); groups.get(g).push(c); }
  }
  const grouped = new Set();
  for (const [g, members] of groups) {
    if (members.length < 2) continue;
    const ids = members.map(m => m.record.id);
    ids.forEach(id => grouped.add(id));
    main.append(el('section', { class: 'group', 'data-group': g },
      el('h2', null, t('group') + ': ' + g + ' (' + members.length + ')'),
      el('div', { class: 'actions' },
        el('button', { type: 'button', class: 'primary', onclick: () => act('/api/approve', { ids }, ids.length + ' ' + t('approved')) },
          t('approve_all') + ' (' + ids.length + ')'),
        el('button', { type: 'button', class: 'danger', onclick: () => act('/api/reject', { ids }, ids.length + ' ' + t('rejected')) },
          t('reject_all') + ' (' + ids.length + ')')),
      members.map(candidateCard)));
  }
  for (const c of list) if (!grouped.has(c.record.id)) main.append(candidateCard(c));
  state.after = () => fillSuggestions(list, state.gen);
  /* pending forgets (SPEC 4.5): retire applies the agent's request, keep drops it */
  const forgets = j.forgets || [];
  if (forgets.length) {
    main.append(el('h2', null, t('forgets') + ' (' + forgets.length + ')'),
      ...forgets.map(f => { const r = f.record; return el('article', { class: 'card forget', 'data-id': r.id, tabindex: '-1' },
        el('h3', null, title(r)), meta(r),
        el('p', { class: 'muted' }, t('proposed') + ' ' + (f.proposed || '') + (f.session ? ' · session ' + f.session : '')),
        el('p', { class: 'reason' }, t('reason') + ': ' + (f.reason || t('no_reason'))),
        el('pre', { class: 'body' }, r.body || ''),
        el('div', { class: 'actions' },
          el('button', { type: 'button', class: 'danger', 'data-act': 'forget-apply',
            onclick: () => act('/api/forget', { id: r.id, apply: true }, r.id + ' ' + t('retired')) }, t('retire')),
          el('button', { type: 'button', 'data-act': 'forget-keep',
            onclick: () => act('/api/forget', { id: r.id, apply: false }, r.id + ' ' + t('kept')) }, t('keep')),
          recordLink(r))); }));
  }
  /* anything else the API lists beside the candidates is shown as records */
  for (const [k, v] of Object.entries(j)) {
    if (k === 'candidates' || k === 'forgets' || !Array.isArray(v) || !v.length) continue;
    main.append(el('h2', null, k.replace(/_/g, ' ') + ' (' + v.length + ')'),
      ...v.map(x => { const r = x.record || x; return el('article', { class: 'card' }, el('h3', null, title(r)), meta(r),
        el('pre', { class: 'body' }, r.body || ''), recordLink(r)); }));
  }
}

/* ------------------------------------------------------------ records */

function bar(label, v, max, marker) {
  const w = Math.max(0, Math.min(1, (v || 0) / (max || 1)));
  const b = el('div', { class: 'bar', role: 'img', 'aria-label': label + ' ' + Number(v).toFixed(3) }, el('span'));
  b.firstChild.style.width = (w * 100).toFixed(1) + '%';
  if (marker !== undefined) { const i = el('i'); i.style.left = (Math.min(1, marker / (max || 1)) * 100).toFixed(1) + '%'; b.append(i); }
  return [el('span', null, label), b, el('span', { class: 'num' }, Number(v).toFixed(3))];
}

function hitCard(h, res) {
  const r = h.record;
  /* score and weight are not 0..1: scale them to the largest of this result */
  const top = k => Math.max(1, ...res.hits.map(x => x[k] || 0));
  const bars = [bar(t('score'), h.score, top('score')), bar(t('relevance'), h.relevance, 1),
    bar(t('lexical'), h.lexical, 1, res.floor), bar(t('weight'), h.weight, top('weight'))];
  if (res.hybrid) bars.push(bar(t('cosine'), h.cosine, 1, res.cos_floor), bar(t('rrf'), h.rrf, 0.05), bar(t('decay'), h.decay, 1));
  return el('article', { class: 'card', 'data-id': r.id, tabindex: '-1' },
    el('h3', null, el('button', { type: 'button', class: 'link', onclick: () => go('record', r.id) }, title(r))), meta(r),
    el('div', { class: 'bars' }, bars.flat()),
    el('div', { class: 'meta' }, el('span', null, 'BM25 ' + Number(h.bm25).toFixed(3) + ' (#' + h.bm25_rank + ')'),
      res.hybrid ? el('span', null, 'dense #' + h.dense_rank + (h.basis ? ' · ' + h.basis : '')) : null,
      h.matched ? el('span', null, t('matched') + ': ' + h.matched) : null),
    h.explain ? el('details', null, el('summary', null, t('explain')), el('pre', { class: 'body' }, h.explain)) : null);
}

function options(name, values, cur) {
  return el('select', { name, 'aria-label': t(name) }, el('option', { value: '' }, t('any')),
    values.map(v => el('option', { value: v, selected: v === cur }, v)));
}

async function viewRecords(main, params) {
  const p = params || new URLSearchParams();
  const q = el('input', { type: 'search', name: 'q', id: 'q', value: p.get('q') || '', placeholder: t('question'), 'aria-label': t('question') });
  const form = el('form', { class: 'filters', role: 'search' },
    el('label', null, t('search'), q),
    el('label', null, t('kind'), options('kind', ['decision', 'adr', 'fact', 'rule', 'procedure', 'capability', 'finding', 'history', 'event', 'note'], p.get('kind'))),
    el('label', null, t('status'), options('status', ['all', 'candidate', 'accepted', 'unverified', 'stale', 'superseded', 'historical', 'false', 'retired', 'rejected'], p.get('status'))),
    el('label', null, t('scope'), options('scope', ['workspace', 'global'], p.get('scope'))),
    el('label', null, t('origin'), options('origin', ['file', 'human', 'agent', 'capture', 'reflection'], p.get('origin'))),
    el('button', { type: 'submit', class: 'primary' }, t('search')));
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const np = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) np.set(k, v);
    state.params = np;
    render();
  });
  main.append(form);
  const qs = p.toString();
  const j = await api('/api/records' + (qs ? '?' + qs : ''));
  if (j.hits) {
    main.append(el('p', { class: 'muted' }, (j.hybrid ? t('hybrid') : t('lexical_only')) + ' · ' + t('floor') + ' ' +
      Number(j.floor).toFixed(2) + (j.floor_calibrated ? ' ✓' : '') + ' · ' + t('dropped') + ' ' + j.dropped +
      (j.terms ? ' · ' + t('terms') + ': ' + j.terms : '')));
    if (j.notice) main.append(el('p', null, j.notice));
    if (!j.hits.length) main.append(el('p', { class: 'muted' }, t('no_results')));
    const sc = p.get('scope'), or = p.get('origin');
    j.hits.filter(h => (!sc || h.record.scope === sc) && (!or || h.record.origin === or)).forEach(h => main.append(hitCard(h, j)));
  } else {
    const recs = j.records || [];
    main.append(el('p', { class: 'muted' }, recs.length + ' ' + t('results')));
    recs.forEach(r => main.append(el('article', { class: 'card', 'data-id': r.id, tabindex: '-1' },
      el('h3', null, el('button', { type: 'button', class: 'link', onclick: () => go('record', r.id) }, title(r))), meta(r))));
  }
}

async function viewRecord(main, id) {
  const j = await api('/api/record?id=' + encodeURIComponent(id));
  const r = j.record;
  main.append(el('button', { type: 'button', onclick: () => history.back() }, '← ' + t('back')),
    el('h2', null, title(r)),
    el('dl', { class: 'fields' },
      [['id', r.id], [t('kind'), r.kind], [t('status'), r.status], [t('key'), r.key], [t('scope'), r.scope],
        [t('origin'), r.origin], [t('source'), sourceText(r)], [t('confidence'), Number(r.confidence).toFixed(2)],
        [t('proof'), r.proof], [t('created'), r.created], [t('updated'), r.updated], [t('revision'), r.revision],
        [t('last_seen'), r.last_seen]].filter(x => x[1] !== null && x[1] !== undefined && x[1] !== '')
        .map(([k, v]) => [el('dt', null, k), el('dd', null, String(v))]).flat()),
    el('pre', { class: 'body', id: 'record-body' }, r.body));
  const link = (label, o) => el('p', null, label + ': ', o ? [recordLink(o), ' ', title(o), ' ', el('span', { class: 'tag ' + o.status }, o.status)] : t('none'));
  main.append(link(t('supersedes'), j.supersedes), link(t('superseded_by'), j.superseded_by));
  if (j.status === 'candidate' || r.status === 'candidate')
    main.append(el('div', { class: 'actions' },
      el('button', { type: 'button', class: 'primary', onclick: () => act('/api/approve', { id: r.id }, r.id + ' ' + t('approved')) }, t('approve')),
      el('button', { type: 'button', class: 'danger', onclick: () => act('/api/reject', { id: r.id }, r.id + ' ' + t('rejected')) }, t('reject'))));
  if (j.may_replace && j.may_replace.length)
    main.append(el('h3', null, t('may_replace')), el('ul', null, j.may_replace.map(m =>
      el('li', null, recordLink(m.record), ' ', title(m.record), ' (' + Number(m.similarity).toFixed(2) + ')'))));
  main.append(el('h3', null, t('history') + ' (' + (j.history || []).length + ')'));
  (j.history || []).forEach(h => main.append(el('details', null,
    el('summary', null, t('revision') + ' ' + h.revision + ' · ' + h.updated + ' · ' + h.status), el('pre', { class: 'body' }, h.body))));
  main.append(el('h3', null, t('receipts') + ' (' + (j.receipts || []).length + ')'));
  if ((j.receipts || []).length)
    main.append(el('div', { class: 'scroll' }, el('table', null,
      el('tr', null, el('th', null, t('time')), el('th', null, t('hits_from')), el('th', null, t('query_hash')), el('th', null, t('ids'))),
      j.receipts.map(x => el('tr', null, el('td', null, x.call_time), el('td', null, x.id),
        el('td', null, (x.receipt.query_sha256 || '').slice(0, 12)), el('td', null, (x.receipt.ids || []).join(' ')))))));
}

/* --------------------------------------------------------------- hook */

async function viewHook(main) {
  const j = await api('/api/hook');
  const s = Object.assign({}, j.stats || {});
  if (typeof s.calls === 'number' && typeof s.served === 'number') s.local = s.calls - s.served;
  main.append(el('h2', null, t('hook')),
    el('div', { class: 'stats' }, ['calls', 'p50', 'p90', 'max', 'injected', 'empty', 'captured', 'timeout', 'error', 'served', 'local']
      .map(k => { const key = { p50: 'p50_ms', p90: 'p90_ms', max: 'max_ms' }[k] || k;
        return el('div', { class: 'stat' }, el('b', null, String(s[key] === undefined ? '-' : s[key])), el('span', null, t(k))); })));
  const calls = j.calls || [];
  if (!calls.length) { main.append(el('p', { class: 'muted' }, t('no_calls'))); return; }
  main.append(el('div', { class: 'scroll' }, el('table', null,
    el('tr', null, [t('time'), t('event'), t('outcome'), t('ms'), t('query_hash'), t('ids'), t('detail')].map(h => el('th', null, h))),
    calls.map(c => {
      const rc = c.receipt && c.receipt.data;
      return el('tr', null, el('td', null, c.time), el('td', null, c.event), el('td', null, c.outcome + (c.served ? ' (mcp)' : '')),
        el('td', null, Number(c.ms).toFixed(1)), el('td', null, rc ? (rc.query_sha256 || '').slice(0, 12) : ''),
        el('td', null, rc ? (rc.ids || []).map(id => [el('button', { type: 'button', class: 'link', onclick: () => go('record', id) }, id), ' ']) : ''),
        el('td', null, c.detail));
    }))));
}

/* ------------------------------------------------------------ quality */

/* every series is a rate in 0..1: the no-answer questions answered with
 * nothing are a count in a run (no_answer_empty of no_answer), charted as
 * their share */
const SERIES = [['recall@1', '#2f6f5e'], ['recall@3', '#4f8fb8'], ['recall@5', '#8a6fc1'], ['recall@10', '#c18a2f'],
  ['injection_hit_rate', '#c1432f'], ['no_answer_empty_rate', '#6b6b6b']];

function rateOf(r, k) {
  if (k === 'no_answer_empty_rate')
    return typeof r.no_answer_empty === 'number' && typeof r.no_answer === 'number' && r.no_answer > 0
      ? r.no_answer_empty / r.no_answer : null;
  return typeof r[k] === 'number' && r[k] >= 0 && r[k] <= 1 ? r[k] : null;
}

function svg(tag, attrs) {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

/* one dataset's runs, oldest first: a line per series */
function chart(runs, dataset) {
  const W = 640, H = 240, L = 36, B = 24, n = runs.length;
  const x = i => L + (n < 2 ? (W - L) / 2 : i * (W - L - 10) / (n - 1));
  const y = v => H - B - v * (H - B - 10);
  const g = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart', role: 'img',
    'aria-label': t('quality') + ': ' + dataset, 'data-dataset': dataset });
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    g.append(svg('line', { x1: L, x2: W, y1: y(v), y2: y(v), class: 'grid' }));
    const tx = svg('text', { x: 2, y: y(v) + 4 }); tx.textContent = v.toFixed(2); g.append(tx);
  }
  for (const [k, color] of SERIES) {
    const pts = runs.map((r, i) => { const v = rateOf(r, k); return v === null ? null : [x(i), y(v)]; }).filter(Boolean);
    if (!pts.length) continue;
    if (pts.length > 1) g.append(svg('polyline', { points: pts.map(p => p.join(',')).join(' '), fill: 'none', stroke: color, 'stroke-width': 2, 'data-series': k }));
    pts.forEach(p => g.append(svg('circle', { cx: p[0], cy: p[1], r: 3, fill: color, 'data-series': k })));
  }
  return g;
}

async function viewQuality(main) {
  const j = await api('/api/quality');
  const runs = j.runs || [];
  main.append(el('h2', null, t('quality') + ' (' + runs.length + ' ' + t('runs') + ')'));
  if (!runs.length) { main.append(el('p', { class: 'muted' }, t('no_runs'))); return; }
  /* runs of different question sets are not one time series */
  const byDataset = new Map();
  for (const r of runs) {
    const d = r.dataset === undefined || r.dataset === null ? '-' : String(r.dataset);
    if (!byDataset.has(d)) byDataset.set(d, []);
    byDataset.get(d).push(r);
  }
  for (const [d, rs] of byDataset)
    main.append(el('h3', null, t('dataset') + ': ' + d + ' (' + rs.length + ' ' + t('runs') + ')'), chart(rs, d));
  main.append(el('div', { class: 'legend' }, SERIES.map(([k, c]) => { const i = el('i'); i.style.background = c; return el('span', null, i, k); })));
  const cols = ['recorded', 'dataset', ...SERIES.map(s => s[0]), 'mrr', 'stale_hit_rate'];
  const cell = (r, c) => {
    if (c === 'no_answer_empty_rate') {
      const v = rateOf(r, c);
      return v === null ? '-' : v.toFixed(4) + ' (' + r.no_answer_empty + '/' + r.no_answer + ')';
    }
    return r[c] === undefined || r[c] === null ? '-' : (typeof r[c] === 'number' ? r[c].toFixed(4) : String(r[c]));
  };
  main.append(el('div', { class: 'scroll' }, el('table', null, el('tr', null, el('th', null, '#'), cols.map(c => el('th', null, c))),
    runs.map((r, i) => el('tr', null, el('td', null, String(i + 1)),
      cols.map(c => el('td', null, cell(r, c))))))));
}

/* ------------------------------------------------------------- frame */

function go(view, arg) {
  const hash = '#' + view + (arg ? '/' + encodeURIComponent(arg) : '');
  if (location.hash !== hash) history.pushState(null, '', hash);
  route();
}

function route() {
  const h = location.hash.replace(/^#/, '');
  const [v, a] = h.split('/');
  state.view = ['candidates', 'records', 'hook', 'quality', 'record'].includes(v) ? v : 'candidates';
  state.arg = a ? decodeURIComponent(a) : null;
  render();
}

function paint() {
  document.documentElement.lang = state.lang === 'zh' ? 'zh-CN' : 'en';
  for (const b of document.querySelectorAll('#tabs button')) {
    b.textContent = t(b.dataset.view);
    if (b.dataset.view === state.view || (state.view === 'record' && b.dataset.view === 'records')) b.setAttribute('aria-current', 'page');
    else b.removeAttribute('aria-current');
  }
  document.getElementById('lang').textContent = t('lang');
  const info = state.info;
  document.getElementById('footer').textContent = t('keys') +
    (info ? ' · cairn ' + info.version + ' · ' + t('on_store') + ' ' + info.root : '');
}

async function render() {
  const gen = state.gen = (state.gen || 0) + 1;
  state.after = null;
  document.body.dataset.suggested = '';
  paint();
  const main = document.getElementById('main');
  if (!state.token) { main.replaceChildren(el('p', { class: 'card' }, t('no_token'))); return; }
  const box = el('div');
  try {
    if (state.view === 'candidates') await viewCandidates(box);
    else if (state.view === 'records') await viewRecords(box, state.params);
    else if (state.view === 'record') await viewRecord(box, state.arg);
    else if (state.view === 'hook') await viewHook(box);
    else await viewQuality(box);
  } catch (e) { if (gen === state.gen) status(e.message, true); }
  if (gen !== state.gen) return; /* a newer render (a click, a key) owns the page */
  paint();
  main.replaceChildren(box);
  state.cards = Array.from(main.querySelectorAll('article.card'));
  state.selected = Math.min(state.selected, Math.max(0, state.cards.length - 1));
  select(state.selected, false);
  document.body.dataset.ready = state.view;
  if (state.focusSearch && state.view === 'records') {
    state.focusSearch = false;
    const q = document.getElementById('q');
    if (q) q.focus();
  }
  if (state.after) state.after();
}

function select(i, focus) {
  state.cards.forEach(c => c.classList.remove('selected'));
  const c = state.cards[i];
  if (!c) return;
  state.selected = i;
  c.classList.add('selected');
  if (focus) { c.focus(); c.scrollIntoView({ block: 'nearest' }); }
}

function onKey(ev) {
  const tag = (ev.target.tagName || '').toLowerCase();
  if (tag === 'input' || tag === 'textarea' || tag === 'select' || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const views = ['candidates', 'records', 'hook', 'quality'];
  const card = state.cards[state.selected];
  const press = a => { const b = card && card.querySelector('[data-act="' + a + '"]'); if (b) { ev.preventDefault(); b.click(); } };
  if (ev.key >= '1' && ev.key <= '4') { go(views[Number(ev.key) - 1]); }
  else if (ev.key === '/') {
    ev.preventDefault();
    const q = state.view === 'records' && document.getElementById('q');
    if (q) q.focus();
    else { state.focusSearch = true; go('records'); }
  }
  else if (ev.key === 'j') select(Math.min(state.selected + 1, state.cards.length - 1), true);
  else if (ev.key === 'k') select(Math.max(state.selected - 1, 0), true);
  else if (ev.key === 'a') press('approve');
  else if (ev.key === 'r') press('reject');
  else if (ev.key === 'e') press('edit');
  else if (ev.key === '?') status(t('keys'));
}

async function start() {
  const m = location.hash.match(/token=([0-9a-f]{32})/);
  if (m) {
    sessionStorage.setItem('cairn.token', m[1]);
    history.replaceState(null, '', location.pathname + '#candidates');
  }
  state.token = sessionStorage.getItem('cairn.token');
  state.lang = localStorage.getItem('cairn.lang') || ((navigator.language || '').toLowerCase().startsWith('zh') ? 'zh' : 'en');
  if (state.token) {
    try {
      state.info = await api('/api/info');
      if (!localStorage.getItem('cairn.lang')) state.lang = state.info.lang;
    } catch (e) { status(e.message, true); }
  }
  document.querySelectorAll('#tabs button').forEach(b => b.addEventListener('click', () => go(b.dataset.view)));
  document.getElementById('lang').addEventListener('click', () => {
    state.lang = state.lang === 'zh' ? 'en' : 'zh';
    localStorage.setItem('cairn.lang', state.lang);
    render();
  });
  document.addEventListener('keydown', onKey);
  window.addEventListener('popstate', route);
  route();
}

document.addEventListener('DOMContentLoaded', start);
