#!/usr/bin/env bash
# Counters above and below the mapping layer: the exact counts fsvol promises
# (the teaching examples), byte conservation, time integrals, and the formats
# of stats.json and diskstats.
. "$(dirname "$0")/../lib.sh"
requires jq
requires fio

# counter DEV FIELD: from MNT/stats.json; DEV is "volume" or a member index
counter() {
	local mnt=$1 dev=$2 field=$3
	if [[ $dev == volume ]]; then
		jq -r ".volume.$field" "$mnt/stats.json"
	else
		jq -r ".members[] | select(.index == $dev) | .$field" "$mnt/stats.json"
	fi
}
expect() { # expect MNT DEV FIELD VALUE what
	local got
	got=$(counter "$1" "$2" "$3")
	[[ $got == "$4" ]] || fail "$5: $2 $3 = $got, expected $4"
}
reset() { echo reset >"$1/ctl"; }
dd_write() { dd if=/dev/urandom of="$1/volume" bs="$2" count=1 seek="$3" oflag=direct conv=notrunc status=none; }
dd_read() { dd if="$1/volume" of=/dev/null bs="$2" count=1 skip="$3" iflag=direct status=none; }

# --- raid0, 4 members, chunk 64K: one 256K read at 0 = one 64K read per member
"$FSVOL" create -l raid0 -c 64K -s 16M "$T"/a{0,1,2,3} >/dev/null
fsvol_mount "$T/r0" "$T"/a{0,1,2,3}
reset "$T/r0"
dd_read "$T/r0" 256K 0
expect "$T/r0" volume reads 1 "raid0 256K read"
expect "$T/r0" volume read_bytes 262144 "raid0 256K read"
for i in 0 1 2 3; do
	expect "$T/r0" "$i" reads 1 "raid0 256K read"
	expect "$T/r0" "$i" read_bytes 65536 "raid0 256K read"
	expect "$T/r0" "$i" writes 0 "raid0 256K read"
done
# an idle member is 0% busy: a 4K read touches member 0 only
reset "$T/r0"
dd_read "$T/r0" 4K 0
for i in 1 2 3; do expect "$T/r0" "$i" busy_ns 0 "idle member"; done
[[ $(counter "$T/r0" 0 busy_ns) -gt 0 ]] || fail "member 0 did a read but shows no busy time"

# byte conservation: random mixed workload, member bytes sum to volume bytes
reset "$T/r0"
fio --name=cons --filename="$T/r0/volume" --rw=randrw --bsrange=4k-192k \
	--direct=1 --ioengine=psync --numjobs=2 --size=60M --io_size=8M --randseed=7 \
	--output=/dev/null
vr=$(counter "$T/r0" volume read_bytes)
vw=$(counter "$T/r0" volume write_bytes)
mr=$(jq '[.members[].read_bytes] | add' "$T/r0/stats.json")
mw=$(jq '[.members[].write_bytes] | add' "$T/r0/stats.json")
[[ $vr -gt 0 && $vr == "$mr" ]] || fail "raid0 read bytes: volume $vr, members $mr"
[[ $vw -gt 0 && $vw == "$mw" ]] || fail "raid0 write bytes: volume $vw, members $mw"

# time integrals: at rest, queue_ns (the integral of in-flight) equals the sum
# of all latencies; with a fixed queue depth aqu-sz = IOPS x mean latency.
reset "$T/r0"
fio --name=qd --filename="$T/r0/volume" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
	--iodepth=8 --size=60M --io_size=16M --output=/dev/null
j=$(cat "$T/r0/stats.json")
q=$(jq '.volume.queue_ns' <<<"$j")
lat=$(jq '.volume.read_ns + .volume.write_ns + .volume.flush_ns' <<<"$j")
awk -v q="$q" -v l="$lat" 'BEGIN { d = q - l; if (d < 0) d = -d; exit !(l > 0 && d <= 0.05 * l) }' ||
	fail "aqu-sz x interval ($q ns) != IOPS x mean latency x interval ($lat ns)"
[[ $(jq '.volume.inflight' <<<"$j") == 0 ]] || fail "in-flight count not back to 0 at rest"

# stats.json against its schema; diskstats with /proc/diskstats' field count
/usr/bin/python3 - "$(dirname "$0")/../../docs/stats.schema.json" "$T/r0/stats.json" <<'EOF' ||
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
EOF
	fail "stats.json does not validate against docs/stats.schema.json"
