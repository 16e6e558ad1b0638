#!/usr/bin/env bash
# fsvol mount --fuse-transport auto|dev|uring: MNT/status and the log say which
# transport serves; data round-trips under each; FUSE over io_uring serves
# where the kernel offers it (the fuse module's enable_uring, set here for
# the test and restored after); a volume whose ring the kernel refuses
# (enable_uring N) still mounts and serves through /dev/fuse, saying why.
# fsvol-test: alone (sets the fuse module's enable_uring (machine-wide) for its mounts)
. "$(dirname "$0")/../lib.sh"
requires_root
unset FSVOL_FUSE_TRANSPORT # this test picks the transport of each mount
param=/sys/module/fuse/parameters/enable_uring

"$FSVOL" create -l raid0 -c 64K -s 32M "$T/m0" "$T/m1" >/dev/null || fail "create failed"
random_file "$T/data" $((8 * MiB))

# roundtrip MNT: 8 MiB of random data written and read back through MNT/volume,
# plus what goes through the ring besides reads and writes (lookup, getattr,
# open, the text files, fsync)
roundtrip() {
	dd if="$T/data" of="$1/volume" bs=64K oflag=direct conv=notrunc,fsync status=none || fail "$2: write failed"
	dd if="$1/volume" of="$T/back" bs=1M count=8 iflag=direct status=none || fail "$2: read failed"
	cmp -s "$T/data" "$T/back" || fail "$2: data read back differs"
	ls "$1" | grep -qx stats.json || fail "$2: readdir lacks stats.json"
	jq -e '.volume.writes > 0' "$1/stats.json" >/dev/null || fail "$2: stats.json unreadable or no writes counted"
}
transport() { sed -n 's/^fuse transport: //p' "$1/status"; }

# dev, asked for
fsvol_mount --fuse-transport=dev "$T/mnt" "$T/m0" "$T/m1"
[[ $(transport "$T/mnt") == "dev (--fuse-transport dev)" ]] || fail "dev: status says '$(transport "$T/mnt")'"
roundtrip "$T/mnt" dev
fsvol_umount "$T/mnt"

expect_fail_msg "--fuse-transport ring: expected auto, dev or uring" "$FSVOL" mount --fuse-transport ring "$T/mnt" "$T/m0" "$T/m1"

if [[ ! -w $param ]]; then
	note "no $param (a kernel without FUSE over io_uring): auto must serve through /dev/fuse"
	fsvol_mount "$T/mnt" "$T/m0" "$T/m1"
	[[ $(transport "$T/mnt") == dev* ]] || fail "auto: status says '$(transport "$T/mnt")'"
	roundtrip "$T/mnt" auto
	exit 0
fi
_push_cleanup sysparam "$param" "$(cat "$param")"

# auto, where the kernel offers the ring: io_uring serves
echo Y >"$param"
fsvol_mount "$T/mnt" "$T/m0" "$T/m1"
roundtrip "$T/mnt" "auto (enable_uring Y)"
[[ $(transport "$T/mnt") == "uring ("*" queues x "*" entries)" ]] ||
	fail "auto with enable_uring Y: status says '$(transport "$T/mnt")'"
grep -q "FUSE transport: io_uring" "$DAEMON_LOG" || fail "the log does not say the ring serves"
pid=$(daemon_pid "$T/mnt")
grep -q '^fsvol-fuse-q' /proc/"$pid"/task/*/comm || fail "no ring threads (fsvol-fuse-qN) in the daemon"
fsvol_umount "$T/mnt"

# uring asked for, the kernel refuses: it still mounts, through /dev/fuse, and says why
echo N >"$param"
: >"$DAEMON_LOG"
fsvol_mount --fuse-transport=uring "$T/mnt" "$T/m0" "$T/m1"
roundtrip "$T/mnt" "uring refused"
[[ $(transport "$T/mnt") == "dev (the kernel does not offer FUSE over io_uring"*"enable_uring is N)" ]] ||
	fail "refused: status says '$(transport "$T/mnt")'"
grep -q "FUSE transport: /dev/fuse: the kernel does not offer FUSE over io_uring" "$DAEMON_LOG" ||
	fail "the log does not say why /dev/fuse serves: $(cat "$DAEMON_LOG")"
fsvol_umount "$T/mnt"
