#!/usr/bin/env bash
# The Debian package, installed for real: `dpkg -i` inside a private mount namespace whose /usr,
# /etc and /var are overlays of this machine's (writes land in a tmpfs, the machine's own files
# and its dpkg database are never changed) and whose /opt, /usr/local, /home and /srv are empty
# tmpfs. Then the demo against the installed /usr/bin/cudaenv as root (machine-wide root,
# `global`, the real ldconfig) and as an unprivileged user (alice, made with useradd inside the
# namespace), then `dpkg --purge`, and a scan that finds nothing of cudaenv's left but alice's
# own root, and the machine's own CUDA (NVIDIA's runfile link, which `global --force` replaced) put
# back with its loader entry working again. Needs root (mount namespaces, dpkg).
#
#   tests/packaging/deb_test.sh build/deb/cudaenv_0.2.0_amd64.deb
#
# CUDAENV_DEB_PREBUILT=DIR: what the test compiles, made beforehand (a root with no compiler: the
# arm64 Debian root .ci/arm64 runs this in): DIR/fixture (fixture_mirror.py's mirror and
# reference, for this architecture), DIR/libcudart.so.12.4.127 and DIR/probe (alice's program,
# linked against libcudart.so.11.0).
set -euo pipefail

deb=$(realpath "${1:?usage: deb_test.sh PACKAGE.deb}")
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "deb_test: needs root (unshare -m, dpkg -i)" >&2
  exit 1
fi

if [ "${CUDAENV_DEB_INSIDE:-}" != 1 ]; then
  work=$(mktemp -d /tmp/cudaenv-deb.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  CUDAENV_DEB_INSIDE=1 CUDAENV_DEB_WORK="$work" \
    unshare --mount --propagation private bash "$0" "$deb"
  exit $?
fi

# ---- inside the namespace -------------------------------------------------------------------
work=$CUDAENV_DEB_WORK
mount -t tmpfs -o mode=0755 cudaenv-deb "$work"
for d in usr etc var; do
  mkdir -p "$work/upper/$d" "$work/work/$d"
  mount -t overlay "overlay-$d" -o "lowerdir=/$d,upperdir=$work/upper/$d,workdir=$work/work/$d" "/$d"
done
for d in /opt /usr/local /home /srv; do
  mount -t tmpfs -o mode=0755 "tmpfs-${d//\//}" "$d"
done
step() { printf '== %s\n' "$*"; }
fail() { printf 'deb_test: FAIL: %s\n' "$*" >&2; exit 1; }
export NO_COLOR=1 LC_ALL=C.UTF-8
unset CUDAENV_ROOT CUDAENV_MIRROR CUDAENV_MANIFESTS CUDAENV_SYSROOT LD_LIBRARY_PATH

step "dpkg -i $(basename "$deb")"
dpkg -i "$deb"
[ "$(dpkg-query -W -f '${Status}' cudaenv)" = "install ok installed" ] || fail "not installed"
for f in /usr/bin/cudaenv /usr/libexec/cudaenv/cudaenv-shim /usr/share/cudaenv/manifests/rules.json \
         /usr/share/man/man1/cudaenv.1.gz /usr/share/man/man1/cudaenv-install.1.gz \
         /usr/share/bash-completion/completions/cudaenv /usr/share/zsh/vendor-completions/_cudaenv \
         /usr/share/fish/vendor_completions.d/cudaenv.fish /usr/share/doc/cudaenv/copyright; do
  [ -e "$f" ] || fail "$f is missing"
done
cudaenv --version
cudaenv --version | grep -q '^manifests: /usr/share/cudaenv/manifests$' || fail "not the packaged manifests"

step "a loopback mirror of fixture releases (NVIDIA's layout, real ELF libraries)"
data=/srv/fixture
pre=${CUDAENV_DEB_PREBUILT:-}
if [ -n "$pre" ]; then
  cp -r "$pre/fixture" "$data"
  mkdir -p "$data/manifests"
  cudaenv __generate-manifests --reference "$data/reference" --out "$data/manifests" >/dev/null
  cp "$src/manifests/profiles.json" "$data/manifests/"
else
  /usr/bin/python3 "$src/tests/support/fixture_mirror.py" "$data" --cudaenv /usr/bin/cudaenv >/dev/null
fi
/usr/bin/python3 "$src/tests/support/fault_server.py" "$data/mirror" --port-file /srv/port &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s /srv/port ] && break; sleep 0.1; done
mkdir -p /etc/cudaenv
cat >/etc/cudaenv/config <<CONF
# written by the test, as the fleet role would
mirror = http://127.0.0.1:$(cat /srv/port)
manifests = $data/manifests
CONF

