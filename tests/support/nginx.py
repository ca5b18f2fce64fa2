"""A real nginx on a free loopback port, serving folders: the mirror tests, the fleet rollout and
the mirror benchmark share it.

    srv = Nginx(prefix_dir, {"/nvidia/": mirror_dir})   # srv.url("/nvidia"), srv.requests()
    srv.stop()
"""
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

NGINX = shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Nginx:
    def __init__(self, prefix, aliases, workers=1, access_log=True):
        """`aliases`: {"/location/": folder}. The access log records URI, status, Range, bytes."""
        if not NGINX:
            raise RuntimeError("nginx is not installed (apt install nginx-light)")
        self.prefix = Path(prefix)
        (self.prefix / "logs").mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        # As root the workers would switch to 'nobody', who cannot read private test folders.
        user = "user root;" if os.geteuid() == 0 else ""
        locations = "\n".join(f"        location {loc} {{ alias {Path(d)}/; }}" for loc, d in aliases.items())
        log = (f"log_format ranges '$request_uri $status $http_range $body_bytes_sent';\n"
               f"    access_log {self.prefix}/logs/access.log ranges;") if access_log else "access_log off;"
        p = self.prefix
        (p / "nginx.conf").write_text(f"""
{user}
worker_processes {workers};
pid {p}/nginx.pid;
error_log {p}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    {log}
    sendfile on;
    client_body_temp_path {p}/tmp-body;
    proxy_temp_path {p}/tmp-proxy;
    fastcgi_temp_path {p}/tmp-fastcgi;
    uwsgi_temp_path {p}/tmp-uwsgi;
    scgi_temp_path {p}/tmp-scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{self.port};
{locations}
    }}
}}
""")
        self.proc = subprocess.Popen([NGINX, "-p", str(p), "-e", str(p / "logs" / "error.log"),
                                      "-c", str(p / "nginx.conf"), "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"nginx did not start: {self.proc.stderr.read().decode()}")
                time.sleep(0.05)

    def url(self, location):
        return f"http://127.0.0.1:{self.port}{location.rstrip('/')}"

    def requests(self):
        """(uri, status, range header) for every request nginx logged."""
        lines = (self.prefix / "logs" / "access.log").read_text().splitlines()
        return [tuple(line.split(" ")[:3]) for line in lines]

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.proc.pid, signal.SIGKILL)
