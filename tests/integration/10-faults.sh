#!/usr/bin/env bash
# Member faults through the fault wrapper (docs/faults.md), set at mount
# (--fault N=SPEC) and at run time (MNT/ctl "fault N SPEC", "error N"),
# deterministic: no sleep decides when a member fails.
#  - fail-after-N in the middle of a verified workload: the engine fails the
#    member and serves from redundancy; fio's verify sees every byte right;
#    superblocks record it; the volume reassembles degraded; the failed member
#    is refused as stale.
#  - reads fail but writes succeed; a bad range fails reads until a write heals
#    it; a flaky member's down period is served by its mirror; a delayed member
#    shows the delay in its own counters; ENOSPC fails the request, not the member.
. "$(dirname "$0")/../lib.sh"
requires fio
requires jq

verify_fio() { # MNT SIZE_MB OUT [extra fio args]: the verify pass of the write job
	local mnt=$1 size=$2 out=$3
	shift 3
	fio --name=w --filename="$mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=8 --size=${size}M --verify=crc32c --verify_only \
		--verify_state_save=0 --randseed=3 --output="$out" "$@"
}

# run LEVEL NMEMBERS "FAIL..." HOW: HOW is "mount" (--fault N=error=all,after=K)
# or "ctl" (the same spec written to MNT/ctl before the workload)
run() {
	local level=$1 n=$2 fails=$3 how=$4
	local d=$T/$level-$how members=() opts=() i
	mkdir -p "$d"
	for ((i = 0; i < n; i++)); do members+=("$d/m$i"); done
	"$FSVOL" create -l "$level" -c 64K -s 24M "${members[@]}" >/dev/null
	# each failing member dies after its 300th I/O, part-way through the writes
	[[ $how == mount ]] && for i in $fails; do opts+=(--fault="$i=error=all,after=300"); done
	fsvol_mount "${opts[@]}" "$d/mnt" "${members[@]}"
	[[ $how == ctl ]] && for i in $fails; do echo "fault $i error=all,after=300" >"$d/mnt/ctl"; done
	[[ $how == mount ]] && for i in $fails; do
		grep -q "m$i: .*(faults: error=all" "$d/mnt/status" || fail "$level: status does not show member $i's faults"
	done
	local size=$(($(stat -c %s "$d/mnt/volume") / MiB))
	((size > 40)) && size=40
	fio --name=w --filename="$d/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=8 --size=${size}M --verify=crc32c --do_verify=0 \
		--verify_state_save=0 --randseed=3 --output="$d/fio-w.out" ||
		fail "$level: writes failed after member(s) $fails started failing"
	verify_fio "$d/mnt" "$size" "$d/fio-v.out" ||
		fail "$level: verify failed with member(s) $fails failed: $(tail -5 "$d/fio-v.out")"
	for i in $fails; do
		grep -q "m$i: .* failed" "$d/mnt/status" || fail "$level: member $i not shown failed"
		jq -e ".members[] | select(.index == $i) | .errors >= 1" "$d/mnt/stats.json" >/dev/null ||
			fail "$level: member $i shows no error in its counters"
	done
	grep -q degraded "$d/mnt/status" || fail "$level: status does not say degraded"
	fsvol_umount "$d/mnt"
	# the survivors' superblocks say which member failed; reassemble without it
	local survivors=()
	for ((i = 0; i < n; i++)); do [[ " $fails " == *" $i "* ]] || survivors+=("${members[i]}"); done
	fsvol_mount "$d/mnt" "${survivors[@]}"
	verify_fio "$d/mnt" "$size" "$d/fio-v2.out" || fail "$level: verify after reassembly failed"
	fsvol_umount "$d/mnt"
	# the failed member is refused as stale when given back
	expect_fail_msg "stale" "$FSVOL" mount "$d/mnt" "${members[@]}"
}

run raid1 2 "1" mount
run raid10 4 "0" ctl
run raid5 4 "2" mount
run raid6 5 "1 3" ctl

dd_at() { # dd_at in|out FILE OFFSET_K [count]: one 4K direct transfer
	if [[ $1 == out ]]; then
		dd if=/dev/urandom of="$2" bs=4K seek=$(($3 / 4)) count=${4:-1} oflag=direct conv=notrunc status=none
	else
		dd if="$2" of=/dev/null bs=4K skip=$(($3 / 4)) count=${4:-1} iflag=direct status=none
	fi
}
member_reads() { jq ".members[] | select(.index == $2) | .reads" "$1/stats.json"; }

# --- reads fail, writes succeed (a single member: nothing hides the error)
d=$T/rfail
mkdir -p "$d"
"$FSVOL" create -l single -s 16M "$d/m0" >/dev/null
fsvol_mount --fault=0=error=read "$d/mnt" "$d/m0"
dd_at out "$d/mnt/volume" 0 16 || fail "error=read: a write failed"
! dd_at in "$d/mnt/volume" 0 2>/dev/null || fail "error=read: a read succeeded"
fsvol_umount "$d/mnt"

