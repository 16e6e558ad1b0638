#!/usr/bin/env bash
# Write-mostly and write-behind (md's, raid1):
#  - create/add/ctl set the flag; examine, status ("(W)"), status.json and
#    detail ("writemostly") show it; create refuses it off raid1, and
#    --write-behind without the bitmap;
#  - reads: 0 reads from the write-mostly member while the other serves
#    (member counters), both serve once the flag is off, and the flagged one
#    serves alone (correct data) once the other failed;
#  - a raid1 of a local file and an NBD member behind nbdkit's delay filter
#    (20 ms): with --write-behind the write latency (fio, QD1, median) is the
#    fast leg's alone (a degraded twin measured in the same run, alternated;
#    generous margin), without it every write waits for the slow leg; reads
#    never touch the slow leg; a flush (fsync) returns only once every
#    write-behind has landed; fio verify and a check pass are clean;
#  - kill -9 with write-behinds in flight: the bitmap kept their regions
#    dirty, the resync after the remount copies them from the fast leg and a
#    check finds 0 mismatches.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq
requires nbdkit
cd "$T" # fio may leave state files in the working directory

reads_of() { member_stat "$1" "$2" reads; }
check_clean() { # MNT WHAT
	local out
	out=$("$FSVOL" scrub "$1") || fail "$2: scrub: $out"
	[[ $out == *"check done"*", 0 mismatches"* ]] || fail "$2: scrub: $out"
}
randread() { # MNT SECONDS
	fio --name=r --filename="$1/volume" --rw=randread --bs=4k --direct=1 --ioengine=psync --numjobs=2 \
		--size=16M --runtime="$2" --time_based --output="$T/fio-r.out" || fail "fio randread on $1"
}

# --- refusals name the culprit
expect_fail_msg "write-mostly is for raid1 only" "$FSVOL" create -l raid5 -s 8M "$T/r0" "$T/r1" --write-mostly "$T/r2"
expect_fail_msg "--write-behind needs the write-intent bitmap" \
	"$FSVOL" create -l raid1 -s 8M --bitmap none --write-behind 16 "$T/r0" "$T/r1"
expect_fail_msg "--write-behind is for raid1 only" "$FSVOL" create -l raid10 -s 8M --write-behind 16 "$T"/r{0,1,2,3}
expect_fail_msg "--write-behind 99999" "$FSVOL" create -l raid1 -s 8M --write-behind 99999 "$T"/r{0,1}
[[ ! -e $T/r0 ]] || fail "a refused create left a member file behind"

# --- flags: create (mdadm's "--write-mostly DEV"), examine, status, detail
"$FSVOL" create -l raid1 -s 32M "$T/a" --write-mostly "$T/b" >/dev/null || fail "create raid1 with --write-mostly"
"$FSVOL" examine "$T/b" | grep -q "active .*write-mostly" || fail "examine: $("$FSVOL" examine "$T/b" | tail -3)"
"$FSVOL" examine "$T/a" | grep -E "^ +0 .*active" | grep -q write-mostly && fail "examine flags member 0 too"
random_file "$T/ref" $((16 * MiB))
fsvol_mount "$T/mnt" "$T/a" "$T/b"
grep -q "m1: $T/b active (W)" "$T/mnt/status" || fail "status: $(cat "$T/mnt/status")"
jq -e '.members[0].write_mostly == false and .members[1].write_mostly == true and .members[1].failfast == false' \
	"$T/mnt/status.json" >/dev/null || fail "status.json: $(jq -c .members "$T/mnt/status.json")"
"$FSVOL" detail "$T/mnt" | grep -q "active sync writemostly $T/b" || fail "detail: $("$FSVOL" detail "$T/mnt" | tail -3)"
dd if="$T/ref" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none || fail "writing the reference"

