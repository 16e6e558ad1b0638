#!/usr/bin/env bash
# MNT/metrics parsed by a real Prometheus parser (python3-prometheus-client)
# agrees with stats.json after a known workload and uses node_exporter's
# names; volume names reach every output; `fsvol ctl` prints the daemon's
# reason for a refused command while a plain write still fails with EINVAL.
. "$(dirname "$0")/../lib.sh"
requires jq
/usr/bin/python3 -c 'import prometheus_client.parser' 2>/dev/null ||
	{ echo "SKIP: python3-prometheus-client not installed (scripts/deps.sh installs it)"; exit 77; }

# --- names: a unique default, a given one, bad ones refused with the culprit named
"$FSVOL" create -l raid5 -c 64K -s 16M "$T"/a{0,1,2,3} >"$T/create.out"
"$FSVOL" create -l raid1 -s 16M --name data_1.x "$T"/b{0,1} >/dev/null
grep -Eq '^fsvol: created fsvol-[0-9a-f]{8}: raid5' "$T/create.out" || fail "create names no default: $(cat "$T/create.out")"
expect_fail_msg "name 'a b': character 2 (' ') is not allowed" "$FSVOL" create -l raid1 -s 16M --name 'a b' "$T"/c{0,1}
expect_fail_msg "must start with a letter or a digit" "$FSVOL" create -l raid1 -s 16M --name .hidden "$T"/c{0,1}
expect_fail_msg "longer than 31 bytes" "$FSVOL" create -l raid1 -s 16M --name "$(printf 'n%.0s' {1..32})" "$T"/c{0,1}
expect_fail_msg "name '': empty" "$FSVOL" create -l raid1 -s 16M --name '' "$T"/c{0,1}
[[ ! -e $T/c0 ]] || fail "a refused create left $T/c0 behind"
"$FSVOL" examine "$T/b0" | grep -q 'Name : data_1.x' || fail "examine does not show the stored name"

fsvol_mount "$T/r5" "$T"/a{0,1,2,3}
fsvol_mount "$T/r1" "$T"/b{0,1}
name=$(awk 'NR == 1 { print $1 }' "$T/r5/status")
[[ $name =~ ^fsvol-[0-9a-f]{8}$ ]] || fail "status names the volume '$name'"
[[ $(awk 'NR == 1 { print $1 }' "$T/r1/status") == data_1.x ]] || fail "status ignores --name: $(head -1 "$T/r1/status")"
[[ $(jq -r .volume.name "$T/r5/stats.json") == "$name" ]] || fail "stats.json names the volume differently from status"
[[ $(jq -r '.members[1].name' "$T/r1/stats.json") == data_1.x.m1 ]] || fail "stats.json member name: $(jq -c '[.members[].name]' "$T/r1/stats.json")"
[[ $(awk '{ print $3 }' "$T/r5/diskstats" "$T/r1/diskstats" | sort -u | wc -l) == 8 ]] ||
	fail "two mounts' diskstats names collide: $(cat "$T/r5/diskstats" "$T/r1/diskstats")"
"$FSVOL" stat -c 1 "$T/r1" | grep -q '^data_1\.x ' || fail "fsvol stat does not show the volume name"

