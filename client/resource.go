package client

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names a kind on the server and the Go types that hold it.
type Resource struct {
	GroupVersion schema.GroupVersion
	Name         string // plural, as in the URL
	Kind         string
	Namespaced   bool
	New          func() runtime.Object
	NewList      func() runtime.Object
}

// The resources mkube's components use.
var (
	Pods = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "pods", Kind: "Pod", Namespaced: true,
		New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} }}
	Nodes = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "nodes", Kind: "Node", Namespaced: false,
		New: func() runtime.Object { return &corev1.Node{} }, NewList: func() runtime.Object { return &corev1.NodeList{} }}
	Namespaces = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "namespaces", Kind: "Namespace", Namespaced: false,
		New: func() runtime.Object { return &corev1.Namespace{} }, NewList: func() runtime.Object { return &corev1.NamespaceList{} }}
	Events = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "events", Kind: "Event", Namespaced: true,
		New: func() runtime.Object { return &corev1.Event{} }, NewList: func() runtime.Object { return &corev1.EventList{} }}
	ReplicationControllers = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "replicationcontrollers", Kind: "ReplicationController", Namespaced: true,
		New: func() runtime.Object { return &corev1.ReplicationController{} }, NewList: func() runtime.Object { return &corev1.ReplicationControllerList{} }}
	Services = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "services", Kind: "Service", Namespaced: true,
		New: func() runtime.Object { return &corev1.Service{} }, NewList: func() runtime.Object { return &corev1.ServiceList{} }}
	Endpoints = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "endpoints", Kind: "Endpoints", Namespaced: true,
		New: func() runtime.Object { return &corev1.Endpoints{} }, NewList: func() runtime.Object { return &corev1.EndpointsList{} }}
	EndpointSlices = Resource{GroupVersion: discoveryv1.SchemeGroupVersion, Name: "endpointslices", Kind: "EndpointSlice", Namespaced: true,
		New: func() runtime.Object { return &discoveryv1.EndpointSlice{} }, NewList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} }}
	PodDisruptionBudgets = Resource{GroupVersion: policyv1.SchemeGroupVersion, Name: "poddisruptionbudgets", Kind: "PodDisruptionBudget", Namespaced: true,
		New: func() runtime.Object { return &policyv1.PodDisruptionBudget{} }, NewList: func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} }}
	ReplicaSets = Resource{GroupVersion: appsv1.SchemeGroupVersion, Name: "replicasets", Kind: "ReplicaSet", Namespaced: true,
		New: func() runtime.Object { return &appsv1.ReplicaSet{} }, NewList: func() runtime.Object { return &appsv1.ReplicaSetList{} }}
	Deployments = Resource{GroupVersion: appsv1.SchemeGroupVersion, Name: "deployments", Kind: "Deployment", Namespaced: true,
		New: func() runtime.Object { return &appsv1.Deployment{} }, NewList: func() runtime.Object { return &appsv1.DeploymentList{} }}
	DaemonSets = Resource{GroupVersion: appsv1.SchemeGroupVersion, Name: "daemonsets", Kind: "DaemonSet", Namespaced: true,
		New: func() runtime.Object { return &appsv1.DaemonSet{} }, NewList: func() runtime.Object { return &appsv1.DaemonSetList{} }}
	StatefulSets = Resource{GroupVersion: appsv1.SchemeGroupVersion, Name: "statefulsets", Kind: "StatefulSet", Namespaced: true,
		New: func() runtime.Object { return &appsv1.StatefulSet{} }, NewList: func() runtime.Object { return &appsv1.StatefulSetList{} }}
	ControllerRevisions = Resource{GroupVersion: appsv1.SchemeGroupVersion, Name: "controllerrevisions", Kind: "ControllerRevision", Namespaced: true,
		New: func() runtime.Object { return &appsv1.ControllerRevision{} }, NewList: func() runtime.Object { return &appsv1.ControllerRevisionList{} }}
	Jobs = Resource{GroupVersion: batchv1.SchemeGroupVersion, Name: "jobs", Kind: "Job", Namespaced: true,
		New: func() runtime.Object { return &batchv1.Job{} }, NewList: func() runtime.Object { return &batchv1.JobList{} }}
	CronJobs = Resource{GroupVersion: batchv1.SchemeGroupVersion, Name: "cronjobs", Kind: "CronJob", Namespaced: true,
		New: func() runtime.Object { return &batchv1.CronJob{} }, NewList: func() runtime.Object { return &batchv1.CronJobList{} }}
	ConfigMaps = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "configmaps", Kind: "ConfigMap", Namespaced: true,
		New: func() runtime.Object { return &corev1.ConfigMap{} }, NewList: func() runtime.Object { return &corev1.ConfigMapList{} }}
	Secrets = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "secrets", Kind: "Secret", Namespaced: true,
		New: func() runtime.Object { return &corev1.Secret{} }, NewList: func() runtime.Object { return &corev1.SecretList{} }}
	ServiceAccounts = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true,
		New: func() runtime.Object { return &corev1.ServiceAccount{} }, NewList: func() runtime.Object { return &corev1.ServiceAccountList{} }}
	Leases = Resource{GroupVersion: coordinationv1.SchemeGroupVersion, Name: "leases", Kind: "Lease", Namespaced: true,
		New: func() runtime.Object { return &coordinationv1.Lease{} }, NewList: func() runtime.Object { return &coordinationv1.LeaseList{} }}
	PersistentVolumes = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "persistentvolumes", Kind: "PersistentVolume", Namespaced: false,
		New: func() runtime.Object { return &corev1.PersistentVolume{} }, NewList: func() runtime.Object { return &corev1.PersistentVolumeList{} }}
	PersistentVolumeClaims = Resource{GroupVersion: corev1.SchemeGroupVersion, Name: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true,
		New: func() runtime.Object { return &corev1.PersistentVolumeClaim{} }, NewList: func() runtime.Object { return &corev1.PersistentVolumeClaimList{} }}
	StorageClasses = Resource{GroupVersion: storagev1.SchemeGroupVersion, Name: "storageclasses", Kind: "StorageClass", Namespaced: false,
		New: func() runtime.Object { return &storagev1.StorageClass{} }, NewList: func() runtime.Object { return &storagev1.StorageClassList{} }}
	CSINodes = Resource{GroupVersion: storagev1.SchemeGroupVersion, Name: "csinodes", Kind: "CSINode", Namespaced: false,
		New: func() runtime.Object { return &storagev1.CSINode{} }, NewList: func() runtime.Object { return &storagev1.CSINodeList{} }}
	ClusterTrustBundles = Resource{GroupVersion: certificatesv1.SchemeGroupVersion, Name: "clustertrustbundles", Kind: "ClusterTrustBundle",
		New: func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} }, NewList: func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} }}
	PodCertificateRequests = Resource{GroupVersion: certificatesv1.SchemeGroupVersion, Name: "podcertificaterequests", Kind: "PodCertificateRequest", Namespaced: true,
		New: func() runtime.Object { return &certificatesv1.PodCertificateRequest{} }, NewList: func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} }}
)

// Path builds the URL path of the resource: its collection in namespace
// (all namespaces if ""), or one object if name is set, or one of its
// subresources.
//
//	Pods.Path("default", "web-1", "binding") = /api/v1/namespaces/default/pods/web-1/binding
func (r Resource) Path(namespace, name string, subresource ...string) string {
	var b strings.Builder
	if r.GroupVersion.Group == "" {
		b.WriteString("/api/" + r.GroupVersion.Version)
	} else {
		b.WriteString("/apis/" + r.GroupVersion.Group + "/" + r.GroupVersion.Version)
	}
	if r.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + namespace)
	}
	b.WriteString("/" + r.Name)
	if name != "" {
		b.WriteString("/" + name)
	}
	for _, s := range subresource {
		b.WriteString("/" + s)
	}
	return b.String()
}
