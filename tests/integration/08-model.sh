#!/usr/bin/env bash
# Emulated spindles through a real mount: the member counters show emulated
# time, and they must agree with the model's own analytic figures (never with
# a hard-coded time). The model clock's timer slack (ctl timer_slack_us) is
# taken at the mount and live, and shown. Parallelism: a 4-member stripe of emulated disks serves
# random reads about 4x faster than one.
# fsvol-test: alone (emulated disk times against the model's figures (1-5%) and IOPS ratios: host load shifts them)
. "$(dirname "$0")/../lib.sh"
requires jq
requires fio

member_mean_ms() { # MNT INDEX: mean read latency of a member, in ms
	jq -r ".members[] | select(.index == $2) | if .reads > 0 then .read_ns / .reads / 1e6 else 0 end" "$1/stats.json"
}
within() { # within A B PCT: |A - B| <= PCT% of B
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'
}
show() { "$FSVOL" model show -s 256M "$1"; }

# bad specs name the key at fault, and nothing gets mounted
mkdir -p "$T/bad"
"$FSVOL" create -l single -s 256M "$T/s0" >/dev/null
expect_fail_msg "rmp" "$FSVOL" mount --model hdd:rmp=7200 "$T/bad" "$T/s0"
expect_fail_msg "floppy" "$FSVOL" mount --model floppy "$T/bad" "$T/s0"
expect_fail_msg "rpm" "$FSVOL" mount --model hdd:rpm=0 "$T/bad" "$T/s0"
expect_fail_msg "seek_avg" "$FSVOL" mount --model hdd:seek_avg=abc "$T/bad" "$T/s0"
expect_fail_msg "seek_avg" "$FSVOL" model show hdd:seek_avg=-3ms
expect_fail_msg "--size 0: must be at least 4K" "$FSVOL" model show -s 0 hdd
# a member larger than its disk is refused, naming both sizes
expect_fail_msg "2147483648 bytes) is larger than its hdd-legacy disk of 1.05 GB (1050000000 bytes" \
	"$FSVOL" model show hdd-legacy 2G
expect_fail_msg "member 0: a member of" "$FSVOL" mount --model hdd-legacy:start=900M "$T/bad" "$T/s0"
expect_fail_msg "adapter 'zz' is not defined" "$FSVOL" mount --model hdd:adapter=zz "$T/bad" "$T/s0"
mountpoint -q "$T/bad" && fail "a bad model spec left a mount"

# QD1 uniform random 4K reads over the whole member: mean = overhead + mean
# seek + half a revolution + transfer (the model's own analytic figure)
want=$(show hdd | awk '/random 4K read, QD1/ { print $5 }')
[[ -n $want ]] || fail "fsvol model show printed no random 4K figure"
# (the model's clock with timer slack 0: every deadline its own wake-up, as
# before there was a slack; taken at the mount and shown in both status files)
fsvol_mount --model=hdd --ctl='timer_slack_us 0' "$T/m" "$T/s0"
grep -q "lateness .*, timer slack 0 us, clock on" "$T/m/status" || fail "status does not show timer slack 0: $(grep model "$T/m/status")"
[[ $(jq .timer_slack_us "$T/m/status.json") == 0 ]] || fail "status.json timer_slack_us is not 0"
fio --name=qd1 --filename="$T/m/volume" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--size=256M --time_based --runtime=4 --randseed=11 --output=/dev/null
got=$(member_mean_ms "$T/m" 0)
note "random 4K QD1: member mean $got ms, model $want ms"
within "$got" "$want" 5 || fail "random 4K QD1 mean $got ms, expected $want ms within 5%"
fsvol_umount "$T/m"

