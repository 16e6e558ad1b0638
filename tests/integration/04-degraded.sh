#!/usr/bin/env bash
# 04-degraded: volumes with members deleted (one; two for raid6) or with a
# zeroed superblock serve every byte from redundancy; writes made while
# degraded survive a remount; raid0/linear refuse a missing member naming the
# slot; a member failed at runtime (MNT/ctl) while a reader runs loses nothing.
. "$(dirname "$0")/../lib.sh"

# status_state MNT SLOT: the state word of member slot SLOT in fsvol status.
status_line() { "$FSVOL" status "$1" | grep -E "^ *m$2:"; }

# write_ref D CAP: reference over the whole volume, O_DIRECT
write_ref() {
	random_file "$1/ref" "$2"
	dd if="$1/ref" of="$1/mnt/volume" bs=1M oflag=direct conv=notrunc status=none || fail "$1: write failed"
}

# patch D OFF LEN: random bytes written at OFF (buffered, any alignment), ref updated
patch() {
	head -c "$3" /dev/urandom >"$1/p"
	dd if="$1/p" of="$1/mnt/volume" bs="$3" oflag=seek_bytes seek="$2" conv=notrunc status=none ||
		fail "$1: degraded write of $3 at $2 failed"
	dd if="$1/p" of="$1/ref" bs="$3" oflag=seek_bytes seek="$2" conv=notrunc status=none
}

readback() { # D WHAT
	dd if="$1/mnt/volume" bs=1M iflag=direct status=none | cmp - "$1/ref" || fail "$1: $2: O_DIRECT readback differs"
	dd if="$1/mnt/volume" bs=64K status=none | cmp - "$1/ref" || fail "$1: $2: buffered readback differs"
}

# degraded NAME MODE "SLOTS" CREATE-ARGS... : MODE rm (delete the member files)
# or zero (overwrite the superblocks with zeros; needs --force)
degraded() {
	local name=$1 mode=$2 slots=$3 d=$T/$1 all=() left=() s i cap opt=()
	shift 3
	mkdir -p "$d"
	local n=${!#}
	set -- "${@:1:$#-1}"
	for ((i = 0; i < n; i++)); do all+=("$d/m$i"); done
	"$FSVOL" create -c 64K -s 8M "$@" "${all[@]}" >/dev/null || fail "$name: create"
	fsvol_mount "$d/mnt" "${all[@]}"
	cap=$(size_of "$d/mnt/volume")
	write_ref "$d" "$cap"
	fsvol_umount "$d/mnt"

	for s in $slots; do
		case $mode in
		rm) rm -f "$d/m$s" ;;
		zero) dd if=/dev/zero of="$d/m$s" bs=4096 count=1 conv=notrunc status=none ;;
		esac
	done
	if [[ $mode == rm ]]; then
		for ((i = 0; i < n; i++)); do [[ -e $d/m$i ]] && left+=("$d/m$i"); done
		# naming a deleted member on the command line is refused, naming it
		expect_fail_msg "$d/m${slots%% *}" "$FSVOL" mount "$d/mnt" "${all[@]}"
		! mountpoint -q "$d/mnt" || fail "$name: refused mount left a mount behind"
		# members the superblocks call active start degraded with --run only
		expect_fail_msg "m${slots%% *} (not given)" "$FSVOL" mount "$d/mnt" "${left[@]}"
		! mountpoint -q "$d/mnt" || fail "$name: refused mount left a mount behind"
		opt=(--run)
	else
		left=("${all[@]}")
		# without --force the zeroed member is refused, and named
		expect_fail_msg "$d/m${slots%% *}" "$FSVOL" mount "$d/mnt" "${all[@]}"
		! mountpoint -q "$d/mnt" || fail "$name: refused mount left a mount behind"
		opt=(--force)
	fi
	fsvol_mount "${opt[@]}" "$d/mnt" "${left[@]}"
	for s in $slots; do
		status_line "$d/mnt" "$s" | grep -q missing ||
			fail "$name: status does not show slot $s missing: $("$FSVOL" status "$d/mnt")"
		[[ $(jq -r ".members[] | select(.index == $s) | .state" "$d/mnt/stats.json") == missing ]] ||
			fail "$name: stats.json does not show slot $s missing"
	done
	"$FSVOL" status "$d/mnt" | grep -q degraded || fail "$name: status does not say degraded"
	readback "$d" "degraded"
	# writes while degraded: big aligned, small unaligned, across chunks and stripes
	patch "$d" $((cap / 4)) $((2 * MiB))
	patch "$d" $((cap / 2 + 1234)) 70001
	patch "$d" $((64 * 1024 - 100)) 200
	patch "$d" 0 4096
	patch "$d" $((cap - 5000)) 5000
	readback "$d" "after degraded writes"
	fsvol_umount "$d/mnt"
	fsvol_mount "${opt[@]}" "$d/mnt" "${left[@]}"
	readback "$d" "degraded writes after remount"
	fsvol_umount "$d/mnt"
	note "$name ($mode slots $slots) ok"
}

