package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization/node"
)

// NodeRestriction (Kubernetes' plugin/pkg/admission/noderestriction)
// narrows what the Node authorizer lets every kubelet write to what is its
// own, judging the objects the authorizer does not see:
//
//   - its own Node only, created without a configSource and without
//     labels outside the kubelet's set (node-restriction.kubernetes.io/
//     never, other kubernetes.io and k8s.io labels only those
//     k8s.io/kubelet lists), and updated without touching its taints;
//   - pods: mirror pods of its static pods only (bound to it, owned by its
//     Node, referring to no service account, Secret, ConfigMap or claim),
//     the status of its own pods (not their labels), deleting its own;
//   - its own Lease in kube-node-lease, its own CSINode, and only the
//     status of a claim, there only capacity and conditions;
//   - service-account tokens bound to one of its pods only, named by
//     name and uid (the API server adds the node to the token itself, so
//     a node cannot ask for one bound to a Node it names).
//   - PodCertificateRequests only for its own pods' podCertificate
//     volumes, naming them, their service accounts and itself by the
//     stored names and uids.
//
// Anyone who is not a node passes. Refusals are 403s in Kubernetes' words:
//
//	nodes "node02" is forbidden: node "node01" is not allowed to modify node "node02"
var NodeRestriction = Plugin{Name: "NodeRestriction", Admit: admitNodeRestriction, Handles: []Operation{Create, Update, Delete}}

var (
	nodes    = corev1.SchemeGroupVersion.WithResource("nodes")
	claims   = corev1.SchemeGroupVersion.WithResource("persistentvolumeclaims")
	leases   = coordinationv1.SchemeGroupVersion.WithResource("leases")
	csiNodes = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes"}
)

func admitNodeRestriction(ctx context.Context, a *Attributes, objs Objects) error {
	user, _ := authentication.UserFrom(ctx)
	name, isNode := node.Identify(user)
	if !isNode {
		return nil
	}
	if name == "" {
		return forbidden(a, "could not determine node from user %q", user.Username)
	}
	switch a.Resource {
	case pods:
		switch a.Subresource {
		case "":
			return admitNodesPod(ctx, name, a, objs)
		case "status":
			return admitNodesPodStatus(name, a)
		default:
			return forbidden(a, "unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource)
		}
	case nodes:
		return admitNodesNode(name, a)
	case claims:
		if a.Subresource != "status" {
			return forbidden(a, "may only update PVC status")
		}
		return admitNodesClaimStatus(name, a)
	case leases:
		if a.Namespace != corev1.NamespaceNodeLease {
			return forbidden(a, "can only access leases in the %q system namespace", corev1.NamespaceNodeLease)
		}
		if objectName(a) != name {
			return forbidden(a, "can only access node lease with the same name as the requesting node")
		}
	case csiNodes:
		if objectName(a) != name {
			return forbidden(a, "can only access CSINode with the same name as the requesting node")
		}
	case serviceAccounts:
		if a.Subresource == "token" && a.Operation == Create {
			return admitNodesTokenRequest(ctx, name, a, objs)
		}
	case podCertificateRequests:
		return admitNodesPodCertificateRequest(ctx, name, a, objs) // noderestriction_podcertificates.go
	}
	return nil
}

// admitNodesTokenRequest: a node's TokenRequest is bound to a pod, by
// name and uid, and that pod is on the node.
func admitNodesTokenRequest(ctx context.Context, name string, a *Attributes, objs Objects) error {
	ref := a.Object.(*authenticationv1.TokenRequest).Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return forbidden(a, "node requested token not bound to a pod")
	}
	if ref.UID == "" {
		return forbidden(a, "node requested token with a pod binding without a uid")
	}
	obj, err := objs.Get(ctx, pods, a.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return forbidden(a, "%v", err)
	}
	switch pod := obj.(*corev1.Pod); {
	case pod.UID != ref.UID:
		return forbidden(a, "the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID)
	case pod.Spec.NodeName != name:
		return forbidden(a, "node requested token bound to a pod scheduled on a different node")
	}
	return nil
}

// admitNodesPod: a node creates only mirror pods of its static pods and
// deletes only pods bound to it.
func admitNodesPod(ctx context.Context, name string, a *Attributes, objs Objects) error {
	switch a.Operation {
	case Delete:
		if a.OldObject.(*corev1.Pod).Spec.NodeName != name {
			return forbidden(a, "node %q can only delete pods with spec.nodeName set to itself", name)
		}
		return nil
	case Create:
		return admitMirrorPod(ctx, name, a, objs)
	}
	return forbidden(a, "unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, name)
}

func admitMirrorPod(ctx context.Context, name string, a *Attributes, objs Objects) error {
	pod := a.Object.(*corev1.Pod)
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return forbidden(a, "pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, name)
	}
	if pod.Spec.NodeName != name {
		return forbidden(a, "node %q can only create pods with spec.nodeName set to itself", name)
	}
	switch owners := pod.OwnerReferences; {
	case len(owners) > 1:
		return forbidden(a, "node %q can only create pods with a single owner reference set to itself", name)
	case len(owners) == 0, owners[0].APIVersion != "v1" || owners[0].Kind != "Node" || owners[0].Name != name:
		return forbidden(a, "node %q can only create pods with an owner reference set to itself", name)
	case owners[0].Controller == nil || !*owners[0].Controller:
		return forbidden(a, "node %q can only create pods with a controller owner reference set to itself", name)
	case owners[0].BlockOwnerDeletion != nil && *owners[0].BlockOwnerDeletion:
		return forbidden(a, "node %q must not set blockOwnerDeletion on an owner reference", name)
	}
	obj, err := objs.Get(ctx, nodes, "", name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return err
		}
		return forbidden(a, "error looking up node %s to verify uid: %v", name, err)
	}
	if uid := obj.(*corev1.Node).UID; pod.OwnerReferences[0].UID != uid {
		return forbidden(a, "node %s UID mismatch: expected %s got %s", name, pod.OwnerReferences[0].UID, uid)
	}
	// A mirror pod may not refer to what would let the node read more
	// (the Node authorizer's graph ignores mirror pods besides).
	secrets, configMaps := node.SpecUses(pod)
	switch {
	case pod.Spec.ServiceAccountName != "":
		return forbidden(a, "node %q can not create pods that reference a service account", name)
	case secrets:
		return forbidden(a, "node %q can not create pods that reference secrets", name)
	case configMaps:
		return forbidden(a, "node %q can not create pods that reference configmaps", name)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(p corev1.VolumeProjection) bool { return p.ClusterTrustBundle != nil }) {
			return forbidden(a, "node %q can not create pods that reference clustertrustbundles", name)
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return forbidden(a, "node %q can not create pods that reference persistentvolumeclaims", name)
		}
	}
	return nil
}

