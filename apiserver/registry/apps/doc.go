// Package apps declares the kinds of the apps/v1 group: ReplicaSets and
// Deployments. Their pod templates follow the core group's pod rules.
package apps
