#!/usr/bin/env bash
# Install the Debian packages fsvol needs to build and test, when missing.
# Idempotent: does nothing when everything is there. Usage: scripts/deps.sh [--check]
set -euo pipefail

pkgs=(gcc make pkg-config libfuse3-dev fuse3 liburing-dev check libnbd-dev
      fio e2fsprogs nbdkit libnbd-bin gnuplot-nox bindfs jq util-linux procps psmisc
      python3 python3-jsonschema python3-prometheus-client tmux groff-base man-db
      passwd strace clang-14 libclang-rt-14-dev iproute2
      libmicrohttpd-dev xxd curl chromium prometheus libisal-dev grub-common
      qemu-system-x86 mdadm busybox-static kmod cpio xz-utils)
# tests/tools/mdguest.sh also fetches Debian's kernel package (apt-get download
# into its cache, never installed): it needs the package lists.

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$st" == "install ok installed" ]] || missing+=("$p")
done
lists_ok() { [[ -n $(apt-cache depends linux-image-amd64 2>/dev/null | grep -m1 'Depends: linux-image-') ]]; }
if [[ ${#missing[@]} -eq 0 ]]; then
	lists_ok && exit 0
	[[ "${1:-}" == "--check" ]] && { echo "deps: no package lists (apt-get update)" >&2; exit 1; }
	[[ $(id -u) -eq 0 ]] && apt-get update -q >/tmp/fsvol-deps.log 2>&1 || true
	exit 0
fi
[[ "${1:-}" == "--check" ]] && { echo "deps: missing: ${missing[*]}" >&2; exit 1; }

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: apt-get not found; install these packages (Debian names): ${missing[*]}" >&2
	exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo=(sudo -n)
	else
		echo "deps: not root; run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
		exit 1
	fi
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Try the existing package lists first; refresh them when a package is not found.
if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/fsvol-deps.log 2>&1; then
	"${sudo[@]}" apt-get update -q >>/tmp/fsvol-deps.log 2>&1 || true
	if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/fsvol-deps.log 2>&1; then
		tail -20 /tmp/fsvol-deps.log >&2
		echo "deps: apt-get install failed for: ${missing[*]} (log: /tmp/fsvol-deps.log)" >&2
		exit 1
	fi
fi
echo "deps: done" >&2
