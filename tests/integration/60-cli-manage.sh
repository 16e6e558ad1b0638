#!/usr/bin/env bash
# 60-cli-manage: the member commands as an mdadm user types them (issue 21):
# a volume mounted with relative member paths (as the README's Quick start
# does) takes fail/remove/add by those same relative paths and by the path
# status prints; each change is confirmed on stdout, as mdadm does; the
# over-redundancy refusal names --force; singular words for one member and
# one mismatch; during a replace, status, status.json and detail pair the
# member replaced with its replacement; a dead daemon's status says what
# happened.
. "$(dirname "$0")/../lib.sh"
requires_root

SCHEMA=$(cd "$(dirname "$0")/../../docs" && pwd)/status.schema.json
cd "$T"
mkdir -p r6 m6
"$FSVOL" create -l raid6 -c 64K -s 8M r6/d0 r6/d1 r6/d2 r6/d3 r6/d4 >/dev/null || fail "create"
fsvol_mount m6 r6/d0 r6/d1 r6/d2 r6/d3 r6/d4

# status shows one spelling per member: absolute, as the daemon stored it
grep -q "m4: $T/r6/d4 active" m6/status || fail "status does not name $T/r6/d4: $(cat m6/status)"

# --- 1: relative paths, as given to mount -----------------------------------------
out=$("$FSVOL" fail m6 r6/d4) || fail "fsvol fail m6 r6/d4: $out"
[[ $out == "fsvol: set r6/d4 faulty in m6" ]] || fail "fail printed: '$out'"
grep -q "m4: $T/r6/d4 failed" m6/status || fail "r6/d4 not failed: $(cat m6/status)"
out=$("$FSVOL" remove m6 ./r6/d4) || fail "fsvol remove m6 ./r6/d4: $out"
[[ $out == "fsvol: removed ./r6/d4 from m6" ]] || fail "remove printed: '$out'"
out=$("$FSVOL" add m6 r6/d4) || fail "fsvol add m6 r6/d4: $out"
[[ $out == "fsvol: added r6/d4 to m6" ]] || fail "add printed: '$out'"
for ((i = 0; i < 600; i++)); do
	grep -q "recovery done" m6/status && break
	sleep 0.05
done
grep -q "recovery done" m6/status || fail "no recovery onto r6/d4: $(cat m6/status)"
# the absolute path status prints works too, and a slot number
p=$(sed -n 's/^ *m2: \([^ ]*\) active$/\1/p' m6/status)
[[ $p == "$T/r6/d2" ]] || fail "status m2 path: '$p'"
out=$("$FSVOL" fail m6 "$p") || fail "fsvol fail m6 $p: $out"
[[ $out == "fsvol: set $p faulty in m6" ]] || fail "fail printed: '$out'"
out=$("$FSVOL" fail m6 1) || fail "fsvol fail m6 1: $out"
[[ $out == "fsvol: set m1 faulty in m6" ]] || fail "fail printed: '$out'"

# --- the refusal beyond redundancy names --force ------------------------------------
expect_fail_msg "fsvol fail --force fails it anyway" "$FSVOL" fail m6 0
out=$("$FSVOL" fail --force m6 0) || fail "fail --force: $out"
grep -q ", failed$" <(sed -n 2p m6/status) || fail "fail --force did not fail m0: $(cat m6/status)"
fsvol_umount m6

# --- plurals: 1 member, 1 mismatch ---------------------------------------------------
out=$("$FSVOL" create -l single -s 8M one) || fail "create single"
[[ $out == *", 1 member, chunk"* ]] || fail "create said: $out"
out=$("$FSVOL" map -l single -n 1 -c 64K 0 4096) || fail "map single"
[[ $out == "single, 1 member, chunk 64K"* ]] || fail "map said: $out"
mkdir -p m1
"$FSVOL" create -l raid1 -c 64K -s 8M r1a r1b >/dev/null || fail "create raid1"
fsvol_mount m1 r1a r1b
grep -q "2 members \[" m1/status || fail "status: $(head -1 m1/status)"
dd if=/dev/urandom of=m1/volume bs=64K count=4 oflag=direct status=none
fsvol_umount m1
# one differing chunk on the second copy: the scrub counts exactly one
dd if=/dev/urandom of=r1b bs=4K count=1 seek=$((1024 * 1024 / 4096)) conv=notrunc status=none
fsvol_mount m1 r1a r1b
rc=0
out=$("$FSVOL" scrub m1) || rc=$?
[[ $rc -eq 1 && $out == *", 1 mismatch"* && $out != *"1 mismatches"* ]] || fail "scrub (exit $rc): $out"

