#!/usr/bin/env bash
# Beyond one machine, by simulation: six test hosts, each a network namespace
# running `nbdkit memory` behind nbdkit's delay filter (2 ms per read and write,
# a LAN with a busy disk), and a client namespace joined to each host by a veth
# pair. The fsvol daemon of a raid6 over the six hosts runs in the client
# namespace (its FUSE mount is this machine's). Two hosts' servers die in the
# middle of verified write runs: the volume keeps serving, both members show
# failed, and verify passes are clean.
#
# Events, not time: a host is frozen (SIGSTOP) before a write run starts, so
# the run cannot end before the host is killed: it waits on the frozen host,
# and the kill comes once requests sit unread at the host's server.
# Two runs on one machine do not meet: every namespace is this run's own
# (named after $T), the veths exist only inside them, and the addresses
# (10.231.N.0/24) and port (10809) live in this run's namespaces only.
. "$(dirname "$0")/../lib.sh"
requires nbdkit
requires nbdinfo
requires fio
requires ip
requires nsenter
requires jq
cd "$T" # fio may leave state files in the working directory

NS=$(netns_prefix)
C=${NS}c # the client: the fsvol daemon's network namespace
ip netns add "$C" 2>"$T/netns.err" || {
	grep -q "File exists" "$T/netns.err" && fail "network namespace $C exists already"
	echo "SKIP: cannot create network namespaces here: $(cat "$T/netns.err")"
	exit 77
}
_push_cleanup netns "$C"
ip -n "$C" link set lo up || fail "lo up in $C"
in_client() { nsenter --net="/run/netns/$C" "$@"; }

N=6 PORT=10809
uris=() pids=()
for ((i = 0; i < N; i++)); do
	ns=${NS}h$i
	ip netns add "$ns" || fail "ip netns add $ns"
	_push_cleanup netns "$ns"
	# the pair is made inside the two namespaces: no name is ever taken here
	ip -n "$C" link add "h$i" type veth peer name eth0 netns "$ns" || fail "veth between $C and $ns"
	ip -n "$C" addr add "10.231.$i.1/24" dev "h$i"
	ip -n "$C" link set "h$i" up
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "10.231.$i.2/24" dev eth0
	ip -n "$ns" link set eth0 up
	nbdkit_start "$T/h$i.pid" ip netns exec "$ns" nbdkit -i "10.231.$i.2" -p $PORT \
		--filter=delay memory 48M delay-read=2ms delay-write=2ms
	pids+=("$NBDKIT_PID")
	uris+=("nbd://10.231.$i.2:$PORT/")
done
# every export answers from the client namespace (each listens since its pid file appeared)
for ((i = 0; i < N; i++)); do
	in_client nbdinfo --size "${uris[i]}" >/dev/null 2>"$T/nbdinfo.err" ||
		fail "host $i's export not reachable at ${uris[i]}: $(cat "$T/nbdinfo.err")"
done

in_client "$FSVOL" create -l raid6 -c 64K "${uris[@]}" >/dev/null || fail "create raid6 over six hosts"
MOUNT_NETNS=$C fsvol_mount "$T/mnt" "${uris[@]}"
size=$(($(stat -c %s "$T/mnt/volume") / MiB))
((size > 16)) && size=16
fio_w() { # OUT SEED [extra]
	local out=$1 seed=$2
	shift 2
	fio --name=w --filename="$T/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=16 --size=${size}M --verify=crc32c --verify_state_save=0 \
		--randseed="$seed" --output="$out" "$@"
}
# host_unread HOST: requests wait at HOST's server (bytes it has not read:
# frozen, it reads nothing, and the volume's writes wait on them)
host_unread() {
	ss -N "${NS}h$1" -Htn state established "( sport = :$PORT )" | awk '{ q += $1 } END { exit !(q > 0) }'
}
member_failed() { grep -q "m$1: .* failed" "$T/mnt/status"; }

# kill_during_run HOST SEED: a verified write run during which HOST's server dies
kill_during_run() {
	local h=$1 seed=$2 fio_pid rc=0
	kill -STOP "${pids[h]}" || fail "cannot freeze host $h"
	fio_w "$T/fio$seed.out" "$seed" --do_verify=0 &
	fio_pid=$!
	track_pid "$fio_pid"
	wait_for 120 "no request reached frozen host $h" host_unread "$h"
	_alive "$fio_pid" || fail "the write run to host $h ended while the host was frozen: $(tail -5 "$T/fio$seed.out")"
	kill -KILL "${pids[h]}"
	wait_for 120 "host $h's member not failed after its server was killed" member_failed "$h"
	wait "$fio_pid" || rc=$?
	_drop_cleanup pid "$fio_pid"
	((rc == 0)) || fail "fio saw an error when host $h died: $(tail -5 "$T/fio$seed.out")"
	fio_w "$T/verify$seed.out" "$seed" --verify_only ||
		fail "verify after host $h died: $(tail -5 "$T/verify$seed.out")"
}
kill_during_run 1 11 # raid6 with one host gone: the writes after it are degraded
kill_during_run 4 12 # and with two gone: the verify reads through both losses
for i in 1 4; do member_failed $i || fail "host $i's member not failed: $(cat "$T/mnt/status")"; done
grep -q degraded "$T/mnt/status" || fail "status does not say degraded"
# the four survivors still take writes
fio_w "$T/fio13.out" 13 || fail "verified writes on four hosts: $(tail -5 "$T/fio13.out")"
fsvol_umount "$T/mnt"
echo "ok"
