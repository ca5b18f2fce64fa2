#!/usr/bin/env python3
"""A static HTTP server on loopback with Range support and fault injection.

Used by the integration tests (in-process, FaultServer) and by the demo (as a script:
`fault_server.py ROOT --port-file F`). Faults are queued per path; each request to the path
takes the next one, and a path with no queued fault is served normally.

Fault kinds: status(code), redirect(to), redirect_loop, truncate(at), stall(at, secs),
drip(rate: bytes per second, for up to secs), ignore_range, wrong_range, corrupt(at), endless,
html.
"""
import argparse
import os
import posixpath
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cudaenv-test-mirror"

    def log_message(self, fmt, *args):  # keep test output clean
        pass

    def _find(self, path):
        rel = posixpath.normpath(unquote(urlsplit(path).path)).lstrip("/")
        if rel.startswith("..") or "\0" in rel:
            return None
        for root in self.server.roots:
            p = Path(root) / rel
            if p.is_file():
                return p
        return None

    def _headers(self, code, length=None, extra=()):
        self.send_response(code)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.send_header("Connection", "close")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def _write(self, data):
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _stream(self, f, rng):
        """A plain (fault-free) answer, streamed from the file with Range support."""
        size = f.stat().st_size
        start = 0
        if rng and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0] or 0)
            if start >= size:
                self._headers(416, 0, [("Content-Range", f"bytes */{size}")])
                return
            self._headers(206, size - start, [("Content-Range", f"bytes {start}-{size - 1}/{size}")])
        else:
            self._headers(200, size)
        with open(f, "rb") as fh:
            try:
                self.wfile.flush()
                self.connection.sendfile(fh, offset=start)
            except (BrokenPipeError, ConnectionResetError):
                pass

    def do_GET(self):
        srv = self.server
        rng = self.headers.get("Range")
        path = urlsplit(self.path).path
        with srv.lock:
            srv.requests.append((path, rng))
            queue = srv.faults.get(path)
            fault = queue.pop(0) if queue else None
        self.close_connection = True
        kind = fault["kind"] if fault else None
        if kind == "status":
            body = b"<html><body>error</body></html>"
            self._headers(fault["code"], len(body), [("Content-Type", "text/html")])
            self._write(body)
            return
        if kind in ("redirect", "redirect_loop"):
            to = fault.get("to", self.path)
            self._headers(302, 0, [("Location", to)])
            return
        if kind == "endless":
            self._headers(200, None, [("Content-Type", "application/octet-stream")])
            chunk = b"\0" * 65536
            deadline = time.time() + 20
            while time.time() < deadline and self._write(chunk):
                pass
            return
        if kind == "html":
            body = b"<html>not an archive</html>"
            self._headers(200, len(body), [("Content-Type", "text/html")])
            self._write(body)
            return
        f = self._find(self.path)
        if f is None:
            body = b"not found"
            self._headers(404, len(body))
            self._write(body)
            return
        if kind is None:
            self._stream(f, rng)
            return
        data = f.read_bytes()
        if kind == "corrupt":
            at = min(fault.get("at", len(data) // 2), len(data) - 1)
            data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]
        start = 0
        if rng and rng.startswith("bytes=") and kind != "ignore_range":
            start = int(rng[6:].split("-")[0] or 0)
            if start >= len(data):
                self._headers(416, 0, [("Content-Range", f"bytes */{len(data)}")])
                return
            if kind == "wrong_range":
                self._headers(206, len(data), [("Content-Range", f"bytes 0-{len(data) - 1}/{len(data)}")])
                self._write(data)
                return
            body = data[start:]
            self._headers(206, len(body), [("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")])
        else:
            body = data
            self._headers(200, len(body))
        if kind == "truncate":
            self._write(body[:fault["at"]])
            return
        if kind == "stall":
            self._write(body[:fault["at"]])
            time.sleep(fault.get("secs", 30))
            return
        if kind == "drip":
            # just above a client's stall floor, for as long as it listens
            rate = fault.get("rate", 2048)
            deadline = time.time() + fault.get("secs", 60)
            at = 0
            while at < len(body) and time.time() < deadline:
                if not self._write(body[at:at + rate // 4]):
                    return
                at += rate // 4
                time.sleep(0.25)
            return
        self._write(body)


class FaultServer:
    def __init__(self, *roots, tls=None):
        """tls: an ssl.SSLContext to serve https with."""
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "https" if tls else "http"
        if tls:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.httpd.daemon_threads = True
        self.httpd.roots = [str(r) for r in roots]
        self.httpd.faults = {}
        self.httpd.requests = []
        self.httpd.lock = threading.Lock()
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self):
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}"

    def fault(self, path, *faults):
        """Queue faults (dicts with 'kind') for the next requests to path."""
        with self.httpd.lock:
            self.httpd.faults.setdefault(path, []).extend(faults)

    def clear(self):
        with self.httpd.lock:
            self.httpd.faults.clear()
            self.httpd.requests.clear()

    @property
    def requests(self):
        with self.httpd.lock:
            return list(self.httpd.requests)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def main():
    ap = argparse.ArgumentParser(description="serve a directory on 127.0.0.1")
    ap.add_argument("root")
    ap.add_argument("--port-file", required=True, help="write the chosen port here")
    args = ap.parse_args()
    srv = FaultServer(args.root)
    Path(args.port_file).write_text(str(srv.httpd.server_address[1]))
    try:
        srv.thread.join()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
