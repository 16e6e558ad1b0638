#!/usr/bin/env bash
# tests/run.sh: run integration test scripts one after another (mounts share
# the machine), each under a timeout; print PASS/FAIL/SKIP per script and a
# closing "N passed, N failed, N skipped". Exit 1 if any failed.
#   FSVOL_BUILD=build tests/run.sh tests/integration/*.sh
# A script exits 0 to pass, 77 to skip (its last output line gives the reason).
set -uo pipefail

: "${FSVOL_BUILD:=build}"
export FSVOL_BUILD
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
pass=0 failn=0 skip=0
failed=()

# Safety net behind each script's own EXIT trap (which a SIGKILL after the
# timeout's grace period would skip): whatever the script left under its temp
# dir (lib.sh: $FSVOL_TEST_TMPDIR/fsvol-NAME.*) goes: mounts, loop devices,
# network namespaces named after the dir, files. Prints what it had to undo.
sweep() {
	local name=$1 base=${FSVOL_TEST_TMPDIR:-/var/tmp}/fsvol-$1. mp dev file ns left=()
	while read -r mp; do
		left+=("mount $mp")
		timeout 30 "$FSVOL_BUILD/bin/fsvol" umount "$mp" >/dev/null 2>&1 || umount -l "$mp" 2>/dev/null
	done < <(awk -v b="$base" 'index($2, b) == 1 { print $2 }' /proc/self/mounts | tac)
	while IFS=: read -r dev file; do
		[[ $file == *"$base"* ]] || continue
		left+=("loop $dev")
		losetup -d "$dev" 2>/dev/null
	done < <(losetup -a -O NAME,BACK-FILE --noheadings 2>/dev/null | awk '{ print $1 ":" $2 }')
	for file in "$base"*; do
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
	[[ ${#left[@]} -eq 0 ]] || echo "    | $name left behind (now removed): ${left[*]}"
}
[[ $# -gt 0 ]] || { echo "usage: tests/run.sh SCRIPT..." >&2; exit 2; }

# Each run gets a temp root of its own (under /var/tmp: a real filesystem), so
# the sweep never touches another run's mounts, even of the same test.
if [[ -z ${FSVOL_TEST_TMPDIR:-} ]]; then
	FSVOL_TEST_TMPDIR=$(mktemp -d /var/tmp/fsvol-run.XXXXXX)
	chmod 755 "$FSVOL_TEST_TMPDIR" # tests run as other users too (28-access)
	export FSVOL_TEST_TMPDIR
	trap 'rmdir "$FSVOL_TEST_TMPDIR" 2>/dev/null' EXIT
fi

for t in "$@"; do
	name=$(basename "$t" .sh)
	out=$(mktemp "${TMPDIR:-/tmp}/fsvol-run.$name.XXXXXX")
	start=$(date +%s)
	# -k: the script's EXIT trap gets time to unmount before SIGKILL.
	timeout -k 60 "$TEST_TIMEOUT" bash "$t" >"$out" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	case $rc in
	0)
		echo "PASS $name (${secs}s)"
		pass=$((pass + 1)) ;;
	77)
		reason=$(grep -m1 '^SKIP' "$out" | sed 's/^SKIP: *//')
		echo "SKIP $name (${reason:-no reason given})"
		skip=$((skip + 1)) ;;
	*)
		why=""
		[[ $rc -eq 124 || ($rc -eq 137 && $secs -ge $TEST_TIMEOUT) ]] && why=" timed out after ${TEST_TIMEOUT}s"
		echo "FAIL $name (${secs}s, exit $rc)$why"
		sed 's/^/    | /' "$out"
		failn=$((failn + 1))
		failed+=("$name") ;;
	esac
	sweep "$name"
	rm -f "$out"
done

[[ $failn -eq 0 ]] || echo "failed: ${failed[*]}"
echo "$pass passed, $failn failed, $skip skipped"
[[ $failn -eq 0 ]]