# re-reading one record with no cache waits a full revolution each time: the
# request arrives just after the sector passed the head, so the drive completes
# one read per turn. The member trace carries each read's emulated completion
# (start + latency); the interval between two is exactly a revolution however
# long the host takes between reads (less than a turn), and the median ignores
# the reads a longer host stall cost a second turn. (fio's own latencies are
# no good here: they move with the host's time between reads.)
rev=$(show hdd | awk '/^ *revolution/ { print $2 }')
fsvol_mount --model=hdd:cache=0 "$T/m" "$T/s0"
# median_turn FIO-ARGS...: fio's reads traced; sets TURN to the median interval
# between their emulated completions, in ms (no $(...): fail and the cleanup
# list must reach the script itself)
median_turn() {
	"$FSVOL" trace --json -n 40 "$T/m" >"$T/turn.trace" &
	local tracer=$!
	_push_cleanup pid "$tracer"
	sleep 0.5 # tracing is on once the trace file is open
	fio --name=turn --filename="$T/m/volume" --bs=4k --direct=1 --ioengine=psync --norandommap \
		--output=/dev/null "$@"
	# 120 reads: the 40 traced ones need the tracer up within 80 turns (0.66 s)
	timeout 10 tail --pid="$tracer" -f /dev/null || fail "the tracer did not see 40 of fio's 120 reads"
	TURN=$(jq -s '[.[] | select(.dev == 0) | .t_start_ns + .latency_ns] | sort
		| [range(1; length) as $i | .[$i] - .[$i - 1]] | sort | .[length / 2 | floor] / 1e6' "$T/turn.trace")
}
# one process re-reading one record back to back (a new dd each time would
# wait a random part of a turn instead)
median_turn --rw=randread --offset=4M --size=4k --io_size=480k
got=$TURN
note "re-read one record: one read every $got ms (median), revolution $rev ms"
within "$got" "$rev" 1 || fail "re-reading one record: one read every $got ms, expected one per revolution ($rev ms)"
# sequential 4K reads without read-ahead lose almost a revolution each: the
# next sector has just passed the head when the request arrives (one turn
# plus the record's transfer between completions)
median_turn --rw=read --offset=20M --size=480k
seq_nocache=$TURN
within "$seq_nocache" "$rev" 1 || fail "sequential 4K without cache: one read every $seq_nocache ms, expected about a revolution ($rev ms)"
fsvol_umount "$T/m"
# with the read-ahead cache they are served from the drive's buffer
fsvol_mount --model=hdd "$T/m" "$T/s0"
dd if="$T/m/volume" of=/dev/null bs=4K count=60 skip=5000 iflag=direct status=none
seq_cache=$(member_mean_ms "$T/m" 0)
note "sequential 4K reads: one every $seq_nocache ms without cache (median), mean $seq_cache ms with read-ahead"
awk -v a="$seq_cache" -v r="$rev" 'BEGIN { exit !(a < r / 10) }' ||
	fail "sequential 4K with read-ahead: $seq_cache ms each, expected far below a revolution"
fsvol_umount "$T/m"

# queueing: QD8 random reads, SSTF serves faster on average than FIFO (the
# member as a whole disk, capacity=member: its seeks cross the full stroke,
# where the disciplines differ; 256M at the edge of a 1 TB disk barely seeks)
declare -A mean
for sched in fifo sstf; do
	fsvol_mount --model=hdd:sched=$sched,cache=0,capacity=member "$T/m" "$T/s0"
	fio --name=qd8 --filename="$T/m/volume" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
		--iodepth=8 --size=256M --time_based --runtime=4 --randseed=5 --output=/dev/null
	mean[$sched]=$(member_mean_ms "$T/m" 0)
	fsvol_umount "$T/m"
done
note "QD8 random 4K: mean latency FIFO ${mean[fifo]} ms, SSTF ${mean[sstf]} ms"
awk -v f="${mean[fifo]}" -v s="${mean[sstf]}" 'BEGIN { exit !(s < f) }' ||
	fail "SSTF (${mean[sstf]} ms) not faster than FIFO (${mean[fifo]} ms) at QD8"

# parallelism: 4 emulated disks striped serve QD16 random 64K reads >= 3x one disk
"$FSVOL" create -l raid0 -c 64K -s 256M "$T"/p{0,1,2,3} >/dev/null
iops() { jq '.jobs[0].read.iops' "$1"; }
fsvol_mount --model=hdd "$T/one" "$T/s0"
fio --name=one --filename="$T/one/volume" --rw=randread --bs=64k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=256M --time_based --runtime=4 --output-format=json --output="$T/one.json"
fsvol_mount --model=hdd "$T/four" "$T"/p{0,1,2,3}
fio --name=four --filename="$T/four/volume" --rw=randread --bs=64k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=1G --time_based --runtime=4 --output-format=json --output="$T/four.json"
one=$(iops "$T/one.json")
four=$(iops "$T/four.json")
note "random 64K QD16: 1 disk $one IOPS, raid0 of 4 disks $four IOPS"
awk -v a="$four" -v b="$one" 'BEGIN { exit !(b > 0 && a >= 3 * b) }' ||
	fail "raid0 of 4 emulated disks: $four IOPS, not >= 3x one disk ($one)"
total=$(jq '.volume.reads' "$T/four/stats.json")
for i in 0 1 2 3; do
	r=$(jq ".members[] | select(.index == $i) | .reads" "$T/four/stats.json")
	awk -v r="$r" -v t="$total" 'BEGIN { exit !(r >= t / 4 * 0.7 && r <= t / 4 * 1.3) }' ||
		fail "member $i served $r of $total reads, not about a quarter"
done
grep -q "lateness p50" "$T/four/status" || fail "status does not report the model's lateness"
"$FSVOL" stat "$T/four" | grep -q "lateness p50" || fail "fsvol stat does not show the model's lateness"
fsvol_umount "$T/four"

# four period disks on one Fast SCSI-2 adapter: sequential reads cannot pass
# the bus's 10 MB/s (four disks alone stream ~20 MB/s); its counters show in status
fsvol_mount --model=hdd-legacy:adapter=fast-scsi2 "$T/bus" "$T"/p{0,1,2,3}
fio --name=bus --filename="$T/bus/volume" --rw=read --bs=256k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=1G --time_based --runtime=3 --output-format=json --output="$T/bus.json"
bw=$(jq '.jobs[0].read.bw_bytes' "$T/bus.json")
note "sequential 256K QD16, 4 disks on one fast-scsi2 adapter: $bw B/s"
awk -v b="$bw" 'BEGIN { exit !(b > 0 && b <= 10.2e6) }' || fail "one Fast SCSI-2 adapter delivered $bw B/s (> 10 MB/s)"
grep -q "adapter fast-scsi2 (fast-scsi2, 10.0 MB/s, 15.0 us/command), members 0,1,2,3: [1-9]" "$T/bus/status" ||
	fail "status does not show the adapter's counters: $(grep adapter "$T/bus/status")"
"$FSVOL" stat -c 1 "$T/bus" | grep -q "^adapter fast-scsi2" || fail "fsvol stat does not show the adapter"
fsvol_umount "$T/bus"

# the same four members as partitions of one disk (disk=d): one arm serves
# them all, so the stripe is no faster than a single disk
fsvol_mount --model=hdd:disk=d "$T/shared" "$T"/p{0,1,2,3}
fio --name=shared --filename="$T/shared/volume" --rw=randread --bs=64k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=1G --time_based --runtime=4 --output-format=json --output="$T/shared.json"
shared=$(iops "$T/shared.json")
note "random 64K QD16: raid0 of 4 partitions of one disk $shared IOPS (1 disk $one, 4 disks $four)"
awk -v a="$shared" -v b="$one" 'BEGIN { exit !(a > 0 && a <= 1.5 * b) }' ||
	fail "four partitions of one emulated disk: $shared IOPS, expected about one disk's ($one)"

# the model can change at run time through MNT/ctl (here: none -> hdd -> none)
fsvol_umount "$T/one"
fsvol_mount "$T/rt" "$T/s0"
echo "model hdd" >"$T/rt/ctl"
grep -q "model hdd" "$T/rt/status" || fail "status does not show the model set through ctl"
# the timer slack: its default, then set live (the run below is timed under it:
# a release may come early within the slack, the member counters keep the
# model's times)
[[ $(jq .timer_slack_us "$T/rt/status.json") == 50 ]] || fail "status.json timer_slack_us is not the default 50"
echo "timer_slack_us 200" >"$T/rt/ctl"
[[ $(jq .timer_slack_us "$T/rt/status.json") == 200 ]] || fail "ctl timer_slack_us 200 not taken"
grep -q "timer slack 200 us" "$T/rt/status" || fail "status does not show timer slack 200"
if echo 'timer_slack_us 10001' 2>/dev/null >"$T/rt/ctl"; then fail "ctl accepted timer_slack_us 10001"; fi
echo reset >"$T/rt/ctl"
fio --name=rt --filename="$T/rt/volume" --rw=randread --bs=4k --direct=1 --ioengine=psync \
	--size=256M --time_based --runtime=2 --randseed=13 --output=/dev/null
got=$(member_mean_ms "$T/rt" 0)
want=$(show hdd | awk '/random 4K read, QD1/ { print $5 }')
within "$got" "$want" 10 || fail "after 'model hdd' through ctl: random 4K mean $got ms, model says $want ms"
echo "model none" >"$T/rt/ctl"
echo reset >"$T/rt/ctl"
dd if="$T/rt/volume" of=/dev/null bs=4K count=50 skip=777 iflag=direct status=none
got=$(member_mean_ms "$T/rt" 0)
# real timing: far below the model's figure, however noisy the real disk
awk -v a="$got" -v w="$want" 'BEGIN { exit !(a < w / 4) }' ||
	fail "after 'model none': member mean $got ms, expected real timing (far below the model's $want ms)"
if echo 'model hdd:rmp=1' 2>/dev/null >"$T/rt/ctl"; then fail "ctl accepted a bad model spec"; fi
grep -q "unknown key 'rmp'" "$DAEMON_LOG" || fail "daemon log does not explain the rejected model"
