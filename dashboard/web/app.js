// app.js: the page's one connection to the dashboard, and the state the
// views draw. The dashboard sends server-sent events (see dashboard/sse.go):
//   snapshot: the nodes and pods as its caches hold them, and the numbers so far;
//   change:   every event its informers receive (ADDED, MODIFIED, DELETED);
//   sample:   the numbers, every 15 s.
// The browser never asks the API server anything. Each view (cluster.js,
// stream.js, ...) registered itself in mkube.views with the hooks it needs.
window.mkube ??= { views: [] };
mkube.state = {
  nodes: new Map(), // name -> NodeSummary
  pods: new Map(),  // "namespace/name" -> PodSummary
  selected: null,   // "namespace/name" of the pod the steps and explain views show
  // hidden: node -> how many of its pods a big cluster's snapshot counted
  // but did not send (dashboard/snapshot.go); 0 for a small cluster.
  hidden: new Map(),
};
mkube.opens = 0;  // how many times the stream (re)opened: 1 on a healthy page
mkube.errors = 0; // how many times it failed (EventSource error): 0 on a healthy page

// podCount is how many pods the page knows of: those it has, and those
// a bounded snapshot only counted.
mkube.podCount = () => {
  let n = mkube.state.pods.size;
  for (const h of mkube.state.hidden.values()) n += h;
  return n;
};

// unhide: a pod the page was only counted under node turns out to be
// this one, so it is no longer hidden.
function unhide(node) {
  const h = mkube.state.hidden.get(node) || 0;
  if (h > 0) mkube.state.hidden.set(node, h - 1);
}

mkube.tell = (hook, ...args) => {
  for (const v of mkube.views) if (v[hook]) v[hook](...args);
};

mkube.select = (key) => {
  mkube.state.selected = key;
  mkube.tell("select", key);
};

mkube.podKey = (ch) => ch.namespace + "/" + ch.name;

// gone reports whether the selected pod was deleted: the steps and
// explain views then keep what they last showed, and ask no more.
mkube.gone = (key) => !mkube.state.pods.has(key);

// apply keeps the state equal to the dashboard's cache: a change sets or
// removes, never adds up, so a change seen twice (in the snapshot and
// after it) does no harm.
//
// After a bounded snapshot, a MODIFIED or DELETED pod the page does not
// have is one it was only counted: it leaves its node's hidden count
// (the node it was on, ch.from, if this change moved it).
function apply(ch) {
  if (ch.kind === "Pod") {
    const key = mkube.podKey(ch);
    if (!mkube.state.pods.has(key) && ch.type !== "ADDED" && ch.type !== "LISTED") {
      unhide(ch.from !== undefined ? ch.from : ch.pod.node || "");
    }
    if (ch.type === "DELETED") mkube.state.pods.delete(key);
    else mkube.state.pods.set(key, ch.pod);
  } else if (ch.kind === "Node") {
    if (ch.type === "DELETED") mkube.state.nodes.delete(ch.name);
    else mkube.state.nodes.set(ch.name, ch.node);
  }
}

function connect() {
  const conn = document.getElementById("conn");
  const es = new EventSource("api/stream");
  es.addEventListener("snapshot", (e) => {
    const snap = JSON.parse(e.data);
    mkube.opens++;
    mkube.state.nodes.clear();
    mkube.state.pods.clear();
    mkube.state.hidden.clear();
    for (const n of snap.nodes) apply(n);
    for (const p of snap.pods) apply(p);
    if (snap.bounded) {
      const sent = new Map();
      for (const p of snap.pods) sent.set(p.pod.node || "", (sent.get(p.pod.node || "") || 0) + 1);
      for (const [node, n] of Object.entries(snap.counts)) mkube.state.hidden.set(node, n - (sent.get(node) || 0));
    }
    conn.textContent = "live";
    conn.className = "conn live";
    mkube.tell("snapshot", snap);
  });
  es.addEventListener("change", (e) => {
    const ch = JSON.parse(e.data);
    apply(ch);
    mkube.tell("change", ch);
  });
  es.addEventListener("sample", (e) => mkube.tell("sample", JSON.parse(e.data)));
  // EventSource reconnects by itself; the next snapshot redraws all.
  es.onerror = () => {
    mkube.errors++;
    conn.textContent = "reconnecting…";
    conn.className = "conn";
  };
}

// fmtTime prints a time of day; with ms for the dashboard's own clock,
// whole seconds for the API's (Kubernetes keeps its timestamps so).
mkube.fmtTime = (iso, ms) => {
  const d = new Date(iso);
  const s = d.toISOString().slice(11, ms ? 23 : 19);
  return s;
};

connect();
