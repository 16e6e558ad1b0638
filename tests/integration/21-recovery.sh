#!/usr/bin/env bash
# Recovery like mdadm: a member fails in the middle of a verified workload, a
# spare is added and rebuilt while the writes go on, then a different original
# member (two on raid6) fails and every byte still verifies; fio sees no error.
# A rebuild killed with -9 resumes from its saved checkpoint. remove/re-add,
# detail --test's exit codes, scrub's exit code on mismatches.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq

vol_writes() { jq '.volume.writes' "$1/stats.json"; }
SCHEMA=$(cd "$(dirname "$0")/../../docs" && pwd)/status.schema.json
valid_status() { # MNT STATE SLOTSTATE: status.json validates and says so
	cp "$1/status.json" "$T/status.json"
	/usr/bin/python3 - "$SCHEMA" "$T/status.json" "$2" "$3" <<'PY' || fail "$1/status.json: $(cat "$T/status.json")"
import json, sys, jsonschema
s = json.load(open(sys.argv[2]))
jsonschema.validate(s, json.load(open(sys.argv[1])))
assert s["state"] == sys.argv[3], s["state"]
assert sys.argv[4] in [x["state"] for x in s["members"]], s["members"]
PY
}
wait_writes() { # MNT N: until the volume has seen N writes (the workload is under way)
	local i
	for ((i = 0; i < 600; i++)); do
		(($(vol_writes "$1") >= $2)) && return 0
		sleep 0.05
	done
	fail "$1: the workload did not start"
}
wait_recovered() { # MNT: until no recovery runs and none is pending
	local i
	for ((i = 0; i < 1200; i++)); do
		grep -q "rebuilding" "$1/status" || return 0
		sleep 0.05
	done
	fail "$1: recovery did not finish: $(cat "$1/status")"
}
fio_job() { # MNT OUT [fio args]: the checksummed random-write job
	local mnt=$1 out=$2
	shift 2
	fio --name=w --filename="$mnt/volume" --rw=randwrite --bsrange=4k-64k --direct=1 --ioengine=io_uring \
		--iodepth=8 --size=20M --verify=crc32c --verify_state_save=0 --randseed=9 --output="$out" "$@"
}

# busy_vol DIR LEVEL N EXTRA WRITES: LEVEL over N members mounted on DIR/mnt,
# a file DIR/EXTRA to add, the checksummed job running (fio_pid) and WRITES in
busy_vol() {
	local d=$1 level=$2 n=$3 members=() i
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i"); done
	"$FSVOL" create -l "$level" -c 64K -s 24M "${members[@]}" >/dev/null
	truncate -s 25M "$d/$4"
	fsvol_mount "$d/mnt" "${members[@]}"
	fio_job "$d/mnt" "$d/w.out" --do_verify=0 &
	fio_pid=$!
	track_pid "$fio_pid"
	wait_writes "$d/mnt" "$5"
}

# run LEVEL N "FIRST" "THEN": FIRST fails mid-run, a spare rebuilds it, THEN fail after
run() {
	local level=$1 first=$3 then=$4 d=$T/$1 i
	busy_vol "$d" "$level" "$2" spare 200
	valid_status "$d/mnt" healthy active
	"$FSVOL" fail "$d/mnt" "$first" || fail "$level: fsvol fail $first"
	valid_status "$d/mnt" degraded failed
	"$FSVOL" detail --test "$d/mnt" >/dev/null && fail "$level: detail --test says healthy while degraded"
	"$FSVOL" add "$d/mnt" "$d/spare" || fail "$level: fsvol add"
	wait "$fio_pid" || fail "$level: fio saw errors while a member failed and rebuilt: $(tail -5 "$d/w.out")"
	wait_recovered "$d/mnt"
	grep -q "$d/spare active" "$d/mnt/status" || fail "$level: the spare is not active after recovery: $(cat "$d/mnt/status")"
	"$FSVOL" detail --test "$d/mnt" >/dev/null || fail "$level: detail --test not 0 after recovery"
	for i in $then; do "$FSVOL" fail "$d/mnt" "$i" || fail "$level: fsvol fail $i"; done
	fio_job "$d/mnt" "$d/v.out" --verify_only ||
		fail "$level: verify failed after the rebuilt member had to serve: $(tail -5 "$d/v.out")"
	fsvol_umount "$d/mnt"
}

run raid1 2 0 1
run raid10 4 1 0
run raid4 4 3 0
run raid5 4 2 0
run raid6 5 1 "0 4"

