#!/usr/bin/python3
"""model-server.py -- a small file server on 127.0.0.1 for the tests of
`cairn model pull` (tests/t_model.sh; test tooling only).

USAGE

    model-server.py DIR PORTFILE LOG

Serves the files of DIR, by the last part of the URL path, so that both a
plain URL (/MODE/FILE) and Hugging Face's layout (/MODE/REPO/resolve/main/
FILE, what HF_ENDPOINT=http://127.0.0.1:PORT/MODE makes cairn ask for)
work. The first path part picks the behaviour:

    ok        200, or 206 for a Range request ("bytes=N-"); every file
              answer carries a strong ETag (of its bytes) and a
              Last-Modified, and a Range request whose If-Range names
              neither is answered 200 with the whole file (RFC 9110)
    cut       the first request for each file sends half its bytes, then
              closes the connection (Content-Length says the whole); later
              requests are served as ok
    cutalways every request sends half of what it promises, then closes
    norange   ignores Range: always 200 with the whole file
    redirect  302 to the same path under /ok
    slow      as ok, in 20 pieces 0.1 s apart
    html      200 with an HTML page
    missing   404
    endless   200 with no length, GGUF magic then zeros until the client
              stops reading (at most 256 MiB)
    huge      200 announcing 10 GB, then 1 MiB, then closes
    changing  the first request for FILE sends half of FILE and closes;
              later ones serve FILE.v2 (another file, another ETag),
              honouring Range, and If-Range as ok does
    trickle   announces the whole file, sends 1 byte a second (at most
              40), then closes

Each request is logged as "MODE FILE RANGE" (RANGE "-" when none). It
listens on a port the OS picks (written to PORTFILE) and exits by itself
after 120 s.
"""

import hashlib
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR, PORTFILE, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
lock = threading.Lock()
cut_done = set()


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send_bytes(self, code, data, headers=(), promise=None, send=None):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length",
                         str(len(data) if promise is None else promise))
        if send is not None:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data if send is None else data[:send])
        self.wfile.flush()
        if send is not None:
            self.close_connection = True

    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        mode, name = parts[0], parts[-1]
        rng = self.headers.get("Range", "-")
        with lock:
            with open(LOG, "a") as f:
                f.write("%s %s %s\n" % (mode, name, rng))
        if mode == "missing":
            return self.send_bytes(404, b"Entry not found")
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "/ok/" + "/".join(parts[1:]))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "html":
            return self.send_bytes(200, b"<html><body>sign in</body></html>",
                                   [("Content-Type", "text/html")])
        if mode == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            chunk = b"\0" * 65536
            try:
                self.wfile.write(b"GGUF")
                for _ in range(4096):  # 256 MiB at most
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if mode == "huge":
            self.send_response(200)
            self.send_header("Content-Length", str(10 ** 10))
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                self.wfile.write(b"GGUF" + b"\0" * (1 << 20))
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        path = os.path.join(DIR, os.path.basename(name))
        first_change = False
        if mode == "changing":
            with lock:
                first_change = name not in cut_done
                cut_done.add(name)
            if not first_change:
                path += ".v2"
        if not os.path.isfile(path):
            return self.send_bytes(404, b"Entry not found")
        with open(path, "rb") as f:
            data = f.read()
        etag = '"%s"' % hashlib.sha256(data).hexdigest()[:24]
        lastmod = time.strftime("%a, %d %b %Y %H:%M:%S GMT",
                                time.gmtime(os.stat(path).st_mtime))
        ifr = self.headers.get("If-Range")
        with lock:
            with open(LOG, "a") as f:
                f.write("%s %s if-range %s\n" % (mode, name, ifr or "-"))
        start = 0
        if ifr is not None and ifr != etag and ifr != lastmod:
            rng = "-"  # the file changed: the whole of it (RFC 9110 13.1.5)
        if rng.startswith("bytes=") and mode != "norange":
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                return self.send_bytes(
                    416, b"", [("Content-Range", "bytes */%d" % len(data))])
        body = data[start:]
        code = 206 if start else 200
        hdr = [("Content-Type", "application/octet-stream"),
               ("Accept-Ranges", "bytes"), ("ETag", etag),
               ("Last-Modified", lastmod)]
        if start:
            hdr.append(("Content-Range", "bytes %d-%d/%d" %
                        (start, len(data) - 1, len(data))))
        cut = False
        if mode == "cutalways":
            cut = True
        elif mode == "cut":
            with lock:
                if name not in cut_done:
                    cut_done.add(name)
                    cut = True
        if cut or first_change:
            return self.send_bytes(code, body, hdr, promise=len(body),
                                   send=len(body) // 2)
        if mode == "trickle":
            self.send_response(code)
            for k, v in hdr:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                for i in range(min(40, len(body))):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(1)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if mode == "slow":
            self.send_response(code)
            for k, v in hdr:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            step = len(body) // 20 + 1
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(0.1)
            return
        return self.send_bytes(code, body, hdr)


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
threading.Timer(120, srv.shutdown).start()
srv.serve_forever()
