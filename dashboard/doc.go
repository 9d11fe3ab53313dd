// Package dashboard is mkube's live view for learners: a web page that
// shows seed 000's flow as it happens. It is a list-watch client of the
// API server like every component (step 1), so its own log teaches again:
// what it listed, what it watches, every event it receives.
//
// What the page shows, each view from real records:
//
//   - the cluster: nodes with their pods, phase and readiness, applied
//     from each watch event as it arrives;
//   - the watch stream: every event the informers receive (type, kind,
//     namespace/name, resourceVersion);
//   - a pod's 13 steps: API timestamps, Events and the dashboard's own
//     watch deliveries; steps no record shows say so (steps.go);
//   - why this node: the scheduler's explanation, as `mkube explain pod`;
//   - numbers over time: the metrics API, HPAs and pending pods, and the
//     scheduler's and the controller manager's own /metrics (pending pods
//     by queue, scheduling attempts, workqueues), kept in memory for the
//     last hour (history.go);
//   - faults: crash, OOM, freeze, through the API server's node proxy, as
//     the dashboard's identity, which RBAC decides (faults.go).
//
// The browser gets everything over one server-sent event stream and asks
// only the dashboard, never the API server.
//
// Where things live:
//
//	file          what it holds
//	watcher.go    Watcher: the informers (nodes, pods, events, deployments, replicasets, HPAs) and their handlers, which publish Changes
//	hub.go        Change, and Broadcast: the fan-out of changes and samples to the open streams, dropping a browser that falls behind
//	slim.go       slim: the informers' transform, keeping of each pod, node and Event only the fields the views read
//	summary.go    PodSummary and NodeSummary: what the cluster view draws of each
//	sightings.go  Sightings: when the dashboard's own watch delivered a pod's ADDED, binding and readiness
//	steps.go      Steps: a pod's 13 steps read from its records, the unobservable ones said so
//	explain.go    Explain: the scheduler's explanation of a pod (package scheduler/explanation)
//	history.go    History: a round of samples from every Source every 15s (--sample-interval), one hour kept
//	apisource.go  apiSource: the metrics API, the HPAs' status and the pods Pending in the caches
//	scrape.go     Scraper: a component's /metrics, GET and parsed with expfmt; rates of counters; ScrapeClient, the dashboard's identity for the components' ports
//	components.go which series of the scheduler's and the controller manager's /metrics the charts show, and why
//	faults.go     Faults: crash, oom, freeze and thaw through nodes/proxy; whether the identity may (SelfSubjectAccessReview)
//	sse.go        the event stream: a snapshot, then every change and sample
//	snapshot.go   Snapshot: what a new stream starts from; every pod of a small cluster, counts and a few pods per node of a big one
//	server.go     Server: the HTTP handlers and the embedded page (web/)
//	web/          index.html, style.css, and one script per view: app.js (stream, state), cluster.js, stream.js, steps.js, explain.js, charts.js, components.js, faults.js
package dashboard
