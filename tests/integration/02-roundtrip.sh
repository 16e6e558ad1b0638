#!/usr/bin/env bash
# 02-roundtrip: every level and algorithm: write random data through
# MNT/volume (O_DIRECT 1M blocks, then buffered odd-sized blocks at an
# unaligned offset), umount, remount, read back (O_DIRECT and buffered),
# cmp equal; redundancy checked from the member files; end-of-volume rules.
. "$(dirname "$0")/../lib.sh"
requires cmp

ODD=3000 # bytes per buffered write: not a multiple of 512
CASES=()

# setup NAME CREATE-ARGS... -- MEMBER...: create, mount on $T/NAME/mnt, write
# the reference through the volume. Volumes stay mounted so the umounts of all
# cases run together (each daemon takes a moment to exit).
setup() {
	local name=$1 cargs=() m=() cap d=$T/$1 seekb cnt
	shift
	while [[ $1 != -- ]]; do cargs+=("$1"); shift; done
	shift
	m=("$@")
	mkdir -p "$d"
	printf '%s\n' "${m[@]}" >"$d/members"
	"$FSVOL" create "${cargs[@]}" "${m[@]}" >"$d/create.out" 2>&1 ||
		fail "$name: create ${cargs[*]}: $(cat "$d/create.out")"
	fsvol_mount "$d/mnt" "${m[@]}"
	cap=$(size_of "$d/mnt/volume")
	echo "$cap" >"$d/cap"
	[[ $cap -gt $((4 * MiB)) ]] || fail "$name: capacity $cap too small"
	grep -q "capacity.*($cap bytes)" "$d/create.out" ||
		fail "$name: MNT/volume is $cap bytes, create said: $(cat "$d/create.out")"

	# 1) the whole volume, O_DIRECT, 1 MiB blocks (the tail block may be short)
	random_file "$d/ref" "$cap"
	dd if="$d/ref" of="$d/mnt/volume" bs=1M oflag=direct conv=notrunc status=none ||
		fail "$name: O_DIRECT write failed"
	# 2) buffered, odd block size, from an unaligned offset in the middle
	seekb=$((cap / 3 / ODD))
	cnt=$((cap / 32 / ODD))
	random_file "$d/patch" $((cnt * ODD))
	echo "$((seekb * ODD)) $((cnt * ODD))" >"$d/patch.at"
	dd if="$d/patch" of="$d/mnt/volume" bs=$ODD seek=$seekb conv=notrunc status=none ||
		fail "$name: buffered write at $((seekb * ODD)) failed"
	dd if="$d/patch" of="$d/ref" bs=$ODD seek=$seekb conv=notrunc status=none
	# 3) 12K across a chunk boundary, O_DIRECT
	head -c 12288 /dev/urandom >"$d/x"
	dd if="$d/x" of="$d/mnt/volume" bs=12288 oflag=direct,seek_bytes seek=$((cap / 2 - 4096)) conv=notrunc status=none ||
		fail "$name: 12K O_DIRECT write failed"
	dd if="$d/x" of="$d/ref" bs=12288 oflag=seek_bytes seek=$((cap / 2 - 4096)) conv=notrunc status=none
	dd if="$d/mnt/volume" bs=1M status=none | cmp - "$d/ref" || fail "$name: readback before remount differs"
	CASES+=("$name")
}

# check NAME: after the umount: redundancy from the member files, remount,
# read back O_DIRECT and buffered.
check() {
	local name=$1 d=$T/$1 m cap off len
	mapfile -t m <"$d/members"
	cap=$(cat "$d/cap")
	read -r off len <"$d/patch.at"
	if [[ $name == raid[1456]* ]]; then
		"$FSVOL_VERIFY" "${m[@]}" >"$d/verify.out" 2>&1 || fail "$name: fsvol-verify: $(cat "$d/verify.out")"
	fi
	fsvol_mount "$d/mnt" "${m[@]}"
	[[ $(size_of "$d/mnt/volume") -eq $cap ]] || fail "$name: capacity changed across remount"
	dd if="$d/mnt/volume" bs=1M iflag=direct status=none | cmp - "$d/ref" ||
		fail "$name: O_DIRECT readback after remount differs"
	dd if="$d/mnt/volume" bs=256K status=none | cmp - "$d/ref" ||
		fail "$name: buffered readback after remount differs"
	# odd-sized buffered reads from the unaligned offset
	dd if="$d/mnt/volume" bs=$ODD iflag=skip_bytes skip="$off" count=$((len / ODD)) status=none | cmp - "$d/patch" ||
		fail "$name: buffered bs=$ODD readback of the patch differs"
}

