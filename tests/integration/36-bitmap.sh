#!/usr/bin/env bash
# The write-intent bitmap (md's internal bitmap):
# - after a kill -9 with a few MiB written, the resync reads only the dirty
#   regions (member read counters), and the parity then checks out;
# - a member away during 1 MiB of writes is re-added and copies about that
#   much (its write counter), not the whole member; the data verifies when it
#   must serve; --bitmap none still rebuilds it whole;
# - bits clear lazily once the volume is idle; create's refusals.
. "$(dirname "$0")/../lib.sh"
requires jq

member_sum() { jq "[.members[].$2] | add" "$1/stats.json"; }
member_at() { jq ".members[] | select(.index == $2) | .$3" "$1/stats.json"; }
wait_status() { # MNT PATTERN: until MNT/status matches PATTERN
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "$2" "$1/status" && return 0
		sleep 0.05
	done
	fail "$1: '$2' never showed: $(cat "$1/status")"
}
wait_recovered() {
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q "rebuilding" "$1/status" || return 0
		sleep 0.05
	done
	fail "$1: recovery did not finish: $(cat "$1/status")"
}

# --- create: the bitmap's place and chunk, and refusals naming the culprit
"$FSVOL" create -l raid5 -c 64K -s 64M "$T"/d{0,1,2,3} >/dev/null
"$FSVOL" examine "$T/d0" | grep -q "Bitmap Offset : 4096 (chunk 64M)" ||
	fail "default bitmap: $("$FSVOL" examine "$T/d0" | grep -i bitmap)"
"$FSVOL" create -f -l raid5 -c 64K -s 64M --bitmap none "$T"/d{0,1,2,3} >/dev/null
"$FSVOL" examine "$T/d0" | grep -q "Bitmap Offset : none" || fail "--bitmap none still has a bitmap"
expect_fail_msg "bitmap chunk 2048" "$FSVOL" create -f -l raid1 -s 8M --bitmap-chunk 2K "$T"/d{0,1}
expect_fail_msg "raid0 has no redundancy" "$FSVOL" create -f -l raid0 -s 8M --bitmap internal "$T"/d{0,1}
expect_fail_msg "--bitmap bogus" "$FSVOL" create -f -l raid1 -s 8M --bitmap bogus "$T"/d{0,1}
rm -f "$T"/d{0,1,2,3}

# --- unclean shutdown: the resync is bounded by the dirty regions
d=$T/crash
mkdir -p "$d"
"$FSVOL" create -l raid5 -c 64K -s 64M --bitmap-chunk 1M "$d"/m{0,1,2,3} >/dev/null
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
safe_mode_off "$d/mnt" # md with safe mode off: dirty until the umount, so the kill leaves it dirty
random_file "$d/data" $((4 * MiB))
dd if="$d/data" of="$d/mnt/volume" bs=1M seek=40 oflag=direct conv=notrunc status=none
grep -q "bitmap: [1-9][0-9]*/192 regions dirty" "$d/mnt/status" ||
	fail "no dirty regions after writes: $(grep bitmap "$d/mnt/status")"
pid=$(daemon_pid "$d/mnt")
kill -KILL "$pid"
for ((i = 0; i < 50; i++)); do _alive "$pid" || break; sleep 0.1; done
"$FSVOL" umount "$d/mnt" 2>/dev/null || true
_drop_cleanup fsvol "$d/mnt" "$pid"
"$FSVOL" examine "$d/m0" | grep -q "State : active (dirty)" || fail "killed daemon: superblock not dirty"
fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
wait_status "$d/mnt" "resync done"
reads=$(member_sum "$d/mnt" read_bytes)
note "resync after kill -9 with 4 MiB written: members read $reads bytes (volume 192 MiB; full resync reads 256 MiB)"
grep "clean by the write-intent bitmap" "$DAEMON_LOG" | tail -1 | sed 's/^/# /'
((reads > 0)) || fail "the resync read nothing: the dirty regions were not resynced"
((reads <= 12 * MiB)) || fail "the resync read $reads bytes: not bounded by the ~5 dirty regions"
cmp_at "$d/mnt/volume" "$d/data" $((40 * MiB)) $((4 * MiB))
# bits clear lazily once idle and in sync
wait_status "$d/mnt" "bitmap: 0/192 regions dirty"
fsvol_umount "$d/mnt"
"$FSVOL_VERIFY" "$d"/m{0,1,2,3} || fail "parity does not match the data after the bitmap resync"

