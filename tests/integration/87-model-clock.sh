#!/usr/bin/env bash
# Where the model's clock runs (MNT/status: "clock on ..."): over FUSE io_uring
# a queue thread's ring keeps it (fsvol-fuse-qN), for a model given at mount
# and one set at run time through MNT/ctl; over /dev/fuse, and where the kernel
# refuses the ring (enable_uring N, --fuse-transport uring: the volume mounts
# through /dev/fuse), the model's own thread (fsvol-model) does. Under each,
# the emulated timing is the model's (QD1 random reads: the member's mean
# latency within 10% of the model's analytic figure, as 08-model checks) and
# every release is counted. Over the ring an emulated volume's requests are
# served by the clock's thread, whichever CPU issues them (its releases commit
# on its ring, which takes their entries), and once the model is set to none
# at run time by their own queue's thread again (MNT/status counts the
# requests of each queue thread). SIGTERM under load with the clock on the ring ends
# the daemon with clean superblocks (the clock goes back to its thread for the
# last writes). enable_uring is set for the test and restored after.
# fsvol-test: alone (sets the fuse module's enable_uring (machine-wide); times the model within 10%)
. "$(dirname "$0")/../lib.sh"
requires_root
requires fio
requires jq
unset FSVOL_FUSE_TRANSPORT # this test picks the transport of each mount
param=/sys/module/fuse/parameters/enable_uring

"$FSVOL" create -l raid0 -c 64K -s 256M "$T/s0" "$T/s1" >/dev/null || fail "create failed"
MNT=$T/mnt
keeper() { sed -n 's/.*completions released.*, clock on //p' "$MNT/status"; }
released() { sed -n 's/.*: \([0-9]*\) completions released.*/\1/p' "$MNT/status"; }
_on_ring() { [[ $(keeper) == "fsvol-fuse-q"*" (its FUSE queue's ring)" ]]; }
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b * p / 100) }'; }
member_mean_ms() { jq -r ".members[] | select(.index == $1) | if .reads > 0 then .read_ns / .reads / 1e6 else 0 end" "$MNT/stats.json"; }
want=$("$FSVOL" model show -s 256M hdd | awk '/random 4K read, QD1/ { print $5 }')
[[ -n $want ]] || fail "fsvol model show printed no random 4K figure"

# timed WHAT: QD1 random 4K reads; the members' mean latency is the model's,
# and the model released every one of them
timed() {
	local before got
	before=$(released)
	echo reset >"$MNT/ctl"
	fio --name=qd1 --filename="$MNT/volume" --rw=randread --bs=4k --direct=1 --ioengine=psync \
		--size=512M --time_based --runtime=3 --randseed=11 --output=/dev/null || fail "$1: fio failed"
	for i in 0 1; do
		got=$(member_mean_ms $i)
		within "$got" "$want" 10 || fail "$1: member $i random 4K QD1 mean $got ms, model says $want ms (within 10%)"
	done
	local reads
	reads=$(jq '[.members[].reads] | add' "$MNT/stats.json")
	(($(released) - before >= reads)) || fail "$1: $reads member reads, $(($(released) - before)) releases"
	note "$1: member mean $got ms (model $want ms), clock on $(keeper)"
}

# /dev/fuse: the model's own thread
fsvol_mount --fuse-transport=dev --model=hdd "$MNT" "$T/s0" "$T/s1"
timed "/dev/fuse"
[[ $(keeper) == "fsvol-model (its own thread)" ]] || fail "/dev/fuse: the clock is on '$(keeper)'"
fsvol_umount "$MNT"

if [[ ! -w $param ]]; then
	echo "SKIP: no writable $param (FUSE over io_uring needs Linux 6.14+ with CONFIG_FUSE_IO_URING)"
	exit 77
fi
_push_cleanup sysparam "$param" "$(cat "$param")"

# the ring refused (the kernel does not offer it): /dev/fuse serves, the
# model's thread keeps the clock
echo N >"$param"
fsvol_mount --fuse-transport=uring --model=hdd "$MNT" "$T/s0" "$T/s1"
[[ $(_fuse_transport "$MNT") == "dev (the kernel does not offer"* ]] ||
	fail "enable_uring N: served by '$(_fuse_transport "$MNT")'"
