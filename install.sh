#!/bin/sh
# Installs dl from a release: picks the archive for this machine, checks it against the
# release's SHA256SUMS, and puts dl into a folder on PATH without touching a running copy.
# Needs only a POSIX shell, tar, and sha256sum or shasum (plus curl or wget for --url).
#
#   sh install.sh [--from DIR | --url URL] [--prefix DIR] [--libc glibc|musl]
set -eu

prog=install.sh
die() {
	printf '%s: %s\n' "$prog" "$*" >&2
	exit 1
}

usage() {
	cat <<'EOF'
usage: sh install.sh [--from DIR | --url URL] [--prefix DIR] [--libc glibc|musl]

  --from DIR     install from a folder holding the release (SHA256SUMS and the archives);
                 the default when install.sh sits in such a folder
  --url URL      install from a base URL serving the same files (needs curl or wget)
  --prefix DIR   where dl goes (default: ~/.local/bin)
  --libc NAME    Linux only: glibc or musl, when the detection guesses wrong
EOF
}

from='' url='' prefix='' libc=''
while [ $# -gt 0 ]; do
	case $1 in
	--from | --url | --prefix | --libc)
		[ $# -ge 2 ] || die "$1 needs a value (run sh install.sh --help)"
		case $1 in
		--from) from=$2 ;;
		--url) url=$2 ;;
		--prefix) prefix=$2 ;;
		--libc) libc=$2 ;;
		esac
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die "unknown argument '$1' (run sh install.sh --help)" ;;
	esac
done

[ -n "$from" ] && [ -n "$url" ] && die "give --from DIR or --url URL, not both"
if [ -z "$from" ] && [ -z "$url" ]; then
	here=$(cd "$(dirname "$0")" && pwd -P)
	[ -f "$here/SHA256SUMS" ] || die "give --from DIR or --url URL: no SHA256SUMS beside $0"
	from=$here
fi
case $libc in '' | glibc | musl) ;; *) die "--libc must be glibc or musl, not '$libc'" ;; esac

# Linux with musl (Alpine) needs the -musl build: ldd names musl there, and glibc's getconf
# knows GNU_LIBC_VERSION where musl's does not.
detect_libc() {
	if ldd --version 2>&1 | grep -qi musl; then
		echo musl
	elif getconf GNU_LIBC_VERSION >/dev/null 2>&1; then
		echo glibc
	elif ls /lib/ld-musl-* >/dev/null 2>&1; then
		echo musl
	else
		echo glibc
	fi
}

# The release target of this machine, e.g. linux-arm64-musl; refuses what no build exists for.
detect_platform() {
	os=$(uname -s)
	arch=$(uname -m)
	case $arch in
	x86_64 | amd64) cpu=x64 ;;
	aarch64 | arm64) cpu=arm64 ;;
	*) cpu='' ;;
	esac
	case $os in
	Linux) [ -n "$cpu" ] && echo "linux-$cpu$([ "${libc:-$(detect_libc)}" = musl ] && echo -musl)" ;;
	Darwin)
		# An x86_64 shell under Rosetta on Apple Silicon still gets the native build.
		[ "$cpu" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || true)" = 1 ] && cpu=arm64
		[ -n "$cpu" ] && echo "darwin-$cpu"
		;;
	esac
	return 0
}

