#!/usr/bin/env bash
# Issue 20 point 1: grow a raid5 from 4 to 5 members online (fsvol grow
# --add), under a verifying fio and an acknowledging writer, with kill -9 three
# times at random points of the reshape: each plain mount resumes it, nothing
# acknowledged is lost, fio's data verifies, the capacity grows by a member,
# a scrub finds 0 mismatches (tests/reshape_lib.sh). Then what the reshape
# shows: status (mdstat's "reshape = x%"), status.json, fsvol detail, the trace
# (member I/O labelled reshape), the member counters, an NBD connection that
# sees the new size; and what grow refuses.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../reshape_lib.sh"

reshape_crash raid5 4 1 "-l raid5 -c 64K" "" $((4 * 32 * MiB))

echo "PASS"