# --- reads: none from the write-mostly member while the other serves
"$FSVOL" ctl "$T/mnt" reset
randread "$T/mnt" 1
r0=$(reads_of "$T/mnt" 0) r1=$(reads_of "$T/mnt" 1)
note "write-mostly m1: reads m0=$r0 m1=$r1"
((r0 > 100 && r1 == 0)) || fail "reads with m1 write-mostly: m0=$r0 m1=$r1 (want m1 0)"
"$FSVOL" ctl "$T/mnt" writemostly 1 off || fail "ctl writemostly 1 off"
jq -e '.members[1].write_mostly == false' "$T/mnt/status.json" >/dev/null || fail "the flag stayed on"
"$FSVOL" ctl "$T/mnt" reset
randread "$T/mnt" 1
r0=$(reads_of "$T/mnt" 0) r1=$(reads_of "$T/mnt" 1)
note "no flag: reads m0=$r0 m1=$r1"
((r0 > 0 && r1 > 0)) || fail "reads without the flag: m0=$r0 m1=$r1 (want both)"
"$FSVOL" ctl "$T/mnt" writemostly "$T/b" on || fail "ctl writemostly PATH on"
"$FSVOL" examine "$T/b" | grep -q "active .*write-mostly" || fail "ctl's flag is not in the superblock"
expect_fail_msg "expected on or off" "$FSVOL" ctl "$T/mnt" writemostly 1 maybe
expect_fail_msg "no member there" "$FSVOL" ctl "$T/mnt" writemostly 9 on
# the write-mostly member serves alone once the other failed
"$FSVOL" fail "$T/mnt" 0 >/dev/null
"$FSVOL" ctl "$T/mnt" reset
vol_cmp "$T/ref" "$T/mnt/volume" $((16 * MiB)) || fail "data read from the write-mostly member alone differs"
(($(reads_of "$T/mnt" 1) > 0)) || fail "m1 served no read with m0 failed"
# add (mdadm's --add --write-mostly): the spare carries the flag
truncate -s 40M "$T/c"
"$FSVOL" remove "$T/mnt" 0 >/dev/null || fail "remove the failed member"
"$FSVOL" add "$T/mnt" --write-mostly "$T/c" >/dev/null || fail "add --write-mostly"
wait_for 120 "recovery onto the added member" jq_true '.state == "healthy"' "$T/mnt/status.json"
jq -e '.members[0].path == "'"$T/c"'" and .members[0].write_mostly == true' "$T/mnt/status.json" >/dev/null ||
	fail "the added member lost its flag: $(jq -c .members "$T/mnt/status.json")"
fsvol_umount "$T/mnt"
rm -f "$T"/{a,b,c}

# --- a slow leg: a local file and an NBD member behind a 20 ms delay
# file, not memory: nbdkit 1.32 may abort when its client is killed with
# requests in flight (the kill -9 below); it is started again on the same bytes
slow_up() { nbdkit_start "$T/$1.pid" nbdkit -U "$T/$1.sock" --filter=delay file "$T/$1.img" wdelay=20ms rdelay=20ms; }
for s in slow1 slow2; do
	truncate -s 96M "$T/$s.img"
	slow_up "$s"
done
uri() { echo "nbd+unix:///?socket=$T/$1.sock"; }
# wb: write-behind; ww: write-mostly without it; alone: the fast leg alone
# (a raid1 whose other member failed: the same path, bitmap included)
"$FSVOL" create -l raid1 -s 32M --bitmap-chunk 4M "$T/f1" --write-mostly "$(uri slow1)" --write-behind 256 \
	>/dev/null || fail "create with --write-behind"
"$FSVOL" examine "$T/f1" | grep -q "Write Behind : 256" || fail "examine lacks Write Behind"
"$FSVOL" create -l raid1 -s 32M "$T/f2" --write-mostly "$(uri slow2)" >/dev/null || fail "create write-mostly"
"$FSVOL" create -l raid1 -s 32M "$T/f3" "$T/f4" >/dev/null || fail "create the twin"
fsvol_mount "$T/wb" "$T/f1" "$(uri slow1)"
fsvol_mount "$T/ww" "$T/f2" "$(uri slow2)"
fsvol_mount "$T/alone" "$T/f3" "$T/f4"
"$FSVOL" fail "$T/alone" 1 >/dev/null

p50w() { # MNT SECONDS: fio random 4K writes at QD1 (500/s), the median completion latency in us
	fio --name=w --filename="$1/volume" --rw=randwrite --bs=4k --direct=1 --ioengine=psync --size=32M \
		--runtime="$2" --time_based --rate_iops=500 --output-format=json --output="$T/fio-w.json" ||
		fail "fio randwrite on $1"
	jq '.jobs[0].write.clat_ns.percentile["50.000000"] / 1000 | floor' "$T/fio-w.json"
}
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
wb=() al=()
for i in 1 2 3; do
	wb+=("$(p50w "$T/wb" 2)")
	al+=("$(p50w "$T/alone" 2)")