# --- a bad range fails reads until a write heals it (raid1, reads pinned to one copy);
# without a bad-block list (80-bad-blocks.sh has one) a read error fails the member
d=$T/bad
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 16M --bad-block-log none "$d/m0" "$d/m1" >/dev/null
fsvol_mount --read-policy=prefer:0 "$d/mnt" "$d/m0" "$d/m1"
dd_at out "$d/mnt/volume" 0 64
echo "fault 0 bad=64K+8K" >"$d/mnt/ctl"
dd_at out "$d/mnt/volume" 64 2 # covers the range: healed
r0=$(member_reads "$d/mnt" 0)
dd_at in "$d/mnt/volume" 64 2 || fail "bad range: a read after the healing write failed"
[[ $(member_reads "$d/mnt" 0) -gt $r0 ]] || fail "bad range: the read did not go to member 0"
grep -q "m0: .* active" "$d/mnt/status" || fail "bad range: member 0 failed although its range was healed"
echo "fault 0 bad=128K+4K" >"$d/mnt/ctl"
dd_at in "$d/mnt/volume" 128 || fail "bad range: the mirror did not serve a read of the bad range"
grep -q "m0: .* failed" "$d/mnt/status" || fail "bad range: reading an unhealed bad range did not fail member 0"
fsvol_umount "$d/mnt"

# --- a flaky member: its down period fails it, its mirror serves every byte
d=$T/flaky
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 24M "$d/m0" "$d/m1" >/dev/null
fsvol_mount --fault=1=flaky=200io/50io "$d/mnt" "$d/m0" "$d/m1"
fio --name=w --filename="$d/mnt/volume" --rw=randwrite --bs=16k --direct=1 --ioengine=io_uring --iodepth=4 \
	--size=20M --verify=crc32c --verify_state_save=0 --randseed=5 --output="$d/fio.out" ||
	fail "flaky: I/O failed: $(tail -5 "$d/fio.out")"
grep -q "m1: .* failed" "$d/mnt/status" || fail "flaky: the down period did not fail member 1"
fsvol_umount "$d/mnt"

# --- a delayed member: the delay is in its own counters, not its neighbour's
d=$T/delay
mkdir -p "$d"
"$FSVOL" create -l raid0 -c 64K -s 16M "$d/m0" "$d/m1" >/dev/null
fsvol_mount "$d/mnt" "$d/m0" "$d/m1"
echo "fault 1 rdelay=30ms" >"$d/mnt/ctl"
for k in 0 64 128 192; do dd_at in "$d/mnt/volume" $k; done # chunks on m0, m1, m0, m1
m0=$(jq '.members[0] | .read_ns / .reads / 1e6' "$d/mnt/stats.json")
m1=$(jq '.members[1] | .read_ns / .reads / 1e6' "$d/mnt/stats.json")
note "delay: member 0 reads take $m0 ms, member 1 $m1 ms"
awk -v a="$m1" 'BEGIN { exit !(a >= 30) }' || fail "delay: member 1's mean read $m1 ms < the 30 ms delay"
awk -v a="$m0" 'BEGIN { exit !(a < 30) }' || fail "delay: member 0 shows the delay ($m0 ms) it does not have"
fsvol_umount "$d/mnt"

# --- ENOSPC is the host's condition: the write fails, no member does
d=$T/nospc
mkdir -p "$d"
"$FSVOL" create -l raid1 -s 16M "$d/m0" "$d/m1" >/dev/null
fsvol_mount "$d/mnt" "$d/m0" "$d/m1"
echo "fault 0 error=write,errno=enospc" >"$d/mnt/ctl"
out=$(dd if=/dev/zero of="$d/mnt/volume" bs=4K count=1 oflag=direct conv=notrunc 2>&1) &&
	fail "enospc: the write succeeded"
[[ $out == *"No space left"* ]] || fail "enospc: the write failed with '$out', not ENOSPC"
grep -q "m0: .* active" "$d/mnt/status" || fail "enospc: member 0 was failed for the host's full disk"
echo "fault 0 none" >"$d/mnt/ctl"
dd_at out "$d/mnt/volume" 0 || fail "enospc: a write after the space came back failed"
fsvol_umount "$d/mnt"

# --- bad specs are refused, naming the culprit
d=$T/spec
mkdir -p "$d"
"$FSVOL" create -l single -s 16M "$d/m0" >/dev/null
mkdir -p "$d/mnt"
expect_fail_msg "fault: unknown key 'nope'" "$FSVOL" mount --fault=0=nope=1 "$d/mnt" "$d/m0"
expect_fail_msg "no member m3 present" "$FSVOL" mount --fault=3=error=all "$d/mnt" "$d/m0"
fsvol_mount "$d/mnt" "$d/m0"
! echo "fault 0 rate=2" >"$d/mnt/ctl" 2>/dev/null || fail "ctl accepted fault rate=2"
fsvol_umount "$d/mnt"
