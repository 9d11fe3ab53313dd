// cluster.js: view 1, the nodes and their pods, phase and readiness.
// Redrawn from mkube.state at most once a frame, however many watch
// events arrive in it, and bounded: at most maxNodes nodes and maxRows
// pods under each are drawn, the rest counted, so that a big cluster's
// page redraws in milliseconds (150,000 rows would take seconds a frame).
window.mkube ??= { views: [] };
(() => {
  const maxNodes = 60; // a screenful or two of node boxes
  const maxRows = 30;  // a node's first pods, by name: enough to click one
  const root = document.getElementById("nodes");
  const total = document.getElementById("pod-count");
  let dirty = false;

  function redraw() {
    dirty = false;
    const byNode = new Map();
    for (const name of [...mkube.state.nodes.keys()].sort()) byNode.set(name, []);
    for (const [key, p] of mkube.state.pods) {
      const n = p.node || "";
      if (!byNode.has(n)) byNode.set(n, []);
      byNode.get(n).push([key, p]);
    }
    for (const [n, h] of mkube.state.hidden) if (h > 0 && !byNode.has(n)) byNode.set(n, []);
    total.dataset.pods = mkube.podCount();
    total.textContent = `${total.dataset.pods} pods on ${mkube.state.nodes.size} nodes` +
      (byNode.size > maxNodes ? ` (the first ${maxNodes} drawn)` : "");
    root.replaceChildren();
    let drawn = 0;
    for (const [node, pods] of byNode) {
      if (drawn++ === maxNodes) break;
      const count = pods.length + (mkube.state.hidden.get(node) || 0);
      const box = document.createElement("div");
      const ns = mkube.state.nodes.get(node);
      box.className = "node" + (ns && !ns.ready ? " notready" : "");
      box.dataset.node = node || "(unscheduled)";
      const h = document.createElement("h3");
      h.textContent = node
        ? `${node} ${ns ? (ns.ready ? "Ready" : "NotReady") : "(no Node object)"}${ns && ns.unschedulable ? ",SchedulingDisabled" : ""} · ${count} pod${count === 1 ? "" : "s"}`
        : `not yet scheduled · ${count} pod${count === 1 ? "" : "s"}`;
      box.dataset.count = count;
      box.append(h);
      pods.sort((a, b) => a[0].localeCompare(b[0]));
      for (const [key, p] of pods.slice(0, maxRows)) box.append(podRow(key, p));
      if (count > maxRows) {
        const more = document.createElement("div");
        more.className = "more";
        more.textContent = `… and ${count - Math.min(pods.length, maxRows)} more`;
        box.append(more);
      }
      root.append(box);
    }
  }

  function podRow(key, p) {
    const row = document.createElement("div");
    row.className = "pod" + (key === mkube.state.selected ? " selected" : "");
    row.dataset.pod = key;
    row.dataset.phase = p.phase;
    row.dataset.ready = p.ready;
    row.dataset.restarts = p.restarts;
    const name = document.createElement("span");
    name.textContent = key;
    const phase = document.createElement("span");
    const status = p.reason || p.phase;
    phase.className = `phase ${status}${p.ready ? " ready" : ""}`;
    phase.textContent = status + (p.phase === "Running" ? (p.ready ? " ✓ready" : " ✗not ready") : "");
    row.append(name, phase);
    if (p.restarts > 0) {
      const r = document.createElement("span");
      r.className = "restarts";
      r.textContent = `↻ ${p.restarts} restart${p.restarts > 1 ? "s" : ""}`;
      row.append(r);
    }
    row.onclick = () => mkube.select(key);
    return row;
  }

  function later() {
    if (!dirty) {
      dirty = true;
      requestAnimationFrame(redraw);
    }
  }

  mkube.views.push({
    snapshot: later,
    change: (ch) => { if (ch.kind === "Pod" || ch.kind === "Node") later(); },
    select: later,
  });
})();
