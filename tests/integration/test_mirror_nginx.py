"""A real nginx as the fleet's mirror (design.md §4): the fixture mirror served by nginx under a
sub-path, as an ops team would, over plain http on loopback. cudaenv installs from it, resumes a
partial download with nginx's own Range handling, and reports nginx's 404 page as an HTTP error
without hashing or extracting it. Skipped where nginx is not installed (.ci/deps installs it)."""
import hashlib
import os
import shutil
import socket
import subprocess
import time

import pytest

from conftest import assert_one_line_error, component_path, leftovers

# /usr/sbin is not on every user's PATH
NGINX = shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def nginx(fixture_dir, tmp_path):
    if not NGINX:
        pytest.skip("nginx is not installed")
    prefix = tmp_path / "nginx"
    (prefix / "logs").mkdir(parents=True)
    port = free_port()
    # As root the workers would switch to 'nobody', who cannot read pytest's private tmp folders.
    user = "user root;" if os.geteuid() == 0 else ""
    (prefix / "nginx.conf").write_text(f"""
{user}
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/logs/error.log warn;
events {{ worker_connections 64; }}
http {{
    log_format ranges '$request_uri $status $http_range $body_bytes_sent';
    access_log {prefix}/logs/access.log ranges;
    client_body_temp_path {prefix}/tmp-body;
    proxy_temp_path {prefix}/tmp-proxy;
    fastcgi_temp_path {prefix}/tmp-fastcgi;
    uwsgi_temp_path {prefix}/tmp-uwsgi;
    scgi_temp_path {prefix}/tmp-scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        location /nvidia/ {{ alias {fixture_dir / "mirror"}/; }}
    }}
}}
""")
    proc = subprocess.Popen([NGINX, "-p", str(prefix), "-e", str(prefix / "logs" / "error.log"),
                             "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"nginx did not start: {proc.stderr.read().decode()}")
            time.sleep(0.05)

    class Nginx:
        url = f"http://127.0.0.1:{port}/nvidia"

        @staticmethod
        def requests():
            """(uri, status, range header) for every request nginx logged."""
            lines = (prefix / "logs" / "access.log").read_text().splitlines()
            return [tuple(line.split(" ")[:3]) for line in lines]

    yield Nginx
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def via_nginx(inst, nginx):
    inst.env["CUDAENV_MIRROR"] = nginx.url
    return inst


def test_install_from_nginx_then_again_changes_nothing(via_nginx, nginx):
    res = via_nginx("install", "tf-2.13", "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is True
    version = via_nginx.root / "versions" / "11.8.0+cudnn8.6.0.163"
    assert (version / "lib64" / "libcudart.so.11.8.89").is_file()
    assert (version / "lib64" / "libcudnn.so.8").exists()
    served = nginx.requests()
    assert served and all(status == "200" for _, status, _ in served), served
    assert via_nginx.server.requests == []  # everything came from nginx, not the test server
    again = via_nginx("install", "tf-2.13", "--json")
    assert again.rc == 0 and again.json()["changed"] is False
    assert nginx.requests() == served  # nothing asked of the mirror the second time
    assert leftovers(via_nginx.root) == []


def test_partial_download_is_resumed_with_nginx_range_support(via_nginx, nginx):
    path = component_path(via_nginx.fixture, "11.8.0", "cuda_cudart")
    data = (via_nginx.fixture / "mirror" / path.lstrip("/")).read_bytes()
    cut = len(data) // 2
    downloads = via_nginx.root / "cache" / "downloads"
    downloads.mkdir(parents=True)
    (downloads / (hashlib.sha256(data).hexdigest() + ".partial")).write_bytes(data[:cut])
    res = via_nginx("install", "11.8")
    assert res.rc == 0, res
    mine = [r for r in nginx.requests() if r[0] == "/nvidia" + path]
    assert mine == [("/nvidia" + path, "206", f"bytes={cut}-")]
    lib = via_nginx.root / "versions" / "11.8.0" / "lib64" / "libcudart.so.11.8.89"
    assert lib.is_file()
    assert leftovers(via_nginx.root) == []


def test_nginx_404_page_is_an_http_error_and_nothing_is_installed(via_nginx, nginx):
    via_nginx.env["CUDAENV_MIRROR"] = nginx.url.replace("/nvidia", "/not-the-mirror")
    res = via_nginx("install", "11.8")
    assert_one_line_error(res, 3)
    assert "404" in res.err
    assert not (via_nginx.root / "versions" / "11.8.0").exists()
    # 4xx is not retried: one request per component at most
    uris = [u for u, _, _ in nginx.requests()]
    assert len(uris) == len(set(uris))
    store = via_nginx.root / "store"
    assert not store.exists() or not any(store.rglob("*.so*"))
