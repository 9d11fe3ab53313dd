// stream.js: view 3, every event the dashboard's informers receive.
// The newest on top; the last 1000 are kept, the table filtered by
// words that must all appear in "TYPE Kind namespace/name".
window.mkube ??= { views: [] };
(() => {
  const keep = 1000;
  const events = [];
  const body = document.querySelector("#stream-table tbody");
  const filter = document.getElementById("stream-filter");
  const listed = document.getElementById("stream-listed");
  const count = document.getElementById("stream-count");
  let dirty = false;
  let received = 0; // watch events since the page connected, kept or not

  function matches(ch, words) {
    if (ch.type === "LISTED" && !listed.checked) return false;
    const text = `${ch.type} ${ch.kind} ${ch.namespace ? ch.namespace + "/" : ""}${ch.name}`.toLowerCase();
    return words.every((w) => text.includes(w));
  }

  function redraw() {
    dirty = false;
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = [];
    for (let i = events.length - 1; i >= 0 && rows.length < 300; i--) {
      const ch = events[i];
      if (!matches(ch, words)) continue;
      const tr = document.createElement("tr");
      tr.className = ch.type;
      tr.dataset.type = ch.type;
      tr.dataset.kind = ch.kind;
      tr.dataset.name = (ch.namespace ? ch.namespace + "/" : "") + ch.name;
      for (const text of [ch.type === "LISTED" ? "(snapshot)" : mkube.fmtTime(ch.at, true), ch.type, ch.kind, tr.dataset.name, ch.rv]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.append(td);
      }
      rows.push(tr);
    }
    body.replaceChildren(...rows);
    count.textContent = `${received} events received since the page connected (the last ${keep} kept)`;
  }

  function later() {
    if (!dirty) {
      dirty = true;
      requestAnimationFrame(redraw);
    }
  }
  filter.oninput = later;
  listed.onchange = later;

  mkube.views.push({
    // The snapshot is what the dashboard's caches held when the page
    // connected: its informers' first lists and every event since, as
    // LISTED rows, shown on request.
    snapshot: (snap) => {
      events.length = 0;
      received = 0;
      for (const ch of snap.nodes.concat(snap.pods).slice(-keep)) events.push(ch);
      later();
    },
    change: (ch) => {
      received++;
      events.push(ch);
      if (events.length > keep) events.splice(0, events.length - keep);
      later();
    },
  });
})();
