// faults.js: view 6, the fault buttons. The dashboard sends each through
// the API server as its own identity (dashboard/faults.go); the API
// server's answer, a 403 included, is shown in its own words.
window.mkube ??= { views: [] };
(() => {
  const access = document.getElementById("faults-access");
  const result = document.getElementById("fault-result");
  const nodeSelect = document.getElementById("fault-node");
  const crash = document.getElementById("fault-crash");
  const oom = document.getElementById("fault-oom");

  async function send(fault) {
    result.className = "";
    result.textContent = `sending ${fault.action}…`;
    const res = await fetch("api/faults", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Mkube-Dashboard": "1" },
      body: JSON.stringify(fault),
    });
    const st = await res.json();
    result.dataset.code = st.code;
    if (res.ok) {
      result.textContent = `${fault.action}: done (${res.status})`;
    } else {
      result.className = "error";
      // As kubectl prints an API error.
      result.textContent = `Error from server (${st.reason}): ${st.message}`;
    }
  }

  function pod() {
    const [namespace, name] = mkube.state.selected.split("/");
    return { namespace, pod: name };
  }
  crash.onclick = () => send({ action: "crash", ...pod() });
  oom.onclick = () => send({ action: "oom", ...pod() });
  document.getElementById("fault-freeze").onclick = () => send({ action: "freeze", node: nodeSelect.value });
  document.getElementById("fault-thaw").onclick = () => send({ action: "thaw", node: nodeSelect.value });

  function nodes() {
    const names = [...mkube.state.nodes.keys()].sort();
    if (names.join() === [...nodeSelect.options].map((o) => o.value).join()) return;
    nodeSelect.replaceChildren(...names.map((n) => new Option(n, n)));
  }

  mkube.views.push({
    snapshot: (snap) => {
      const f = snap.faults;
      const who = f.user || "the dashboard's identity";
      document.getElementById("who").textContent = "as " + who;
      access.dataset.allowed = f.allowed;
      access.textContent = f.allowed
        ? `${who} may inject faults (create nodes/proxy).`
        : `${who} may not inject faults: RBAC does not allow it to create nodes/proxy, so the API server will answer 403. ` +
          "Run the dashboard with a kubeconfig that may (the admin's) to use these.";
      nodes();
    },
    change: (ch) => { if (ch.kind === "Node") nodes(); },
    select: () => { crash.disabled = oom.disabled = false; },
  });
})();