# --- re-add: a member away during 1 MiB of writes catches up only that
# readd LEVEL N BITMAP: fill, fail the last member, write 1 MiB, re-add it,
# count what the recovery wrote to it, then make it serve and compare
readd() {
	local level=$1 n=$2 bm=$3 d=$T/readd-$1-$3 members=() i
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i"); done
	local last=$((n - 1))
	if [[ $bm == none ]]; then
		"$FSVOL" create -l "$level" -c 64K -s 32M --bitmap none "${members[@]}" >/dev/null
	else
		"$FSVOL" create -l "$level" -c 64K -s 32M --bitmap-chunk 256K "${members[@]}" >/dev/null
	fi
	fsvol_mount "$d/mnt" "${members[@]}"
	random_file "$d/data" $((8 * MiB))
	dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct conv=notrunc status=none
	# the fill's bits clear once it is idle (md: a few daemon_sleep periods)
	[[ $bm == none ]] || wait_status "$d/mnt" "bitmap: 0/"
	"$FSVOL" fail "$d/mnt" "$last" || fail "$level: fail $last"
	random_file "$d/new" $MiB
	dd if="$d/new" of="$d/mnt/volume" bs=64K seek=$((5 * MiB / (64 * 1024))) oflag=direct conv=notrunc status=none
	dd if="$d/new" of="$d/data" bs=64K seek=$((5 * MiB / (64 * 1024))) conv=notrunc status=none
	"$FSVOL" re-add "$d/mnt" "${members[last]}" || fail "$level: re-add"
	wait_recovered "$d/mnt"
	grep -q "${members[last]} active" "$d/mnt/status" || fail "$level: not active after re-add: $(cat "$d/mnt/status")"
	local wrote
	wrote=$(member_at "$d/mnt" "$last" write_bytes)
	note "$level, bitmap $bm: re-add after 1 MiB written while away copied $wrote bytes to the member (32 MiB member)"
	if [[ $bm == none ]]; then
		((wrote >= 30 * MiB)) || fail "$level --bitmap none: re-add wrote only $wrote bytes"
	else
		((wrote > 0)) || fail "$level: the re-add copied nothing"
		((wrote <= 3 * MiB)) || fail "$level: the re-add copied $wrote bytes, not about the 1 MiB written"
	fi
	# the re-added member must hold the new data: fail another one and compare
	"$FSVOL" fail "$d/mnt" 0 || fail "$level: fail 0"
	cmp_at "$d/mnt/volume" "$d/data" 0 $((8 * MiB))
	fsvol_umount "$d/mnt"
}
readd raid1 2 internal
readd raid5 4 internal
readd raid6 5 internal
readd raid1 2 none

# --- re-add while writes go on: fio's checksummed writes run through the fail,
# the re-add and its partial recovery (writers setting bits race the recovery
# skipping clean regions); then the re-added member must serve every byte
if command -v fio >/dev/null; then
	d=$T/live
	mkdir -p "$d"
	"$FSVOL" create -l raid5 -c 64K -s 32M --bitmap-chunk 256K "$d"/m{0,1,2,3} >/dev/null
	fsvol_mount "$d/mnt" "$d"/m{0,1,2,3}
	fio_job() {
		fio --name=w --filename="$d/mnt/volume" --rw=randwrite --bsrange=4k-64k --direct=1 \
			--ioengine=io_uring --iodepth=8 --size=24M --verify=crc32c --verify_state_save=0 \
			--randseed=36 "$@"
	}
	fio_job --do_verify=0 --rate=4m --output="$d/w.out" & # ~6 s of writes
	fio_pid=$!
	track_pid "$fio_pid"
	sleep 1
	"$FSVOL" fail "$d/mnt" 3
	sleep 1
	_alive "$fio_pid" || fail "fio ended before the re-add: nothing raced the recovery"
	"$FSVOL" re-add "$d/mnt" "$d/m3" || fail "live re-add"
	wait "$fio_pid" || fail "fio saw errors during the fail and re-add: $(tail -5 "$d/w.out")"
	wait_recovered "$d/mnt"
	grep -q "$d/m3 active" "$d/mnt/status" || fail "m3 not active after the live re-add: $(cat "$d/mnt/status")"
	grep "recovery of member 3 ($d/m3) starts" "$DAEMON_LOG" | tail -1 | grep -q "dirty regions only" ||
		fail "the live re-add was not a bitmap recovery"
	"$FSVOL" fail "$d/mnt" 0
	fio_job --verify_only --output="$d/v.out" || fail "verify failed with the re-added member serving: $(tail -5 "$d/v.out")"
	fsvol_umount "$d/mnt"
fi