step "as root: cudaenv install tf-2.13 (into the machine-wide root), global, ldconfig"
(umask 077 && cudaenv install tf-2.13)
v=11.8.0+cudnn8.6.0.163
# versions live in a folder per NVIDIA platform (docs/store.md): this machine's
case "$(dpkg --print-architecture)" in arm64) plat=linux-sbsa ;; *) plat=linux-x86_64 ;; esac
[ -f "/opt/cudaenv/versions/$plat/$v/.cudaenv-version.json" ] || fail "not in /opt/cudaenv"
bad=$(find /opt/cudaenv/versions /opt/cudaenv/store \( -type d ! -perm 0755 \) -o \( -type f ! -perm 0444 ! -perm 0555 \) | head -n 3)
[ -z "$bad" ] || fail "not world-readable and read-only (0444/0555) under umask 077: $bad"
step "the machine had CUDA 12.4 from NVIDIA's runfile: /usr/local/cuda -> /usr/local/cuda-12.4/, its loader entry"
mkdir -p /usr/local/cuda-12.4/lib64
if [ -n "$pre" ]; then
  cp "$pre/libcudart.so.12.4.127" /usr/local/cuda-12.4/lib64/
else
  printf 'int cudaRuntimeGetVersion(int *v) { *v = 12040; return 0; }\n' >/srv/rt12.c
  gcc -shared -fPIC -Wl,-soname,libcudart.so.12 -o /usr/local/cuda-12.4/lib64/libcudart.so.12.4.127 /srv/rt12.c
fi
ln -s libcudart.so.12.4.127 /usr/local/cuda-12.4/lib64/libcudart.so.12
ln -s /usr/local/cuda-12.4/ /usr/local/cuda
echo /usr/local/cuda-12.4/lib64 >/etc/ld.so.conf.d/988_cuda-12.conf
ldconfig
set +e
cudaenv global tf-2.13 2>/srv/global.txt; rc=$?
set -e
[ "$rc" = 7 ] && grep -q -- '--force' /srv/global.txt || fail "global over NVIDIA's link without --force: rc $rc"
cudaenv global --force tf-2.13
[ "$(readlink /usr/local/cuda)" = "/opt/cudaenv/versions/$plat/$v" ] || fail "/usr/local/cuda is $(readlink /usr/local/cuda)"
ldconfig -p | grep -q 'libcudart.so.11.0 .*=> /usr/local/cuda/lib64/' || fail "the real cache has no libcudart from /usr/local/cuda"
cudaenv list
cudaenv doctor --only cuda-link --only cudnn || true   # no GPU here: the driver layers fail

step "as an unprivileged user (alice)"
useradd --create-home --shell /bin/bash alice
as_alice() { runuser -u alice -- env -i HOME=/home/alice PATH=/usr/bin:/bin NO_COLOR=1 LC_ALL=C.UTF-8 "$@"; }
as_alice cudaenv list
as_alice cudaenv list --json | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["root"] == "/home/alice/.cudaenv", doc
assert doc["upstreams"] == ["/opt/cudaenv"], doc
assert [(v["version"], v["upstream"], v["active"]) for v in doc["versions"]] == [("'"$v"'", True, True)], doc'
as_alice cudaenv exec nvcc --version | grep -q 'release 11.8' || fail "alice cannot run the global nvcc"
# the shims (the packaged /usr/libexec/cudaenv/cudaenv-shim) in a login shell
as_alice bash -c 'eval "$(cudaenv init - bash)" && cudaenv rehash >/dev/null && type -P nvcc && nvcc --version' \
  | tee /srv/alice-shim.txt
grep -q '^/home/alice/.cudaenv/shims/nvcc$' /srv/alice-shim.txt || fail "nvcc is not the shim"
[ "$(readlink /home/alice/.cudaenv/shims/nvcc)" = /usr/libexec/cudaenv/cudaenv-shim ] || fail "shim target"
grep -q 'release 11.8' /srv/alice-shim.txt || fail "the shim did not run 11.8's nvcc"
set +e
as_alice cudaenv uninstall "$v" 2>/srv/alice-rm.txt; rc=$?
set -e
cat /srv/alice-rm.txt
[ "$rc" = 6 ] && grep -q 'needs root' /srv/alice-rm.txt || fail "alice's uninstall of a machine-wide version: rc $rc"
[ -d "/opt/cudaenv/versions/$plat/$v" ] || fail "alice removed a machine-wide version"
as_alice cudaenv install tf-2.16
[ -n "$(ls /home/alice/.cudaenv/versions)" ] || fail "alice's own version is not in her root"
# a program alice links against the machine's CUDA loads it through the real loader and cache
cat >/home/alice/probe.c <<'C'
#include <stdio.h>
int cudaRuntimeGetVersion(int *);
int main(void) { int v = 0; cudaRuntimeGetVersion(&v); printf("%d\n", v); return 0; }
C
chown alice /home/alice/probe.c
if [ -n "$pre" ]; then
  install -o alice -m 0755 "$pre/probe" /home/alice/probe
