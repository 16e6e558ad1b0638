#!/usr/bin/env bash
# A real Prometheus server (Debian's prometheus) scrapes a loaded raid5's
# `fsvol mount --http` every second: every PromQL line of docs/counters.md
# returns series (promtool query instant), and so does every panel query of the
# Grafana dashboard docs/grafana/fsvol.json (HTTP API, the dashboard's variables
# set as Grafana sets them), its variable queries list the volume and members,
# and the dashboard is well formed (unique ids, known panel types, every
# variable it uses defined). Prometheus binds to loopback, keeps its storage
# under $T; the test waits on the series appearing, bounded.
. "$(dirname "$0")/../lib.sh"
requires jq
requires curl
requires fio
if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
	echo "SKIP: prometheus not installed (Debian's prometheus package; scripts/deps.sh installs it)"
	exit 77
fi
TOP=$(cd "$(dirname "$0")/../.." && pwd)
DASH=$TOP/docs/grafana/fsvol.json
DOC=$TOP/docs/counters.md

# --- a raid5 of 4 with its HTTP endpoint on a free loopback port
"$FSVOL" create -l raid5 -c 64K -s 32M --name prom5 "$T"/m{0,1,2,3} >/dev/null
fsvol_mount_http "$T/mnt" "$T"/m{0,1,2,3}

# --- Prometheus: loopback, storage in $T, 1 s scrapes of the mount
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: fsvol
    static_configs:
      - targets: ["127.0.0.1:$HTTP_PORT"]
YML
promtool check config "$T/prometheus.yml" >"$T/promtool.out" 2>&1 || fail "promtool check config: $(cat "$T/promtool.out")"
for try in 1 2 3 4 5; do
	pport=$(free_port)
	prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$T/prometheus.log" 2>&1 &
	ppid=$!
	track_pid "$ppid"
	P=http://127.0.0.1:$pport
	for ((i = 0; i < 300; i++)); do # ready, or gone (a port taken meanwhile)
		curl -sf -m 2 "$P/-/ready" >/dev/null 2>&1 && break 2
		_alive "$ppid" || break
		sleep 0.1
	done
	_alive "$ppid" && fail "prometheus did not become ready in 30 s: $(tail -n 5 "$T/prometheus.log")"
	grep -q "address already in use" "$T/prometheus.log" || fail "prometheus exited: $(tail -n 5 "$T/prometheus.log")"
	[[ $try == 5 ]] && fail "no free port for prometheus in 5 tries"
done
note "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') on $P scraping 127.0.0.1:$HTTP_PORT"

# --- load: random reads and writes (raid5 small writes: member reads and writes)
fio --name=prom --filename="$T/mnt/volume" --direct=1 --rw=randrw --bs=4k --ioengine=libaio --iodepth=8 \
	--time_based --runtime=240 --size=64M >"$T/fio.out" 2>&1 &
fio_pid=$!
track_pid "$fio_pid"

# q EXPR: the instant result of EXPR through the HTTP API (JSON)
q() { curl -sf -m 10 "$P/api/v1/query" --data-urlencode "query=$1"; }
# --- wait (bounded) until every member's read and write rates are there and > 0
want='count(rate(fsvol_disk_reads_completed_total{layer="member"}[15s]) > 0) + count(rate(fsvol_disk_writes_completed_total{layer="member"}[15s]) > 0)'
for ((i = 0; i < 600; i++)); do
	[[ $(q "$want" | jq -r '.data.result[0].value[1] // 0') == 8 ]] && break
	_alive "$fio_pid" || fail "fio stopped: $(tail -n 5 "$T/fio.out")"
	((i == 599)) && fail "the members' rates never appeared in Prometheus: $(q 'up' | jq -c .data.result)"
	sleep 0.1
done
q 'up{job="fsvol"}' | jq -e '.data.result[0].value[1] == "1"' >/dev/null || fail "the scrape target is not up"

# --- every PromQL line documented in docs/counters.md returns series (promtool)
awk '/^```promql/ { on = 1; next } /^```/ { on = 0 } on && !/^#/ && NF' "$DOC" >"$T/doc.promql"
[[ $(wc -l <"$T/doc.promql") -ge 15 ]] || fail "docs/counters.md lists only $(wc -l <"$T/doc.promql") PromQL lines"
n=0
while IFS= read -r expr; do
	out=$(promtool query instant "$P" "$expr" 2>&1) || fail "promtool query '$expr': $out"
	[[ -n $out ]] || fail "documented PromQL returns no series: $expr"
	n=$((n + 1))
