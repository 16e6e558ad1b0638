#!/usr/bin/env bash
# 61-detail-scan: fsvol detail as mdadm --detail lays an array out (issue 21
# point 4): the counts, consistency policy, resync status and the device table
# (Number Major Minor RaidDevice State Device) with the failed member after the
# roles, checked against a volume in a known state; --json carries the same;
# --test's exit codes. examine --scan lists every volume under the paths
# given, devices in slot order, stale ones apart.
. "$(dirname "$0")/../lib.sh"
requires_root
requires jq

mkdir -p "$T/v/sub" "$T/mnt"
"$FSVOL" create -l raid5 -c 64K -s 16M --spares 1 "$T"/v/d{0,1,2,3} >/dev/null || fail "create"
fsvol_mount "$T/mnt" "$T"/v/d{0,1,2,3}

# healthy: every count, the policy, the table
"$FSVOL" detail "$T/mnt" >"$T/d1" || fail "detail"
field() { sed -n "s/^ *$1 : //p" "$2"; }
[[ $(field "Raid Level" "$T/d1") == raid5 ]] || fail "Raid Level: $(cat "$T/d1")"
[[ $(field "Array Size" "$T/d1") == "32768 (32.00 MiB 33.55 MB)" ]] || fail "Array Size: $(field "Array Size" "$T/d1")"
[[ $(field "Used Dev Size" "$T/d1") == "16384 (16.00 MiB 16.78 MB)" ]] || fail "Used Dev Size"
for f in "Raid Devices:3" "Total Devices:4" "Active Devices:3" "Working Devices:4" "Failed Devices:0" \
	"Spare Devices:1" "Consistency Policy:bitmap" "Intent Bitmap:Internal" "Layout:left-symmetric" \
	"Chunk Size:64K" "State:clean"; do # md's safe mode: a volume nothing writes is clean
	[[ $(field "${f%%:*}" "$T/d1") == "${f#*:}" ]] || fail "${f%%:*}: '$(field "${f%%:*}" "$T/d1")', want '${f#*:}'"
done
grep -q "^    Number   Major   Minor   RaidDevice State$" "$T/d1" || fail "no device table header: $(cat "$T/d1")"
for i in 0 1 2; do
	grep -Eq "^ +$i +- +- +$i +active sync +$T/v/d$i$" "$T/d1" || fail "row $i: $(cat "$T/d1")"
done
grep -Eq "^ +3 +- +- +- +spare +$T/v/d3$" "$T/d1" || fail "spare row: $(cat "$T/d1")"
"$FSVOL" detail --test "$T/mnt" >/dev/null || fail "detail --test of a healthy volume: $?"

# failed member, a rebuild under way (slowed so it is seen): the failed one after the roles
dd if=/dev/urandom of="$T/mnt/volume" bs=1M count=32 oflag=direct status=none
"$FSVOL" ctl "$T/mnt" sync_speed_min 1
"$FSVOL" ctl "$T/mnt" sync_speed_max 1000
"$FSVOL" fail "$T/mnt" 1 >/dev/null
for ((i = 0; i < 200; i++)); do grep -q "recovery running" "$T/mnt/status" && break; sleep 0.05; done
rc=0
"$FSVOL" detail --test "$T/mnt" >"$T/d2" || rc=$?
[[ $rc -eq 1 ]] || fail "detail --test while degraded: exit $rc"
# clean or active: whether safe_mode_delay has passed since the last write (md's words either way)
[[ $(field State "$T/d2") =~ ^(active|clean),\ degraded,\ recovering$ ]] || fail "State: $(field State "$T/d2")"
[[ $(field "Rebuild Status" "$T/d2") =~ ^[0-9]+%\ complete$ ]] || fail "Rebuild Status: $(cat "$T/d2")"
for f in "Total Devices:4" "Active Devices:2" "Working Devices:3" "Failed Devices:1" "Spare Devices:1"; do
	[[ $(field "${f%%:*}" "$T/d2") == "${f#*:}" ]] || fail "${f%%:*}: '$(field "${f%%:*}" "$T/d2")', want '${f#*:}'"
