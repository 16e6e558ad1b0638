#!/usr/bin/python3
"""callgraph.py: the project's file-level call graph, from the compiler.

Reads the .ci files GCC writes beside each object with -fcallgraph-info (the
Makefile adds it when the compiler has it) and checks two rules:

  1. no call goes from a lower folder to a higher one, in this order (a folder
     may call its own level and the levels below):
         fsvol/cli  >  fsvol/front, bench  >  fsvol/core
                    >  fsvol/meta, fsvol/model, fsvol/members, fsvol/trace
                    >  layout, fsvol/util, stats
     and the folders of one level do not call each other in a circle;
  2. inside each folder, the files do not call each other in a circle: a call
     from a.c to a function defined in b.c is an edge a.c -> b.c, and every
     strongly connected set of two or more files is a circle.

A call through a function pointer (an ops table, a callback) is no edge: that
is how a lower file reaches a higher one. A static inline function of a header
counts as part of the file it is compiled into.

    tests/tools/callgraph.py [--pending DIR,...] BUILD_DIR | FILE.ci...

Prints every violation with the calls behind it (caller -> callee, at
file:line) and exits 1 when there is one. Folders named in --pending (or
CALLGRAPH_PENDING) are only reported (their files, not the calls): their
circles do not fail the check until they are listed no more.
"""
import os
import re
import sys

LEVELS = [
    (5, ["fsvol/cli"]),
    (4, ["fsvol/front", "bench"]),
    (3, ["fsvol/core"]),
    (2, ["fsvol/meta", "fsvol/model", "fsvol/members", "fsvol/trace"]),
    (1, ["layout", "fsvol/util", "stats"]),
]
LEVEL = {folder: lv for lv, folders in LEVELS for folder in folders}

NODE = re.compile(r'node: \{ title: "([^"]*)" label: "([^"\\]*)\\n([^"]*?):(\d+):\d+"( shape : ellipse)? \}')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]*)" targetname: "([^"]*)" label: "([^"]*)" \}')


def folder_of(path):
    for f in LEVEL:
        if path.startswith(f + "/") and "/" not in path[len(f) + 1:]:
            return f
    return None


def rel(path, top):
    path = os.path.normpath(path)
    return os.path.relpath(path, top) if os.path.isabs(path) else path


def ci_files(args):
    """The .ci files named, or those under a build directory."""
    if len(args) == 1 and os.path.isdir(args[0]):
        return [os.path.join(root, name) for root, _, files in os.walk(args[0])
                for name in files if name.endswith(".ci")]
    return args


def read_graph(paths, top):
    """defs: function title -> defining file; calls: (the .c compiled, caller
    title, callee title, site)."""
    defs, calls = {}, []
    for ci in paths:
        with open(ci, errors="replace") as f:
            text = f.read()
        m = re.match(r'graph: \{ title: "([^"]*)"', text)
        unit = rel(m.group(1), top) if m else None
        if unit is None or folder_of(unit) is None:
            continue
        for m in NODE.finditer(text):
            title, _, where, _, external = m.groups()
            if not external:
                # a static inline of a header belongs to the .c it is in
                where = rel(where, top)
                defs[(unit, title)] = unit if where.endswith(".h") else where
                defs.setdefault(title, defs[(unit, title)])
        for m in EDGE.finditer(text):
            calls.append((unit, m.group(1), m.group(2), rel(m.group(3), top)))
    return defs, calls


def file_edges(defs, calls):
    """(a, b) -> list of 'caller -> callee (site)' for a call from file a to b."""
    edges = {}
    for unit, src, dst, site in calls:
        a = defs.get((unit, src)) or defs.get(src)
        b = defs.get((unit, dst)) or defs.get(dst)
        if a is None or b is None or a == b:
            continue
        if folder_of(a) is None or folder_of(b) is None:
            continue
        name = lambda t: t.split(":")[-1]
        edges.setdefault((a, b), []).append(f"{name(src)} -> {name(dst)} ({site})")
    return edges


def circles(nodes, out):
    """Strongly connected sets of two or more nodes (Tarjan, iterative)."""
    index, low, on, stack, found = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(out.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(out.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def show_circle(comp, edges, limit=3):
    lines = []
    members = set(comp)
    for (a, b), why in sorted(edges.items()):
        if a in members and b in members:
            more = f" (+{len(why) - limit} more)" if len(why) > limit else ""
            lines.append(f"    {a} -> {b}: " + "; ".join(why[:limit]) + more)
    return lines


def main(argv):
    pending = set(filter(None, os.environ.get("CALLGRAPH_PENDING", "").split(",")))
    args = argv[1:]
    while args and args[0].startswith("--"):
        if args[0] == "--pending" and len(args) > 1:
            pending |= set(filter(None, args[1].split(",")))
            args = args[2:]
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    top = os.getcwd()
    defs, calls = read_graph(ci_files(args), top)
    if not calls:
        print(f"callgraph: no calls read from {' '.join(args[:3])} (build with gcc's -fcallgraph-info)",
              file=sys.stderr)
        return 2
    edges = file_edges(defs, calls)
    bad = 0
    # 1. calls up, and circles between the folders of one level
    for (a, b), why in sorted(edges.items()):
        fa, fb = folder_of(a), folder_of(b)
        if LEVEL[fa] < LEVEL[fb]:
            bad += 1
            print(f"callgraph: call up from {fa} to {fb}: {a} -> {b}: " + "; ".join(why[:3]))
    fout = {}
    for (a, b) in edges:
        fa, fb = folder_of(a), folder_of(b)
        if fa != fb and LEVEL[fa] == LEVEL[fb]:
            fout.setdefault(fa, set()).add(fb)
    for comp in circles(set(LEVEL), fout):
        bad += 1
        print("callgraph: the folders " + ", ".join(comp) + " call each other in a circle:")
        fedges = {}
        for (a, b), why in edges.items():
            if folder_of(a) in comp and folder_of(b) in comp and folder_of(a) != folder_of(b):
                fedges[(a, b)] = why
        print("\n".join(show_circle(sorted({x for e in fedges for x in e}), fedges)))
    # 2. circles of files inside each folder
    reported = 0
    for folder in sorted(LEVEL):
        out, nodes = {}, set()
        for (a, b) in edges:
            if folder_of(a) == folder and folder_of(b) == folder:
                out.setdefault(a, set()).add(b)
                nodes |= {a, b}
        for comp in circles(nodes, out):
            reported += 1
            tag = " (pending: reported, not failed)" if folder in pending else ""
            print(f"callgraph: {len(comp)} files of {folder} call each other in a circle{tag}:")
            print("    " + " ".join(os.path.basename(c) for c in comp))
            if folder not in pending:
                print("\n".join(show_circle(comp, edges)))
                bad += 1
    nfiles = len({x for e in edges for x in e})
    print(f"callgraph: {nfiles} files, {len(edges)} file-to-file call edges; "
          f"{bad} violation(s)" + (f", {reported} circle(s) reported" if reported else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