requires jq
degraded raid1 rm "0" -l raid1 3
degraded raid10-n2 rm "1" -l raid10 4
degraded raid10-f2 rm "2" -l raid10 --layout f2 4
degraded raid4-data rm "0" -l raid4 4
degraded raid4-parity rm "3" -l raid4 4
degraded raid5 rm "1" -l raid5 4
degraded raid5-zero zero "2" -l raid5 4
degraded raid6 rm "1 3" -l raid6 5
degraded raid6-zero zero "0 4" -l raid6 6

# --- levels without redundancy refuse, naming the slot -------------------------
for lv in raid0 linear; do
	d=$T/$lv
	mkdir -p "$d"
	"$FSVOL" create -l $lv -c 64K -s 8M "$d/m0" "$d/m1" "$d/m2" >/dev/null || fail "$lv: create"
	rm "$d/m1"
	mkdir -p "$d/mnt"
	expect_fail_msg "slot" "$FSVOL" mount "$d/mnt" "$d/m0" "$d/m2"
	[[ $LAST_ERR == *1* && $LAST_ERR == *$lv* ]] || fail "$lv: message does not name $lv slot 1: $LAST_ERR"
	expect_fail_msg "slot" "$FSVOL" mount --force "$d/mnt" "$d/m0" "$d/m2"
	! mountpoint -q "$d/mnt" || fail "$lv: refused mount left a mount behind"
done

# --- a member failed at runtime while a reader runs (raid5) ---------------------
d=$T/live
mkdir -p "$d"
all=("$d/m0" "$d/m1" "$d/m2" "$d/m3")
"$FSVOL" create -l raid5 -c 64K -s 16M "${all[@]}" >/dev/null || fail "live: create"
fsvol_mount "$d/mnt" "${all[@]}"
cap=$(size_of "$d/mnt/volume")
write_ref "$d" "$cap"
# the reader reads the whole volume three times, 64K at a time
(
	for p in 1 2 3; do
		dd if="$d/mnt/volume" of="$d/out$p.part" bs=64K iflag=direct status=none || exit 1
		mv "$d/out$p.part" "$d/out$p"
	done
) &
reader=$!
track_pid $reader
# readiness: fail the member once the first pass is a third of the way in
for ((i = 0; i < 3000; i++)); do
	[[ -e $d/out1 ]] && break
	[[ -e $d/out1.part && $(size_of "$d/out1.part") -ge $((cap / 3)) ]] && break
	sleep 0.01
done
echo "fail 1" >"$d/mnt/ctl" || fail "live: writing 'fail 1' to ctl failed"
[[ -e $d/out1 ]] && note "live: (the first pass had finished before the failure)"
wait $reader || fail "live: the reader failed (I/O error after a member failure?)"
for p in 1 2 3; do cmp "$d/out$p" "$d/ref" || fail "live: read pass $p differs from the reference"; done
status_line "$d/mnt" 1 | grep -q failed || fail "live: status does not show m1 failed: $("$FSVOL" status "$d/mnt")"
[[ $(jq -r '.members[] | select(.index == 1) | .state' "$d/mnt/stats.json") == failed ]] ||
	fail "live: stats.json does not show member 1 failed"
patch "$d" $((3 * MiB + 17)) $((1 * MiB))
readback "$d" "after a runtime failure"
fsvol_umount "$d/mnt"
# the failed member is stale now: refused by name, the rest assemble degraded
expect_fail_msg "$d/m1" "$FSVOL" mount "$d/mnt" "${all[@]}"
fsvol_mount "$d/mnt" "$d/m0" "$d/m2" "$d/m3"
readback "$d" "remount without the failed member"
fsvol_umount "$d/mnt"