want=$(awk 'NR == 1 { print NF }' /proc/diskstats)
awk -v want="$want" 'NF != want { bad = 1 } END { exit bad || NR != 5 }' "$T/r0/diskstats" ||
	fail "diskstats lines must have $want fields (as /proc/diskstats), one per device"
grep -Eq ' fsvol-[0-9a-f]{8}\.m3 ' "$T/r0/diskstats" || fail "diskstats lacks member 3 (NAME.m3)"

# a bad ctl write fails (EINVAL), changes nothing, and the log names the culprit
ctl_refused() { # COMMAND CULPRIT
	if printf '%s' "$1" 2>/dev/null >"$T/r0/ctl"; then fail "ctl accepted '$1'"; fi
	grep -qF -- "$2" "$DAEMON_LOG" || fail "ctl '$1': the daemon log does not name '$2'"
}
ctl_refused "reset now" "reset: unexpected 'now'"
ctl_refused "repair all" "repair: unexpected 'all'"
ctl_refused "stats off please" "stats: unexpected 'please'"
ctl_refused "stats sometimes" "stats sometimes: expected all, volume or off"
ctl_refused "fail 4" "fail 4: expected a member in a raid role: its Number (mN, as fsvol status names it) or its path"
ctl_refused "fail -1" "fail -1: expected a member in a raid role"
ctl_refused "error 1x" "error 1x: expected the Number of a present member"
ctl_refused "rebuild" "unknown command 'rebuild'"
ctl_refused "$(head -c 4096 /dev/zero | tr '\0' a)" "ctl: command too long"
grep -q '\[UUUU\]' "$T/r0/status" || fail "a refused ctl command changed the volume: $(head -1 "$T/r0/status")"
reset "$T/r0"
dd_read "$T/r0" 4K 16 # 64K in: member 1
expect "$T/r0" 1 reads 1 "member counters after refused ctl commands (stats all)"

# fsvol stat: the first report covers the time since the reset, so a known
# workload comes back exactly: eight 64K reads = 8 volume reads, 2 per member
sleep 0.5 # the mount is older than the reset by at least this
t0=$(date +%s.%N)
reset "$T/r0"
for i in 0 1 2 3 4 5 6 7; do dd_read "$T/r0" 64K "$i"; done
"$FSVOL" stat -c 1 --json "$T/r0" >"$T/stat.json" || fail "fsvol stat --json failed"
t1=$(date +%s.%N)
jq -e --argjson w "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" '.interval_s <= $w' "$T/stat.json" >/dev/null ||
	fail "fsvol stat's first report spans $(jq .interval_s "$T/stat.json") s, more than the $t0..$t1 since the reset"
jq -e '.interval_s as $t | .devices | length == 5 and all(.[]; ."areq-sz" == 64 and ."w/s" == 0)
	and ((.[0]."r/s" * $t - 8) | fabs) < 0.01 and all(.[1:][]; ((."r/s" * $t - 2) | fabs) < 0.01)' \
	"$T/stat.json" >/dev/null || fail "fsvol stat after 8 reads of 64K: $(cat "$T/stat.json")"
"$FSVOL" stat "$T/r0" >"$T/stat.txt"
awk -v name="$(jq -r .volume.name "$T/r0/stats.json")" 'NR == 1 && $1 != name { exit 1 } NR == 2 && $1 != "device" { exit 1 }
	NR == 4 && $1 != "volume" { exit 1 } NR > 4 && NR <= 8 && $1 != "m" NR - 5 { exit 1 } END { exit NR < 8 }' \
	"$T/stat.txt" || fail "fsvol stat table: title, header, units, volume row, then members in order:"$'\n'"$(cat "$T/stat.txt")"
"$FSVOL" stat --csv "$T/r0" >"$T/stat.csv"
awk -F, 'NR == 1 { n = NF } NF != n { exit 1 } END { exit NR != 6 }' "$T/stat.csv" ||
	fail "fsvol stat --csv: a header and 5 rows of its width:"$'\n'"$(cat "$T/stat.csv")"
"$FSVOL" stat --perfmon "$T/r0" >"$T/stat.pm"
grep -Eq '^Avg\. Disk Bytes/Read +65536\.0+( +65536\.0+){4}$' "$T/stat.pm" ||
	fail "fsvol stat --perfmon: Avg. Disk Bytes/Read is not 65536 on all 5 devices:"$'\n'"$(cat "$T/stat.pm")"
for name in "Disk Reads/sec" "Avg. Disk sec/Read" "Avg. Disk Queue Length" "% Disk Time" "% Idle Time" \
	"Current Disk Queue Length"; do
	grep -q "^$name " "$T/stat.pm" || fail "fsvol stat --perfmon lacks '$name'"
