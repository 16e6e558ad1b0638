#!/usr/bin/env bash
# 17-doc-examples: every shell example in README.md and docs/*.md runs, and
# the docs' option tables match the parsers'.
# The convention (docs/experiments.md): a block of commands is fenced
# ```sh and runs as it is written, from an empty directory shared by the blocks
# of one file, in their order; output and other text is fenced ```text (or
# another language); a block too long for a test says so on its first line:
# "# doc-test: skip (reason)". An untagged ``` fence fails the test, so a
# command block cannot escape it. Each block runs under bash -e -o pipefail.
# Also: every option docs/commands.md's command table names is one the command
# takes, and docs/bench.md's flag table names the flags fsvol-bench --help lists.
# First, without root: README.md stays a newcomer's page (under 250 lines), every
# relative link of README.md and docs/*.md reaches a file and, with #anchor, one
# of its headings, and docs/ keeps no development log ("round N": that is git's).
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
lines=$(wc -l <"$ROOT/README.md")
[[ $lines -lt 250 ]] || fail "README.md has $lines lines: keep it under 250 (the reference goes to docs/ and the man pages)"
/usr/bin/python3 - "$ROOT" >"$T/links.out" 2>&1 <<'EOF' || fail "docs:"$'\n'"$(cat "$T/links.out")"
import os, re, sys
root = sys.argv[1]
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(root + "/docs") if f.endswith(".md"))

def slugs(path):  # GitHub's heading anchors: lower case, punctuation dropped, spaces to '-', repeats numbered
    out, seen, fence = set(), {}, False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} +(.*?) *#* *$", line)
        if m:
            s = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if not n else f"{s}-{n}")
    return out

bad = []
for doc in docs:
    text = re.sub(r"```.*?```", "", open(os.path.join(root, doc), encoding="utf-8").read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, mailto:
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(root, os.path.dirname(doc), path)) if path else os.path.join(root, doc)
        if not os.path.exists(full):
            bad.append(f"{doc}: link to {target}: no such file")
        elif anchor and full.endswith(".md") and anchor not in slugs(full):
            bad.append(f"{doc}: link to {target}: no heading '{anchor}' there")
    if doc.startswith("docs/"):
        for m in re.finditer(r"\(round \d|\bround \d+[:;)]|round-\d+ build|\bthis round\b|\bin round \d", text):
            bad.append(f"{doc}: a development log ('{m.group(0)}'): history belongs to git")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
requires_root "FUSE and loop mounts in the examples"
requires jq
requires fio
requires mkfs.ext4
# README's quick start mounts ext4 through a loop device
losetup -f >/dev/null 2>&1 || { echo "SKIP: no free loop device"; exit 77; }

export PATH="$FSVOL_BUILD/bin:$PATH"
mkdir -p "$T/blocks"