# --- replace (md's want_replacement): no failure, no window without redundancy
replace_run() { # LEVEL N ROLE OTHER: replace ROLE under verified writes, then fail OTHER
	local level=$1 role=$3 other=$4 d=$T/replace-$1 i
	busy_vol "$d" "$level" "$2" new 100
	"$FSVOL" replace --with "$d/new" "$d/mnt" "$role" || fail "$level: fsvol replace"
	grep -q "degraded" "$d/mnt/status" && fail "$level: degraded during a replace: $(cat "$d/mnt/status")"
	wait "$fio_pid" || fail "$level: fio saw errors during a replace: $(tail -5 "$d/w.out")"
	for ((i = 0; i < 1200; i++)); do grep -q "replace done" "$d/mnt/status" && break; sleep 0.05; done
	grep -q ": $d/new active (role $role)$" "$d/mnt/status" || fail "$level: the replacement did not take the role: $(cat "$d/mnt/status")"
	# md marks the replaced device faulty ("the replaced device will be marked as faulty")
	grep -q "$d/m$role failed" "$d/mnt/status" || fail "$level: the replaced member is not marked faulty: $(cat "$d/mnt/status")"
	"$FSVOL" fail "$d/mnt" "$other"
	fio_job "$d/mnt" "$d/v.out" --verify_only || fail "$level: verify after replace + fail $other: $(tail -5 "$d/v.out")"
	fsvol_umount "$d/mnt"
}
replace_run raid5 4 1 0
replace_run raid1 2 0 1

# --- rebuild traffic is counted below the mapping layer and labelled in the trace
d=$T/trace
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 16M "$d/m0" "$d/m1" >/dev/null
truncate -s 17M "$d/spare"
fsvol_mount "$d/mnt" "$d/m0" "$d/m1"
dd if=/dev/urandom of="$d/mnt/volume" bs=1M count=16 oflag=direct status=none
# md's sync_max: the recovery waits at its start until the trace is attached,
# then at half way while status is read
echo "sync_max 0" >"$d/mnt/ctl"
"$FSVOL" fail "$d/mnt" 1
"$FSVOL" add "$d/mnt" "$d/spare"
sync_wait_held "$d/mnt" recovery
"$FSVOL" trace --json "$d/mnt" >"$d/trace.json" 2>/dev/null &
tpid=$!
track_pid "$tpid"
_trace_attached() { # a read made now shows in the trace
	dd if="$d/mnt/volume" of=/dev/null bs=4k count=1 iflag=direct status=none
	grep -q '"why":"data"' "$d/trace.json"
}
wait_for 30 "fsvol trace shows no read" _trace_attached
sync_hold "$d/mnt" 50
wait_for 120 "the recovery did not stop half way: $(cat "$d/mnt/status")" \
	jq_true '.sync.state == "running" and .sync.held and .sync.percent > 0' "$d/mnt/status.json"
kill "$tpid" 2>/dev/null
wait "$tpid" 2>/dev/null || true
grep -q '"why":"rebuild"' "$d/trace.json" || fail "the trace shows no member I/O labelled rebuild"
grep -q "recovery = " "$d/mnt/status" || fail "status shows no progress line during a held rebuild: $(cat "$d/mnt/status")"
valid_status "$d/mnt" rebuilding rebuilding
jq -e '.sync.action == "recovery" and .sync.state == "running" and .members[1].state == "rebuilding" and .sync.speed_kib_s > 0 and .sync.eta_s > 0' \
	"$d/mnt/status.json" >/dev/null || fail "status.json during a rebuild: $(cat "$d/mnt/status.json")"
sync_release "$d/mnt"
wait_recovered "$d/mnt"
jq -e '.members[] | select(.role == 1) | .index == 2 and .writes > 0' "$d/mnt/stats.json" >/dev/null ||
	fail "the rebuilt member's writes are not counted below the mapping layer"
fsvol_umount "$d/mnt"

