// explain.js: view 4, why the selected pod went to its node: the
// scheduler's explanation (scheduler/explanation), one row per node.
window.mkube ??= { views: [] };
(() => {
  const head = document.querySelector("#explain-table thead");
  const body = document.querySelector("#explain-table tbody");
  const summary = document.getElementById("explain-summary");
  const text = document.getElementById("explain-text");
  const title = document.getElementById("explain-pod");
  let timer = null;

  function cells(tag, values) {
    const tr = document.createElement("tr");
    for (const v of values) {
      const c = document.createElement(tag);
      c.textContent = v;
      tr.append(c);
    }
    return tr;
  }

  async function load(key) {
    const res = await fetch(`api/pods/${key}/explain`);
    if (key !== mkube.state.selected) return;
    const out = await res.json();
    if (!res.ok) {
      summary.textContent = out.message;
      return;
    }
    text.textContent = out.text;
    const e = out.explanation;
    head.replaceChildren();
    body.replaceChildren();
    if (!e) {
      summary.textContent = out.text;
      return;
    }
    summary.textContent = `Scheduled to ${e.node}: ${e.nodes} nodes in the cluster, ${e.evaluated} evaluated, ${e.feasible} feasible. ` +
      "Each plugin scores 0-100; TOTAL = Σ score × weight.";
    const plugins = e.plugins || [];
    head.append(cells("th", ["NODE", "VERDICT", "TOTAL", ...plugins.map((p) => `${p.name}×${p.weight}`), "REASON"]));
    const listed = new Set();
    const add = (name, values) => {
      const tr = cells("td", [name, ...values]);
      tr.dataset.node = name;
      tr.dataset.verdict = values[0];
      body.append(tr);
      listed.add(name);
    };
    for (const s of e.scored || []) {
      add(s.name, [s.name === e.node ? "selected" : "feasible", String(s.total), ...s.scores.map(String), ""]);
    }
    if (!listed.has(e.node)) add(e.node, ["selected", "", ...plugins.map(() => ""), "the only feasible node: not scored"]);
    for (const r of e.rejected || []) add(r.name, ["rejected", "", ...plugins.map(() => ""), `${r.plugin}: ${r.reason}`]);
    for (const n of out.nodes) {
      if (!listed.has(n)) add(n, ["not listed", "", ...plugins.map(() => ""), "beyond the explanation's bounds, or added after the decision"]);
    }
  }

  mkube.views.push({
    select: (key) => {
      title.textContent = key;
      load(key);
    },
    change: (ch) => {
      const key = mkube.state.selected;
      if (ch.kind !== "Pod" || !key || mkube.podKey(ch) !== key) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (mkube.gone(key)) title.textContent = key + " (deleted)";
        else load(key);
      }, 200);
    },
  });
})();