done
# -i/-c: that many reports, then exit; --reset zeroes first
[[ $("$FSVOL" stat -i 0.1 -c 3 --json "$T/r0" | jq -c . | wc -l) == 3 ]] || fail "fsvol stat -i 0.1 -c 3 --json: not 3 reports"
"$FSVOL" stat --reset "$T/r0"
expect "$T/r0" volume reads 0 "after fsvol stat --reset"
expect_fail_msg "--interval 0" "$FSVOL" stat -i 0 "$T/r0"
expect_fail_msg "--count -1" "$FSVOL" stat -c -1 "$T/r0"
expect_fail_msg "$T/nowhere" "$FSVOL" stat "$T/nowhere"

# --- raid1, 2 members: a write goes to both; reads spread over both copies
"$FSVOL" create -l raid1 -s 16M --bitmap none "$T"/b{0,1} >/dev/null
fsvol_mount --read-policy=round-robin "$T/r1" "$T"/b{0,1}
safe_mode_off "$T/r1"
reset "$T/r1"
dd_write "$T/r1" 4K 0
expect "$T/r1" volume writes 1 "raid1 4K write"
expect "$T/r1" 0 writes 1 "raid1 4K write"
expect "$T/r1" 1 writes 1 "raid1 4K write"
reset "$T/r1"
for i in $(seq 0 99); do dd_read "$T/r1" 4K $((i * 7)); done
expect "$T/r1" volume reads 100 "raid1 100 reads"
r0=$(counter "$T/r1" 0 reads)
r1=$(counter "$T/r1" 1 reads)
[[ $((r0 + r1)) == 100 && $r0 -ge 40 && $r1 -ge 40 ]] || fail "raid1 reads not spread: $r0 + $r1"
# member write bytes = n x volume write bytes
reset "$T/r1"
fio --name=w --filename="$T/r1/volume" --rw=randwrite --bs=16k --direct=1 --ioengine=psync \
	--size=12M --io_size=2M --output=/dev/null
vw=$(counter "$T/r1" volume write_bytes)
mw=$(jq '[.members[].write_bytes] | add' "$T/r1/stats.json")
[[ $vw -gt 0 && $mw == $((2 * vw)) ]] || fail "raid1 write bytes: volume $vw, members $mw (want 2x)"
fsvol_umount "$T/r1"
# md's default policy keeps a sequential stream on one copy
fsvol_mount "$T/r1" "$T"/b{0,1}
reset "$T/r1"
dd if="$T/r1/volume" of=/dev/null bs=4K count=100 skip=1000 iflag=direct status=none
r0=$(counter "$T/r1" 0 reads)
r1=$(counter "$T/r1" 1 reads)
[[ $r0 == 100 || $r1 == 100 ]] || fail "md policy split a sequential stream: $r0 + $r1"
fsvol_umount "$T/r1"
# prefer:1 sends every read to member 1
fsvol_mount --read-policy=prefer:1 "$T/r1" "$T"/b{0,1}
reset "$T/r1"
for i in $(seq 0 19); do dd_read "$T/r1" 4K $((i * 13)); done
expect "$T/r1" 1 reads 20 "prefer:1, 20 reads"
expect "$T/r1" 0 reads 0 "prefer:1, 20 reads"
fsvol_umount "$T/r1"
# split:16K: one 64K read becomes four 16K pieces alternating over the copies
fsvol_mount --read-policy=split:16K "$T/r1" "$T"/b{0,1}
reset "$T/r1"
dd_read "$T/r1" 64K 5
expect "$T/r1" volume reads 1 "split:16K, one 64K read"
for i in 0 1; do
	expect "$T/r1" "$i" reads 2 "split:16K, one 64K read"
	expect "$T/r1" "$i" read_bytes 32768 "split:16K, one 64K read"
done

