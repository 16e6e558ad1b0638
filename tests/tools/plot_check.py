#!/usr/bin/python3
"""plot_check: does a gnuplot chart say what its data can show? Reads the SVG
gnuplot wrote (the same layout as the PNG beside it: one script draws both)
and checks, for each file given:
  - every text lies inside the canvas (no clipped title or legend);
  - no two texts overlap (axis label, legend entries, title, tick labels;
    a text's box is estimated from its length and font size, generously);
  - every legend entry draws something inside the frame (a line segment, a
    point or a bar): a series with nothing to draw has no place in a legend;
  - a title that says "vs X" has an x axis of at least two values.
Prints one line per problem and exits 1 if there is any. Used by
tests/integration/19-plots.sh.

    plot_check.py FILE.svg..."""
import html
import math
import re
import sys

CHAR_W = 0.6   # DejaVu Sans averages ~0.55 em a character
# A line of text as the PNG shows it: pngcairo draws the same 11-point font
# taller than the SVG's font-size says (the PNG's x label and legend met where
# the SVG's boxes only touched), so a box is 1.25 em high: still under the
# 1.5 em gnuplot leaves between two lines of a legend.
ASCENT, DESCENT = 0.95, 0.3
PAD = -1.0     # two boxes must stay a pixel apart


def texts(svg):
    """[(corners, text)] for every text element: its box as four corners (rotated with it)."""
    out = []
    pat = re.compile(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)(?: rotate\(([-\d.]+)\))?"[^>]*'
                     r'font-size="([\d.]+)"[^>]*text-anchor="(\w+)"[^>]*>\s*<text>(.*?)</text>', re.S)
    for m in pat.finditer(svg):
        x, y, rot, fs, anchor, t = m.groups()
        x, y, fs, t = float(x), float(y), float(fs), html.unescape(t).strip()
        w = CHAR_W * fs * len(t)
        lo = {"start": 0.0, "middle": -w / 2, "end": -w}[anchor]
        a = math.radians(float(rot or 0))
        c, s = math.cos(a), math.sin(a)
        box = [(x + u * c - v * s, y + u * s + v * c)
               for u, v in ((lo, -fs * ASCENT), (lo + w, -fs * ASCENT), (lo + w, fs * DESCENT), (lo, fs * DESCENT))]
        out.append((box, t))
    return out


def bounds(box):
    xs, ys = [p[0] for p in box], [p[1] for p in box]
    return min(xs), min(ys), max(xs), max(ys)


def overlap(a, b):
    """Two convex boxes overlap by more than PAD (separating axis theorem)."""
    for poly in (a, b):
        for i in range(4):
            (x0, y0), (x1, y1) = poly[i], poly[(i + 1) % 4]
            nx, ny = y0 - y1, x1 - x0
            n = math.hypot(nx, ny) or 1
            pa = [(p[0] * nx + p[1] * ny) / n for p in a]
            pb = [(p[0] * nx + p[1] * ny) / n for p in b]
            if max(pa) - PAD <= min(pb) or max(pb) - PAD <= min(pa):
                return False
    return True


def frame(svg):
    """The plot's frame: the largest closed rectangle drawn outside the plot groups."""
    best = None
    for m in re.finditer(r"d='M([-\d.]+),([-\d.]+) L([-\d.]+),([-\d.]+) L([-\d.]+),([-\d.]+) "
                         r"L([-\d.]+),([-\d.]+) L[-\d.]+,[-\d.]+ Z", outside_plots(svg)):
        v = [float(g) for g in m.groups()]
        x0, x1, y0, y1 = min(v[0::2]), max(v[0::2]), min(v[1::2]), max(v[1::2])
        if best is None or (x1 - x0) * (y1 - y0) > (best[2] - best[0]) * (best[3] - best[1]):
            best = (x0, y0, x1, y1)
    return best


def group_spans(svg):
    """[(id, start, end)] of each plotted element's group (gnuplot_plot_N), by <g> nesting."""
    out = []
    for m in re.finditer(r'<g id="(gnuplot_plot_\d+)" >', svg):
        depth, i = 1, m.end()
        for t in re.finditer(r"<g[ >]|</g>", svg[i:]):
            depth += 1 if t.group(0) != "</g>" else -1
            if not depth:
                out.append((m.group(1), m.start(), i + t.end()))
                break
    return out