# --- point 6: during a replace, status, status.json and detail say which replaces which -----
"$FSVOL" create -l raid5 -c 64K -s 16M rp0 rp1 rp2 >/dev/null || fail "create raid5"
mkdir -p m5
fsvol_mount m5 rp0 rp1 rp2
dd if=/dev/urandom of=m5/volume bs=1M count=32 oflag=direct status=none
"$FSVOL" ctl m5 sync_speed_min 1
"$FSVOL" ctl m5 sync_speed_max 1000
truncate -s $((17 * MiB)) rpnew
out=$("$FSVOL" replace --with rpnew m5 1) || fail "replace: $out"
[[ $out == "fsvol: replacing 1 in m5 with rpnew"* ]] || fail "replace printed: '$out'"
grep -q "replace running" m5/status || fail "no replace running: $(cat m5/status)"
grep -q "m1: $T/rp1 active (being replaced by m3)$" m5/status || fail "status, the role: $(cat m5/status)"
grep -q "m3: $T/rpnew spare (replacing m1)$" m5/status || fail "status, the replacement: $(cat m5/status)"
jq -e '(.members[1].replaced_by == 3) and (.members[3].replacing == 1) and (.sync.action == "replace")
	and ([.members[] | select(.replacing != null or .replaced_by != null)] | length == 2)' m5/status.json >/dev/null ||
	fail "status.json: $(cat m5/status.json)"
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	/usr/bin/python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' \
		"$SCHEMA" m5/status.json 2>&1 ||
		fail "status.json during a replace does not match docs/status.schema.json"
fi
"$FSVOL" detail m5 | grep -Eq "^ +3 +- +- +1 +spare rebuilding \(replacement for 1\) +$T/rpnew$" ||
	fail "detail during a replace: $("$FSVOL" detail m5)"
"$FSVOL" ctl m5 sync_speed_max 200000
for ((i = 0; i < 600; i++)); do grep -q "replace done" m5/status && break; sleep 0.05; done
# the Numbers stay with the devices: rpnew (m3) plays role 1, rp1 (m1) is marked faulty (md)
grep -q "m3: $T/rpnew active (role 1)$" m5/status || fail "after the replace: $(cat m5/status)"
grep -q "m1: $T/rp1 failed$" m5/status || fail "after the replace, the old member: $(cat m5/status)"
! grep -q "replac" <(grep "^ *m[0-9]" m5/status) || fail "replace marks left after it ended: $(cat m5/status)"
fsvol_umount m5

# --- a dead daemon: say so, not "Transport endpoint is not connected" -------------------
pid=$(daemon_pid m1)
kill -9 "$pid"
for ((i = 0; i < 200; i++)); do _alive "$pid" || break; sleep 0.05; done
expect_fail_msg "the fsvol daemon serving this mount has died" "$FSVOL" status m1
[[ $LAST_ERR != *"Transport endpoint"* ]] || fail "status: $LAST_ERR"
expect_fail_msg "has died" "$FSVOL" detail m1
expect_fail_msg "has died" "$FSVOL" fail m1 0
expect_fail_msg "has died" "$FSVOL" stat -c 1 m1
expect_fail_msg "has died" "$FSVOL" trace -n 1 m1
expect_fail_msg "has died" "$FSVOL" scrub m1
expect_fail_msg "not an fsvol mount" "$FSVOL" status r6
"$FSVOL" umount m1 2>/dev/null || fail "umount of the dead mount"
note "member commands ok"
