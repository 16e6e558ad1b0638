#!/usr/bin/env bash
# MNT/status.json validates against docs/status.schema.json in every state a
# volume goes through (healthy, degraded, rebuilding, failed, spare, removed and
# missing members, after a check), and says what MNT/status says.
. "$(dirname "$0")/../lib.sh"
requires jq
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || fail "python3-jsonschema missing (scripts/deps.sh)"

SCHEMA=$(dirname "$0")/../../docs/status.schema.json
n=0
valid() { # MNT WANT_STATE: validate a snapshot, check its state
	n=$((n + 1))
	cp "$1/status.json" "$T/s$n.json"
	/usr/bin/python3 - "$SCHEMA" "$T/s$n.json" <<'EOF' || fail "status.json ($2) does not validate: $(cat "$T/s$n.json")"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
EOF
	[[ $(jq -r .state "$T/s$n.json") == "$2" ]] || fail "status.json state $(jq -r .state "$T/s$n.json"), want $2"
}
slot_state() { jq -r ".members[] | select(.slot == $2) | .state" "$1/status.json"; }

"$FSVOL" create -l raid5 -c 64K -s 32M --name sj "$T"/m{0,1,2} >/dev/null
truncate -s 33M "$T/spare"
fsvol_mount "$T/mnt" "$T"/m{0,1,2}
valid "$T/mnt" healthy
[[ $(jq -r '.level + " " + .layout + " " + (.raid_members|tostring) + " " + .name' "$T/mnt/status.json") == \
	"raid5 left-symmetric 3 sj" ]] || fail "status.json header: $(cat "$T/mnt/status.json")"
[[ $(jq -r '.bitmap.chunk' "$T/mnt/status.json") == $((64 * MiB)) ]] || fail "bitmap chunk: $(jq .bitmap "$T/mnt/status.json")"
random_file "$T/data" $((64 * MiB))
dd if="$T/data" of="$T/mnt/volume" bs=1M oflag=direct status=none

"$FSVOL" fail "$T/mnt" 1
valid "$T/mnt" degraded
[[ $(slot_state "$T/mnt" 1) == failed ]] || fail "a failed member is $(slot_state "$T/mnt" 1), want failed"
[[ $(jq .active_members "$T/mnt/status.json") == 2 ]] || fail "active_members after a failure"

echo "sync_speed_max 4000" >"$T/mnt/ctl" # 32 MiB at 4 MB/s: ~8 s to watch
"$FSVOL" add "$T/mnt" "$T/spare"
for ((i = 0; i < 100; i++)); do
	[[ $(jq -r '.sync.state // ""' "$T/mnt/status.json") == running ]] && break
	sleep 0.05
done
valid "$T/mnt" rebuilding
j=$T/s$n.json
[[ $(jq -r '.sync.action' "$j") == recovery ]] || fail "sync.action: $(jq .sync "$j")"
[[ $(jq -r '.members[] | select(.slot == 1) | .state' "$j") == rebuilding ]] || fail "slot 1 not rebuilding: $(jq .members "$j")"
[[ $(jq -r '.members[] | select(.slot == 1) | .path' "$j") == "$T/spare" ]] || fail "slot 1 is not the spare"
[[ $(jq -r '.members[] | select(.slot == 3) | .state' "$j") == failed ]] || fail "the failed member moved to slot 3: $(jq .members "$j")"
# Numbers stay with the devices: the failed one is still 1, the spare (added as 3) plays role 1
jq -e '(.members[] | select(.slot == 3) | .number == 1 and .role == null) and
	(.members[] | select(.slot == 1) | .number == 3 and .role == 1 and (.uuid | test("^[0-9a-f-]{36}$")))' "$j" >/dev/null ||
	fail "Numbers did not stay with the devices: $(jq -c .members "$j")"
sleep 1
valid "$T/mnt" rebuilding
jq -e '.sync.speed_kib_s > 0 and .sync.eta_s > 0 and (.members[] | select(.slot == 1) | .rebuild_pos) > 0' \
	"$T/s$n.json" >/dev/null || fail "no speed, ETA or checkpoint while rebuilding: $(cat "$T/s$n.json")"
echo "sync_speed_max 200000" >"$T/mnt/ctl"
for ((i = 0; i < 600; i++)); do
	[[ $(jq -r .state "$T/mnt/status.json") == healthy ]] && break
	sleep 0.05
done
valid "$T/mnt" healthy
"$FSVOL" remove "$T/mnt" m1 # the failed member, by its Number
valid "$T/mnt" healthy
[[ $(jq '[.members[] | select(.slot == 3)] | length' "$T/mnt/status.json") == 0 ]] ||
	fail "a removed spare's entry is still listed: $(jq -c .members "$T/mnt/status.json")"
"$FSVOL" scrub "$T/mnt" >/dev/null || fail "scrub after the rebuild found mismatches"
valid "$T/mnt" healthy
jq -e '.sync.action == "check" and .sync.state == "done" and .mismatch_count == 0 and .sync.eta_s == null' \
	"$T/mnt/status.json" >/dev/null || fail "after a check: $(jq .sync "$T/mnt/status.json")"
cmp "$T/data" "$T/mnt/volume" || fail "data differs after the rebuild"
fsvol_umount "$T/mnt"

# a volume without a bitmap and a missing member (mounted degraded)
"$FSVOL" create -l raid1 -s 8M --bitmap none "$T"/r{0,1} >/dev/null
fsvol_mount --run "$T/mir" "$T/r0"
valid "$T/mir" degraded
[[ $(slot_state "$T/mir" 1) == missing && $(jq .bitmap "$T/mir/status.json") == null ]] ||
	fail "missing member / no bitmap: $(cat "$T/mir/status.json")"
fsvol_umount "$T/mir"
