// Package core declares the kinds of Kubernetes' core API group (/api/v1):
// pods and their subresources, nodes, namespaces, events, configmaps,
// secrets, services, endpoints, serviceaccounts, replicationcontrollers,
// persistentvolumes, persistentvolumeclaims, podtemplates, limitranges and
// resourcequotas.
// Each kind is one file; the pod's spec rules (defaulting and validation),
// which the workload kinds of other groups reuse for their pod templates,
// are in podspec_*.go.
package core

import corev1 "k8s.io/api/core/v1"

var v1 = corev1.SchemeGroupVersion
