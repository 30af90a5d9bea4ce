#!/usr/bin/python3
"""Drive the cairn review console in headless Chromium (tests/t_console.sh).

    cdp_console.py CHROMIUM URL OUTDIR APPROVE_ID REJECT_ID MARKUP_ID NEW_ID OLD_ID FORGET_ID

Speaks the DevTools protocol directly over --remote-debugging-pipe (file
descriptors 3 and 4, NUL-separated JSON): no npm, no WebSocket library.
Opens URL (the one `cairn serve` printed), checks that stored markup stays
text, approves APPROVE_ID with a real mouse click, rejects REJECT_ID with
the keyboard (j ... r), approves NEW_ID as the replacement of OLD_ID
(the button its suggestions add), retires FORGET_ID (an agent's pending
forget) with its Retire button, checks that no view shows "[object ...]"
(a list handed to the DOM's append as one node), charts each dataset's
runs apart on a 0-1 axis, switches to Chinese, checks a narrow window does
not scroll sideways, searches, and saves screenshots to OUTDIR. Prints
"ok NAME" or "FAIL NAME: why" per check; every wait is bounded.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class CDP:
    def __init__(self, chromium, profile):
        to_r, self.to_w = os.pipe()      # we write, Chromium reads fd 3
        self.from_r, from_w = os.pipe()  # Chromium writes fd 4

        def child():
            os.dup2(to_r, 100)
            os.dup2(from_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.p = subprocess.Popen(
            [chromium, '--headless=new', '--no-sandbox', '--disable-gpu',
             '--remote-debugging-pipe', '--user-data-dir=' + profile,
             '--no-first-run', '--no-default-browser-check',
             '--disable-extensions', '--disable-background-networking',
             '--window-size=1200,900', 'about:blank'],
            preexec_fn=child, close_fds=False,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf = b''
        self.next_id = 0
        self.events = []
        self.session = None

    def _read(self, deadline):
        while b'\0' not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError('no answer from Chromium')
            r, _, _ = select.select([self.from_r], [], [], left)
            if r:
                chunk = os.read(self.from_r, 1 << 20)
                if not chunk:
                    raise EOFError('Chromium closed the pipe')
                self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, browser=False, timeout=20):
        self.next_id += 1
        m = {'id': self.next_id, 'method': method, 'params': params or {}}
        if self.session and not browser:
            m['sessionId'] = self.session
        os.write(self.to_w, json.dumps(m).encode() + b'\0')
        deadline = time.time() + timeout
        while True:
            r = self._read(deadline)
            if r.get('id') == self.next_id:
                if 'error' in r:
                    raise RuntimeError(method + ': ' + r['error'].get('message', ''))
                return r.get('result', {})
            self.events.append(r)

    def eval(self, expr):
        r = self.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True,
                                           'awaitPromise': True})
        if 'exceptionDetails' in r:
            raise RuntimeError('page: ' + json.dumps(r['exceptionDetails'])[:300])
        return r['result'].get('value')

    def wait(self, expr, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.eval(expr)
            if v:
                return v
            time.sleep(0.1)
        return None

    def shot(self, path):
        r = self.call('Page.captureScreenshot', {'format': 'png'})
        with open(path, 'wb') as f:
            f.write(base64.b64decode(r['data']))

    def click(self, selector):
        box = self.eval('(() => { const e = document.querySelector(%s); if (!e) return null;'
                        ' e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect();'
                        ' return [r.x + r.width / 2, r.y + r.height / 2]; })()' % json.dumps(selector))
        if not box:
            return False
        for t in ('mousePressed', 'mouseReleased'):
            self.call('Input.dispatchMouseEvent', {'type': t, 'x': box[0], 'y': box[1],
                                                   'button': 'left', 'clickCount': 1})
        return True

    def key(self, k):
        for t in ('keyDown', 'keyUp'):
            p = {'type': t, 'key': k}
            if t == 'keyDown' and len(k) == 1:
                p['text'] = k
            if k == 'Enter':
                p.update({'code': 'Enter', 'windowsVirtualKeyCode': 13})
                if t == 'keyDown':
                    p['text'] = '\r'
            self.call('Input.dispatchKeyEvent', p)

    def close(self):
        try:
            self.call('Browser.close', browser=True, timeout=5)
        except Exception:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def main():
    chromium, url, out, approve_id, reject_id, markup_id, new_id, old_id, forget_id = sys.argv[1:10]
    results = []

    def check(name, cond, why=''):
        results.append(cond)
        print(('ok ' if cond else 'FAIL ') + name + ('' if cond else ': ' + why), flush=True)

    sel = lambda i, extra='': 'article[data-id="%s"]%s' % (i, extra)
    # Chromium's first answer: a cold start on a loaded 2-core machine (a
    # fresh profile, font caches) has been seen to take over 20 s, so the
    # first call waits up to 60 s, and a browser that never answers is
    # started once more, in a new profile, before the run counts as failed
    for attempt in (1, 2):
        profile = tempfile.mkdtemp(prefix='cairn-chromium-')
        cdp = CDP(chromium, profile)
        try:
            t = cdp.call('Target.createTarget', {'url': 'about:blank'},
                         browser=True, timeout=60)
            break
        except (TimeoutError, EOFError) as e:
            print('chromium attempt %d: %s' % (attempt, e), file=sys.stderr, flush=True)
            cdp.close()
            shutil.rmtree(profile, ignore_errors=True)
            if attempt == 2:
                check('the browser session starts', False, '%s: %s' % (type(e).__name__, e))
                return 1
    try:
        a = cdp.call('Target.attachToTarget', {'targetId': t['targetId'], 'flatten': True},
                     browser=True)
        cdp.session = a['sessionId']
        cdp.call('Page.enable')
        cdp.call('Runtime.enable')
        cdp.call('Emulation.setDeviceMetricsOverride',
                 {'width': 1200, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False})
        cdp.call('Page.navigate', {'url': url})
        ready = cdp.wait('document.body && document.body.dataset.ready === "candidates"'
                         ' && !!document.querySelector(%s)' % json.dumps(sel(approve_id)))
        check('the candidates view renders', bool(ready),
              cdp.eval('document.body ? document.body.innerText.slice(0, 300) : "no body"'))
        check('the token left the address bar',
              '#token=' not in cdp.eval('location.href'), cdp.eval('location.href'))
        inert = cdp.eval('(() => { const c = document.querySelector(%s); if (!c) return "no card";'
                         ' if (c.querySelector("script, img")) return "markup became elements";'
                         ' if (document.scripts.length !== 1) return document.scripts.length + " scripts";'
                         ' const b = c.querySelector("pre.body").textContent;'
                         ' return b.startsWith("<script>") ? "" : "body: " + b; })()'
                         % json.dumps(sel(markup_id)))
        check('stored <script> and <img onerror> render as text', inert == '', str(inert))
        grp = cdp.eval('(() => { const g = document.querySelector('
                       '"section.group[data-group=\\"capability · capability:deploy:s3\\"]");'
                       ' return g ? g.querySelectorAll("article.card").length + " " +'
                       ' g.querySelector("button.primary").textContent : null; })()')
        check('candidates of one command shape are grouped, with one approve for all',
              grp == '2 Approve all (2)', str(grp))
        no_obj = 'document.getElementById("main").innerText.indexOf("[object") < 0'
        check('the candidates view shows no "[object ...]"', bool(cdp.eval(no_obj)),
              cdp.eval('document.getElementById("main").innerText.slice(0, 300)'))
        fg = cdp.eval('(() => { const c = document.querySelector(%s); if (!c) return null;'
                      ' return Array.from(c.querySelectorAll("button")).map(b => b.dataset.act || "")'
                      '.filter(Boolean).join(" "); })()' % json.dumps(sel(forget_id, '.forget')))
        check('a pending forget is a card with Retire and Keep', fg == 'forget-apply forget-keep',
              'card: %s; page: %s' % (fg, cdp.eval('document.getElementById("main").innerText.slice(-300)')))
        cdp.wait('document.body.dataset.suggested === "yes"')
        cdp.shot(os.path.join(out, 'console-candidates.png'))

        clicked = cdp.click(sel(approve_id, ' [data-act="approve"]'))
        gone = clicked and cdp.wait('!document.querySelector(%s)' % json.dumps(sel(approve_id)))
        check('a mouse click approves a candidate', bool(gone),
              cdp.eval('document.getElementById("status").textContent'))

        sugg = cdp.wait('document.body.dataset.suggested === "yes" && !!document.querySelector(%s)'
                        % json.dumps(sel(new_id, ' [data-act="supersede"]')))
        check('a candidate lists the record it may replace', bool(sugg))
        cdp.click(sel(new_id, ' [data-act="supersede"]'))
        gone = cdp.wait('!document.querySelector(%s)' % json.dumps(sel(new_id)))
        check('"approve, replacing this" approves it', bool(gone),
              cdp.eval('document.getElementById("status").textContent'))

        idx = cdp.eval('Array.from(document.querySelectorAll("article.card"))'
                       '.findIndex(c => c.dataset.id === %s)' % json.dumps(reject_id))
        if idx is None or idx < 0:
            check('the keyboard rejects a candidate', False, 'card not found')
        else:
            cdp.eval('document.activeElement && document.activeElement.blur()')
            for _ in range(idx):
                cdp.key('j')
            cdp.key('r')
            gone = cdp.wait('!document.querySelector(%s)' % json.dumps(sel(reject_id)))
            check('the keyboard rejects a candidate (j ... r)', bool(gone),
                  cdp.eval('document.getElementById("status").textContent'))

        clicked = cdp.click(sel(forget_id, '.forget [data-act="forget-apply"]'))
        gone = clicked and cdp.wait('document.body.dataset.ready === "candidates" &&'
                                    ' !document.querySelector(%s)' % json.dumps(sel(forget_id, '.forget')))
        check('Retire applies a pending forget', bool(gone),
              cdp.eval('document.getElementById("status").textContent'))

        cdp.click('#lang')
        zh = cdp.wait('document.documentElement.lang === "zh-CN" &&'
                      ' document.getElementById("tab-candidates").textContent === "候选"')
        check('the interface switches to Chinese', bool(zh),
              cdp.eval('document.getElementById("tab-candidates").textContent'))
        cdp.call('Emulation.setDeviceMetricsOverride',
                 {'width': 390, 'height': 844, 'deviceScaleFactor': 1, 'mobile': False})
        time.sleep(0.3)
        over = cdp.eval('document.documentElement.scrollWidth - window.innerWidth')
        check('a 390 px window does not scroll sideways', over is not None and over <= 1,
              'overflow %s px' % over)
        cdp.shot(os.path.join(out, 'console-narrow-zh.png'))

        cdp.click('#lang')
        en = cdp.wait('document.documentElement.lang === "en" &&'
                      ' document.getElementById("tab-candidates").textContent === "Candidates"')
        check('the interface switches back to English', bool(en),
              cdp.eval('document.getElementById("tab-candidates").textContent'))
        cdp.call('Emulation.setDeviceMetricsOverride',
                 {'width': 1200, 'height': 900, 'deviceScaleFactor': 1, 'mobile': False})
        cdp.key('/')
        focused = cdp.wait('document.activeElement && document.activeElement.id === "q"')
        check('"/" opens the search with the cursor in it', bool(focused))
        cdp.call('Input.insertText', {'text': 'blue-green billing'})
        cdp.key('Enter')
        hits = cdp.wait('document.querySelectorAll("main .bars").length > 0')
        check('a search shows each hit\'s ranking figures', bool(hits),
              cdp.eval('document.getElementById("main").innerText.slice(0, 300)'))
        cdp.shot(os.path.join(out, 'console-search.png'))

        cdp.key('3')
        calls = cdp.wait('document.body.dataset.ready === "hook" &&'
                         ' document.querySelectorAll("main table tr").length')
        check('the hook view lists the calls', calls == 5, 'rows: %s' % calls)
        links = cdp.eval('Array.from(document.querySelectorAll("main td button.link"))'
                         '.filter(b => /^r[0-9a-f]+$/.test(b.textContent)).length')
        check('each injected call links the ids of its receipt', links == 3, 'links: %s' % links)
        cdp.shot(os.path.join(out, 'console-hook.png'))
        cdp.key('4')
        pts = cdp.wait('document.body.dataset.ready === "quality" &&'
                       ' document.querySelectorAll("main svg.chart circle").length')
        check('the quality view charts the eval runs', bool(pts), 'points: %s' % pts)
        q = cdp.eval("""(() => {
            const cs = Array.from(document.querySelectorAll('main svg.chart'));
            const off = cs.flatMap(c => Array.from(c.querySelectorAll('circle')).filter(p => {
                const y = Number(p.getAttribute('cy')); return !(y >= 9 && y <= 217); })
              .map(p => p.dataset.series));
            const n = (c, k) => c.querySelectorAll('circle[data-series="' + k + '"]').length;
            return { sets: cs.map(c => c.dataset.dataset + ':' + n(c, 'recall@1')).join(' '),
                     off: off.join(' '),
                     na: cs.map(c => n(c, 'no_answer_empty_rate')).join(' ') }; })()""")
        check('each dataset is its own chart (no series across datasets)',
              q and q['sets'] == 'adr-workspace:3 clapnq:2', str(q))
        check('every point lies on the 0-1 rate axis (no count plotted as a rate)',
              q and q['off'] == '', str(q))
        check('the no-answer questions left empty are charted as a rate',
              q and q['na'] == '3 2', str(q))
        check('the quality view shows no "[object ...]"', bool(cdp.eval(no_obj)))
        cdp.shot(os.path.join(out, 'console-quality.png'))

        dialogs = [e for e in cdp.events if e.get('method') == 'Page.javascriptDialogOpening']
        check('no script of the store ran (no dialog opened)', not dialogs, str(dialogs)[:200])
    except Exception as e:  # a driver failure is a failed check, not a crash
        check('the browser session', False, '%s: %s' % (type(e).__name__, e))
    finally:
        cdp.close()
        subprocess.run(['rm', '-rf', profile])
    return 0 if all(results) else 1


if __name__ == '__main__':
    sys.exit(main())
