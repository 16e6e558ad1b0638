#!/usr/bin/env bash
# 89-null-fuse: make bench's FUSE references answer what they claim. The null
# server's file reads zeros; given FROM, it reads FROM's bytes at each offset
# (a reference that copied nothing, or the wrong bytes, would flatter or
# wrong every ratio set against it). A FROM shorter than the file is refused,
# naming it. Under the run's FUSE transport (FSVOL_FUSE_TRANSPORT, or as
# fsvol's auto: the ring when the kernel offers it), checked as served.
. "$(dirname "$0")/../lib.sh"
requires_root "mount"
NULLFUSE=$FSVOL_BUILD/bin/null_fuse
[[ -x $NULLFUSE ]] || fail "$NULLFUSE not built"
t=${FSVOL_FUSE_TRANSPORT:-auto}
[[ $t == auto ]] && { [[ $(cat /sys/module/fuse/parameters/enable_uring 2>/dev/null) == Y ]] && t=uring || t=dev; }

# null_serve DIR [FROM]: a 4 MiB null server on DIR, ready; its pid in $NP
null_serve() {
	mkdir -p "$1"
	"$NULLFUSE" "$t" "$1" 4 ${2:+"$2"} 2>"$T/null.err" &
	NP=$!
	track_pid "$NP"
	wait_for 30 "null_fuse $t did not come up on $1: $(cat "$T/null.err")" test -e "$1/file"
}
null_stop() {
	umount "$1"
	wait "$NP" || fail "null_fuse exited $? after umount: $(cat "$T/null.err")"
	_drop_cleanup pid "$NP"
	[[ $t == dev ]] || grep -q "served through uring" "$T/null.err" ||
		fail "null_fuse was not served through the ring: $(cat "$T/null.err")"
}

null_serve "$T/zero"
cmp "$T/zero/file" <(head -c $((4 * MiB)) /dev/zero) || fail "the null file does not read 4 MiB of zeros"
null_stop "$T/zero"

random_file "$T/from" $((4 * MiB))
null_serve "$T/copy" "$T/from"
cmp "$T/copy/file" "$T/from" || fail "the copying null file does not read FROM's bytes"
# O_DIRECT reads at an offset, as the bench issues them
dd if="$T/copy/file" of="$T/direct" bs=4k skip=257 count=3 iflag=direct status=none
cmp "$T/direct" <(tail -c +$((257 * 4096 + 1)) "$T/from" | head -c $((3 * 4096))) ||
	fail "O_DIRECT reads at 1028 KiB are not FROM's bytes there"
null_stop "$T/copy"

truncate -s 1M "$T/short"
mkdir -p "$T/short_mnt"
rc=0
"$NULLFUSE" "$t" "$T/short_mnt" 4 "$T/short" 2>"$T/short.err" || rc=$?
((rc == 1)) || fail "null_fuse with a 1 MiB FROM for a 4 MiB file exited $rc, not 1"
grep -qF "$T/short: 1048576 bytes, shorter than the file's 4 MiB" "$T/short.err" ||
	fail "the refusal does not name FROM and its size: $(cat "$T/short.err")"
! _is_mounted "$T/short_mnt" || fail "null_fuse mounted although FROM was refused"
rc=0
"$NULLFUSE" "$t" "$T/short_mnt" 4 "$T/absent" 2>"$T/absent.err" || rc=$?
((rc == 1)) && grep -qF "$T/absent: No such file or directory" "$T/absent.err" ||
	fail "a missing FROM: exit $rc, $(cat "$T/absent.err")"
echo "ok"
