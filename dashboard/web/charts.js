// charts.js: view 5, the numbers over the last hour, drawn on plain
// canvases. Series are named as dashboard/history.go names them:
// node/NAME/cpu (millicores), node/NAME/memory (MiB), pod/NS/NAME/cpu,
// cluster/pending, hpa/NS/NAME/replicas, .../desired, .../cpu%, .../cpu%target.
// It keeps every series of the samples in mkube.series, and lends its
// drawing (mkube.drawChart) to components.js, which charts the
// scheduler's and the controller manager's.
window.mkube ??= { views: [] };
(() => {
  const hour = 3600 * 1000;
  const series = new Map(); // name -> [{t: ms, v}]
  mkube.series = series;
  const list = document.getElementById("chart-list");
  const errors = document.getElementById("charts-errors");
  const colors = ["#0969da", "#1a7f37", "#cf222e", "#8250df", "#9a6700", "#bf3989", "#0a3069"];

  function add(sample) {
    const t = Date.parse(sample.t);
    for (const [name, v] of Object.entries(sample.values)) {
      if (!series.has(name)) series.set(name, []);
      series.get(name).push({ t, v });
    }
    for (const pts of series.values()) while (pts.length && t - pts[0].t > hour) pts.shift();
    errors.textContent = (sample.errors || []).join("; ");
  }

  // charts are what to draw: a title and the series (with labels) on it.
  function charts() {
    const out = [];
    const group = (title, re, label) => {
      const lines = [...series.keys()].filter((n) => re.test(n)).sort().map((n) => ({ name: n, label: label(n) }));
      if (lines.length) out.push({ title, lines });
    };
    group("node CPU (millicores)", /^node\/[^/]+\/cpu$/, (n) => n.split("/")[1]);
    group("node memory (MiB)", /^node\/[^/]+\/memory$/, (n) => n.split("/")[1]);
    // The five busiest pods now: more lines than that say nothing.
    const pods = [...series.keys()].filter((n) => /^pod\/.*\/cpu$/.test(n))
      .sort((a, b) => last(b) - last(a)).slice(0, 5);
    if (pods.length) out.push({ title: "pod CPU, the 5 busiest (millicores)", lines: pods.map((n) => ({ name: n, label: n.split("/").slice(1, 3).join("/") })) });
    group("pods Pending", /^cluster\/pending$/, () => "pending");
    const hpas = new Set([...series.keys()].filter((n) => n.startsWith("hpa/")).map((n) => n.split("/").slice(0, 3).join("/")));
    for (const h of [...hpas].sort()) {
      group(`${h.slice(4)}: replicas`, new RegExp(`^${h}/(replicas|desired)$`), (n) => n.split("/")[3]);
      group(`${h.slice(4)}: utilization vs target (%)`, new RegExp(`^${h}/.*%(target)?$`), (n) => n.split("/")[3]);
    }
    return out;
  }

  function last(name) {
    const pts = series.get(name);
    return pts.length ? pts[pts.length - 1].v : 0;
  }

  function draw() {
    list.replaceChildren(...charts().map(chart));
  }

  // chart draws c: {title, lines: [{name, label}], digits (of the
  // legend's values, 0 by default), note (said under the title)}. Its
  // element carries what it drew, for a reader without eyes (the e2e
  // test): data-points on the chart, data-label, data-points, data-last
  // and data-max on each line's legend entry.
  function chart(c) {
    const box = document.createElement("div");
    box.className = "chart";
    box.dataset.title = c.title;
    const h = document.createElement("h4");
    h.textContent = c.title;
    const note = document.createElement("p");
    note.className = "chart-note";
    note.textContent = c.note || "";
    const canvas = document.createElement("canvas");
    canvas.width = 360;
    canvas.height = 110;
    const g = canvas.getContext("2d");
    const now = Date.now();
    let max = 0;
    for (const l of c.lines) for (const p of series.get(l.name)) max = Math.max(max, p.v);
    max = max > 0 ? max * 1.1 : 1;
    g.strokeStyle = "#eaeef2";
    g.strokeRect(0.5, 0.5, canvas.width - 1, canvas.height - 1);
    g.fillStyle = "#57606a";
    g.font = "10px sans-serif";
    g.fillText(max.toFixed(max < 10 ? 1 : 0), 3, 11);
    g.fillText("-1h", 3, canvas.height - 3);
    g.fillText("now", canvas.width - 22, canvas.height - 3);
    const legend = document.createElement("div");
    legend.className = "legend";
    let points = 0;
    c.lines.forEach((l, i) => {
      const color = colors[i % colors.length];
      const pts = series.get(l.name);
      points += pts.length;
      g.strokeStyle = color;
      g.beginPath();
      pts.forEach((p, j) => {
        const x = canvas.width * (1 - (now - p.t) / hour);
        const y = canvas.height - 14 - (canvas.height - 28) * (p.v / max);
        if (j === 0) g.moveTo(x, y);
        else g.lineTo(x, y);
      });
      g.stroke();
      const s = document.createElement("span");
      s.style.color = color;
      s.textContent = `■ ${l.label} ${last(l.name).toFixed(c.digits || 0)}  `;
      s.dataset.label = l.label;
      s.dataset.points = pts.length;
      s.dataset.last = last(l.name);
      s.dataset.max = pts.reduce((m, p) => Math.max(m, p.v), 0);
      legend.append(s);
    });
    box.dataset.points = points;
    box.append(h, note, canvas, legend);
    return box;
  }
  mkube.drawChart = chart;

  mkube.views.push({
    snapshot: (snap) => {
      series.clear();
      for (const s of snap.samples) add(s);
      draw();
    },
    sample: (s) => {
      add(s);
      draw();
    },
  });
})();
