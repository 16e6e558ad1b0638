#!/usr/bin/env bash
# 16-defects: small defects found by an adversarial review (issue 13), one
# case each: a relative mount point stopped by SIGTERM leaves no dead mount;
# status and umount give up on a stopped daemon (--timeout) with a message;
# -c 0 and --data-offset 0 are refused, not taken as defaults; a FIFO or
# character device member is named as such (no O_DIRECT hint); ctl refuses
# bytes after a NUL; map names a bad LENGTH; create warns when members differ
# in size; create warns when the host cannot hold sparse members in full and
# --prealloc leaves no holes; `ctl model` succeeds under load.
. "$(dirname "$0")/../lib.sh"
requires jq
requires fio

M=("$T/m0" "$T/m1")
"$FSVOL" create -l raid1 -s 8M "${M[@]}" >/dev/null || fail "create"

# --- a relative mount point, stopped by SIGTERM -------------------------------
mkdir -p "$T/rel"
(cd "$T" && "$FSVOL" mount --log "$DAEMON_LOG" rel m0 m1) || fail "mount on a relative mount point"
pid=$(daemon_pid "$T/rel")
_push_cleanup fsvol "$T/rel" "$pid"
grep -q " $T/rel fuse.fsvol " /proc/self/mounts || fail "the relative mount point is not in /proc/mounts as $T/rel"
kill -TERM "$pid"
for ((i = 0; i < 100; i++)); do _alive "$pid" || break; sleep 0.1; done
_alive "$pid" && fail "daemon $pid still running 10 s after SIGTERM"
! _is_mounted "$T/rel" || fail "SIGTERM on a relative mount point left a dead mount"
_drop_cleanup fsvol "$T/rel" "$pid"

# --- a stopped daemon: status and umount give up ---------------------------------
MNT=$T/mnt
fsvol_mount "$MNT" "${M[@]}"
pid=$(daemon_pid "$MNT")
"$FSVOL" status --timeout 5 "$MNT" | grep -q raid1 || fail "status of a live daemon"
kill -STOP "$pid" # opening MNT/status now waits for it in the kernel
expect_fail_msg "did not answer within 2 s" timeout 30 "$FSVOL" status --timeout 2 "$MNT"
expect_fail_msg "did not answer within 2 s" timeout 30 "$FSVOL" umount --timeout 2 "$MNT"
kill -CONT "$pid"
_is_mounted "$MNT" || fail "the mount went away while the daemon was stopped"
expect_fail_msg "--timeout 0" "$FSVOL" status --timeout 0 "$MNT"
fsvol_umount "$MNT"

# --- zero is not "the default" -----------------------------------------------------
expect_fail_msg "--chunk 0" "$FSVOL" create -l raid0 -c 0 -s 8M "$T/z0" "$T/z1"
expect_fail_msg "--data-offset 0" "$FSVOL" create -l raid0 --data-offset 0 -s 8M "$T/z0" "$T/z1"
[[ ! -e $T/z0 ]] || fail "a refused create left $T/z0"

# --- FIFO and character device members ------------------------------------------
mkfifo "$T/fifo"
for bad in "$T/fifo" /dev/null; do
	expect_fail_msg "$bad: not a regular file or block device" "$FSVOL" mount "$MNT" "${M[0]}" "$bad"
	[[ $LAST_ERR != *O_DIRECT* ]] || fail "$bad: a misleading O_DIRECT hint: $LAST_ERR"
	expect_fail_msg "$bad: not a regular file or block device" "$FSVOL" create -f -l raid1 -s 8M "$T/m9" "$bad"
	[[ $LAST_ERR != *O_DIRECT* ]] || fail "$bad: a misleading O_DIRECT hint at create: $LAST_ERR"
done

# --- ctl: nothing after a NUL ---------------------------------------------------------
fsvol_mount "$MNT" "${M[@]}"
dd if=/dev/zero of="$MNT/volume" bs=4K count=4 oflag=direct conv=notrunc status=none || fail "write"
printf 'reset\0stats off' >"$T/nul"
dd if="$T/nul" of="$MNT/ctl" bs=64 status=none 2>/dev/null && fail "ctl accepted a command with a NUL in it"
grep -q "NUL byte at offset 5" "$DAEMON_LOG" || fail "the daemon log does not name the NUL"
jq -e '.volume.writes > 0' "$MNT/stats.json" >/dev/null || fail "the refused 'reset\\0...' reset the counters"
printf 'reset\n' >"$MNT/ctl" || fail "a plain reset was refused"
fsvol_umount "$MNT"

