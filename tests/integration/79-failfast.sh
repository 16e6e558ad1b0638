#!/usr/bin/env bash
# Failfast (md's, raid1 and raid10) with a deadline (ctl failfast_ms):
#  - create/ctl set the flag; status, status.json, detail show it; create
#    refuses it off raid1/raid10;
#  - raid1: the failfast member's I/O stalls (a delay far beyond the
#    deadline): the member is failed, fio (verify) sees no error and no I/O
#    waits for the stall; re-add catches up only the bitmap's dirty regions
#    (its write counter), and a check is clean;
#  - never the last working copy: with the other member failed, a stalled
#    I/O of the failfast one waits and succeeds, the member stays active;
#  - raid10: the same, the stalled member failed, fio clean;
#  - an NBD member behind nbdkit's delay filter (1.5 s): the deadline covers
#    the metadata thread's bitmap and superblock writes too, so no write
#    waits for the slow member.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq
cd "$T" # fio may leave state files in the working directory

STALL=6 # seconds an I/O of the stalled member takes (the delay filter)
check_clean() { # MNT WHAT
	local out
	out=$("$FSVOL" scrub "$1") || fail "$2: scrub: $out"
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$2: scrub: $out"
}
fio_v() { # MNT OUT: 4K-64K random writes over the first 4 MiB, verified; the slowest I/O in ms to stdout
	fio --name=v --filename="$1/volume" --rw=randwrite --bsrange=4k-64k --direct=1 --ioengine=io_uring \
		--iodepth=8 --size=4M --io_size=16M --verify=crc32c --verify_state_save=0 --output-format=json \
		--output="$2" || fail "fio verify on $1 saw an error: $(jq -c '.jobs[0].error' "$2" 2>/dev/null)"
	[[ $(jq '.jobs[0].error' "$2") == 0 ]] || fail "fio error $(jq '.jobs[0].error' "$2")"
	jq '[.jobs[0].write.clat_ns.max, .jobs[0].read.clat_ns.max] | max / 1000000 | floor' "$2"
}

# --- refusals
expect_fail_msg "failfast is for raid1 and raid10 only" "$FSVOL" create -l raid5 -s 8M "$T"/r{0,1} --failfast "$T/r2"
[[ ! -e $T/r0 ]] || fail "a refused create left a member file behind"

# --- raid1: a stalled failfast leg is failed, the caller sees nothing
"$FSVOL" create -l raid1 -s 64M --bitmap-chunk 1M "$T/a" --failfast "$T/b" >/dev/null || fail "create --failfast"
"$FSVOL" examine "$T/b" | grep -q "active .*failfast" || fail "examine: $("$FSVOL" examine "$T/b" | tail -2)"
fsvol_mount "$T/mnt" "$T/a" "$T/b"
grep -q "m1: $T/b active (failfast)" "$T/mnt/status" || fail "status: $(cat "$T/mnt/status")"
jq -e '.members[1].failfast == true and .members[0].failfast == false and .failfast_ms == 1000' \
	"$T/mnt/status.json" >/dev/null || fail "status.json: $(jq -c '.members, .failfast_ms' "$T/mnt/status.json")"
"$FSVOL" detail "$T/mnt" | grep -q "active sync failfast $T/b" || fail "detail: $("$FSVOL" detail "$T/mnt" | tail -2)"
expect_fail_msg "expected milliseconds" "$FSVOL" ctl "$T/mnt" failfast_ms 0
"$FSVOL" ctl "$T/mnt" failfast_ms 200 || fail "ctl failfast_ms"
jq -e '.failfast_ms == 200' "$T/mnt/status.json" >/dev/null || fail "failfast_ms not 200"
"$FSVOL" ctl "$T/mnt" fault 1 delay=${STALL}s
slowest=$(fio_v "$T/mnt" "$T/fio1.json")
note "raid1, member 1 stalled ${STALL}s, failfast_ms 200: slowest fio I/O ${slowest} ms"
((slowest < STALL * 1000 / 2)) || fail "an I/O waited ${slowest} ms: the stall reached the caller"
jq -e '.members[1].state == "failed" and .failfast_timeouts >= 1 and .state == "degraded"' "$T/mnt/status.json" \
	>/dev/null || fail "the stalled member is not failed: $(jq -c '{state, failfast_timeouts, members}' "$T/mnt/status.json")"
grep -q "is failfast and an I/O of it took over" "$DAEMON_LOG" || fail "the log does not say why member 1 failed"