platform=$(detect_platform)
[ -n "$platform" ] || die "no dl build for $(uname -s) $(uname -m): releases exist for Linux and macOS on x86_64 and arm64"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dl-install.XXXXXX")
new=''
cleanup() {
	rm -rf "$tmp"
	[ -z "$new" ] || rm -f "$new"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Copy one release file into $tmp, from the folder or the URL.
fetch() {
	if [ -n "$from" ]; then
		[ -f "$from/$1" ] || return 1
		cp "$from/$1" "$tmp/$1"
	elif command -v curl >/dev/null 2>&1; then
		curl -fsSL -o "$tmp/$1" "${url%/}/$1"
	elif command -v wget >/dev/null 2>&1; then
		wget -q -O "$tmp/$1" "${url%/}/$1"
	else
		die "--url needs curl or wget"
	fi
}

where=${from:-$url}
[ -z "$from" ] || [ -d "$from" ] || die "--from $from is not a folder; give the folder that holds SHA256SUMS and the archives"
fetch SHA256SUMS || die "no SHA256SUMS in $where: refusing to install anything unverified"
# The one archive for this platform: dl-<version>-linux-x64.tar.gz is not ...-linux-x64-musl.tar.gz.
archive=$(awk -v p="-$platform.tar.gz" '{ sub(/\r$/, ""); n = $2; sub(/^\*/, "", n) }
	substr(n, 1, 3) == "dl-" && length(n) > length(p) && substr(n, length(n) - length(p) + 1) == p { print n; exit }' "$tmp/SHA256SUMS")
[ -n "$archive" ] || die "SHA256SUMS in $where has no entry for $platform: refusing to install an unverified dl"
expected=$(awk -v n="$archive" '{ sub(/\r$/, ""); f = $2; sub(/^\*/, "", f) } f == n { print $1; exit }' "$tmp/SHA256SUMS")
fetch "$archive" || die "$archive is listed in SHA256SUMS but missing from $where"

if command -v sha256sum >/dev/null 2>&1; then
	actual=$(sha256sum "$tmp/$archive" | awk '{ print $1 }')
elif command -v shasum >/dev/null 2>&1; then
	actual=$(shasum -a 256 "$tmp/$archive" | awk '{ print $1 }')
else
	die "needs sha256sum or shasum to check the download"
fi
[ "$actual" = "$expected" ] || die "checksum mismatch for $archive (SHA256SUMS: $expected, file: $actual): refusing to install it"

mkdir "$tmp/x"
tar -xzf "$tmp/$archive" -C "$tmp/x" || die "cannot unpack $archive"
bin="$tmp/x/${archive%.tar.gz}/dl"
[ -f "$bin" ] && [ ! -L "$bin" ] || die "$archive holds no ${archive%.tar.gz}/dl"

prefix=${prefix:-${HOME:?HOME is not set; give --prefix DIR}/.local/bin}
mkdir -p "$prefix" || die "cannot create $prefix"
prefix=$(cd "$prefix" && pwd -P)
target="$prefix/dl"
[ ! -d "$target" ] || die "$target is a folder; move it away or choose another --prefix"

# A running dl serve keeps the file it started from: the new binary is written beside it
# and renamed over the name, which replaces the name and never the old file's contents.
# mktemp creates the file itself, so nothing planted under that name can redirect the copy.
new=$(mktemp "$prefix/.dl.new.XXXXXX") || die "cannot write into $prefix"
cp "$bin" "$new" || die "cannot write into $prefix"
chmod 755 "$new"
if ! version=$("$new" --version 2>&1); then
	hint=''
	case $platform in *-musl) hint='; on Alpine: apk add libstdc++ libgcc' ;; esac
	die "the $platform build does not run here ($(printf '%s' "$version" | head -n 1))$hint"
fi
if [ -f "$target" ] && cmp -s "$new" "$target"; then
	echo "$version is already installed at $target"
else
	mv -f "$new" "$target" || die "cannot rename the new dl over $target"
	echo "installed $version at $target"
fi

# The predecessor's watcher name: dl started as delegate-wait behaves as dl wait. Made
# only where nothing else has that name: the link this script made (to dl, beside it) is
# made again; anything else there, a file or a link of the user's own, is kept.
wait_link="$prefix/delegate-wait"
if [ ! -e "$wait_link" ] && [ ! -L "$wait_link" ]; then
	ln -s dl "$wait_link" || die "cannot link $wait_link to dl"
elif [ -L "$wait_link" ] && [ "$(readlink "$wait_link")" = dl ]; then
	: # ours already
else
	echo "kept $wait_link (not a link dl made); dl wait does the same"
fi

# The path in a form a shell reads back as one word.
quoted=$target
case $target in *[!A-Za-z0-9/._+-]*) quoted="'$(printf '%s' "$target" | sed "s/'/'\\\\''/g")'" ;; esac
echo
echo "Next: $quoted init   (finds your model server and writes the settings every dl process reads)"
echo "Then register it with Claude Code, once for every project (the line dl init prints too):"
echo "  claude mcp add delegate-local --scope user -- $quoted serve"
case ":${PATH:-}:" in
*":$prefix:"*) ;;
*)
	echo
	echo "$prefix is not on your PATH; to run dl by name, add to your shell's profile:"
	echo "  export PATH=\"$prefix:\$PATH\""
	;;
esac
