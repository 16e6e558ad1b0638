#!/usr/bin/env bash
# tests/run.sh: run integration test scripts, N at a time ("lanes"), each under
# a timeout; print PASS/FAIL/SKIP per script as it ends (a failing script's
# whole output after its line, never mixed with another's) and a closing
# "N passed, N failed, N skipped". Exit 1 if any failed.
#   FSVOL_BUILD=build tests/run.sh [-j N] SCRIPT... [VAR=VALUE SCRIPT...]
# -j N (or RUN_JOBS=N): N scripts at once; 1 (the default) runs them one after
# another. Scripts start in the order given (give the longest first: the
# lanes then end together). A script with the line
#   # fsvol-test: alone (why)
# runs with nothing beside it (timing or ratio checks, machine-wide state):
# those run first, one after another, before the lanes start. A script with
#   # fsvol-test: timeout N (why)
# gets N seconds instead of TEST_TIMEOUT when N is larger (the md guest's boots).
# VAR=VALUE among the scripts: the scripts after it run with VAR set (make
# integration runs the FUSE tests again with FSVOL_FUSE_TRANSPORT=dev); the
# setting is shown beside their names.
# --beside 'CMD': CMD (bash -c) runs in the background while the lanes
# run (after the scripts that run alone), its output kept; it is reported
# like a script at the end (make check runs the unit tests and the fuzz
# targets so, in the CPU the waiting scripts leave idle).
# A script exits 0 to pass, 77 to skip (its last output line gives the reason).
set -uo pipefail

: "${FSVOL_BUILD:=build}"
export FSVOL_BUILD
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
jobs=${RUN_JOBS:-1}
usage() { echo "usage: tests/run.sh [-j N] SCRIPT... [VAR=VALUE SCRIPT...]" >&2; exit 2; }

