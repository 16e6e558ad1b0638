#!/usr/bin/env bash
# The short version of tests/stress/failpath.sh (tests/stress/README.md): one
# iteration per level (raid1/5/6/10) and member kind (files, NBD exports):
# members fail at a random moment under fio --verify=crc32c; fio must see no
# error, a verify pass after the failure must be clean, and no iteration may
# hang (the watchdog would dump every thread's stack). Then NBD members once
# more with the delay in fsvol's fault filter instead of nbdkit's.
. "$(dirname "$0")/../lib.sh"
requires fio
requires nbdkit
requires jq
FAILPATH=$(cd "$(dirname "$0")/../stress" && pwd)/failpath.sh
# under the sanitizers (3x slower): raid5 and raid6 only, one iteration of each kind
sel=(-n 8)
[[ ${SAN:-0} == 1 ]] && sel=(-n 4 --levels raid5,raid6)
FSVOL_TEST_TMPDIR=$T "$FAILPATH" "${sel[@]}" --short --limit 200 --out "$T/out" || {
	cat "$T"/out/hang-*.txt 2>/dev/null | head -n 60
	fail "failure-path iterations failed (above)"
}
# NBD members delayed by fsvol's own fault filter (its delay thread runs their
# completions) rather than by nbdkit's: raid1 and raid5
[[ ${SAN:-0} == 1 ]] || FSVOL_TEST_TMPDIR=$T "$FAILPATH" -n 2 --kinds nbd --nbd-delay member --short --limit 200 \
	--out "$T/out-member" || {
	cat "$T"/out-member/hang-*.txt 2>/dev/null | head -n 60
	fail "failure-path iterations with the delay in the member failed (above)"
}
