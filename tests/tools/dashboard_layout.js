/* dashboard_layout.js: evaluated in the dashboard's page (tests/tools/cdp.py's
 * eval) by tests/integration/18-dashboard-layout.sh. The page reports its own
 * boxes; the value is {bad: [problems], charts: {id: [w, h]}, rows: N}:
 *  - the page fits its window (no scrolling);
 *  - no panel or tile overlaps another, and nothing inside one sticks out of
 *    it (clipped or spilling over a neighbour), headings and tiles included;
 *  - no chart overlaps another, each at least MIN_W x MIN_H pixels;
 *  - every series a chart draws (its data-series) stands in a legend;
 *  - every member has its row, whole, in the members' panel. */
(() => {
  const MIN_W = 300, MIN_H = 120;
  const bad = [], box = e => e.getBoundingClientRect();
  const nm = e => e.id ? "#" + e.id : e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ")[0] : "");
  const within = (a, b) => a.left >= b.left - 1 && a.top >= b.top - 1 && a.right <= b.right + 1 && a.bottom <= b.bottom + 1;
  const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const fmt = b => `${Math.round(b.left)},${Math.round(b.top)} ${Math.round(b.width)}x${Math.round(b.height)}`;
  const de = document.documentElement;
  if (de.scrollHeight > innerHeight + 1 || de.scrollWidth > innerWidth + 1)
    bad.push(`the page scrolls: ${de.scrollWidth}x${de.scrollHeight} in a ${innerWidth}x${innerHeight} window`);
  const panels = [...document.querySelectorAll(".panel, .tile")];
  panels.forEach((p, i) => {
    const pb = box(p);
    if (!within(pb, { left: 0, top: 0, right: innerWidth, bottom: innerHeight }))
      bad.push(`${nm(p)} (${fmt(pb)}) is not inside the window`);
    for (const q of panels.slice(i + 1))
      if (meet(pb, box(q))) bad.push(`${nm(p)} (${fmt(pb)}) and ${nm(q)} (${fmt(box(q))}) overlap`);
    if (p.scrollHeight > p.clientHeight + 1 || p.scrollWidth > p.clientWidth + 1)
      bad.push(`${nm(p)} holds more than it shows: ${p.scrollWidth}x${p.scrollHeight} in ${p.clientWidth}x${p.clientHeight}`);
    for (const e of p.querySelectorAll("*")) {
      const eb = box(e);
      if (eb.width && eb.height && e.offsetParent !== null && !within(eb, pb))
        bad.push(`${nm(e)} (${fmt(eb)}) sticks out of ${nm(p)} (${fmt(pb)})`);
      if (/^(H2|SPAN|DIV)$/.test(e.tagName) && !e.children.length && e.scrollWidth > e.clientWidth + 1 &&
          getComputedStyle(e).overflow === "hidden" && e.className !== "gauge")
        bad.push(`${nm(e)} '${e.textContent.slice(0, 40)}' is cut: ${e.scrollWidth} px of text in ${e.clientWidth}`);
    }
  });
  const canvases = [...document.querySelectorAll("#charts canvas")], charts = {};
  canvases.forEach((c, i) => {
    const cb = box(c);
    charts[c.id] = [Math.round(cb.width), Math.round(cb.height)];
    if (cb.width < MIN_W || cb.height < MIN_H) bad.push(`${c.id} is small: ${fmt(cb)} (want ${MIN_W}x${MIN_H})`);
    for (const d of canvases.slice(i + 1))
      if (meet(cb, box(d))) bad.push(`${c.id} and ${d.id} overlap`);
  });
  const shown = new Set([...document.querySelectorAll(".legend [data-series]")]
    .filter(e => box(e).width > 0).flatMap(e => JSON.parse(e.dataset.series)));
  for (const c of canvases) {
    if (!c.dataset.series) bad.push(`${c.id} does not say which series it draws (data-series)`);
    for (const s of JSON.parse(c.dataset.series || "[]"))
      if (!shown.has(s)) bad.push(`${c.id} draws '${s}', which no legend shows`);
  }
  const mp = box(document.getElementById("membersp")), rows = [...document.querySelectorAll("#members .member")];
  for (const r of rows)
    if (!within(box(r), mp)) bad.push(`member row m${r.dataset.slot} (${fmt(box(r))}) is not whole in the panel (${fmt(mp)})`);
  return { bad, charts, rows: rows.length };
})()
