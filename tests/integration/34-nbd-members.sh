#!/usr/bin/env bash
# NBD members (members/member_nbd.c): volumes built from `nbdkit memory`
# exports on unix sockets in $T.
#  - raid5 over four exports: fio verify through the FUSE mount is clean; one
#    nbdkit killed mid-run fails that member (MNT/status), fio sees no error,
#    a verify pass afterwards is clean; per-member counters show the NBD
#    members like local ones.
#  - raid1 of a local file and an NBD member: each copy read back alone (a
#    read policy that prefers it, then the other member failed).
#  - a TLS member (nbds+unix://, pre-shared key) mirrors a file and serves alone.
#  - create refuses an export too small for -s, and a URI nobody serves; a
#    server that never answers the handshake is given up within the deadline.
. "$(dirname "$0")/../lib.sh"
requires nbdkit
requires fio
requires jq
cd "$T" # fio may leave state files in the working directory

uri() { echo "nbd+unix:///?socket=$T/$1.sock"; }
# export NAME SIZE: nbdkit memory on $T/NAME.sock, killed at exit
export_mem() {
	nbdkit_start "$T/$1.pid" nbdkit -U "$T/$1.sock" memory "$2"
}

# --- raid5 over four NBD exports, one server killed mid-run
for i in 0 1 2 3; do export_mem n$i 96M; done
"$FSVOL" create -l raid5 -c 64K "$(uri n0)" "$(uri n1)" "$(uri n2)" "$(uri n3)" >/dev/null ||
	fail "create raid5 over NBD members"
"$FSVOL" examine "$(uri n2)" | grep -q "raid5" || fail "examine of an NBD member shows no raid5 superblock"
fsvol_mount "$T/mnt" "$(uri n0)" "$(uri n1)" "$(uri n2)" "$(uri n3)"
grep -q "m2: nbd+unix:///?socket=$T/n2.sock active" "$T/mnt/status" || fail "status does not list the NBD member"

fio_w() { # OUT [extra]: random writes of 4K-128K over 64M, verified as they go
	local out=$1
	shift
	fio --name=w --filename="$T/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 \
		--ioengine=io_uring --iodepth=16 --size=64M --verify=crc32c --verify_state_save=0 \
		--randseed=7 --output="$out" "$@"
}
fio_w "$T/fio1.out" || fail "fio verify over four NBD members: $(tail -5 "$T/fio1.out")"
for i in 0 1 2 3; do
	r=$(member_stat "$T/mnt" $i reads)
	w=$(member_stat "$T/mnt" $i writes)
	((r > 0 && w > 0)) || fail "member $i (NBD) counters: reads=$r writes=$w"
done
jq -e '.members[2].path | startswith("nbd+unix://")' "$T/mnt/stats.json" >/dev/null ||
	fail "stats.json does not name the NBD member by its URI"

# again, and kill n2's server once the run is under way
fio_w "$T/fio2.out" --do_verify=0 --loops=4 &
fio_pid=$!
wait_member_writes "$T/mnt" 2 200
_alive "$fio_pid" || fail "the write run ended before the server was killed"
kill -KILL "$(cat "$T/n2.pid")"
rc=0
wait "$fio_pid" || rc=$?
((rc == 0)) || fail "fio saw an error when an NBD member's server died: $(tail -5 "$T/fio2.out")"
grep -q "m2: .* failed" "$T/mnt/status" || fail "the killed server's member is not failed: $(cat "$T/mnt/status")"
grep -q degraded "$T/mnt/status" || fail "status does not say degraded"
fio_w "$T/fio3.out" --verify_only || fail "verify after the member died: $(tail -5 "$T/fio3.out")"
fsvol_umount "$T/mnt"
# the survivors reassemble degraded
fsvol_mount "$T/mnt" "$(uri n0)" "$(uri n1)" "$(uri n3)"
fio_w "$T/fio4.out" --verify_only || fail "verify after reassembly without the dead server"
fsvol_umount "$T/mnt"

# --- raid1 of a local file and an NBD member: each copy alone
export_mem r1 40M
"$FSVOL" create -l raid1 -s 32M "$T/local" "$(uri r1)" >/dev/null || fail "create raid1 file + NBD"
random_file "$T/ref" $((24 * MiB))
fsvol_mount "$T/mnt" "$T/local" "$(uri r1)"
dd if="$T/ref" of="$T/mnt/volume" bs=1M oflag=direct conv=notrunc status=none || fail "raid1 write"
fsvol_umount "$T/mnt"
for copy in 0 1; do
	fsvol_mount --read-policy=prefer:$copy "$T/mnt" "$T/local" "$(uri r1)"
	echo reset >"$T/mnt/ctl" # the mount's own reads (the bitmap, the bad-block lists) count too
	cmp -n $((24 * MiB)) "$T/mnt/volume" "$T/ref" || fail "raid1 copy $copy (prefer:$copy) differs"
	other=$((1 - copy))
	(($(member_stat "$T/mnt" $copy reads) > 0)) || fail "prefer:$copy read nothing from member $copy"
	[[ $(member_stat "$T/mnt" $other reads) == 0 ]] || fail "prefer:$copy read from member $other"
	fsvol_umount "$T/mnt"
