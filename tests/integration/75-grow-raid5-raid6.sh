#!/usr/bin/env bash
# Issue 20 point 1: raid5 -> raid6 online (fsvol grow --level raid6 --add
# PATH: one more member, Q computed for every stripe, the data restriped onto
# the raid6 layout), under a verifying fio and an acknowledging writer with
# kill -9 three times at random points: each plain mount resumes, nothing
# acknowledged is lost, fio verifies, the capacity stays the same (one more
# member, one more parity), a scrub finds 0 mismatches, and the volume then
# survives two failed members (tests/reshape_lib.sh). Every window of this
# reshape goes through the backup, so the same again with power cuts
# (volatile member caches, `fsvol ctl MNT powercut`) instead of kill -9, and
# with cuts placed inside windows (`powercut-after K`): a resume then writes
# the window back from its backup.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../reshape_lib.sh"

reshape_crash r5to6 4 1 "-l raid5 -c 64K" "--level raid6" $((3 * 32 * MiB))
d=$T/r5to6
# how many of the kills landed inside a window's critical section (random; said, not required)
note "r5to6: windows written back from their backup at a resume: $(grep -c "written back from its backup" "$DAEMON_LOG" || true)"
out=$("$FSVOL" examine "$d/m0")
grep -q "Raid Level : raid6" <<<"$out" || fail "not raid6 after the reshape: $out"
# raid6 for real: two members gone, the data still reads back
fsvol_mount --run "$d/mnt" "$d/m0" "$d/m2" "$d/a0"
out=$("$ACKW" verify -L $((3 * 16 * MiB)) "$d/mnt/volume" "$d/log") || fail "two members missing: $out"
note "r5to6 without m1 and m3: $out"
fsvol_umount "$d/mnt"

RESHAPE_CUT=powercut reshape_crash cut 4 1 "-l raid5 -c 64K" "--level raid6" $((3 * 32 * MiB))
# and cuts placed inside windows (every window here is backed up first)
reshape_cuts cuts 4 1 "-l raid5 -c 64K" "--level raid6" 12 7 18 14

echo "PASS"
