#!/usr/bin/env bash
# fsvol_md_state names the background pass that runs (issue 21, points 2 and 6):
# exactly one state is 1 at any time, "recovering" during a recovery and a
# replace, "check" during a check, "resync" during a repair, "active" otherwise;
# fsvol_md_blocks_synced moves with the pass. During a replace, status.json says
# which member is replaced by which (replace, replaced_by, replacing) and
# validates against docs/status.schema.json.
. "$(dirname "$0")/../lib.sh"
requires jq
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || fail "python3-jsonschema missing (scripts/deps.sh)"
SCHEMA=$(dirname "$0")/../../docs/status.schema.json

# md_state MNT: the one state whose fsvol_md_state series is 1 (fails unless exactly one)
md_state() {
	local ones
	ones=$(awk '/^fsvol_md_state\{/ && $NF == 1' "$1/metrics")
	[[ $(grep -c . <<<"$ones") -eq 1 ]] || fail "fsvol_md_state: not exactly one state at 1: $(grep '^fsvol_md_state' "$1/metrics")"
	sed 's/.*state="\([a-z]*\)".*/\1/' <<<"$ones"
}
synced() { awk '/^fsvol_md_blocks_synced\{/ { print $NF }' "$1/metrics"; }
blocks() { awk '/^fsvol_md_blocks\{/ { print $NF }' "$1/metrics"; }
valid() {
	cp "$1/status.json" "$T/snap.json"
	/usr/bin/python3 - "$SCHEMA" "$T/snap.json" <<'PY' || fail "status.json does not validate: $(cat "$T/snap.json")"
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))
PY
}
# wait_json MNT JQ-EXPR: until status.json satisfies it (30 s at most)
wait_json() {
	local i
	for ((i = 0; i < 600; i++)); do
		jq -e "$2" "$1/status.json" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	fail "status.json never had $2: $(cat "$1/status.json")"
}
slow() { echo "sync_speed_min 100" >"$1/ctl"; echo "sync_speed_max 400" >"$1/ctl"; } # 32 MiB: ~80 s
fast() { echo "sync_speed_max 200000" >"$1/ctl"; echo "sync_speed_min 1000" >"$1/ctl"; }
# in_pass MNT ACTION WANT: during a running ACTION, the metric says WANT and
# blocks_synced advances between two reads of status.json's position
in_pass() {
	local p0 s0
	wait_json "$1" ".sync.action == \"$2\" and .sync.state == \"running\" and .sync.position > 0"
	[[ $(md_state "$1") == "$3" ]] || fail "during a $2, fsvol_md_state says $(md_state "$1"), want $3"
	s0=$(synced "$1")
	((s0 < $(blocks "$1"))) || fail "during a $2, blocks_synced $s0 is not below blocks $(blocks "$1")"
	p0=$(jq .sync.position "$1/status.json")
	wait_json "$1" ".sync.position > $p0"
	(($(synced "$1") > s0)) || fail "during a $2, blocks_synced did not move from $s0"
}
finish() { # MNT ACTION: let the pass run at full speed to its end
	fast "$1"
	wait_json "$1" ".sync.action == \"$2\" and .sync.state == \"done\""
	wait_json "$1" '.state == "healthy" and .replace == null'
	[[ $(md_state "$1") == active ]] || fail "after the $2, fsvol_md_state says $(md_state "$1"), want active"
	[[ $(synced "$1") == $(blocks "$1") ]] || fail "after the $2, blocks_synced $(synced "$1") != blocks $(blocks "$1")"
}

"$FSVOL" create -l raid5 -c 64K -s 32M --name mds "$T"/m{0,1,2} >/dev/null
truncate -s 33M "$T/new"
fsvol_mount "$T/mnt" "$T"/m{0,1,2}
M=$T/mnt
dd if=/dev/urandom of="$M/volume" bs=1M count=64 oflag=direct status=none
[[ $(md_state "$M") == active ]] || fail "a healthy volume's state is $(md_state "$M")"
valid "$M"
jq -e '.replace == null and ([.members[] | .replaced_by, .replacing] | all(. == null))' "$M/status.json" >/dev/null ||
	fail "no replace runs, yet: $(cat "$M/status.json")"

# replace m0 by a new member: status.json names both, the metric says recovering
slow "$M"
"$FSVOL" replace --with "$T/new" "$M" 0 >/dev/null
in_pass "$M" replace recovering
valid "$M"
ws=$(jq '.members[] | select(.path == "'"$T/new"'") | .slot' "$M/status.json")
[[ -n $ws && $ws -ge 3 ]] || fail "the replacement is not in a spare slot: $(jq .members "$M/status.json")"
jq -e --arg old "$T/m0" --arg new "$T/new" --argjson ws "$ws" \
	'.replace == {"slot":0,"path":$old,"with_slot":$ws,"with_path":$new}
	 and (.members[] | select(.slot == 0) | .replaced_by == $ws and .replacing == null)
	 and (.members[] | select(.slot == $ws) | .replacing == 0 and .replaced_by == null)
	 and ([.members[] | select(.slot != 0 and .slot != $ws) | .replaced_by, .replacing] | all(. == null))' \
	"$M/status.json" >/dev/null || fail "replace of m0 by $T/new not said: $(cat "$M/status.json")"
finish "$M" replace
valid "$M"
[[ $(jq -r '.members[] | select(.slot == 0) | .path' "$M/status.json") == "$T/new" ]] ||
	fail "after the replace, slot 0 is not the replacement: $(jq .members "$M/status.json")"

# a recovery (a spare takes over m1's role; the old m0 is marked faulty, md's
# way after a replace, and removed): recovering
"$FSVOL" remove "$M" "$T/m0" >/dev/null || fail "remove the replaced m0: $(cat "$M/status")"
truncate -s 33M "$T/new2"
"$FSVOL" add "$M" "$T/new2" >/dev/null
slow "$M"
"$FSVOL" fail "$M" 1 >/dev/null
in_pass "$M" recovery recovering
valid "$M"
finish "$M" recovery

# a check and a repair
slow "$M"
echo check >"$M/ctl"
in_pass "$M" check check
finish "$M" check
slow "$M"
echo repair >"$M/ctl"
in_pass "$M" repair resync
finish "$M" repair
valid "$M"
fsvol_umount "$M"
echo "PASS: fsvol_md_state and status.json's replace follow every pass"
