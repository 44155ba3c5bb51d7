#!/bin/sh
# The `dl`, `delegate-wait` and `delegate-local` commands of the npm package delegate-local.
# npm installs the dl binary built for this machine as one of the package's optional
# dependencies, @delegate-local/<target>, chosen by its os/cpu/libc fields. This script
# finds that binary and execs it: the process the host started becomes dl itself, so the
# MCP stdio stream and every signal reach dl untouched and no shell or Node process stays
# in between. It needs no install script and no Node.js at run time.
set -u

scope=@delegate-local
supported='linux-x64, linux-arm64, linux-x64-musl, linux-arm64-musl, darwin-x64, darwin-arm64'

fail() {
	printf 'dl (npm package delegate-local): %s\n' "$1" >&2
	exit 1
}

# This script's own file, through the links npm makes (…/bin/dl -> ../lib/node_modules/delegate-local/bin/dl).
script=$0
case $script in */*) ;; *) script=$(command -v -- "$script") || fail "cannot tell where $0 is installed" ;; esac
invoked=$script
while [ -L "$script" ]; do
	link=$(readlink "$script") || fail "cannot read the link $script"
	case $link in /*) script=$link ;; *) script=${script%/*}/$link ;; esac
done
package=$(cd -P "${script%/*}/.." && pwd -P) || fail "cannot enter the folder of $script"

# The "version" of a package.json (npm writes ours; the first such key is the package's).
version_of() {
	sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' "$1" 2>/dev/null | head -n 1
}
version=$(version_of "$package/package.json")
[ -n "$version" ] || fail "$package/package.json names no version: this script runs as bin/dl of the installed delegate-local package"

# glibc or musl, as install.sh tells them apart (ldd names musl; glibc's getconf knows its version).
libc() {
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

# The release targets that run here, best first; empty where dl has no build.
targets() {
	case $(uname -m) in
	x86_64 | amd64) cpu=x64 ;;
	aarch64 | arm64) cpu=arm64 ;;
	*) return 0 ;;
	esac
	case $(uname -s) in
	Linux) [ "$(libc)" = musl ] && echo "linux-$cpu-musl" || echo "linux-$cpu" ;;
	Darwin)
		# An x86_64 Node under Rosetta installs darwin-x64; the native build is preferred when present.
		[ "$cpu" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null)" = 1 ] && echo darwin-arm64
		echo "darwin-$cpu"
		;;
	esac
}

# Looks for $scope/$1 at this launcher's version as Node looks up a dependency: in the
# node_modules of the launcher's folder and of every folder above it. Sets `found` to its
# binary; notes copies of another version, or without an executable dl, in `skipped`.
found='' skipped=''
find_binary() {
	dir=$package
	while :; do
		case $dir in
		*/node_modules) ;;
		*)
			candidate=$dir/node_modules/$scope/$1
			if [ -f "$candidate/package.json" ]; then
				copy=$(version_of "$candidate/package.json")
				if [ "$copy" != "$version" ]; then
					skipped="$skipped; $candidate is version ${copy:-unknown}"
				elif [ ! -x "$candidate/bin/dl" ]; then
					skipped="$skipped; $candidate has no executable bin/dl"
				else
					found=$candidate/bin/dl
					return 0
				fi
			fi
			;;
		esac
		[ "$dir" = / ] && return 1
		dir=${dir%/*}
		[ -n "$dir" ] || dir=/
	done
}

# The command a person or a host types to run this dl, which dl prints in the lines it
# gives them (claude mcp add … serve, dl wait …) instead of the binary deep in node_modules:
# this script as it was started, made absolute but not resolved (the bin link on PATH,
# stable across upgrades), or npx when it runs from npx's cache (gone at its next prune).
typed_command() {
	case $package in */_npx/*)
		echo npx
		return 0
		;;
	esac
	case $invoked in
	/*) echo "$invoked" ;;
	*) printf '%s/%s\n' "$(cd -- "${invoked%/*}" && pwd)" "${invoked##*/}" ;;
	esac
}

wanted=$(targets)
for target in $wanted; do
	find_binary "$target" || continue
	case ${0##*/} in delegate-wait) exec "$found" wait "$@" ;; esac
	DELEGATE_COMMAND=$(typed_command) && export DELEGATE_COMMAND
	exec "$found" "$@"
done

machine="$(uname -s) $(uname -m)"
[ -n "$wanted" ] || fail "no dl build for $machine: dl is built for $supported. install.sh installs the same builds from a release folder; on another system, build dl from source (\"Build from source\" in docs/INSTALL.md)."
first=$(printf '%s\n' "$wanted" | head -n 1)
fail "the dl binary for this machine, $first, is not installed: it comes as the optional dependency $scope/$first@$version, which npm leaves out under --omit=optional or when node_modules came from another machine${skipped}. Reinstall with npm install -g delegate-local@$version --include=optional, or install the release archive with sh install.sh --from <release folder>."
