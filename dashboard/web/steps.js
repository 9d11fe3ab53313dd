// steps.js: view 2, the selected pod's 13 steps (dashboard/steps.go reads
// them from the records). Fetched from the dashboard when a pod is
// selected, and again when a watch event about it (or an Event of it)
// arrives.
window.mkube ??= { views: [] };
(() => {
  const body = document.querySelector("#steps-table tbody");
  const title = document.getElementById("steps-pod");
  let timer = null;

  async function load(key) {
    const res = await fetch(`api/pods/${key}/steps`);
    if (key !== mkube.state.selected) return;
    if (!res.ok) {
      const st = await res.json();
      body.replaceChildren(row([st.message]));
      return;
    }
    draw(await res.json());
  }

  function row(cells) {
    const tr = document.createElement("tr");
    for (const c of cells) {
      const td = document.createElement("td");
      if (c instanceof Node) td.append(c);
      else td.textContent = c;
      tr.append(td);
    }
    return tr;
  }

  // at is a step's time: its earliest record's.
  function at(step) {
    let first = null;
    for (const r of step.records || []) if (!first || r.at < first.at) first = r;
    return first;
  }

  function draw(ps) {
    const start = at(ps.steps[2]); // step 3: the object was stored
    const rows = ps.steps.map((s) => {
      const first = at(s);
      const when = document.createElement("span");
      when.className = "time";
      if (first) {
        const dt = start ? (new Date(first.at) - new Date(start.at)) / 1000 : 0;
        when.textContent = `${mkube.fmtTime(first.at, !first.api)} (+${dt.toFixed(first.api ? 0 : 3)}s)`;
      } else {
        when.textContent = "—";
      }
      const recs = document.createElement("ul");
      recs.className = "records";
      for (const r of s.records || []) {
        const li = document.createElement("li");
        li.className = r.api ? "api" : "dash";
        li.dataset.at = r.at;
        li.dataset.source = r.source;
        li.textContent = `${mkube.fmtTime(r.at, !r.api)} ${r.source}${r.detail ? ": " + r.detail : ""}`;
        recs.append(li);
      }
      if (s.unobserved) {
        const li = document.createElement("li");
        li.className = "unobserved";
        li.textContent = "not observable here: " + s.unobserved;
        recs.append(li);
      }
      const tr = row([String(s.n), s.what, s.component, when, recs]);
      tr.className = "step" + (first ? "" : " unobserved");
      tr.dataset.step = s.n;
      if (first) tr.dataset.at = first.at;
      return tr;
    });
    body.replaceChildren(...rows);
  }

  function reload() {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const key = mkube.state.selected;
      if (mkube.gone(key)) title.textContent = key + " (deleted: its last steps)";
      else load(key);
    }, 200);
  }

  mkube.views.push({
    select: (key) => {
      title.textContent = key;
      body.replaceChildren();
      load(key);
    },
    change: (ch) => {
      const key = mkube.state.selected;
      if (!key) return;
      const [ns, name] = key.split("/");
      const mine = ch.namespace === ns && (ch.kind === "Pod" ? ch.name === name : ch.kind === "Event" && ch.name.startsWith(name + "."));
      if (mine || ch.kind === "ReplicaSet" || ch.kind === "Deployment") reload();
    },
  });
})();
