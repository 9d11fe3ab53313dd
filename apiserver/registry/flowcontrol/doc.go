// Package flowcontrol declares flowcontrol.apiserver.k8s.io/v1, API
// Priority and Fairness' configuration: FlowSchemas sort requests (by
// user, group, verb, resource) into priority levels, and
// PriorityLevelConfigurations say how much of the server's concurrency
// each level gets and how its excess requests queue. mkube serves and
// validates both, and starts with Kubernetes' mandatory objects (exempt,
// catch-all), but it does no queuing: every request is served at once,
// whatever its flow schema says.
//
// Where things live:
//
//	file                            what it holds
//	flowschemas.go                  FlowSchemas: the kind and its validation
//	prioritylevelconfigurations.go  PriorityLevelConfigurations: the kind, its defaults and its validation
//	bootstrap.go                    the mandatory objects, exempt and catch-all
package flowcontrol
