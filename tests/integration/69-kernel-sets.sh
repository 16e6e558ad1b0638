#!/usr/bin/env bash
# 69-kernel-sets: every parity and CRC32C kernel set this CPU runs gives the
# same bytes, end to end (docs/parity.md). `fsvol --version` names the sets in
# use, the best ones by default, and follows FSVOL_PARITY_ISA and
# FSVOL_CRC32C_ISA. The same data written through FUSE to a raid6 4+2 (full
# stripes, then small writes: P+Q and read-modify-write) under each parity set
# leaves the same data areas (data, P and Q) on every member; each set reads the
# volume back with two members missing (recovery of two data chunks, of data and
# P, of data and Q, as the stripes rotate); superblocks written under one CRC32C
# set are checked correct under every other.
. "$(dirname "$0")/../lib.sh"
requires_root

cd "$T"
ver_line() { "$FSVOL" --version | sed -n 2p; } # the sets line, under the caller's environment

# --- the sets, as --version names them -------------------------------------------
def=$(ver_line)
[[ $def =~ ^parity:\ ([a-z0-9+]+),\ crc32c:\ ([a-z0-9.+]+)$ ]] || fail "fsvol --version, second line: '$def'"
pbest=${BASH_REMATCH[1]} cbest=${BASH_REMATCH[2]}
psets=() csets=()
for s in portable avx2 avx512 avx512+gfni; do # slowest first; a set the CPU lacks falls back to the best
	got=$(FSVOL_PARITY_ISA=$s ver_line)
	[[ $got == "parity: $s, crc32c: $cbest" ]] && psets+=("$s") && continue
	[[ $got == "$def" ]] || fail "FSVOL_PARITY_ISA=$s: '$got' (default '$def')"
done
for s in portable sse4.2 pclmul avx512+vpclmulqdq; do
	got=$(FSVOL_CRC32C_ISA=$s ver_line)
	[[ $got == "parity: $pbest, crc32c: $s" ]] && csets+=("$s") && continue
	[[ $got == "$def" ]] || fail "FSVOL_CRC32C_ISA=$s: '$got' (default '$def')"
done
[[ ${psets[0]} == portable && ${psets[-1]} == "$pbest" ]] || fail "parity sets ${psets[*]}, default $pbest"
[[ ${csets[0]} == portable && ${csets[-1]} == "$cbest" ]] || fail "crc32c sets ${csets[*]}, default $cbest"
note "parity sets: ${psets[*]}; crc32c sets: ${csets[*]}"

# --- the same writes under each parity set ------------------------------------------
random_file data $((16 * MiB)) # the whole volume: 4 data members of 4 MiB
random_file small $((64 * 1024))
cp data expect
small_writes() { # FILE [DD FLAG]: 4K to 12K writes inside chunks (read-modify-write)
	local off
	for off in 69632 1249280 5394432 13602816; do
		dd if=small of="$1" bs=4K count=$(((off / 4096) % 5 + 1)) seek=$((off / 4096)) \
			conv=notrunc ${2:+"$2"} status=none || fail "small write at $off to $1"
	done
}
small_writes expect
for s in "${psets[@]}"; do
	mkdir -p "v-$s"
	"$FSVOL" create -l raid6 -c 64K -s 4M $(members "v-$s/m" 6) >/dev/null || fail "create under $s"
	FSVOL_PARITY_ISA=$s fsvol_mount "mnt-$s" $(members "v-$s/m" 6)
	dd if=data of="mnt-$s/volume" bs=1M oflag=direct status=none || fail "write under $s"
	small_writes "mnt-$s/volume" oflag=direct
	vol_cmp expect "mnt-$s/volume" || fail "$s: the volume reads back other data"
	fsvol_umount "mnt-$s"
done
# data areas start at 1 MiB (fsvol create's default data offset)
first=${psets[0]}
for s in "${psets[@]:1}"; do
	for i in 0 1 2 3 4 5; do
		cmp -s -i $((1 * MiB)) "v-$first/m$i" "v-$s/m$i" ||
			fail "member $i: the data areas written under $first and $s differ"
	done
done
note "${#psets[@]} sets wrote the same data, P and Q on all 6 members"

# --- recovery: two members missing, read under each set ---------------------------
for s in "${psets[@]}"; do
	FSVOL_PARITY_ISA=$s fsvol_mount --run "deg-$s" "v-$s/m0" "v-$s/m3" "v-$s/m4" "v-$s/m5"
	grep -q degraded "deg-$s/status" || fail "$s: the volume is not degraded: $(cat "deg-$s/status")"
	vol_cmp expect "deg-$s/volume" || fail "$s: reads with members 1 and 2 missing differ"
	fsvol_umount "deg-$s"
done
note "each set rebuilt the reads of a raid6 missing two members"

# --- CRC32C: superblocks written under one set, checked under every other ------------
for s in "${csets[@]}"; do
	for i in 0 3; do
		FSVOL_CRC32C_ISA=$s "$FSVOL" examine "v-$first/m$i" | grep -Eq '^ +Checksum : 0x[0-9a-f]{8} \(correct\)$' ||
			fail "FSVOL_CRC32C_ISA=$s: the superblock of m$i is not correct"
	done
done
mkdir -p vc
FSVOL_CRC32C_ISA=portable "$FSVOL" create -l raid6 -c 64K -s 1M $(members vc/m 4) >/dev/null ||
	fail "create under the portable CRC32C"
fsvol_mount mnt-c $(members vc/m 4) # superblocks, bitmap and bad-block lists read under the best set
fsvol_umount mnt-c
note "superblocks, bitmaps and bad-block lists agree across ${#csets[@]} CRC32C sets"