timed "ring refused"
[[ $(keeper) == "fsvol-model (its own thread)" ]] || fail "ring refused: the clock is on '$(keeper)'"
fsvol_umount "$MNT"

# io_uring: a queue thread's ring keeps the clock
echo Y >"$param"
fsvol_mount --fuse-transport=uring --model=hdd "$MNT" "$T/s0" "$T/s1"
wait_for 10 "$MNT's ring registered" _not_registering "$MNT"
[[ $(_fuse_transport "$MNT") == uring* ]] || fail "enable_uring Y: served by '$(_fuse_transport "$MNT")'"
timed "io_uring"
_on_ring || fail "io_uring: the clock is on '$(keeper)'"
# a model change at run time (hold, drain, swap under the emulator's lock)
# while the ring keeps the clock
echo "model hdd:cache=0" >"$MNT/ctl"
grep -q "model hdd:cache=0" "$MNT/status" || fail "status does not show the model changed through ctl"
echo "model hdd" >"$MNT/ctl"
timed "io_uring, model changed at run time"
_on_ring || fail "io_uring after a model change: the clock is on '$(keeper)'"

# where requests are served: from the other queue's CPU, with the model on
# (the clock's thread takes them) and after "model none" (their own queue's
# thread again). Counts of requests, not times.
served() { sed -n "s/^fuse requests by queue thread: .*q$1 \([0-9]*\).*/\1/p" "$MNT/status"; }
if (($(nproc) >= 2)); then
	k=$(keeper)
	k=${k#fsvol-fuse-q}
	k=${k%% *}
	o=$((k == 0 ? 1 : 0))
	[[ -n $(served "$o") && -n $(served "$k") ]] || fail "status has no requests by queue thread: $(tail -2 "$MNT/status")"
	# PHASE: 4096 random 4K reads issued from queue o's CPU; sets dk, do (served deltas)
	from_other() {
		local k0 o0
		k0=$(served "$k") o0=$(served "$o")
		taskset -c "$o" fio --name=from_q"$o" --filename="$MNT/volume" --rw=randread --bs=4k --direct=1 \
			--ioengine=io_uring --iodepth=32 --size=256M --io_size=16M --randseed=5 --output=/dev/null ||
			fail "$1: fio failed"
		dk=$(($(served "$k") - k0)) do=$(($(served "$o") - o0))
		note "$1: from CPU $o, q$k served $dk, q$o served $do"
	}
	echo "model ssd" >"$MNT/ctl"
	from_other "model ssd"
	((dk >= 4096 * 9 / 10)) || fail "model ssd: the clock's thread q$k served $dk of ~4096 requests from CPU $o"
	echo "model none" >"$MNT/ctl"
	from_other "model none"
	((do >= 4096 * 8 / 10)) || fail "model none: q$o served $do of ~4096 requests from its CPU (q$k $dk)"
	echo "model hdd" >"$MNT/ctl"
fi
fsvol_umount "$MNT"

# a model set at run time moves onto the ring too
fsvol_mount --fuse-transport=uring "$MNT" "$T/s0" "$T/s1"
echo "model hdd" >"$MNT/ctl"
dd if="$MNT/volume" of=/dev/null bs=4K count=20 iflag=direct status=none
wait_for 10 "the clock of a model set at run time on the ring (on '$(keeper)')" _on_ring
timed "io_uring, model set through ctl"

# SIGTERM under load with the clock on the ring: the daemon ends, clean
reads() { jq '.volume.reads' "$MNT/stats.json"; }
_read_past() { (($(reads) > $1 + 100)); }
before=$(reads)
fio --name=load --filename="$MNT/volume" --rw=randrw --bs=4k --iodepth=256 --ioengine=io_uring --direct=1 \
	--time_based --runtime=60 --output=/dev/null >/dev/null 2>&1 &
lpid=$!
track_pid "$lpid"
wait_for 60 "fio's requests do not reach the volume" _read_past "$before"
_on_ring || fail "under load: the clock is on '$(keeper)'"
sigterm_under_load "$MNT" "$lpid" "$T/s0" "$T/s1"
grep -q "cannot keep the model's clock\|the model's timer:" "$DAEMON_LOG" &&
	fail "the ring could not keep the clock: $(grep "model's" "$DAEMON_LOG")"
note "the model's clock: its thread over /dev/fuse and a refused ring, a queue's ring over io_uring"
