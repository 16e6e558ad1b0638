#!/usr/bin/env bash
# Linux md as the oracle (issue 30, A1): for every level and layout (raid0,
# raid1, raid4, raid5 la/ra/ls/rs, raid6 la/ra/ls/rs with 4, 5 and 6 members,
# raid10 n2/f2/o2 with 3, 4 and 5 members, linear) the same logical bytes go
# through md (Debian's kernel in one qemu TCG boot: tests/tools/mdguest.sh,
# every array one after the other) and through fsvol into a volume of the same
# geometry (data offset 1 MiB, 64 KiB chunks); every member's data area must
# be byte-identical. A whole pass of 64 KiB writes, then single 4 KiB writes
# (md's and fsvol's read-modify-write / reconstruct-write). A difference names
# the level, layout, member and first differing stripe. docs/mdguest.md.
# fsvol-test: timeout 900 (one qemu TCG boot: about a minute idle, several on a loaded machine)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../mddiff_lib.sh"
requires qemu-system-x86_64
requires mdadm
requires cpio
requires python3

export FSVOL_MDGUEST_DIR=${FSVOL_MDGUEST_DIR:-$FSVOL_BUILD/mdguest}
"$(dirname "$0")/../tools/mdguest.sh" build >/dev/null || fail "the md guest could not be built"
mddiff_pattern "$T/pattern"
mkdir -p "$T/fsvol"
# md in the background (one boot), fsvol meanwhile
mddiff_md "$T/md" "$T/pattern" &
MDPID=$!
track_pid "$MDPID"
mddiff_fsvol "$T/fsvol" "$T/pattern"
if ! wait "$MDPID"; then
	if ! grep -q "^mdguest: up" "$T/md/md.log" 2>/dev/null; then
		tail -n 20 "$T/md/md.log" 2>/dev/null
		echo "SKIP: the qemu TCG guest did not boot (its console above)"
		exit 77
	fi
	tail -n 20 "$T/md/md.log"
	fail "the md guest's job failed (its console above)"
fi
_drop_cleanup pid "$MDPID"
bad=$(mddiff_compare "$T" "$T/table")
cat "$T/table"
[[ $bad -eq 0 ]] || fail "$bad of $(wc -l <"$T/table") cases differ from Linux md (table above)"
note "all $(wc -l <"$T/table") cases byte-identical to Linux md $(cat "$FSVOL_MDGUEST_DIR/kver")"