# the queue: script, its VAR=VALUE (or empty), alone (1/0)
scripts=() envs=() alone=() limits=()
setting="" beside="" beside_pid="" beside_rc=""
while [[ $# -gt 0 ]]; do
	if [[ $1 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then
		setting=$1
		shift
		continue
	fi
	case $1 in
	-j) [[ $# -ge 2 ]] || usage; jobs=$2; shift 2; continue ;;
	--beside) [[ $# -ge 2 ]] || usage; beside=$2; shift 2; continue ;;
	-j*) jobs=${1#-j} ;;
	-*) usage ;;
	*)
		[[ -f $1 ]] || { echo "tests/run.sh: $1: no such script" >&2; exit 2; }
		scripts+=("$1")
		envs+=("$setting")
		if grep -qm1 '^# fsvol-test: alone' "$1"; then alone+=(1); else alone+=(0); fi
		# "# fsvol-test: timeout N": a script that needs longer than TEST_TIMEOUT
		# (a qemu guest's boots); the larger of the two
		lim=$(sed -n 's/^# fsvol-test: timeout \([0-9][0-9]*\).*/\1/p' "$1" | head -n 1)
		limits+=($((${lim:-0} > TEST_TIMEOUT ? ${lim:-0} : TEST_TIMEOUT))) ;;
	esac
	shift
done
[[ ${#scripts[@]} -gt 0 ]] || usage
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "tests/run.sh: -j $jobs: expected a count of 1 or more" >&2; exit 2; }

# Each run gets a temp root of its own (under /var/tmp: a real filesystem), and
# each script a directory of its own in it ($FSVOL_TEST_TMPDIR for the script:
# lib.sh makes $T there), so a sweep never touches another script's mounts,
# even of the same test running beside it.
base=${FSVOL_TEST_TMPDIR:-/var/tmp}
root=$(mktemp -d "$base/fsvol-run.XXXXXX") || exit 2
chmod 755 "$root" # tests run as other users too (28-access)
outs=$(mktemp -d "${TMPDIR:-/tmp}/fsvol-run-out.XXXXXX") || exit 2

# Safety net behind each script's own EXIT trap (which a SIGKILL after the
# timeout's grace period would skip): whatever the script left under its
# directory (its $T: lib.sh's fsvol-NAME.*) goes: mounts, loop devices,
# network namespaces named after the dir, files. Prints what it had to undo.
sweep() {
	local name=$1 dir=$2 mp dev file ns left=()
	while read -r mp; do
		left+=("mount $mp")
		timeout 30 "$FSVOL_BUILD/bin/fsvol" umount "$mp" >/dev/null 2>&1 || umount -l "$mp" 2>/dev/null
	done < <(awk -v b="$dir/" 'index($2, b) == 1 { print $2 }' /proc/self/mounts | tac)
	while IFS=: read -r dev file; do
		[[ $file == *"$dir/"* ]] || continue
		left+=("loop $dev")
		losetup -d "$dev" 2>/dev/null
	done < <(losetup -a -O NAME,BACK-FILE --noheadings 2>/dev/null | awk '{ print $1 ":" $2 }')
	for file in "$dir"/*; do
		[[ -e $file ]] || continue
		# network namespaces of the killed test (lib.sh: netns_prefix), their processes first
		for ns in $(ip netns list 2>/dev/null | awk -v p="fsv-${file##*.}-" 'index($1, p) == 1 { print $1 }'); do
			left+=("netns $ns")
			ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
			ip netns del "$ns" 2>/dev/null
		done
		left+=("dir $file")
		rm -rf "$file"
	done
	rmdir "$dir" 2>/dev/null
	[[ ${#left[@]} -eq 0 ]] || echo "    | $name left behind (now removed): ${left[*]}"
}

pass=0 failn=0 skip=0
failed=()
declare -A job_of # pid of a running script's shell (start) -> its index
started=()
running=0

label() { echo "$(basename "${scripts[$1]}" .sh)${envs[$1]:+ ${envs[$1]}}"; }

# start I: script I in the background, in its own directory
start() {
	local i=$1 dir=$root/$1
	mkdir -m 755 "$dir"
	(
		[[ -z ${envs[i]} ]] || export "${envs[i]?}"
		export FSVOL_TEST_TMPDIR=$dir
		# -k: the script's EXIT trap gets time to unmount before SIGKILL.
		# TERM (an interrupted run) goes on to the script (timeout passes it
		# on); its status comes back as an exit status, never as this
		# shell's death by a signal
		t=
		trap '[[ -z $t ]] || kill -TERM $t 2>/dev/null' TERM
		timeout -k 60 "${limits[i]}" bash "${scripts[i]}" >"$outs/$i" 2>&1 </dev/null &
		t=$!
		exec 2>/dev/null # no "Killed" notice from this shell: the report says it
		while :; do
			wait $t
			rc=$?
			kill -0 $t 2>/dev/null || exit $rc
		done
	) &
	job_of[$!]=$i
	started[i]=$(date +%s)
	running=$((running + 1))
}

# report I RC: its line (and output when it failed), then the sweep
report() {
	local i=$1 rc=$2 name secs reason why
	name=$(label "$i")
	secs=$(($(date +%s) - started[i]))
	case $rc in
	0)
		echo "PASS $name (${secs}s)"
		pass=$((pass + 1)) ;;
	77)
		reason=$(grep -m1 '^SKIP' "$outs/$i" | sed 's/^SKIP: *//')
		echo "SKIP $name (${reason:-no reason given})"
		skip=$((skip + 1)) ;;
	*)
		why=""
		[[ $rc -eq 124 || ($rc -eq 137 && $secs -ge ${limits[i]}) ]] && why=" timed out after ${limits[i]}s"
		echo "FAIL $name (${secs}s, exit $rc)$why"
		# the reason first (a log reader that keeps only the head still sees it)
		grep -m3 '^FAIL' "$outs/$i" | sed 's/^/    | /'
		echo "    | --- the whole output:"
		sed 's/^/    | /' "$outs/$i"
		failn=$((failn + 1))
		failed+=("$name") ;;
	esac
	sweep "$name" "$root/$i"
	rm -f "$outs/$i"
}

# reap: wait for any running script to end, and report it
reap() {
	local pid rc i
	wait -n -p pid
	rc=$?
	if [[ -n ${pid:-} && $pid == "$beside_pid" ]]; then
		beside_rc=$rc
		return 0
	fi
	[[ -n ${pid:-} && -n ${job_of[$pid]:-} ]] || return 0
	i=${job_of[$pid]}
	unset "job_of[$pid]"
	running=$((running - 1))
	report "$i" "$rc"
}
reap_all() { while ((running > 0)); do reap; done; }

# Ctrl-C or TERM: the running scripts get TERM (timeout passes it on; their
# traps clean up), are reported and swept, then the run ends.
interrupted() {
	trap '' INT TERM
	echo "tests/run.sh: interrupted: stopping ${running} running script(s)"
	local pid
	for pid in "${!job_of[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	[[ -z $beside_pid ]] || { pkill -TERM -P "$beside_pid"; kill -TERM "$beside_pid"; } 2>/dev/null
	reap_all
	echo "$pass passed, $failn failed, $skip skipped (interrupted)"
	rmdir "$root" 2>/dev/null
	rm -rf "$outs"
	exit 130
}
trap interrupted INT TERM

# the machine's busy share over the run (/proc/stat: all but idle and iowait),
# to tell whether more lanes would help
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat; }
read -r busy0 idle0 < <(cpu_ticks)
t0=$(date +%s)
n_alone=0
for a in "${alone[@]}"; do n_alone=$((n_alone + a)); done
((jobs == 1)) || echo "${#scripts[@]} scripts, $jobs at a time; $n_alone alone first"
# the scripts that run alone, then the rest in lanes
for i in "${!scripts[@]}"; do
	((alone[i])) || continue
	start "$i"
	reap_all
done
if [[ -n $beside ]]; then
	(exec bash -c "$beside") >"$outs/beside" 2>&1 </dev/null &
	beside_pid=$! beside_t0=$(date +%s)
fi
for i in "${!scripts[@]}"; do
	((alone[i])) && continue
	while ((running >= jobs)); do reap; done
	start "$i"
done
reap_all
if [[ -n $beside_pid ]]; then
	[[ -n $beside_rc ]] || { wait "$beside_pid"; beside_rc=$?; }
	if ((beside_rc == 0)); then
		echo "PASS beside: $beside (ended $(($(date +%s) - beside_t0))s after the lanes began)"
		pass=$((pass + 1))
	else
		echo "FAIL beside: $beside (exit $beside_rc; its errors, then the last 40 lines of its output)"
		grep -E -m 40 ': error|Error [0-9]|Failures: [1-9]|Errors: [1-9]|:[EF]:|ERROR|SUMMARY|deadly|Timeout|timed out' \
			"$outs/beside" | sed 's/^/    | /'
		echo "    | ---"
		tail -n 40 "$outs/beside" | sed 's/^/    | /'
		failn=$((failn + 1))
		failed+=("beside")
	fi
fi

read -r busy1 idle1 < <(cpu_ticks)
busy=$(((busy1 - busy0) * 100 / (busy1 - busy0 + idle1 - idle0 + 1)))
((jobs == 1)) || echo "wall time $(($(date +%s) - t0))s, the machine's CPUs ${busy}% busy"
[[ $failn -eq 0 ]] || echo "failed: ${failed[*]}"
echo "$pass passed, $failn failed, $skip skipped"
rmdir "$root" 2>/dev/null
rm -rf "$outs"
[[ $failn -eq 0 ]]
