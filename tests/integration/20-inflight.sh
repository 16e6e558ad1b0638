#!/usr/bin/env bash
# 1024 emulated requests in flight over 8 hdd members, through FUSE and through
# the in-process engine: no thread waits per request, so the whole queue is in
# flight (the volume's average queue is ~1024), and every completion is
# released at its model time, so the volume delivers 8 x the model's random 4K
# IOPS (the model's clock does not drift with the host's).
# fsvol-test: alone (IOPS within 6% of the model's: completions released on time need an idle host)
. "$(dirname "$0")/../lib.sh"
requires jq
BENCH=$FSVOL_BUILD/bin/fsvol-bench
QD=1024

members=()
for i in 0 1 2 3 4 5 6 7; do members+=("$T/m$i"); done
"$FSVOL" create -l raid0 -c 64K -s 64M "${members[@]}" >/dev/null
# the model's own figure for one member's random 4K reads (FIFO: the queue
# does not change the service time)
iops=$("$FSVOL" model show -s 64M hdd | awk '/IOPS, random 4K QD1/ { print $5 }')
[[ -n $iops ]] || fail "fsvol model show printed no IOPS figure"

# check LABEL JSON: aqu-sz ~ QD, IOPS ~ 8 x the model's
check() {
	local label=$1 json=$2 aqu rs
	aqu=$(jq '.results.targets[0].below.devices[0].aqu_sz' "$json")
	rs=$(jq '.results.targets[0].below.devices[0].r_s' "$json")
	note "$label: volume aqu-sz $aqu, $rs reads/s (model: 8 x $iops)"
	awk -v a="$aqu" -v q=$QD 'BEGIN { exit !(a >= 0.9 * q) }' ||
		fail "$label: average queue $aqu, expected ~$QD requests in flight"
	awk -v r="$rs" -v m="$iops" 'BEGIN { x = r / (8 * m); exit !(x > 0.94 && x < 1.06) }' ||
		fail "$label: $rs reads/s, expected 8 x $iops within 6% (completions not at model time)"
	jq -e '[.results.targets[0].below.devices[1:][] | .aqu_sz] | min > 64' "$json" >/dev/null ||
		fail "$label: some member's queue ran dry: $(jq -c '[.results.targets[0].below.devices[] | .aqu_sz]' "$json")"
}

# in-process: one thread keeps 1024 in flight
"$BENCH" -q --json -b 4K -r -o $QD -t 1 -d 3 -W 1 --members "$(IFS=,; echo "${members[*]}")" --model hdd \
	>"$T/inproc.json" 2>"$T/inproc.err" || fail "in-process run failed: $(cat "$T/inproc.err")"
check "in-process" "$T/inproc.json"

# through FUSE: the kernel keeps 1024 async direct I/Os in flight
fsvol_mount --model=hdd "$T/mnt" "${members[@]}"
threads0=$(ls "/proc/$(daemon_pid "$T/mnt")/task" | wc -l)
"$BENCH" -q --json -b 4K -r -o $QD -t 1 -d 3 -W 1 -Sh "$T/mnt/volume" >"$T/fuse.json" 2>"$T/fuse.err" ||
	fail "FUSE run failed: $(cat "$T/fuse.err")"
check "FUSE" "$T/fuse.json"
threads=$(ls "/proc/$(daemon_pid "$T/mnt")/task" | wc -l)
note "daemon threads: $threads0 idle, $threads after $QD in flight"
((threads < 64)) || fail "the daemon has $threads threads for $QD requests in flight (a thread per request?)"
grep -q "lateness p50" "$T/mnt/status" || fail "status shows no release lateness"
note "$(grep lateness "$T/mnt/status")"
fsvol_umount "$T/mnt"
