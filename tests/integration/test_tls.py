"""https mirrors (reliability.md D9, D11): TLS is verified, a test CA is accepted only when named
explicitly (CUDAENV_CACERT), and an https download is never redirected to http."""
import ssl
import subprocess

import pytest

from conftest import assert_one_line_error, component_path
from fault_server import FaultServer


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
            "-days", "2", "-subj", "/CN=cudaenv test CA", cwd=d)
    # "expired": signed by the test CA with the right name, but its notAfter is yesterday
    for name, san, days in (("good", "IP:127.0.0.1", "2"), ("wrongsan", "DNS:mirror.example.invalid", "2"),
                            ("expired", "IP:127.0.0.1", "-1")):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", "/CN=127.0.0.1", cwd=d)
        (d / f"{name}.ext").write_text(f"subjectAltName={san}\n")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", days, "-extfile", f"{name}.ext", cwd=d)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.pem",
            "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", cwd=d)
    return d


def tls_server(pki, fixture_dir, tmp_path, cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(pki / f"{cert}.pem", pki / f"{cert}.key")
    (tmp_path / "extra").mkdir(exist_ok=True)
    return FaultServer(tmp_path / "extra", fixture_dir / "mirror", tls=ctx)


@pytest.fixture
def https(inst, pki, fixture_dir, tmp_path):
    srv = tls_server(pki, fixture_dir, tmp_path, "good")
    inst.env.update(CUDAENV_MIRROR=srv.url, CUDAENV_CACERT=str(pki / "ca.pem"))
    yield srv
    srv.close()


def test_https_mirror_with_an_explicit_test_ca(inst, https):
    res = inst("install", "11.8")
    assert res.rc == 0, res


def test_unknown_ca_is_refused(inst, https):
    del inst.env["CUDAENV_CACERT"]
    res = inst("install", "11.8")
    assert_one_line_error(res, 3)
    assert "certificate" in res.err.lower()


@pytest.mark.parametrize("cert", ["wrongsan", "self", "expired"])
def test_bad_certificates_are_refused(inst, pki, fixture_dir, tmp_path, cert):
    srv = tls_server(pki, fixture_dir, tmp_path, cert)
    try:
        inst.env.update(CUDAENV_MIRROR=srv.url, CUDAENV_CACERT=str(pki / "ca.pem"))
        res = inst("install", "11.8")
        assert_one_line_error(res, 3)
        assert "certificate" in res.err.lower() or "ssl" in res.err.lower(), res
        assert not (inst.root / "versions").exists() or not any((inst.root / "versions").iterdir())
    finally:
        srv.close()


def test_d9_https_to_http_redirect_is_refused(inst, https, server):
    path = component_path(inst.fixture, "11.8.0", "cuda_cudart")
    https.fault(path, {"kind": "redirect", "to": server.url + path})
    res = inst("install", "11.8")
    assert_one_line_error(res, 3)
    assert server.requests == []  # the plain-http server was never asked
    assert "http" in res.err