done
# fail the local file: the NBD copy alone serves
fsvol_mount "$T/mnt" "$T/local" "$(uri r1)"
"$FSVOL" fail "$T/mnt" 0 || fail "fsvol fail of the local member"
grep -q "m0: .* failed" "$T/mnt/status" || fail "member 0 not failed"
r0=$(member_stat "$T/mnt" 0 reads)
dd if="$T/mnt/volume" bs=1M count=24 iflag=direct status=none | cmp - "$T/ref" ||
	fail "raid1 read from the NBD member alone differs"
[[ $(member_stat "$T/mnt" 0 reads) == "$r0" ]] || fail "the failed local member was read"
fsvol_umount "$T/mnt"

# --- reconnect is explicit: a server that went away and came back (nbdkit
# file keeps the bytes) is re-added and resynced
truncate -s 40M "$T/ex.img"
nbdkit_start "$T/x.pid" nbdkit -U "$T/x.sock" file "$T/ex.img"
"$FSVOL" create -l raid1 -s 32M "$T/loc2" "$(uri x)" >/dev/null || fail "create raid1 file + nbdkit file"
fsvol_mount "$T/mnt" "$T/loc2" "$(uri x)"
dd if="$T/ref" of="$T/mnt/volume" bs=1M count=8 oflag=direct conv=notrunc status=none
kill -TERM "$(cat "$T/x.pid")"
for ((k = 0; k < 50; k++)); do [[ -e $T/x.sock ]] || break; sleep 0.1; done
rm -f "$T/x.sock"
dd if="$T/ref" of="$T/mnt/volume" bs=1M count=8 oflag=direct conv=notrunc status=none ||
	fail "writes failed when the NBD mirror's server went away"
grep -q "m1: .* failed" "$T/mnt/status" || fail "the gone server's member is not failed"
nbdkit_start "$T/x.pid" nbdkit -U "$T/x.sock" file "$T/ex.img"
"$FSVOL" re-add "$T/mnt" "$(uri x)" || fail "re-add of the NBD member"
for ((k = 0; k < 100; k++)); do grep -q "m1: .* active" "$T/mnt/status" && break; sleep 0.1; done
grep -q "m1: .* active" "$T/mnt/status" || fail "the re-added NBD member did not come back: $(cat "$T/mnt/status")"
"$FSVOL" fail "$T/mnt" 0 || fail "fsvol fail 0"
cmp -n $((8 * MiB)) "$T/mnt/volume" "$T/ref" || fail "the re-added NBD member's copy differs"
fsvol_umount "$T/mnt"

# --- TLS (nbds+unix://, a pre-shared key): a raid1 of a file and a TLS
# member verifies, and the TLS copy alone reads back
printf 'alice:%s\n' "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$T/keys.psk"
chmod 600 "$T/keys.psk"
nbdkit_start "$T/tls.pid" nbdkit --tls=require --tls-psk="$T/keys.psk" -U "$T/tls.sock" memory 40M
tls="nbds+unix://alice@/?socket=$T/tls.sock&tls-psk-file=$T/keys.psk"
expect_fail_msg "cannot connect" "$FSVOL" examine "$(uri tls)" # plain NBD to a TLS-only server
"$FSVOL" create -l raid1 -s 32M "$T/loc3" "$tls" >/dev/null || fail "create raid1 file + TLS member"
fsvol_mount "$T/mnt" "$T/loc3" "$tls"
fio --name=t --filename="$T/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=24M --verify=crc32c --verify_state_save=0 --output="$T/fio5.out" ||
	fail "fio verify over a TLS member: $(tail -5 "$T/fio5.out")"
"$FSVOL" fail "$T/mnt" 0 || fail "fsvol fail of the local member (TLS)"
fio --name=t --filename="$T/mnt/volume" --rw=randwrite --bsrange=4k-128k --direct=1 --ioengine=io_uring \
	--iodepth=16 --size=24M --verify=crc32c --verify_state_save=0 --verify_only --output="$T/fio6.out" ||
	fail "verify from the TLS member alone: $(tail -5 "$T/fio6.out")"
(($(member_stat "$T/mnt" 1 reads) > 0)) || fail "the TLS member served no reads"
fsvol_umount "$T/mnt"

# --- a server that accepts but never answers the handshake: refused within
# the connect deadline (10 s), not the system's TCP timeout
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
held = []
end = time.time() + 60
while time.time() < end:
    s.settimeout(max(0.1, end - time.time()))
    try:
        held.append(s.accept()[0])
    except OSError:
        pass
' >"$T/mute.port" &
track_pid $!
for ((k = 0; k < 50; k++)); do [[ -s $T/mute.port ]] && break; sleep 0.1; done
expect_fail_msg "no answer within" timeout 60 "$FSVOL" examine "nbd://127.0.0.1:$(cat "$T/mute.port")/"

# --- what create refuses
export_mem small 4M
expect_fail_msg "too small" "$FSVOL" create -l raid1 -s 16M "$T/f2" "$(uri small)"
[[ ! -e $T/f2 ]] || fail "a refused create left $T/f2 behind"
expect_fail_msg "cannot connect" "$FSVOL" create -l raid1 -s 16M "$T/f3" "$(uri nobody)"
expect_fail_msg "cannot connect" "$FSVOL" examine "$(uri nobody)"
check_sanitizer_logs
echo "ok"