done
ww=$(p50w "$T/ww" 1)
mwb=$(median "${wb[@]}") mal=$(median "${al[@]}")
note "write p50 (us): write-behind ${wb[*]} (median $mwb), fast leg alone ${al[*]} (median $mal), write-mostly without write-behind $ww"
# the 20% of the issue is measured (the note above, docs/experiments.md); the
# assertion only has to tell the fast leg from the 20 ms one, on a loaded machine too
((mwb <= 3 * mal)) || fail "write-behind p50 ${mwb}us is over 3x the fast leg alone (${mal}us)"
((mwb * 10 <= ww)) || fail "write-behind p50 ${mwb}us is not far below write-mostly without it (${ww}us)"
((ww >= 5 * mal)) || fail "without write-behind p50 ${ww}us: the 20 ms leg should show (fast leg ${mal}us)"
jq -e '.write_behind.limit == 256 and .write_behind.behind > 1000 and .write_behind.peak >= 1' \
	"$T/wb/status.json" >/dev/null || fail "status.json write_behind: $(jq -c .write_behind "$T/wb/status.json")"
grep -q "write-behind: .*/256 in flight" "$T/wb/status" || fail "status lacks the write-behind line"
jq -e '.write_behind == null' "$T/ww/status.json" >/dev/null || fail "write_behind shown without it"

# reads: never from the 20 ms leg
"$FSVOL" ctl "$T/wb" reset
randread "$T/wb" 1
r0=$(reads_of "$T/wb" 0) r1=$(reads_of "$T/wb" 1)
note "write-behind volume: reads local=$r0 nbd=$r1"
((r0 > 100 && r1 == 0)) || fail "reads: local $r0, NBD $r1 (want NBD 0)"

# a flush returns once every write-behind has landed
fio --name=f --filename="$T/wb/volume" --rw=randwrite --bs=4k --direct=1 --ioengine=io_uring --iodepth=16 \
	--size=32M --io_size=8M --end_fsync=1 --output="$T/fio-f.out" || fail "fio with end_fsync"
inflight=$(jq .write_behind.inflight "$T/wb/status.json")
((inflight == 0)) || fail "$inflight write-behinds still in flight after the fsync returned"

# fio verify over write-behind, then the copies agree
fio --name=v --filename="$T/wb/volume" --rw=randwrite --bs=4k --direct=1 --ioengine=io_uring --iodepth=16 \
	--size=16M --verify=crc32c --verify_state_save=0 --output="$T/fio-v.out" ||
	fail "fio verify with write-behind: $(tail -5 "$T/fio-v.out")"
check_clean "$T/wb" "after write-behind"

# --- kill -9 with write-behinds in flight: their bits resync them
"$FSVOL" ctl "$T/wb" reset
fio --name=k --filename="$T/wb/volume" --rw=randwrite --bs=64k --direct=1 --ioengine=io_uring --iodepth=8 \
	--size=4M --time_based --runtime=60 --output="$T/fio-k.out" &
fpid=$!
track_pid "$fpid"
wait_for 60 "write-behinds in flight" jq_true '.write_behind.inflight > 0' "$T/wb/status.json"
pid=$(daemon_pid "$T/wb")
kill -KILL "$pid"
wait "$fpid" || true
umount -l "$T/wb" 2>/dev/null || true
_drop_cleanup fsvol "$T/wb" "$pid"
if ! _alive "$(cat "$T/slow1.pid")"; then
	note "nbdkit died with its client (a known nbdkit 1.32 abort): started again"
	rm -f "$T/slow1.sock"
	slow_up slow1
fi
fsvol_mount "$T/wb" "$T/f1" "$(uri slow1)"
wait_for 300 "the resync after the crash" jq_true '.sync.action == "resync" and .sync.state == "done"' \
	"$T/wb/status.json"
check_clean "$T/wb" "after kill -9 with write-behinds in flight"
fsvol_umount_all "$T/wb" "$T/ww" "$T/alone"