# --- kill -9 during a rebuild: it resumes from its checkpoint, not from 0
d=$T/kill
mkdir -p "$d"
"$FSVOL" create -l raid5 -c 64K -s 32M "$d/m0" "$d/m1" "$d/m2" >/dev/null
truncate -s 33M "$d/spare"
fsvol_mount "$d/mnt" "$d/m0" "$d/m1" "$d/m2"
random_file "$d/data" $((64 * MiB))
dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
# md's sync_max holds the recovery at 40% (its checkpoint saved there)
sync_hold "$d/mnt" 40
"$FSVOL" fail "$d/mnt" 0
"$FSVOL" add "$d/mnt" "$d/spare"
sync_wait_held "$d/mnt" recovery
pct=$(sync_field "$d/mnt" percent)
pid=$(daemon_pid "$d/mnt")
kill -9 "$pid"
for ((i = 0; i < 50; i++)); do _alive "$pid" || break; sleep 0.1; done
umount -l "$d/mnt" 2>/dev/null || fusermount3 -uz "$d/mnt" 2>/dev/null || true
_drop_cleanup fsvol "$d/mnt" "$pid"
# dirty and degraded (md refuses that without force): the rebuilding member is
# in sync below its checkpoint, and the checkpoint is what we test
lines=$(wc -l <"$DAEMON_LOG")
fsvol_mount --force "$d/mnt" "$d/m1" "$d/m2" "$d/spare"
_recovery_began() { # the sync thread logs where the recovery begins
	line=$(tail -n +$((lines + 1)) "$DAEMON_LOG" | grep "recovery of member 0 (" | head -1) && [[ -n $line ]]
}
wait_for 60 "the recovery did not begin after the remount" _recovery_began
note "after kill -9 at ${pct}%: $line"
[[ $line == *"resumes at "* ]] || fail "the rebuild did not resume from a checkpoint: $line"
start=$(sed -n 's/.*resumes at \([0-9]*\) of.*/\1/p' <<<"$line")
((start > 0)) || fail "the rebuild resumed at unit 0"
wait_recovered "$d/mnt"
vol_cmp "$d/data" "$d/mnt/volume" || fail "data differs after a resumed rebuild"
"$FSVOL" fail "$d/mnt" 1
vol_cmp "$d/data" "$d/mnt/volume" || fail "data differs when the resumed member must serve"
fsvol_umount "$d/mnt"

# --- remove and re-add: only failed or spare members go; a former member comes back
d=$T/readd
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 16M "$d/m0" "$d/m1" >/dev/null
fsvol_mount "$d/mnt" "$d/m0" "$d/m1"
random_file "$d/data" $((16 * MiB))
dd if="$d/data" of="$d/mnt/volume" bs=1M oflag=direct status=none
expect_fail_msg "only failed or spare members can be removed" "$FSVOL" remove "$d/mnt" 0
"$FSVOL" fail "$d/mnt" "$d/m1"
"$FSVOL" remove "$d/mnt" "$d/m1" || fail "removing a failed member failed"
grep -q "m1: (missing) missing" "$d/mnt/status" || fail "slot 1 is not shown missing after remove"
dd if=/dev/urandom of="$d/mnt/volume" bs=1M count=2 seek=4 oflag=direct conv=notrunc status=none
dd if="$d/mnt/volume" of="$d/data" bs=1M iflag=direct status=none
"$FSVOL" re-add "$d/mnt" "$d/m1" || fail "re-add of a former member failed"
wait_recovered "$d/mnt"
"$FSVOL" fail "$d/mnt" 0
vol_cmp "$d/data" "$d/mnt/volume" || fail "the re-added member does not hold the volume's data"
# a path that cannot be made (add makes a missing file, not a missing directory)
expect_fail_msg "nonexistent: No such file" "$FSVOL" add "$d/mnt" "$d/nodir/nonexistent"
fsvol_umount "$d/mnt"

# --- detail --test: 0 healthy, 1 degraded, 2 unusable, 4 unreadable; scrub's exit code
d=$T/detail
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 16M "$d/m0" "$d/m1" >/dev/null
fsvol_mount "$d/mnt" "$d/m0" "$d/m1"
dd if=/dev/urandom of="$d/mnt/volume" bs=1M count=4 oflag=direct status=none
"$FSVOL" scrub "$d/mnt" >/dev/null || fail "scrub of a consistent mirror exited non-zero"
# a copy that disagrees behind the daemon's back: scrub must say so in its exit code
dd if=/dev/urandom of="$d/m1" bs=4K count=1 seek=$((MiB / 4096 + 10)) conv=notrunc status=none
rc=0; "$FSVOL" scrub "$d/mnt" >/dev/null || rc=$?
((rc == 1)) || fail "scrub found a mismatch but exited $rc"
rc=0; "$FSVOL" detail --test "$d/mnt" >/dev/null || rc=$?
((rc == 0)) || fail "detail --test: healthy volume gave $rc"
"$FSVOL" fail "$d/mnt" 0
rc=0; "$FSVOL" detail --test "$d/mnt" >/dev/null || rc=$?
((rc == 1)) || fail "detail --test: degraded volume gave $rc"
expect_fail_msg "cannot serve its data without member 1" "$FSVOL" fail "$d/mnt" 1
"$FSVOL" fail --force "$d/mnt" 1
rc=0; "$FSVOL" detail --test "$d/mnt" >/dev/null || rc=$?
((rc == 2)) || fail "detail --test: failed volume gave $rc"
rc=0; "$FSVOL" detail --test "$T/nowhere" >/dev/null 2>&1 || rc=$?
((rc == 4)) || fail "detail --test: unreadable status gave $rc"
fsvol_umount "$d/mnt"
