#!/usr/bin/python3
"""func_len: C functions longer than a limit (STYLE: none over 120 lines).

    tests/tools/func_len.py [--max N] [--all] PATH...

PATH: .c files or folders (every .c file under them). A function's length
is counted from the line that names it to its closing brace, both included.
Prints "file:line: name: N lines" for each one over N (120), or for every
function with --all, longest first; exit status 1 when one is over.

A brace counter, not a parser: comments, string and character literals and
preprocessor lines are blanked first, then every '{' at file level whose text
since the last ';' or '}' reads as a declarator with a parameter list (and no
'=', struct, union or enum) opens a function.
"""
import os
import re
import sys


def blank(text):
    """text with comments, literals and # lines turned to spaces (newlines kept)."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == '#':
            # a preprocessor line, with its backslash continuations
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i + 1] == '\n':
                    out.append(' \n')
                    i += 2
                    continue
                out.append(' ')
                i += 1
            continue
        if c == '/' and text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
            continue
        if c == '/' and text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
            continue
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r'[^\n]', ' ', text[i + 1:j - 1]) + c if j - i >= 2 else text[i:j])
            i = j
            continue
        if c == '\n':
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        out.append(c)
        i += 1
    return ''.join(out)


DECL = re.compile(r'([A-Za-z_]\w*)\s*\(')


def functions(path):
    """(name, first line, last line) of each function defined in path."""
    text = blank(open(path, encoding='utf-8', errors='replace').read())
    found, depth, head_start, start = [], 0, 0, None
    for i, c in enumerate(text):
        if c == '{':
            if depth == 0:
                head = text[head_start:i]
                words = head.split()
                m = DECL.search(head)
                if (m and '=' not in head and ')' in head
                        and not {'struct', 'union', 'enum', 'typedef'} & set(words[:2])):
                    start = (m.group(1), text.count('\n', 0, head_start + m.start()) + 1)
                else:
                    start = None
            depth += 1
        elif c == '}':
            depth -= 1
            if depth == 0:
                if start:
                    found.append((start[0], start[1], text.count('\n', 0, i) + 1))
                start = None
                head_start = i + 1
        elif c == ';' and depth == 0:
            head_start = i + 1
    return found


def main(argv):
    limit, show_all, paths = 120, False, []
    it = iter(argv)
    for a in it:
        if a == '--max':
            limit = int(next(it))
        elif a == '--all':
            show_all = True
        else:
            paths.append(a)
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith('.c'))
        else:
            files.append(p)
    rows = []
    for f in files:
        for name, first, last in functions(f):
            rows.append((last - first + 1, f, first, name))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    over = [r for r in rows if r[0] > limit]
    for n, f, line, name in rows if show_all else over:
        print(f"{f}:{line}: {name}: {n} lines")
    return 1 if over else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
