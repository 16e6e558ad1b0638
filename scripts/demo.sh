#!/usr/bin/env bash
# make demo: build a striped and a parity volume out of files, put data on
# them, and show where it went. Cleans up after itself, even on Ctrl-C.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
FSVOL=$here/${FSVOL_BUILD:-build}/bin/fsvol
T=$(mktemp -d /var/tmp/fsvol-demo.XXXXXX)
mounted=()
cleanup() {
	set +e
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		"$FSVOL" umount "${mounted[i]}" >/dev/null 2>&1 || umount -l "${mounted[i]}" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

say "1. A 4-member stripe set (raid0, 64K chunks) out of four 64M files"
run "$FSVOL" create -l raid0 -c 64K -s 64M "$T"/s0 "$T"/s1 "$T"/s2 "$T"/s3
mkdir -p "$T/stripe"
run "$FSVOL" mount "$T/stripe" "$T"/s0 "$T"/s1 "$T"/s2 "$T"/s3
mounted+=("$T/stripe")
run ls -l "$T/stripe"

say "2. Write 32M of random data through the volume, read it back, compare"
head -c 32M /dev/urandom > "$T/ref"
run dd if="$T/ref" of="$T/stripe/volume" bs=1M oflag=direct conv=notrunc status=none
run dd if="$T/stripe/volume" of="$T/back" bs=1M count=32 iflag=direct status=none
run cmp "$T/ref" "$T/back" && echo "identical"

say "3. Counters above (volume) and below (each member) the mapping layer"
echo reset > "$T/stripe/ctl"
run dd if="$T/stripe/volume" of=/dev/null bs=256K count=1 iflag=direct status=none
echo "one 256K read at offset 0 = one 64K read on each of the four members:"
run cat "$T/stripe/stats"

say "4. A raid5 of four 64M files: parity rotates over the members"
run "$FSVOL" create -l raid5 -c 64K -s 64M "$T"/p0 "$T"/p1 "$T"/p2 "$T"/p3
mkdir -p "$T/parity"
run "$FSVOL" mount "$T/parity" "$T"/p0 "$T"/p1 "$T"/p2 "$T"/p3
mounted+=("$T/parity")
run dd if="$T/ref" of="$T/parity/volume" bs=1M oflag=direct conv=notrunc status=none
echo reset > "$T/parity/ctl"
run dd if=/dev/urandom of="$T/parity/volume" bs=4K count=1 seek=5 oflag=direct conv=notrunc status=none
echo "a 4K write costs 2 member reads (old data, old parity) and 2 member writes:"
run cat "$T/parity/stats"
run "$FSVOL" status "$T/parity"

say "5. Where bytes live, and the layout grid"
run "$FSVOL" map -l raid5 -n 4 -c 64K 1M 8K
run "$FSVOL" layout -l raid5 -n 4 -c 64K
run "$FSVOL" layout -l raid6 -n 5 -c 64K

say "6. Unmount (superblocks are marked clean)"
for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do run "$FSVOL" umount "${mounted[i]}"; done
mounted=()
run "$FSVOL" examine "$T/p0"
echo
echo "demo done; everything it made is being removed."