# extract DOC: one file per ```sh block in $T/blocks (NAME-NNN.sh, a first
# line naming DOC:LINE); prints "untagged DOC:LINE" for bare fences.
extract() {
	awk -v doc="$1" -v out="$T/blocks/$(basename "$1" .md)" '
	/^ *```/ {
		if (!inside) {
			inside = 1
			ind = match($0, /[^ ]/) - 1
			lang = substr($0, ind + 4)
			if (lang == "") print "untagged " doc ":" NR
			if (lang == "sh") {
				n++
				f = sprintf("%s-%03d.sh", out, n)
				printf "# %s:%d\n", doc, NR + 1 > f
				sh = 1
			}
			next
		}
		inside = 0
		if (sh) close(f)
		sh = 0
		next
	}
	inside && sh { print substr($0, ind + 1) > f }
	' "$1"
}

# unmount what a file's examples left mounted under DIR (newest first)
unmount_under() {
	local mp
	while read -r mp; do
		"$FSVOL" umount "$mp" >/dev/null 2>&1 || umount "$mp" || fail "cannot unmount $mp"
	done < <(awk -v t="$1/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts | tac)
}

# --- the docs' option tables against the parsers' tables -----------------------
# docs/commands.md's command table: every option a row names is one the command takes.
n=0
while IFS= read -r syn; do
	cmd=$(awk '{ print $2 }' <<<"$syn")
	"$FSVOL" "$cmd" --help >"$T/help" || fail "docs/commands.md names 'fsvol $cmd', which has no --help"
	for o in $(grep -oE -- '(^|[[ (])--?[a-zA-Z][a-z-]*' <<<"$syn" | tr -d '[( '); do
		if [[ $o == --* ]]; then
			grep -qE -- "$o(,| |$)" "$T/help" || fail "docs/commands.md: 'fsvol $cmd $o' is not an option of fsvol $cmd"
		else
			grep -qE -- "^ +(-[a-zA-Z0-9], )*$o, " "$T/help" || fail "docs/commands.md: 'fsvol $cmd $o' is not an option of fsvol $cmd"
		fi
		n=$((n + 1))
	done
done < <(sed -nE 's/^\| `(fsvol [a-z]+[^`]*)`.*/\1/p' "$ROOT/docs/commands.md")
[[ $n -ge 20 ]] || fail "only $n options found in docs/commands.md's command table"
# docs/bench.md's flag table and fsvol-bench --help name the same flags.
sed -nE 's/^\| `(--?[a-zA-Z][a-z-]*).*/\1/p' "$ROOT/docs/bench.md" |
	sed -E 's/^(-[a-zA-Z]).*/\1/' | sort -u >"$T/bench.doc"
"$FSVOL_BUILD/bin/fsvol-bench" --help | grep -oE '^  (-[a-zA-Z]|--[a-z-]+)' | tr -d ' ' |
	sort -u >"$T/bench.help" # help itself is -?, --help (-h is diskspd's -Sh)
[[ $(wc -l <"$T/bench.help") -ge 20 ]] || fail "fsvol-bench --help lists few flags"
diff "$T/bench.doc" "$T/bench.help" >"$T/bench.diff" ||
	fail "docs/bench.md's flag table (<) and fsvol-bench --help (>) differ: $(cat "$T/bench.diff")"

# run_doc DOC: DOC's blocks in their order, in $T/run/NAME (shared by them);
# "RAN SKIPPED" to $T/run/NAME.counts; fails at the first block that fails
run_doc() {
	local doc=$1 rel bad name dir b where t0 rc ran=0 skipped=0
	rel=${doc#"$ROOT"/}
	bad=$(cd "$ROOT" && extract "$rel")
	[[ -z $bad ]] || fail "fenced blocks without a language (use sh for commands, text for the rest): $bad"
	name=$(basename "$doc" .md)
	dir=$T/run/$name
	mkdir -p "$dir"
	for b in "$T/blocks/$name"-*.sh; do
		[[ -e $b ]] || continue
		where=$(head -n 1 "$b" | cut -c3-)
		if sed -n 2p "$b" | grep -q '^# doc-test: skip'; then
			note "skip $where: $(sed -n 2p "$b" | sed 's/^# doc-test: skip *//')"
			skipped=$((skipped + 1))
			continue
		fi
		t0=$(date +%s)
		rc=0
		(cd "$dir" && timeout 120 bash -e -o pipefail "$b") >"$b.log" 2>&1 || rc=$?
		if [[ $rc -ne 0 ]]; then
			echo "--- $where (exit $rc):" >&2
			sed 's/^/    /' "$b" >&2
			echo "--- its output (last 30 lines):" >&2
			tail -n 30 "$b.log" >&2
			fail "the example at $where fails"
		fi
		! grep -Eq "$SAN_PATTERN" "$b.log" || fail "sanitizer report from the example at $where"
		note "ran $where ($(($(date +%s) - t0)) s)"
		ran=$((ran + 1))
	done
	unmount_under "$dir"
	echo "$ran $skipped" >"$dir.counts"
}

# The files side by side (each in a directory of its own; their blocks wait
# on timed runs far more than they use the CPU), a file's blocks in order.
mkdir -p "$T/run"
# docs/experiments.md's blocks (timed runs, about as long as all the others
# together) run as a script of their own, 59-doc-experiments (DOC_ONLY), in
# make check-long
docs=() pids=()
for doc in "$ROOT/README.md" "$ROOT"/docs/*.md; do
	if [[ -n ${DOC_ONLY:-} ]]; then
		[[ $doc == "$ROOT/$DOC_ONLY" ]] && docs+=("$doc")
	else
		[[ $doc == "$ROOT/docs/experiments.md" ]] || docs+=("$doc")
	fi
done
((${#docs[@]} > 0)) || fail "DOC_ONLY=$DOC_ONLY names no document"
for doc in "${docs[@]}"; do
	(run_doc "$doc") >"$T/run/$(basename "$doc" .md).out" 2>&1 &
	pids+=($!)
	track_pid $!
done
bad=()
for i in "${!docs[@]}"; do
	name=$(basename "${docs[i]}" .md)
	if wait "${pids[i]}"; then
		cat "$T/run/$name.out"
	else
		cat "$T/run/$name.out" >&2
		bad+=("${docs[i]#"$ROOT"/}")
	fi
	_drop_cleanup pid "${pids[i]}"
done
((${#bad[@]} == 0)) || fail "examples failed in: ${bad[*]} (above)"
read -r ran skipped < <(cat "$T"/run/*.counts | awk '{ r += $1; s += $2 } END { print r, s }')
# most must run: in experiments.md more than it skips; in the other docs
# (whose long runs say so and are run by the scripts they name) ten at least
if [[ -n ${DOC_ONLY:-} ]]; then
	[[ $ran -gt $skipped ]] || fail "only $ran examples ran and $skipped were skipped: most must run"
else
	[[ $ran -ge 10 ]] || fail "only $ran examples ran ($skipped skipped): ten at least must"
fi
note "$ran examples ran, $skipped skipped (marked in the docs)"