// admitNodesPodStatus: the status of a pod bound to the node, without
// changing its labels or its resource claims.
func admitNodesPodStatus(name string, a *Attributes) error {
	if a.Operation != Update {
		return forbidden(a, "unexpected operation %q", a.Operation)
	}
	old, pod := a.OldObject.(*corev1.Pod), a.Object.(*corev1.Pod)
	switch {
	case old.Spec.NodeName != name:
		return forbidden(a, "node %q can only update pod status for pods with spec.nodeName set to itself", name)
	case !labels.Equals(old.Labels, pod.Labels):
		return forbidden(a, "node %q cannot update labels through pod status", name)
	case !apiequality.Semantic.DeepEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses):
		return forbidden(a, "node %q cannot update resource claim statues", name)
	}
	return nil
}

// admitNodesNode: only its own Node; on create, no configSource and only
// the kubelet's labels; on update, no new configSource, the same taints
// and only the kubelet's labels changed.
func admitNodesNode(name string, a *Attributes) error {
	if requested := objectName(a); requested != name {
		return forbidden(a, "node %q is not allowed to modify node %q", name, requested)
	}
	switch a.Operation {
	case Create:
		n := a.Object.(*corev1.Node)
		if n.Spec.ConfigSource != nil {
			return forbidden(a, "node %q is not allowed to create pods with a non-nil configSource", name)
		}
		if bad := forbiddenLabels(n.Labels, nil); len(bad) > 0 {
			return forbidden(a, "node %q is not allowed to set the following labels: %s", name, strings.Join(bad, ", "))
		}
	case Update:
		n, old := a.Object.(*corev1.Node), a.OldObject.(*corev1.Node)
		if n.Spec.ConfigSource != nil && !apiequality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return forbidden(a, "node %q is not allowed to update configSource to a new non-nil configSource", name)
		}
		if !apiequality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return forbidden(a, "node %q is not allowed to modify taints", name)
		}
		if bad := forbiddenLabels(n.Labels, old.Labels); len(bad) > 0 {
			return forbidden(a, "is not allowed to modify labels: %s", strings.Join(bad, ", "))
		}
	}
	return nil
}

// forbiddenLabels are the labels, added, changed or removed between a
// and b, that a node may not set, sorted: node-restriction.kubernetes.io/
// ones, which administrators use to steer workloads to nodes they trust,
// and kubernetes.io or k8s.io ones that are not the kubelet's.
func forbiddenLabels(a, b map[string]string) []string {
	var bad []string
	check := func(k string) {
		ns, _, _ := strings.Cut(k, "/")
		if !strings.Contains(k, "/") {
			ns = ""
		}
		restricted := ns == corev1.LabelNamespaceNodeRestriction || strings.HasSuffix(ns, "."+corev1.LabelNamespaceNodeRestriction)
		kubernetes := ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io") || ns == "k8s.io" || strings.HasSuffix(ns, ".k8s.io")
		if (restricted || kubernetes && !kubeletapis.IsKubeletLabel(k)) && !slices.Contains(bad, k) {
			bad = append(bad, k)
		}
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			check(k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			check(k)
		}
	}
	slices.Sort(bad)
	return bad
}

// admitNodesClaimStatus: a node reports a claim's resize, its capacity
// and conditions (and allocated resources), and nothing else.
func admitNodesClaimStatus(name string, a *Attributes) error {
	if a.Operation != Update {
		return forbidden(a, "unexpected operation %q", a.Operation)
	}
	old, next := a.OldObject.(*corev1.PersistentVolumeClaim).DeepCopy(), a.Object.(*corev1.PersistentVolumeClaim).DeepCopy()
	for _, c := range []*corev1.PersistentVolumeClaim{old, next} {
		c.ResourceVersion, c.ManagedFields = "", nil
		c.Status.Capacity, c.Status.Conditions = nil, nil
		c.Status.AllocatedResources, c.Status.AllocatedResourceStatuses = nil, nil
	}
	if !apiequality.Semantic.DeepEqual(old, next) {
		return forbidden(a, "node %q is not allowed to update fields other than status.capacity and status.conditions: %v", name, cmp.Diff(old, next))
	}
	return nil
}

// objectName is the name of the object written: the new one's, or on
// delete the stored one's.
func objectName(a *Attributes) string {
	obj := a.Object
	if obj == nil {
		obj = a.OldObject
	}
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetName()
	}
	return ""
}

// forbidden is admission's 403 for the object written, as Kubernetes'
// admission.NewForbidden words it: `nodes "node02" is forbidden: ...`.
func forbidden(a *Attributes, format string, args ...any) error {
	return apierrors.NewForbidden(a.Resource.GroupResource(), objectName(a), fmt.Errorf(format, args...))
}