else
  as_alice gcc -o /home/alice/probe /home/alice/probe.c -L/usr/local/cuda/lib64 -l:libcudart.so.11.0
fi
[ "$(as_alice /home/alice/probe)" = 11080 ] || fail "alice's program did not load CUDA 11.8's runtime"

step "as root: cudaenv update from the mirror's channel copy, signed by the site's key"
cudaenv __bundle keygen --out /srv/site --comment "the site's key" >/dev/null
mkdir -p /etc/cudaenv/keys "$data/mirror/cudaenv-channel"
cp /srv/site.pub /etc/cudaenv/keys/site.pub
cudaenv __bundle make --from "$data/manifests" --key /srv/site.secret --serial 2026120702 \
  --out "$data/mirror/cudaenv-channel/manifests.bundle"
cudaenv update
cudaenv --version | grep -q '^manifests serial: 2026120702 (channel' || fail "the channel's set is not in use"
ls /var/lib/cudaenv/trust/*/floor.json >/dev/null || fail "no rollback floor recorded"

step "dpkg --purge cudaenv"
dpkg --purge cudaenv
for p in /usr/bin/cudaenv /usr/libexec/cudaenv /usr/share/cudaenv /usr/share/doc/cudaenv \
         /opt/cudaenv /etc/cudaenv /etc/ld.so.conf.d/000-cudaenv.conf; do
  if [ -e "$p" ] || [ -L "$p" ]; then fail "$p is still there after purge"; fi
done
# what the machine had before cudaenv: its link and what its loader entry finds through it
[ "$(readlink /usr/local/cuda)" = /usr/local/cuda-12.4/ ] || fail "/usr/local/cuda was not put back: $(readlink /usr/local/cuda)"
[ -f /etc/ld.so.conf.d/988_cuda-12.conf ] || fail "NVIDIA's loader entry is gone"
ldconfig -p | grep -q 'libcudart.so.12 .*=> /usr/local/cuda-12.4/lib64/' || fail "the loader does not find CUDA 12.4 again"
# everything the namespace wrote (the overlays' upper layers and the tmpfs mounts), by name
left=$( (find "$work/upper" /opt /usr/local /home -iname '*cudaenv*' -o -path '*/.cudaenv*' \
          -o -lname '*cudaenv*'; grep -rls cudaenv "$work/upper/etc" 2>/dev/null) \
        | grep -v -e '^/home/alice/.cudaenv' -e "^$work/upper/var/log/" -e '/var/lib/dpkg/.*-old$' \
              -e "^$work/upper/var/lib/cudaenv" \
                  -e "^$work/upper/var/cache/" | sort -u || true)
[ -z "$left" ] || fail "left after purge: $(echo "$left" | head -n 10)"
[ -d /home/alice/.cudaenv/versions ] || fail "alice's own root must stay"
ldconfig -p | grep -q /usr/local/cuda/ && fail "the loader cache still lists /usr/local/cuda"

step "the rollback floor outlives the purge: reinstalled, an older bundle is refused"
grep -q '"serial": 2026120702' /var/lib/cudaenv/trust/*/floor.json || fail "the floor did not outlive the purge"
dpkg -i "$deb" >/dev/null
mkdir -p /etc/cudaenv/keys
cp /srv/site.pub /etc/cudaenv/keys/site.pub
printf 'mirror = http://127.0.0.1:%s\n' "$(cat /srv/port)" >/etc/cudaenv/config
cudaenv __bundle make --from "$data/manifests" --key /srv/site.secret --serial 2026120701 \
  --out "$data/mirror/cudaenv-channel/manifests.bundle"
set +e
cudaenv update 2>/srv/older.txt; rc=$?
set -e
cat /srv/older.txt
[ "$rc" = 4 ] && grep -q 'rollback floor' /srv/older.txt || fail "an older bundle after a reinstall: rc $rc"
dpkg --purge cudaenv >/dev/null
echo "deb_test: ok: installed, used as root and as alice, purged; left: alice's own root, the machine's rollback floor (/var/lib/cudaenv/trust), and the machine's own CUDA 12.4 put back"