# --- a known workload, then metrics == stats.json, counter by counter (safe
# mode off: no clean mark lands between the two copies)
safe_mode_off "$T/r5"
"$FSVOL" ctl "$T/r5" reset || fail "fsvol ctl reset failed"
dd if=/dev/urandom of="$T/r5/volume" bs=4K count=25 oflag=direct conv=notrunc status=none
dd if="$T/r5/volume" of=/dev/null bs=64K count=3 iflag=direct status=none
cp "$T/r5/stats.json" "$T/stats.json"
cp "$T/r5/metrics" "$T/metrics"
/usr/bin/python3 - "$T/metrics" "$T/stats.json" "$name" >"$T/check.out" 2>&1 <<'EOF' || fail "metrics vs stats.json:"$'\n'"$(cat "$T/check.out")"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
text, doc, name = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
fams = {f.name: f for f in text_string_to_metric_families(text)}
bad = []
# node_exporter's diskstats and mdadm names, under fsvol_ (the parser drops _total)
want = {"fsvol_disk_reads_completed": "counter", "fsvol_disk_read_bytes": "counter",
        "fsvol_disk_read_time_seconds": "counter", "fsvol_disk_writes_completed": "counter",
        "fsvol_disk_written_bytes": "counter", "fsvol_disk_write_time_seconds": "counter",
        "fsvol_disk_io_now": "gauge", "fsvol_disk_io_time_seconds": "counter",
        "fsvol_disk_io_time_weighted_seconds": "counter", "fsvol_disk_flush_requests": "counter",
        "fsvol_md_disks": "gauge", "fsvol_md_disks_required": "gauge", "fsvol_md_degraded": "gauge",
        "fsvol_md_blocks": "gauge", "fsvol_md_blocks_synced": "gauge", "fsvol_md_state": "gauge",
        "fsvol_disk_latency_seconds": "histogram"}
for n, t in want.items():
    if n not in fams or fams[n].type != t:
        bad.append(f"{n}: missing or not a {t}")
def value(fam, sample, **labels):
    for s in fams[fam].samples:
        if s.name == sample and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    bad.append(f"no sample {sample}{labels}")
    return None
devs = [("volume", doc["volume"])] + [("member", m) for m in doc["members"]]
pairs = [("reads", "fsvol_disk_reads_completed", 1), ("read_bytes", "fsvol_disk_read_bytes", 1),
         ("read_ns", "fsvol_disk_read_time_seconds", 1e-9), ("writes", "fsvol_disk_writes_completed", 1),
         ("write_bytes", "fsvol_disk_written_bytes", 1), ("write_ns", "fsvol_disk_write_time_seconds", 1e-9),
         ("flushes", "fsvol_disk_flush_requests", 1), ("inflight", "fsvol_disk_io_now", 1),
         ("busy_ns", "fsvol_disk_io_time_seconds", 1e-9), ("queue_ns", "fsvol_disk_io_time_weighted_seconds", 1e-9),
         ("errors", "fsvol_disk_errors", 1)]
for layer, d in devs:
    lab = {"volume": name, "layer": layer, "device": d["name"]}
    if layer == "member":
        lab["member"] = str(d["index"])
    for key, fam, scale in pairs:
        sample = fam if fams.get(fam) and fams[fam].type == "gauge" else fam + "_total"
        got = value(fam, sample, **lab)
        if got is not None and abs(got - d[key] * scale) > 1e-9 * max(1, d[key] * scale):
            bad.append(f"{d['name']} {fam} = {got}, stats.json {key} = {d[key]}")
    for op, cnt, ns in (("read", "reads", "read_ns"), ("write", "writes", "write_ns")):
        buckets = sorted(((float(s.labels["le"]), s.value) for s in fams["fsvol_disk_latency_seconds"].samples
                          if s.name.endswith("_bucket") and s.labels["op"] == op
                          and s.labels["device"] == d["name"]))
        vals = [v for _, v in buckets]
        if vals != sorted(vals) or buckets[-1][0] != float("inf") or vals[-1] != d[cnt]:
            bad.append(f"{d['name']} {op} buckets not cumulative up to {cnt}={d[cnt]}: {buckets}")
        if value("fsvol_disk_latency_seconds", "fsvol_disk_latency_seconds_count", op=op, **lab) != d[cnt]:
            bad.append(f"{d['name']} {op} _count != {cnt}")
        s = value("fsvol_disk_latency_seconds", "fsvol_disk_latency_seconds_sum", op=op, **lab)
        if s is not None and abs(s - d[ns] * 1e-9) > 1e-9:
            bad.append(f"{d['name']} {op} _sum {s} != {ns} {d[ns]}")