S=(-s 16M)
setup single -l single "${S[@]}" -- "$T/s0"
# linear: members of different sizes, taken from the files (no -s)
truncate -s $((1 * MiB + 5 * MiB)) "$T/l0"
truncate -s $((1 * MiB + 9 * MiB + 4096)) "$T/l1"
truncate -s $((1 * MiB + 7 * MiB)) "$T/l2"
setup linear -l linear -- "$T/l0" "$T/l1" "$T/l2"
setup raid0 -l raid0 -c 64K "${S[@]}" -- $(members "$T/r0m" 4)
setup raid0-c4k -l raid0 -c 4K -s 8M -- $(members "$T/r0cm" 3)
setup raid1 -l raid1 "${S[@]}" -- $(members "$T/r1m" 3)
setup raid10-n2 -l raid10 -c 64K "${S[@]}" -- $(members "$T/r10nm" 3)
setup raid10-f2 -l raid10 -c 64K --layout f2 "${S[@]}" -- $(members "$T/r10fm" 4)
setup raid10-o2 -l raid10 -c 64K --layout o2 "${S[@]}" -- $(members "$T/r10om" 3)
setup raid4 -l raid4 -c 64K "${S[@]}" -- $(members "$T/r4m" 4)
setup raid5 -l raid5 -c 64K "${S[@]}" -- $(members "$T/r5m" 4)
setup raid5-la -l raid5 -c 32K --layout left-asymmetric "${S[@]}" -- $(members "$T/r5lam" 3)
setup raid5-ra -l raid5 -c 64K --layout right-asymmetric "${S[@]}" -- $(members "$T/r5ram" 5)
setup raid5-rs -l raid5 -c 16K --layout right-symmetric "${S[@]}" -- $(members "$T/r5rsm" 4)
setup raid5-p0 -l raid5 -c 64K --layout parity-first "${S[@]}" -- $(members "$T/r5p0m" 4)
setup raid5-pn -l raid5 -c 64K --layout parity-last "${S[@]}" -- $(members "$T/r5pnm" 3)
setup raid6 -l raid6 -c 64K "${S[@]}" -- $(members "$T/r6m" 5)
setup raid6-ra -l raid6 -c 32K --layout right-asymmetric "${S[@]}" -- $(members "$T/r6ram" 6)

mnts=()
for c in "${CASES[@]}"; do mnts+=("$T/$c/mnt"); done
fsvol_umount_all "${mnts[@]}"
for c in "${CASES[@]}"; do check "$c"; done
fsvol_umount_all "${mnts[@]}"
note "round trips ok: ${CASES[*]}"

MNT=$T/mnt
# --- end of the volume --------------------------------------------------------
"$FSVOL" create -l raid5 -c 64K -s 4M $(members "$T/e" 3) >/dev/null || fail "create for end tests"
fsvol_mount "$MNT" $(members "$T/e" 3)
cap=$(size_of "$MNT/volume")
[[ $cap -eq $((8 * MiB)) ]] || fail "raid5 of 3 x 4M: capacity $cap, expected 8M"
head -c 4096 /dev/urandom >"$T/tail"
# a read that runs past the end returns the bytes up to the end (short)
got=$(dd if="$MNT/volume" bs=4096 count=1 iflag=skip_bytes skip=$((cap - 1000)) status=none | wc -c)
[[ $got -eq 1000 ]] || fail "read of 4096 at end-1000 returned $got bytes, expected 1000"
got=$(dd if="$MNT/volume" bs=4096 count=1 iflag=skip_bytes skip=$cap status=none | wc -c)
[[ $got -eq 0 ]] || fail "read at the end returned $got bytes, expected 0"
# writes past the end fail, O_DIRECT or not, and leave the size alone
expect_fail_msg "" dd if="$T/tail" of="$MNT/volume" bs=4096 count=1 oflag=seek_bytes seek=$cap conv=notrunc status=none
expect_fail_msg "" dd if="$T/tail" of="$MNT/volume" bs=4096 count=1 oflag=seek_bytes,direct seek=$((cap + 4096)) conv=notrunc status=none
expect_fail_msg "" dd if="$T/tail" of="$MNT/volume" bs=4096 count=1 oflag=seek_bytes seek=$((cap - 1000)) conv=notrunc status=none
[[ $(size_of "$MNT/volume") -eq $cap ]] || fail "volume size changed after writes past the end"
# the last full block is writable and reads back
dd if="$T/tail" of="$MNT/volume" bs=4096 count=1 oflag=seek_bytes,direct seek=$((cap - 4096)) conv=notrunc status=none ||
	fail "write of the last 4K failed"
cmp_at "$MNT/volume" "$T/tail" $((cap - 4096)) 4096
fsvol_umount "$MNT"

# --- --buffered members and --page-cache: the same bytes land on the members
random_file "$T/pc" $((2 * MiB))
fsvol_mount --buffered --page-cache "$MNT" $(members "$T/e" 3)
dd if="$T/pc" of="$MNT/volume" bs=64K seek=16 conv=notrunc,fsync status=none ||
	fail "write through --page-cache failed"
cmp_at "$MNT/volume" "$T/pc" $MiB $((2 * MiB))
# members open without O_DIRECT (040000 in fdinfo's octal flags)
pid=$(daemon_pid "$MNT")
for fd in /proc/"$pid"/fd/*; do
	[[ $(readlink "$fd") == "$T/e0" ]] || continue
	flags=$(awk '/^flags:/ { print $2 }' "/proc/$pid/fdinfo/${fd##*/}")
	(((8#$flags & 8#40000) == 0)) || fail "--buffered: member e0 open with O_DIRECT (flags $flags)"
	found=1
done
[[ ${found:-} ]] || fail "no open fd of member e0 in daemon $pid"
# the kernel caches the volume: a second read of the same range never reaches fsvol
dd if="$MNT/volume" of=/dev/null bs=64K skip=16 count=32 status=none
echo reset >"$MNT/ctl"
dd if="$MNT/volume" of=/dev/null bs=64K skip=16 count=32 status=none
[[ $(jq '.volume.reads' "$MNT/stats.json") == 0 ]] ||
	fail "--page-cache: a cached re-read reached fsvol ($(jq '.volume.reads' "$MNT/stats.json") reads)"
fsvol_umount "$MNT"
"$FSVOL_VERIFY" $(members "$T/e" 3) >"$T/verify.out" 2>&1 || fail "--buffered parity: $(cat "$T/verify.out")"
fsvol_mount "$MNT" $(members "$T/e" 3)
dd if="$MNT/volume" bs=1M skip=1 count=2 iflag=direct status=none | cmp - "$T/pc" ||
	fail "data written with --buffered --page-cache differs after an O_DIRECT remount"
fsvol_umount "$MNT"
