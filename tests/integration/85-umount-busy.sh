#!/usr/bin/env bash
# 85-umount-busy: fsvol umount while something reads the mount's own files.
# A reader (a monitor polling MNT/stats.json, fsvol stat -i, failpath.sh's
# watchdog) holds the mount for the moment of its read, and umount2 says
# EBUSY if it lands then: fsvol umount waits such a hold out (saying so when
# it lasts) instead of failing. Here a reader holds MNT/stats.json until
# umount says it waits, so the race is hit every time. A hold that does not
# end (a shell whose directory is in the mount) still fails umount with
# EBUSY after the wait; the volume is still served, and the next umount,
# once the shell has gone, works.
. "$(dirname "$0")/../lib.sh"
requires_root "umount2 (fusermount3 takes the unprivileged path)"

cd "$T"
"$FSVOL" create -l raid1 -s 8M m0 m1 >create.out 2>&1 || fail "create: $(cat create.out)"

# 1) a momentary reader: it lets go once umount has met it
fsvol_mount "$T/mnt" m0 m1
pid=$(daemon_pid "$T/mnt")
(
	exec 3<"$T/mnt/stats.json"
	touch "$T/held"
	until grep -q "busy; waiting" "$T/umount1.err" 2>/dev/null || [[ -e $T/umount1.done ]]; do sleep 0.05; done
) &
reader=$!
track_pid "$reader"
wait_for 30 "the reader did not open MNT/stats.json" test -e "$T/held"
rc=0
"$FSVOL" umount "$T/mnt" 2>"$T/umount1.err" || rc=$?
touch "$T/umount1.done"
wait "$reader" || true
_drop_cleanup pid "$reader"
((rc == 0)) || fail "fsvol umount failed while a reader held MNT/stats.json: $(cat "$T/umount1.err")"
grep -q "busy; waiting up to" "$T/umount1.err" ||
	fail "fsvol umount did not meet the reader (no 'busy; waiting' line): $(cat "$T/umount1.err")"
! _is_mounted "$T/mnt" || fail "$T/mnt still mounted after fsvol umount"
! _alive "$pid" || fail "daemon $pid still running after fsvol umount returned"
_drop_cleanup fsvol "$T/mnt" "$pid"

# 2) a hold that does not end: umount fails with EBUSY, the volume serves on
fsvol_mount "$T/mnt" m0 m1
pid=$(daemon_pid "$T/mnt")
(
	cd "$T/mnt"
	touch "$T/inside"
	until [[ -e $T/leave ]]; do sleep 0.05; done
) &
shell=$!
track_pid "$shell"
wait_for 30 "the shell did not enter the mount" test -e "$T/inside"
rc=0
"$FSVOL" umount "$T/mnt" 2>"$T/umount2.err" || rc=$?
((rc == 1)) || fail "fsvol umount with a shell inside the mount: exit $rc, not 1: $(cat "$T/umount2.err")"
grep -q "Device or resource busy" "$T/umount2.err" || fail "no EBUSY message: $(cat "$T/umount2.err")"
grep -q "busy; waiting up to" "$T/umount2.err" || fail "no 'busy; waiting' line: $(cat "$T/umount2.err")"
_is_mounted "$T/mnt" || fail "the mount went although umount failed"
grep -q "^pid: *$pid" "$T/mnt/status" || fail "the volume is not served after the refused umount"
touch "$T/leave"
wait "$shell" || true
_drop_cleanup pid "$shell"
fsvol_umount "$T/mnt"
echo "PASS: umount waits out a momentary reader; a lasting hold fails it with EBUSY, the volume serves on"
