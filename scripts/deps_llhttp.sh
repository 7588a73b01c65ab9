#!/usr/bin/env bash
# scripts/deps_llhttp.sh APT_DIR PACKAGE...: llhttp's header and library
# (libllhttp-dev). Where apt knows the package (Debian 13, Ubuntu 24.04) it
# is installed as usual; Debian 12 has none, so Debian 13's packages
# (PACKAGE..., libllhttp9.2 needs only libc6) are fetched from the mirror
# this machine already uses, through an apt state of their own under
# APT_DIR (the system's sources are not touched), and installed with dpkg.
aptdir=$1; shift
if dpkg -s libllhttp-dev 2>/dev/null | grep -q '^Status: install ok installed'; then exit 0; fi
sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
if [ -n "$(apt-cache policy libllhttp-dev 2>/dev/null | grep 'Candidate:' | grep -v '(none)')" ]; then
  echo "deps: installing libllhttp-dev"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libllhttp-dev; exit $?
fi
mirror=$(apt-cache policy | sed -n 's|^ *[0-9]* \(https\{0,1\}://[^ ]*/debian\) bookworm/main .*|\1|p' | head -n 1)
[ -n "$mirror" ] || { echo "deps: no Debian mirror found for llhttp; install libllhttp-dev (llhttp 9)" >&2; exit 1; }
echo "deps: llhttp from Debian 13 ($mirror)"
dir=$(mkdir -p "$aptdir" && cd "$aptdir" && pwd)
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" &&
echo "deb $mirror trixie main" > "$dir/sources.list" &&
apt="apt-get -q -o Dir::Etc::SourceList=$dir/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$dir/lists -o Dir::Cache=$dir/cache -o Debug::NoLocking=1 -o APT::Sandbox::User=root" &&
$apt update >/dev/null && (cd "$dir" && $apt download "$@") &&
$sudo dpkg -i "$dir"/libllhttp9.2_*.deb "$dir"/libllhttp-dev_*.deb