done <"$T/doc.promql"
note "$n documented PromQL queries return series"
# the figures are the right ones: the volume's r/s from Prometheus is within the
# range of two stats.json snapshots' rate (loosely: same load, other windows)
q 'fsvol_md_state{volume="prom5"} == 1' | jq -e '.data.result | length == 1 and .[0].metric.state == "active"' >/dev/null ||
	fail "fsvol_md_state == 1 is not one series 'active': $(q 'fsvol_md_state' | jq -c .data.result)"
amp=$(q 'sum(rate(fsvol_disk_writes_completed_total{layer="member"}[15s])) / sum(rate(fsvol_disk_writes_completed_total{layer="volume"}[15s]))' |
	jq -r '.data.result[0].value[1]')
awk -v a="$amp" 'BEGIN { exit !(a >= 1.5 && a <= 2.5) }' || fail "member writes per volume write on a raid5 (small writes: 2): $amp"

# --- the Grafana dashboard: well formed, every panel query returns data
/usr/bin/python3 - "$DASH" "$P" prom5 >"$T/grafana.out" 2>&1 <<'PY' || fail "grafana dashboard:"$'\n'"$(cat "$T/grafana.out")"
import json, re, sys, urllib.error, urllib.parse, urllib.request
dash_path, prom, volume = sys.argv[1:4]
d = json.load(open(dash_path))
def api(path, **params):
    url = prom + path + "?" + urllib.parse.urlencode(params, doseq=True)
    try:
        return json.load(urllib.request.urlopen(url, timeout=10))
    except urllib.error.HTTPError as e:  # a query Prometheus refuses: say which
        return {"status": "error", "data": {"result": []}, "error": e.read().decode()}
bad = []
panels = []
for p in d["panels"]:
    panels.append(p)
    panels.extend(p.get("panels", []))  # a collapsed row keeps its panels inside
ids = [p["id"] for p in panels]
if len(ids) != len(set(ids)):
    bad.append(f"panel ids repeat: {ids}")
known = {"row", "stat", "gauge", "timeseries", "heatmap", "state-timeline", "table"}
variables = {v["name"]: v for v in d["templating"]["list"]}
builtin = {"__rate_interval", "__interval", "__range"}
for p in panels:
    if p["type"] not in known:
        bad.append(f"panel {p['title']}: type {p['type']}")
    g = p.get("gridPos", {})
    if not all(k in g for k in "hwxy") or g["x"] + g["w"] > 24:
        bad.append(f"panel {p['title']}: gridPos {g}")
    if p["type"] != "row" and not p.get("targets"):
        bad.append(f"panel {p['title']}: no query")
    if p["type"] != "row" and p.get("datasource", {}).get("uid") != "${ds_prometheus}":
        bad.append(f"panel {p['title']}: data source {p.get('datasource')}")
# the variables: members of the volume, the volume of the job
job = "fsvol"
vols = api("/api/v1/label/volume/values", **{"match[]": f'fsvol_disk_counted{{job="{job}"}}'})["data"]
members = api("/api/v1/label/device/values", **{"match[]": f'fsvol_disk_counted{{job="{job}",volume="{volume}",layer="member"}}'})["data"]
if vols != [volume]:
    bad.append(f"variable volume lists {vols}")
if members != [f"{volume}.m{i}" for i in range(4)]:
    bad.append(f"variable member lists {members}")
n = 0
for p in panels:
    for t in p.get("targets", []):
        expr = t["expr"]
        for v in re.findall(r"\$\{?(\w+)", expr) + re.findall(r"\$\{?(\w+)", p["title"]):
            if v not in variables and v not in builtin:
                bad.append(f"panel {p['title']}: ${v} is not a dashboard variable")
        # as Grafana substitutes them: a repeated panel gets one member each
        for m in (members if p.get("repeat") == "member" else [members[0]]):
            e = (expr.replace("$__rate_interval", "15s").replace("$job", job).replace("$volume", volume)
                 .replace("$member", re.sub(r"([\\.^$*+?()\[\]{}|])", r"\\\\\1", m)))
            r = api("/api/v1/query", query=e)
            res = r["data"]["result"]
            if r["status"] != "success" or not res:
                bad.append(f"panel '{p['title']}' ({t['refId']}): no data for {e} {r.get('error', '')}")
            elif p["type"] == "heatmap" and not any(float(s["value"][1]) > 0 for s in res):
                bad.append(f"panel '{p['title']}': a heat map of zeros under load: {e}")
            n += 1
print(f"{n} panel queries return data" if not bad else "\n".join(bad))
sys.exit(1 if bad else 0)
PY
note "$(cat "$T/grafana.out")"

kill "$fio_pid" 2>/dev/null
wait "$fio_pid" 2>/dev/null || true
_drop_cleanup pid "$fio_pid"
fsvol_umount "$T/mnt"
echo "PASS: Prometheus scrapes fsvol; the documented PromQL and every Grafana panel return data"
