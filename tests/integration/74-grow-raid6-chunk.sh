#!/usr/bin/env bash
# Issue 20 point 1: grow a raid6 from 5 to 6 members, and change a raid5's
# chunk on the same members (every window goes through the backup: its new
# rows are its old ones), each online under a verifying fio and an
# acknowledging writer with kill -9 three times at random points: each plain
# mount resumes the reshape, nothing acknowledged is lost, fio verifies, the
# capacity is the new geometry's, a scrub finds 0 mismatches
# (tests/reshape_lib.sh).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../reshape_lib.sh"

reshape_crash raid6 5 1 "-l raid6 -c 64K" "" $((4 * 32 * MiB))
reshape_crash chunk 4 0 "-l raid5 -c 64K" "--chunk 128K" $((3 * 32 * MiB))
grep -q "reshape done: raid5, 4 members, chunk 131072" "$DAEMON_LOG" || fail "chunk: no reshape to 128K in the log"

echo "PASS"
