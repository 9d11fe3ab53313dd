// Package apps declares the kinds of the apps/v1 group: ReplicaSets,
// Deployments, DaemonSets, StatefulSets and the ControllerRevisions that
// record the last two's templates. Their pod templates follow the core
// group's pod rules.
//
// Where things live:
//
//	file                    what it holds
//	replicasets.go          ReplicaSets: the kind and its table columns
//	deployments.go          Deployments: the kind, its defaults, its strategy's validation, its columns
//	daemonsets.go           DaemonSets: the kind, its defaults, templateGeneration, its validation, its columns
//	statefulsets.go         StatefulSets: the kind, its defaults, its validation (what an update may change), its columns
//	controllerrevisions.go  ControllerRevisions, the history DaemonSets and StatefulSets keep
package apps
