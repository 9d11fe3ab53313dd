// Package kuberuntime is the kubelet's container runtime manager
// (pkg/kubelet/kuberuntime, the kubeGenericRuntimeManager, with the
// lifecycle hooks of pkg/kubelet/lifecycle/handlers.go): it turns what a
// pod's spec asks for into CRI calls, and reads back by their labels the
// sandboxes and containers it made. It serves seed 000's step 12 ("the
// kubelet calls the container runtime to start the containers") and
// reads for step 13 what the status reports of them.
//
// The Manager creates a pod's sandbox with its RuntimeClass' handler
// (RunPodSandbox, FailedCreatePodSandBox when it fails), creates and
// starts its containers with the files the kubelet binds beside their
// volumes (/etc/hosts, the termination log), runs the postStart and
// preStop hooks (exec, httpGet, sleep) and stops containers within their
// grace period. When to do so (restart policy, back-off, images,
// environment) is the kubelet's pod sync. It
// keeps no state; what it needs of the kubelet (the CRI client, the API
// client, the recorder, /etc/hosts, DNS, the pod network) comes in its
// Options, as functions where package kubelet holds them.
//
// Where things live (the upstream file each mirrors):
//
//	file                   what it holds
//	manager.go             the Manager and its Options; StopContainer, the grace periods, PodRef (kuberuntime_manager.go, kuberuntime_container.go)
//	sandbox.go             RunPodSandbox: the RuntimeClass' handler, then the sandbox (kuberuntime_sandbox.go, runtimeclass)
//	criconfig.go           Configs: the CRI configs of sandboxes and containers, their cgroup resources, KubeletMounts (kuberuntime_sandbox.go, kuberuntime_container.go)
//	labels.go              the labels of the kubelet's sandboxes and containers (labels.go, pkg/kubelet/types/labels.go)
//	securitycontext.go     a container's user and privileges, as the runtime is told (security_context.go)
//	terminationmessage.go  a container's termination-log file, and its message read back (kuberuntime_container.go)
//	container.go           CreateContainer and StartContainer, with its postStart hook; older instances removed (kuberuntime_container.go startContainer)
//	prestop.go             KillContainer: the preStop hook, then StopContainer (kuberuntime_container.go killContainer)
//	lifecyclehooks.go      postStart and preStop hooks: exec, httpGet, sleep (pkg/kubelet/lifecycle/handlers.go)
//	runtimepod.go          PodReader: a pod as the runtime has it, read by labels (GetPodStatus)
//	doc.go                 this map
package kuberuntime
