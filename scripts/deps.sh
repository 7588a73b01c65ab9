#!/usr/bin/env bash
# scripts/deps.sh PACKAGE...: installs the Debian packages among PACKAGE
# that are missing (as root, or through sudo), then llhttp
# (scripts/deps_llhttp.sh through `make deps-llhttp`) and, after an
# install, stops a system nginx the package may have started. MAKE is the
# make to call back.
MAKE=${MAKE:-make}
missing=
for p in "$@"; do
  dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then echo "deps: all present"; $MAKE --no-print-directory deps-llhttp; exit 0; fi
echo "deps: installing$missing"
if [ "$(id -u)" = 0 ]; then sudo=
elif command -v sudo >/dev/null 2>&1; then sudo=sudo
else echo "deps: not root and no sudo; install as root:$missing" >&2; exit 1; fi
$sudo apt-get update &&
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing &&
$MAKE --no-print-directory deps-no-nginx-service deps-llhttp
