// components.js: view 5's charts of the components' own /metrics, as
// dashboard/components.go samples them from the scheduler's and the
// controller manager's secure ports (--scheduler-metrics,
// --controller-manager-metrics):
//   scheduler/pending/QUEUE                   scheduler_pending_pods{queue}
//   scheduler/attempts/RESULT                 rate(scheduler_schedule_attempts_total) by result, per second
//   controller-manager/workqueue/NAME/adds    rate(workqueue_adds_total{name}), per second
//   controller-manager/workqueue/NAME/depth   workqueue_depth{name}
// The series live in charts.js's mkube.series (it runs first and adds
// each sample); this view draws them with mkube.drawChart, and says on
// each chart why it has no lines: not configured, the scrape's error, or
// no such series yet (a scheduler counts no attempts before its first).
window.mkube ??= { views: [] };
(() => {
  const list = document.getElementById("component-charts");
  const components = [
    { name: "scheduler", flag: "--scheduler-metrics", charts: [
      { title: "scheduler: pods waiting to be scheduled, by queue", re: /^scheduler\/pending\/(.+)$/, digits: 0 },
      { title: "scheduler: scheduling attempts per second, by result", re: /^scheduler\/attempts\/(.+)$/, digits: 2 },
    ] },
    { name: "controller-manager", flag: "--controller-manager-metrics", charts: [
      { title: "controller manager: keys added to a workqueue per second", re: /^controller-manager\/workqueue\/([^/]+)\/adds$/, digits: 2 },
      { title: "controller manager: workqueue depth (keys waiting)", re: /^controller-manager\/workqueue\/([^/]+)\/depth$/, digits: 0 },
    ] },
  ];
  const scrapes = new Map(); // component -> its ScrapeStatus in the last sample

  function note(comp, status, lines) {
    if (!status) return "waiting for the first sample";
    if (!status.url) return `not configured (${comp.flag})`;
    if (status.error) return status.error;
    if (!lines.length) return "no such series yet";
    return "";
  }

  function draw() {
    const boxes = [];
    for (const comp of components) {
      const status = scrapes.get(comp.name);
      for (const c of comp.charts) {
        const lines = [...mkube.series.keys()].filter((n) => c.re.test(n)).sort()
          .map((n) => ({ name: n, label: n.match(c.re)[1] }));
        const box = mkube.drawChart({ title: c.title, lines, digits: c.digits, note: note(comp, status, lines) });
        box.dataset.component = comp.name;
        boxes.push(box);
      }
    }
    list.replaceChildren(...boxes);
  }

  function remember(sample) {
    for (const [name, status] of Object.entries(sample.scrapes || {})) scrapes.set(name, status);
  }

  mkube.views.push({
    snapshot: (snap) => {
      scrapes.clear();
      const samples = snap.samples || [];
      const last = samples[samples.length - 1];
      if (last) remember(last);
      draw();
    },
    sample: (s) => {
      remember(s);
      draw();
    },
  });
})();