# --- map names what is wrong ----------------------------------------------------------
expect_fail_msg "1P: not a size for LENGTH" "$FSVOL" map -l raid0 -n 2 0 1P
expect_fail_msg "1Q: not a size for OFFSET" "$FSVOL" map -l raid0 -n 2 1Q

# --- members of different sizes ---------------------------------------------------------
truncate -s 16M "$T/d0"
truncate -s 8M "$T/d1"
truncate -s 12M "$T/d2"
"$FSVOL" create -l raid5 -c 64K "$T/d0" "$T/d1" "$T/d2" >/dev/null 2>"$T/warn" || fail "create of unequal members"
grep -q "members differ in size; using 7M" "$T/warn" || fail "no warning naming the size used: $(cat "$T/warn")"
for d in d0 d1 d2; do grep -q "$T/$d:" "$T/warn" || fail "the warning does not name $d: $(cat "$T/warn")"; done
"$FSVOL" create -f -l linear "$T/d0" "$T/d1" >/dev/null 2>"$T/warn" || fail "create linear"
[[ ! -s $T/warn ]] || fail "linear (which uses every byte) warned: $(cat "$T/warn")"
# --- create checks host space for sparse members; --prealloc allocates them --------------
# allocated BYTES of a member file (SEEK_HOLE would not do: ext4 reports an
# allocated but unwritten extent as a hole)
allocated() { echo $(($(stat -c '%b * %B' "$1"))); }
avail=$(df -B1M --output=avail "$T" | tail -n 1)
big=$((avail / 2 + 1024))M # three of them cannot fit
"$FSVOL" create -l raid5 -s "$big" "$T/s0" "$T/s1" "$T/s2" >/dev/null 2>"$T/warn" ||
	fail "create of sparse members larger than the host filesystem: $(cat "$T/warn")"
grep -q "short by" "$T/warn" || fail "no warning naming the shortfall: $(cat "$T/warn")"
grep -q "$T/s2" "$T/warn" || fail "the warning does not name the members: $(cat "$T/warn")"
rm -f "$T"/s[012]
expect_fail_msg "short by" "$FSVOL" create --prealloc -l raid5 -s "$big" "$T/s0" "$T/s1" "$T/s2"
[[ ! -e $T/s0 ]] || fail "a refused --prealloc left a member file behind"
"$FSVOL" create -l raid5 -s 4M "$T/s0" "$T/s1" "$T/s2" >/dev/null 2>"$T/warn" || fail "create -s 4M"
[[ ! -s $T/warn ]] || fail "a create that fits warned: $(cat "$T/warn")"
(($(allocated "$T/s0") < 1048576)) || fail "a member without --prealloc is not sparse: $(allocated "$T/s0") bytes allocated"
"$FSVOL" create -f --prealloc -l raid5 -s 4M "$T/s0" "$T/s1" "$T/s2" >/dev/null || fail "create --prealloc"
for s in s0 s1 s2; do
	(($(allocated "$T/$s") >= 4 << 20)) || fail "$s: $(allocated "$T/$s") bytes allocated after --prealloc (4M of data)"
done
fsvol_mount "$T/pa" "$T/s0" "$T/s1" "$T/s2"
cmp -s -n $((8 << 20)) "$T/pa/volume" /dev/zero || fail "a preallocated volume does not read as zeros"
fsvol_umount "$T/pa"

# --- ctl model under load: the spindles drain, then the model changes ---------------------
fsvol_mount --model=hdd "$T/ld" "$T/d0" "$T/d1"
fio --name=load --filename="$T/ld/volume" --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=16 \
	--size=8M --time_based --runtime=300 --output="$T/fio.out" & # until stopped below
fpid=$!
track_pid "$fpid"
for ((i = 0; i < 50; i++)); do
	[[ $(jq '.members[0].reads' "$T/ld/stats.json") -gt 20 ]] && break
	sleep 0.1
done
for spec in ssd hdd ssd hdd; do
	out=$("$FSVOL" ctl "$T/ld" model "$spec" 2>&1) || fail "ctl model $spec under load: $out"
	grep -q "model $spec" "$T/ld/status" || fail "status does not show model $spec"
	_alive "$fpid" || fail "fio stopped while the model changed: $(cat "$T/fio.out")"
done
kill -INT "$fpid" # fio stops and reports: 128 is its exit when interrupted
rc=0
wait "$fpid" || rc=$?
((rc == 0 || rc == 128)) && grep -q "err= 0" "$T/fio.out" || fail "fio under model changes (exit $rc): $(cat "$T/fio.out")"
_drop_cleanup pid "$fpid"
fsvol_umount "$T/ld"

note "defects: relative mount, stopped daemon, zero options, FIFO member, ctl NUL, map LENGTH, unequal sizes, host space, prealloc, model under load"
