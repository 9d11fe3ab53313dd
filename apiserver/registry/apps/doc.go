// Package apps declares the kinds of the apps/v1 group: ReplicaSets,
// Deployments, DaemonSets, StatefulSets and the ControllerRevisions that
// record the last two's templates. Their pod templates follow the core
// group's pod rules.
package apps