done
# the table: roles 0..2 first (role 1 rebuilding onto the spare), a blank line, then the failed device
awk '/^    Number/ { on = 1; next } on' "$T/d2" >"$T/table"
grep -Eq "^ +[0-9]+ +- +- +1 +spare rebuilding +$T/v/d3$" "$T/table" || fail "rebuilding row: $(cat "$T/table")"
[[ $(sed -n 4p "$T/table") == "" ]] || fail "no blank line after the roles: $(cat "$T/table")"
sed -n 5p "$T/table" | grep -Eq "^ +[0-9]+ +- +- +- +faulty +$T/v/d1$" || fail "faulty row: $(cat "$T/table")"

# --json: the same facts for programs
"$FSVOL" detail --json "$T/mnt" >"$T/d.json" || fail "detail --json"
jq -e '.raid_devices == 3 and .total_devices == 4 and .active_devices == 2 and .failed_devices == 1
	and .spare_devices == 1 and .consistency_policy == "bitmap" and .sync_status.action == "Rebuild"
	and (.devices | length) == 4 and ([.devices[] | select(.state == "faulty")] | length) == 1
	and (.devices[-1].state == "faulty") and .array_size == 33554432' "$T/d.json" >/dev/null ||
	fail "detail --json: $(cat "$T/d.json")"
"$FSVOL" ctl "$T/mnt" sync_speed_max 200000
for ((i = 0; i < 600; i++)); do grep -q "recovery done" "$T/mnt/status" && break; sleep 0.05; done
fsvol_umount "$T/mnt"

# a raid0 has no redundancy to keep consistent
"$FSVOL" create -l raid0 -c 64K -s 8M "$T"/v/sub/z{0,1} >/dev/null || fail "create raid0"
fsvol_mount "$T/mnt" "$T"/v/sub/z{0,1}
[[ $("$FSVOL" detail --json "$T/mnt" | jq -r .consistency_policy) == none ]] || fail "raid0 policy"
fsvol_umount "$T/mnt"

# --- examine --scan: every volume under the paths, stale members apart ----------------------
cp "$T/v/d0" "$T/v/sub/old-d0" # a copy of m0, then the volume moves on without it
fsvol_mount "$T/mnt" "$T"/v/d{0,2,3} # d1 failed earlier: never written since, it is stale
"$FSVOL" ctl "$T/mnt" reset
fsvol_umount "$T/mnt"
: >"$T/v/notamember"
"$FSVOL" examine --scan "$T/v" >"$T/scan" || fail "examine --scan: $(cat "$T/scan")"
[[ $(grep -c '^ARRAY ' "$T/scan") -eq 2 ]] || fail "examine --scan: $(cat "$T/scan")"
grep -Eq "^ARRAY fsvol-[0-9a-f]{8} level=raid5 num-devices=3 spares=1 UUID=[0-9a-f-]{36} events=[0-9]+$" "$T/scan" ||
	fail "raid5 ARRAY line: $(cat "$T/scan")"
grep -q "^ARRAY fsvol-[0-9a-f]* level=raid0 num-devices=2 " "$T/scan" || fail "raid0 ARRAY line: $(cat "$T/scan")"
grep -q "^   devices=$T/v/sub/z0,$T/v/sub/z1$" "$T/scan" || fail "raid0 devices: $(cat "$T/scan")"
grep -q "^   stale=$T/v/sub/old-d0(m0, events " "$T/scan" || fail "the stale copy: $(cat "$T/scan")"
rc=0
"$FSVOL" examine --scan "$T/nowhere" 2>"$T/err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "$T/nowhere" "$T/err" || fail "examine --scan of a missing path: exit $rc"
note "detail and examine --scan ok"
