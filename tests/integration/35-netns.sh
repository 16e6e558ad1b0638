#!/usr/bin/env bash
# Beyond one machine, by simulation: six test hosts, each a network namespace
# joined to this one by a veth pair on addresses this test assigns
# (10.231.N.0/24, on those veths only: all traffic stays inside the machine),
# each running `nbdkit memory` behind nbdkit's delay filter (2 ms per read and
# write, a LAN with a busy disk). A raid6 over the six hosts is mounted here;
# two hosts' servers are killed during a verified write run: the volume keeps
# serving, both members show failed, and a verify pass is clean.
. "$(dirname "$0")/../lib.sh"
requires nbdkit
requires fio
requires ip
requires jq
cd "$T"

NS=fsv$$
# hosts a killed run of this test left behind hold the same addresses: gone
for old in $(ip netns list 2>/dev/null | awk '/^fsv[0-9]+h[0-9]/ { print $1 }'); do
	ip netns pids "$old" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
	ip netns del "$old" 2>/dev/null
done
for old in $(ip -br link 2>/dev/null | awk '$1 ~ /^fsv[0-9]+v[0-9]/ { sub(/@.*/, "", $1); print $1 }'); do
	ip link del "$old" 2>/dev/null
done
ip netns add "${NS}h0" 2>"$T/netns.err" || {
	echo "SKIP: cannot create network namespaces here: $(cat "$T/netns.err")"
	exit 77
}
_push_cleanup netns "${NS}h0"
N=6 PORT=10809
uris=()
for ((i = 0; i < N; i++)); do
	ns=${NS}h$i
	((i == 0)) || { ip netns add "$ns" || fail "ip netns add $ns"; _push_cleanup netns "$ns"; }
	# the root end stays here; the peer becomes the host's eth0
	ip link add "${NS}v$i" type veth peer name "${NS}p$i" || fail "veth for host $i"
	_push_cleanup netns-link "${NS}v$i"
	ip link set "${NS}p$i" netns "$ns" || fail "moving the veth into $ns"
	ip addr add "10.231.$i.1/24" dev "${NS}v$i"
	ip link set "${NS}v$i" up
	ip -n "$ns" link set lo up
	ip -n "$ns" link set "${NS}p$i" name eth0
	ip -n "$ns" addr add "10.231.$i.2/24" dev eth0
	ip -n "$ns" link set eth0 up
	ip netns exec "$ns" nbdkit -i "10.231.$i.2" -p $PORT -P "$T/h$i.pid" --filter=delay \
		memory 48M delay-read=2ms delay-write=2ms || fail "nbdkit on host $i"
	track_pid "$(cat "$T/h$i.pid")"
	uris+=("nbd://10.231.$i.2:$PORT/")
done
# the hosts are reachable only through their veths
for ((i = 0; i < N; i++)); do
	for ((k = 0; k < 50; k++)); do
		nbdinfo --size "${uris[i]}" >/dev/null 2>&1 && break
		sleep 0.1
	done
	nbdinfo --size "${uris[i]}" >/dev/null 2>&1 || fail "host $i's export not reachable at ${uris[i]}"
done

"$FSVOL" create -l raid6 -c 64K "${uris[@]}" >/dev/null || fail "create raid6 over six hosts"
fsvol_mount "$T/mnt" "${uris[@]}"
size=$(($(stat -c %s "$T/mnt/volume") / MiB))
((size > 16)) && size=16
fio_w() { # OUT [extra]
	local out=$1
	shift
	fio --name=w --filename="$T/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=16 --size=${size}M --verify=crc32c --verify_state_save=0 \
		--randseed=11 --output="$out" "$@"
}

fio_w "$T/fio1.out" --do_verify=0 --loops=2 &
fio_pid=$!
wait_member_writes "$T/mnt" 1 100
_alive "$fio_pid" || fail "the write run ended before host 1 was killed"
kill -KILL "$(cat "$T/h1.pid")"
wait_member_writes "$T/mnt" 4 200
_alive "$fio_pid" || fail "the write run ended before host 4 was killed"
kill -KILL "$(cat "$T/h4.pid")"
rc=0
wait "$fio_pid" || rc=$?
((rc == 0)) || fail "fio saw an error when two hosts died: $(tail -5 "$T/fio1.out")"
fio_w "$T/fio2.out" --verify_only || fail "verify with two hosts gone: $(tail -5 "$T/fio2.out")"
# a dead host's member fails at its first I/O after the kill: the verify reads them all
for i in 1 4; do
	grep -q "m$i: .* failed" "$T/mnt/status" || fail "host $i's member not failed: $(cat "$T/mnt/status")"
done
grep -q degraded "$T/mnt/status" || fail "status does not say degraded"
# the four survivors still take writes
fio_w "$T/fio3.out" --randseed=12 || fail "verified writes on four hosts: $(tail -5 "$T/fio3.out")"
fsvol_umount "$T/mnt"
echo "ok"
