// Package container is what the kubelet knows of a pod's containers, as
// the runtime has them (pkg/kubelet/container, "kubecontainer" there,
// whose PodStatus this mirrors). The kubelet keeps no container state of
// its own: on every sync of seed 000's step 12 it asks the runtime for
// the pod's sandbox and containers, and step 13 reports them in the pod's
// status. The other kubelet packages share these types, so they import it
// as kubecontainer, as upstream does.
//
// Where things live:
//
//	file           what it holds
//	container.go   PodSandbox and Container, a pod and its container instances as the runtime has them
//	doc.go         this map
package container