def plot_groups(svg):
    """{id: text of the group} for each plotted element."""
    return {gid: svg[a:b] for gid, a, b in group_spans(svg)}


def outside_plots(svg):
    parts, at = [], 0
    for _, a, b in group_spans(svg):
        parts.append(svg[at:a])
        at = b
    return "".join(parts) + svg[at:]


def inside(fr, x, y):
    return fr[0] - 0.5 <= x <= fr[2] + 0.5 and fr[1] - 0.5 <= y <= fr[3] + 0.5


def drawn(group, fr):
    """How many marks a plot group draws inside the frame (its legend sample is outside)."""
    n = 0
    for d in re.findall(r"<path [^>]*d='([^']*)'", group):
        for sub in re.findall(r"M[^M]*", d):
            pts = [tuple(map(float, p)) for p in re.findall(r"([-\d.]+),([-\d.]+)", sub)]
            if len(pts) >= 2 and all(inside(fr, *p) for p in pts):
                n += 1
    for x, y in re.findall(r"<use [^>]*translate\(([-\d.]+),([-\d.]+)\)", group):
        n += inside(fr, float(x), float(y))
    for pts in re.findall(r"points = '([^']*)'", group):
        p = [tuple(map(float, q)) for q in re.findall(r"([-\d.]+),([-\d.]+)", pts)]
        n += bool(p) and all(inside(fr, *q) for q in p)
    return n


def key_samples(svg, fr):
    """Boxes of what the legend draws beside its entries (line samples, points, bar swatches):
    every mark of a plot group that lies outside the frame."""
    out = []
    box = lambda x0, y0, x1, y1: [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    for g in plot_groups(svg).values():
        for d in re.findall(r"<path [^>]*d='([^']*)'", g):
            for sub in re.findall(r"M[^M]*", d):
                pts = [tuple(map(float, p)) for p in re.findall(r"([-\d.]+),([-\d.]+)", sub)]
                if pts and not any(inside(fr, *p) for p in pts):
                    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
                    out.append(box(min(xs), min(ys) - 4, max(xs), max(ys) + 4))
        for x, y in re.findall(r"<use [^>]*translate\(([-\d.]+),([-\d.]+)\)", g):
            if not inside(fr, float(x), float(y)):
                out.append(box(float(x) - 5, float(y) - 5, float(x) + 5, float(y) + 5))
    return out


def check(path):
    svg = open(path).read()
    bad = []
    vb = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg)
    W, H = float(vb.group(1)), float(vb.group(2))
    ts = texts(svg)
    for box, t in ts:
        x0, y0, x1, y1 = bounds(box)
        if x0 < 0 or y0 < 0 or x1 > W or y1 > H:
            bad.append(f"'{t}' does not fit the {W:.0f}x{H:.0f} canvas ({x0:.0f},{y0:.0f})-({x1:.0f},{y1:.0f})")
    for i, (a, ta) in enumerate(ts):
        for b, tb in ts[i + 1:]:
            if overlap(a, b):
                bad.append(f"'{ta}' and '{tb}' overlap")
    fr = frame(svg)
    if fr is None:
        return [f"{path}: no frame found"]
    for k in key_samples(svg, fr):
        for box, t in ts:
            if overlap(box, k):
                bad.append(f"'{t}' and a legend sample at ({k[0][0]:.0f},{k[0][1]:.0f}) overlap")
    for gid, g in plot_groups(svg).items():
        title = re.search(r"<text>(.*?)</text>", g)
        if title and not drawn(g, fr):
            bad.append(f"legend entry '{html.unescape(title.group(1))}' draws nothing in the frame")
    ticks = set()
    for box, t in ts:
        x0, y0, x1, y1 = bounds(box)
        if fr[3] < y0 < fr[3] + 30 and fr[0] <= (x0 + x1) / 2 <= fr[2]:
            ticks.add(t)
    for box, t in ts:
        if bounds(box)[3] <= fr[1] and " vs " in t and len(ticks) < 2:
            bad.append(f"title '{t}' over an x axis of {len(ticks)} value(s): {sorted(ticks)}")
    return [f"{path}: {b}" for b in bad]


def main():
    bad = []
    for p in sys.argv[1:]:
        bad += check(p)
    print("\n".join(bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
