// Package resource declares resource.k8s.io/v1, Dynamic Resource
// Allocation (DRA, GA since Kubernetes v1.34): devices such as GPUs or
// NICs that a driver advertises and pods claim, the way volumes are
// advertised by PersistentVolumes and claimed by PVCs.
//
//   - ResourceSlices: a driver's pool of devices, with their attributes
//     and capacities, on one node, some nodes or all of them.
//   - DeviceClasses: a kind of device ("gpu.example.com"), CEL selectors
//     every device of the class matches, and configuration for the driver.
//   - ResourceClaims: a request for devices of a class (with more CEL
//     selectors); the scheduler writes the chosen devices in
//     status.allocation and the pods using them in status.reservedFor.
//   - ResourceClaimTemplates: a claim's spec that a pod names in
//     spec.resourceClaims, for a claim of its own per pod.
//   - DeviceTaintRules: a taint an administrator puts on devices that
//     claims must tolerate (NoSchedule, NoExecute), as on nodes.
//
// mkube serves all five with Kubernetes' defaults, validation (the CEL
// selectors are compiled with k8s.io/dynamic-resource-allocation, as
// kube-apiserver does), status subresources and printers. No DRA driver
// runs on mkube's nodes and the scheduler does not allocate devices, so
// a pod that needs a claim is never scheduled: what is here is the API a
// driver and its users would talk to.
//
// Where things live:
//
//	file                       what it holds
//	resourceclaims.go          ResourceClaims: the kind, its status updates and their validation
//	resourceclaimtemplates.go  ResourceClaimTemplates
//	claimspec.go               a claim's spec, shared by both: its defaults and validation (requests, constraints, config)
//	deviceclasses.go           DeviceClasses
//	resourceslices.go          ResourceSlices: the devices a driver publishes, and their validation
//	devicetaintrules.go        DeviceTaintRules: the kind, its defaults, its status
//	names.go                   the validation of names: DNS labels and subdomains, classes, pools, nodes, qualified names, C identifiers, label values
//	lists.go                   the validation of lists and sets with a maximum size
package resource
