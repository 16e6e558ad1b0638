#!/bin/sh
# include_cycles.sh: find include circles between modules. A module is a
# .c and its .h (fsvol/front/http.c + http.h); module A depends on B when
# A.c or A.h includes "B.h". Every circle (a strongly connected set of
# modules) is printed with the includes that close it.
#
#   tests/tools/include_cycles.sh [DIR...]     (default: fsvol layout stats bench)
#
# Exit 1 when there is a circle; INCLUDE_CYCLES_STRICT=0 only reports the
# circles wholly inside fsvol/core/ (it had one until issue 19).
set -eu
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- fsvol layout stats bench
strict=${INCLUDE_CYCLES_STRICT:-1}

find "$@" -name '*.[ch]' | sort | while read -r f; do
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
	while read -r inc; do
		[ -f "$inc" ] && printf '%s %s\n' "$f" "$inc"
	done
done | awk -v strict="$strict" '
function mod(p) { sub(/\.[ch]$/, "", p); return p }
# Tarjan: strongly connected components, recursion over a small graph
function visit(v,    i, w) {
	idx[v] = low[v] = ++counter
	stack[++sp] = v; on[v] = 1
	for (i = 1; i <= nout[v]; i++) {
		w = out[v, i]
		if (!(w in idx)) { visit(w); if (low[w] < low[v]) low[v] = low[w] }
		else if (on[w] && idx[w] < low[v]) low[v] = idx[w]
	}
	if (low[v] == idx[v]) {
		ncomp++; size = 0
		do { w = stack[sp--]; on[w] = 0; comp[w] = ncomp; size++ } while (w != v)
		csize[ncomp] = size
	}
}
{
	a = mod($1); b = mod($2)
	node[a] = node[b] = 1
	if (a == b) next
	line[a, b] = line[a, b] "    " $1 " -> " $2 "\n"
	if (!((a, b) in seen)) { seen[a, b] = 1; out[a, ++nout[a]] = b }
}
END {
	for (v in node) if (!(v in idx)) visit(v)
	bad = 0
	for (c = 1; c <= ncomp; c++) {
		if (csize[c] < 2) continue
		core = 1; names = ""
		for (v in node) if (comp[v] == c) {
			names = names " " v
			if (index(v, "fsvol/core/") != 1) core = 0
		}
		fails = !core || strict == 1
		printf "include circle (%s):%s\n", fails ? "FAIL" : "reported, core/ only", names
		for (k in line) {
			split(k, ab, SUBSEP)
			if (comp[ab[1]] == c && comp[ab[2]] == c) printf "%s", line[k]
		}
		if (fails) bad = 1
	}
	exit bad
}'