# --- raid5, 4 members, chunk 64K: small write = 2 reads + 2 writes; full stripe = 4 writes
# (the data path alone: no bitmap, no safe-mode marks; 98-meta-counted counts those)
"$FSVOL" create -l raid5 -c 64K -s 16M --bitmap none "$T"/c{0,1,2,3} >/dev/null
fsvol_mount "$T/r5" "$T"/c{0,1,2,3}
safe_mode_off "$T/r5"
reset "$T/r5"
dd_write "$T/r5" 4K 3
mr=$(jq '[.members[].reads] | add' "$T/r5/stats.json")
mw=$(jq '[.members[].writes] | add' "$T/r5/stats.json")
[[ $mr == 2 && $mw == 2 ]] || fail "raid5 4K write: $mr member reads, $mw member writes (want 2 + 2)"
reset "$T/r5"
dd_write "$T/r5" 192K 2
mr=$(jq '[.members[].reads] | add' "$T/r5/stats.json")
mw=$(jq '[.members[].writes] | add' "$T/r5/stats.json")
[[ $mr == 0 && $mw == 4 ]] || fail "raid5 full-stripe write: $mr member reads, $mw member writes (want 0 + 4)"
# fsync on the volume = one volume flush = one flush (fdatasync) on every member
reset "$T/r5"
/usr/bin/python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.fsync(fd); os.close(fd)' "$T/r5/volume"
expect "$T/r5" volume flushes 1 "fsync on the volume"
for i in 0 1 2 3; do expect "$T/r5" "$i" flushes 1 "fsync on the volume"; done
# the text trace of that small write: the volume request, then its four member
# requests with why each was issued (md's reconstruct-write on raid5 x4: the
# other two data columns read, member 0 and parity on 3 written)
"$FSVOL" trace -n 1 "$T/r5" >"$T/trace.txt" &
tracer=$!
_push_cleanup pid "$tracer"
for _ in $(seq 50); do [[ -s $T/trace.txt ]] && grep -q parity_write "$T/trace.txt" && break; dd_write "$T/r5" 4K 3; sleep 0.1; done
timeout 10 tail --pid="$tracer" -f /dev/null || fail "fsvol trace -n 1 did not end after a traced request"
# (the two reads start together, as do the two writes: within a pair, records
# come in completion order, so each pair is compared sorted)
awk 'NR > 1 { print $3, $4, $5, $7, $NF }' "$T/trace.txt" | head -5 >"$T/trace.rows"
got=$( (sed -n 1p "$T/trace.rows"; sed -n 2,3p "$T/trace.rows" | sort; sed -n 4,5p "$T/trace.rows" | sort) | tr '\n' ';')
[[ $got == "vol W 12288 4096 data;m1 R 12288 4096 data;m2 R 12288 4096 data;m0 W 12288 4096 data;m3 W 12288 4096 parity_write;" ]] ||
	fail "trace of a 4K raid5 write:"$'\n'"$(cat "$T/trace.txt")"
fsvol_umount "$T/r5"

# --- raid6, 6 members: a small write reads 3 (md's tie: the other 3 data
# columns, not D, P, Q) and writes D, P, Q
"$FSVOL" create -l raid6 -c 64K -s 16M --bitmap none "$T"/d{0,1,2,3,4,5} >/dev/null
fsvol_mount "$T/r6" "$T"/d{0,1,2,3,4,5}
safe_mode_off "$T/r6"
reset "$T/r6"
dd_write "$T/r6" 4K 1
mr=$(jq '[.members[].reads] | add' "$T/r6/stats.json")
mw=$(jq '[.members[].writes] | add' "$T/r6/stats.json")
[[ $mr == 3 && $mw == 3 ]] || fail "raid6 4K write: $mr member reads, $mw member writes (want 3 + 3)"
fsvol_umount "$T/r6"

# --- degraded raid5: reading a chunk of the missing member reads the rest of its stripe
rm -f "$T/c1"
fsvol_mount --force "$T/r5" "$T"/c{0,2,3}
# logical chunk 1 (offset 64K) lives on member 1 in stripe 0 (left-symmetric)
"$FSVOL" trace --json -n 1 "$T/r5" >"$T/trace.json" &
tracer=$!
_push_cleanup pid "$tracer"
for _ in $(seq 50); do [[ -s $T/trace.json ]] && break; dd_read "$T/r5" 4K 16; sleep 0.1; done
timeout 10 tail --pid="$tracer" -f /dev/null || fail "fsvol trace -n 1 did not end after a traced request"
jq -e 'select(.dev == -1)' "$T/trace.json" >/dev/null || fail "no volume request traced"
parent=$(jq -r 'select(.dev == -1) | .seq' "$T/trace.json" | head -1)
subs=$(jq -c "select(.parent == $parent) | [.dev, .why]" "$T/trace.json" | sort | tr -d '\n')
[[ $subs == '[0,"reconstruct"][2,"reconstruct"][3,"reconstruct"]' ]] ||
	fail "degraded read of member 1's chunk: member requests $subs (want reconstruct reads of 0, 2, 3)"
