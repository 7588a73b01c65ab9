#!/bin/sh
# spec/nvim/debian13.sh DIR: Debian 13's Neovim (0.10) for `make test-nvim`,
# unpacked into DIR with nothing installed on the system:
#   DIR/apt    an apt state of its own (sources, lists, cache): Debian 13's
#              main from the mirror this machine already uses; the system's
#              sources and lists are not touched
#   DIR/debs   neovim, neovim-runtime and every package they depend on
#              (glibc included), fetched with apt-get download
#   DIR/root   those packages unpacked with dpkg -x
#   DIR/bin/nvim  starts DIR/root's nvim with Debian 13's own loader and
#              libraries (the system's glibc may be older than the one it
#              was built for), its own runtime files and parsers
# Does nothing when DIR/bin/nvim exists. Needs apt-get and the network the
# first time.
set -eu
[ $# = 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(mkdir -p "$1" && cd "$1" && pwd)
[ -x "$dir/bin/nvim" ] && exit 0

# The Debian mirror of the system's own sources (else the main one).
mirror=$(apt-cache policy 2>/dev/null \
  | sed -n 's|^ *[0-9]* \(https\{0,1\}://[^ ]*/debian\) [a-z]*/main .*|\1|p' | head -n 1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
echo "test-nvim: Debian 13's neovim from $mirror into $dir"

mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
echo "deb $mirror trixie main" > "$dir/apt/sources.list"
state="-o Dir::Etc::SourceList=$dir/apt/sources.list -o Dir::Etc::SourceParts=/dev/null \
  -o Dir::State::Lists=$dir/apt/lists -o Dir::Cache=$dir/apt/cache"
# shellcheck disable=SC2086  # option lists are split on purpose
apt-get -q $state -o Debug::NoLocking=1 -o APT::Sandbox::User=root update > /dev/null

# The dependency closure (real packages only: virtual ones print as <name>).
# shellcheck disable=SC2086
packages=$(apt-cache $state depends --recurse --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances neovim neovim-runtime | grep -v '^[ <]' | sort -u)
rm -rf "$dir/debs" "$dir/root" "$dir/bin"
mkdir -p "$dir/debs" "$dir/root" "$dir/bin"
# shellcheck disable=SC2086
(cd "$dir/debs" && apt-get -q $state -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
  download $packages > /dev/null)
for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/root"; done

loader=$(find "$dir/root" -name 'ld-linux*.so.*' -type f | head -n 1)
[ -n "$loader" ] || { echo "test-nvim: no loader in Debian 13's libc6" >&2; exit 1; }
libs=$(dirname "$loader")
cat > "$dir/bin/nvim.new" <<EOF
#!/bin/sh
# written by spec/nvim/debian13.sh: Debian 13's nvim with its own loader
VIMRUNTIME='$dir/root/usr/share/nvim/runtime'
export VIMRUNTIME
# its tree-sitter parsers: Neovim looks in /usr/lib/nvim, or beside the
# executable, which is the loader here
exec '$loader' --library-path '$libs' '$dir/root/usr/bin/nvim' \
  --cmd 'set rtp+=$dir/root/usr/lib/nvim' "\$@"
EOF
chmod +x "$dir/bin/nvim.new"
"$dir/bin/nvim.new" --version | head -n 1
mv "$dir/bin/nvim.new" "$dir/bin/nvim"