# re-add: through the bitmap, only the regions written while it was away
dirty=$(jq .bitmap.dirty "$T/mnt/status.json")
"$FSVOL" ctl "$T/mnt" reset
"$FSVOL" re-add "$T/mnt" "$T/b" >/dev/null || fail "re-add"
wait_for 120 "the re-added member in sync" jq_true '.state == "healthy"' "$T/mnt/status.json"
wb=$(member_stat "$T/mnt" 1 write_bytes)
note "re-add: $dirty dirty 1M regions, member 1 got $wb bytes (64 MiB member)"
((dirty >= 1 && dirty <= 8)) || fail "$dirty regions dirty after 4 MiB of writes"
# (beside the regions: its metadata, counted too: superblocks and bitmap blocks, 4 KiB each)
((wb > 0 && wb <= dirty * MiB + 16 * 4096)) || fail "re-add wrote $wb bytes, more than the $dirty dirty regions"
jq -e '.members[1].failfast == true' "$T/mnt/status.json" >/dev/null || fail "re-add lost the failfast flag"
check_clean "$T/mnt" "after the re-add"

# --- never the last working copy: member 0 failed, member 1 stalls (a short stall here)
"$FSVOL" fail "$T/mnt" 0 >/dev/null
"$FSVOL" ctl "$T/mnt" fault 1 delay=1s
t0=$(jq .failfast_timeouts "$T/mnt/status.json")
dd if="$T/mnt/volume" of=/dev/null bs=64k count=4 iflag=direct status=none || fail "a read from the last copy failed"
jq -e '.members[1].state == "active" and .failfast_timeouts == '"$t0" "$T/mnt/status.json" >/dev/null ||
	fail "the last working copy was failed: $(jq -c '{failfast_timeouts, members}' "$T/mnt/status.json")"
"$FSVOL" ctl "$T/mnt" fault 1 none
"$FSVOL" ctl "$T/mnt" failfast 1 off || fail "ctl failfast 1 off"
jq -e '.members[1].failfast == false' "$T/mnt/status.json" >/dev/null || fail "ctl failfast off did not clear it"
"$FSVOL" re-add "$T/mnt" "$T/a" >/dev/null || fail "re-add member 0"
wait_for 120 "member 0 in sync" jq_true '.state == "healthy"' "$T/mnt/status.json"
fsvol_umount "$T/mnt"

# --- raid10 (near, 4 members): member 2 failfast and stalled
"$FSVOL" create -l raid10 -c 64K -s 32M "$T"/t{0,1,2,3} >/dev/null || fail "create raid10"
fsvol_mount "$T/r10" "$T"/t{0,1,2,3}
"$FSVOL" ctl "$T/r10" failfast "$T/t2" on || fail "ctl failfast PATH on"
"$FSVOL" examine "$T/t0" | grep -E "^ +2 " | grep -q failfast || fail "the flag is not in the superblocks"
"$FSVOL" ctl "$T/r10" failfast_ms 200
"$FSVOL" ctl "$T/r10" fault 2 delay=${STALL}s
slowest=$(fio_v "$T/r10" "$T/fio2.json")
note "raid10, member 2 stalled: slowest fio I/O ${slowest} ms"
((slowest < STALL * 1000 / 2)) || fail "raid10: an I/O waited ${slowest} ms"
jq -e '.members[2].state == "failed" and ([.members[] | select(.state == "active")] | length) == 3' \
	"$T/r10/status.json" >/dev/null || fail "raid10: $(jq -c .members "$T/r10/status.json")"
"$FSVOL" ctl "$T/r10" fault 2 none
fsvol_umount "$T/r10"

# --- a remote leg 1.5 s away (nbdkit's delay filter): bitmap writes are under the deadline too
if command -v nbdkit >/dev/null; then
	# the leg's superblock written to its file directly (a superblock names no
	# path), then the file served behind the delay: each of create's I/Os
	# through it took the delay (24 s); the mount's still do
	"$FSVOL" create -l raid1 -s 64M --bitmap-chunk 1M "$T/n0" --failfast "$T/n1" >/dev/null || fail "create with an NBD leg"
	nbdkit_start "$T/slow.pid" nbdkit -U "$T/slow.sock" --filter=delay file "$T/n1" wdelay=1500ms rdelay=1500ms
	S="nbd+unix:///?socket=$T/slow.sock"
	# the deadline from assembly on: set by ctl after the mount, a metadata
	# write already under way to the slow leg keeps the default 1 s one
	fsvol_mount --ctl="failfast_ms 200" "$T/nbd" "$T/n0" "$S"
	jq_true '.failfast_ms == 200' "$T/nbd/status.json" || fail "mount --ctl failfast_ms 200 not applied"
	slowest=$(fio_v "$T/nbd" "$T/fio3.json")
	note "raid1 with a 1.5 s NBD leg, failfast_ms 200: slowest fio I/O ${slowest} ms"
	((slowest < 1250)) || fail "NBD leg: an I/O waited ${slowest} ms of the 1.5 s stall"
	jq_true '.members[1].state == "failed" and .failfast_timeouts >= 1' "$T/nbd/status.json" ||
		fail "NBD leg not failed: $(jq -c '{failfast_timeouts, members}' "$T/nbd/status.json")"
	fsvol_umount "$T/nbd"
else
	note "nbdkit not installed: the NBD part skipped"
fi
