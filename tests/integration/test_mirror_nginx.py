"""A real nginx as the fleet's mirror (design.md §4): the fixture mirror served by nginx under a
sub-path, as an ops team would, over plain http on loopback. cudaenv installs from it, resumes a
partial download with nginx's own Range handling, and reports nginx's 404 page as an HTTP error
without hashing or extracting it. Skipped where nginx is not installed (.ci/deps installs it)."""
import hashlib
import os

import pytest

from conftest import PLATFORM, assert_one_line_error, component_path, leftovers

from nginx import NGINX, Nginx


@pytest.fixture
def nginx(fixture_dir, tmp_path):
    if not NGINX:
        pytest.skip("nginx is not installed")
    srv = Nginx(tmp_path / "nginx", {"/nvidia/": fixture_dir / "mirror"})
    srv.url = srv.url("/nvidia")
    yield srv
    srv.stop()


@pytest.fixture
def via_nginx(inst, nginx):
    inst.env["CUDAENV_MIRROR"] = nginx.url
    return inst


def test_install_from_nginx_then_again_changes_nothing(via_nginx, nginx):
    res = via_nginx("install", "tf-2.13", "--json")
    assert res.rc == 0, res
    assert res.json()["changed"] is True
    version = via_nginx.root / "versions" / PLATFORM / "11.8.0+cudnn8.6.0.163"
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
    lib = via_nginx.root / "versions" / PLATFORM / "11.8.0" / "lib64" / "libcudart.so.11.8.89"
    assert lib.is_file()
    assert leftovers(via_nginx.root) == []


def test_nginx_404_page_is_an_http_error_and_nothing_is_installed(via_nginx, nginx):
    via_nginx.env["CUDAENV_MIRROR"] = nginx.url.replace("/nvidia", "/not-the-mirror")
    res = via_nginx("install", "11.8")
    assert_one_line_error(res, 3)
    assert "404" in res.err
    assert not (via_nginx.root / "versions" / PLATFORM / "11.8.0").exists()
    # 4xx is not retried: one request per component at most
    uris = [u for u, _, _ in nginx.requests()]
    assert len(uris) == len(set(uris))
    store = via_nginx.root / "store"
    assert not store.exists() or not any(store.rglob("*.so*"))
