// Package core declares the kinds of Kubernetes' core API group (/api/v1):
// pods and their subresources, nodes, namespaces, events, configmaps,
// secrets, services, endpoints, serviceaccounts, replicationcontrollers,
// persistentvolumes, persistentvolumeclaims, podtemplates, limitranges and
// resourcequotas.
//
// Each kind is one file, named after its resource, with its validation in
// a <kind>_validation.go beside it when that is long; the pod's spec
// rules (defaulting and validation), which the workload kinds of other
// groups reuse for their pod templates, are in podspec_*.go; the pod's
// subresources are in pod_*.go.
//
// Where things live:
//
//	file                            what it holds
//	pods.go                         Pods: the kind, the seed steps its writes and etcd events are (3, 4, 8, 11, ...), graceful deletion, QoS class, what an update may change
//	pods_printer.go                 the table `kubectl get pods` shows: READY, STATUS (with its reasons), RESTARTS
//	pod_binding.go                  pods/binding: the scheduler's POST that sets spec.nodeName (seed step 10)
//	pod_eviction.go                 pods/eviction: an eviction, refused 429 when a PodDisruptionBudget allows no disruption
//	pod_log.go                      pods/log: streamed from the node's kubelet
//	pod_exec.go                     pods/exec, attach and portforward: streams proxied to the node's kubelet
//	pod_exec_websocket.go           the same over WebSocket (kubectl's newer protocol), translated to the kubelet's SPDY
//	pod_resize.go                   pods/resize: new cpu and memory for running containers
//	pod_ephemeralcontainers.go      pods/ephemeralcontainers: kubectl debug's containers
//	podspec_defaults.go             DefaultPodSpec: Kubernetes' defaults for a pod spec and its containers
//	podspec_validation.go           ValidatePodSpec: containers, volumes, mounts, resources, tolerations, ...
//	podspec_projected.go            the validation of projected volume sources
//	podspec_sysctls.go              the validation of sysctls
//	podspec_topologyspread.go       the validation of topology spread constraints
//	probes.go                       probes: their defaults and validation
//	podtemplates.go                 PodTemplates, and ValidatePodTemplateSpec, which the workloads use
//	workloads.go                    what replicated kinds share: ValidateWorkload, DefaultReplicas, WorkloadWriteStep, their columns
//	replicationcontrollers.go       ReplicationControllers
//	nodes.go                        Nodes: their taints' validation and their columns
//	namespaces.go                   Namespaces, the built-in ones, and namespaces/finalize
//	services.go                     Services: their defaults, ClusterIP and NodePort allocation, validation, columns
//	kubernetes_service.go           the default/kubernetes Service and its Endpoints and EndpointSlice, kept by the API servers themselves: every live one, by their leases
//	masterleases.go                 MasterLeases: each API server's key /registry/masterleases/<IP> on an etcd lease of 15 s (kube-apiserver's --endpoint-reconciler-type=lease)
//	kube_dns_service.go             kube-system/kube-dns, the cluster DNS Service at 10.96.0.10
//	proxy.go                        the proxy subresources' plumbing, and nodes/proxy
//	proxy_pod.go                    pods/proxy
//	proxy_service.go                services/proxy
//	endpoints.go                    Endpoints
//	endpoints_validation.go         their defaults and validation; ValidateEndpointIP
//	events.go                       Events, and their columns, shared with events.k8s.io
//	configmaps.go                   ConfigMaps
//	secrets.go                      Secrets
//	configdata.go                   what ConfigMaps and Secrets share: key validation, immutability
//	serviceaccounts.go              ServiceAccounts
//	serviceaccount_token.go         serviceaccounts/token: the TokenRequest API (kubectl create token)
//	persistentvolumes.go            PersistentVolumes: the kind, its defaults, its columns
//	persistentvolume_validation.go  their validation: sources, node affinity, what an update may change
//	persistentvolumeclaims.go       PersistentVolumeClaims
//	limitranges.go                  LimitRanges and their defaults
//	limitrange_validation.go        their validation
//	resourcequotas.go               ResourceQuotas: the kind, its validation, its columns
package core

import corev1 "k8s.io/api/core/v1"

var v1 = corev1.SchemeGroupVersion