if doc["volume"]["writes"] != 25 or doc["volume"]["reads"] != 3:
    bad.append(f"volume counted {doc['volume']['writes']} writes, {doc['volume']['reads']} reads (want 25, 3)")
if value("fsvol_md_disks", "fsvol_md_disks", volume=name, state="active") != 4:
    bad.append("fsvol_md_disks{state=active} != 4")
if value("fsvol_md_disks_required", "fsvol_md_disks_required", volume=name) != 4:
    bad.append("fsvol_md_disks_required != 4")
if value("fsvol_md_degraded", "fsvol_md_degraded", volume=name) != 0:
    bad.append("fsvol_md_degraded != 0")
if value("fsvol_md_state", "fsvol_md_state", volume=name, state="active") != 1:
    bad.append("fsvol_md_state{state=active} != 1")
if value("fsvol_md_blocks", "fsvol_md_blocks", volume=name) != 48 * 1024:
    bad.append("fsvol_md_blocks != 48 MiB in KiB")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

# --- control that answers
expect_fail_msg "unknown command 'rebuild'" "$FSVOL" ctl "$T/r5" rebuild
expect_fail_msg "stats sometimes: expected all, volume or off" "$FSVOL" ctl "$T/r5" stats sometimes
expect_fail_msg "fail -1: expected a member in a raid role" "$FSVOL" ctl "$T/r5" fail -1
expect_fail_msg "check: unexpected 'now'" "$FSVOL" ctl "$T/r5" check now
expect_fail_msg "$T/nowhere/ctl" "$FSVOL" ctl "$T/nowhere" reset
rc=0; "$FSVOL" ctl "$T/r5" >/dev/null 2>&1 || rc=$?
[[ $rc == 2 ]] || fail "fsvol ctl without a command exits $rc, not 2 (usage)"
# a plain write still fails with EINVAL, and a read on the same handle gives the reason
/usr/bin/python3 - "$T/r5/ctl" >"$T/raw.out" 2>&1 <<'EOF' || fail "raw MNT/ctl: $(cat "$T/raw.out")"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    os.write(fd, b"fail 9")
    sys.exit("a refused command was accepted")
except OSError as e:
    if e.errno != errno.EINVAL:
        sys.exit(f"refused with {e}, not EINVAL")
why = os.read(fd, 4096).decode()
if "fail 9: expected a member in a raid role" not in why:
    sys.exit(f"read after the refusal gave {why!r}")
if os.read(fd, 4096) != b"":
    sys.exit("the reason is read once")
os.write(fd, b"reset")
if os.read(fd, 4096) != b"":
    sys.exit("an accepted command left a reason")
EOF
if echo "fail 9" 2>/dev/null >"$T/r5/ctl"; then fail "shell write of a refused command succeeded"; fi
grep -q '\[UUUU\]' "$T/r5/status" || fail "refused commands changed the volume: $(head -1 "$T/r5/status")"
# an accepted command: exit 0, and its effect shows in the metrics
"$FSVOL" ctl "$T/r5" fail 1 || fail "fsvol ctl fail 1 failed"
grep -q '^fsvol_md_degraded{volume="'"$name"'"} 1$' "$T/r5/metrics" || fail "fail 1: $(grep md_degraded "$T/r5/metrics")"
[[ $(jq -r .volume.state "$T/r5/stats.json") == degraded ]] || fail "fail 1: stats.json volume state $(jq -r .volume.state "$T/r5/stats.json")"
grep -q '^fsvol_md_disks{volume="'"$name"'",state="failed"} 1$' "$T/r5/metrics" || fail "fail 1: $(grep 'md_disks{' "$T/r5/metrics")"
grep -q 'fsvol_member_info{.*member="1",uuid="[0-9a-f-]\{36\}",path="[^"]*a1",state="failed",role="-"} 1' "$T/r5/metrics" ||
	fail "fail 1: $(grep member_info "$T/r5/metrics")"
fsvol_umount "$T/r1"
fsvol_umount "$T/r5"
