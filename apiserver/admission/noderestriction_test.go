package admission

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/authentication"
)

func TestNodeRestrictionKeepsEachNodeToWhatIsItsOwn(t *testing.T) {
	node01 := authenticationv1.UserInfo{Username: "system:node:node01", Groups: []string{"system:nodes", "system:authenticated"}}
	jane := authenticationv1.UserInfo{Username: "jane", Groups: []string{"system:authenticated"}}
	objs := fakeObjects{nodes: {&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01", UID: "n1"}}},
		pods: {&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "p1"}, Spec: corev1.PodSpec{NodeName: "node01"}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db", UID: "p2"}, Spec: corev1.PodSpec{NodeName: "node02"}}}}
	token := func(ref *authenticationv1.BoundObjectReference) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "default"},
			Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: ref}}
	}
	boundTo := func(kind, name, uid string) *authenticationv1.BoundObjectReference {
		return &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: kind, Name: name, UID: types.UID(uid)}
	}

	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	pod := func(nodeName string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: nodeName}}
	}
	mirror := func(edit func(p *corev1.Pod)) *corev1.Pod {
		p := pod("node01")
		p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "node01", UID: "n1", Controller: ptr.To(true)}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	relabelled := pod("node01")
	relabelled.Labels = map[string]string{"app": "evil"}
	claim := func(capacity string, labels map[string]string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "data", Labels: labels},
			Status: corev1.PersistentVolumeClaimStatus{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}}}
	}
	lease := func(ns, name string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	tests := []struct {
		name string
		user authenticationv1.UserInfo
		a    Attributes
		want string // the 403's message, "" if admitted
	}{
		{"a node registers its own Node", node01, Attributes{Operation: Create, Resource: nodes,
			Object: node("node01", map[string]string{"kubernetes.io/hostname": "node01", "topology.kubernetes.io/zone": "a", "team": "x"})}, ""},
		{"a node may not write another's", node01, Attributes{Operation: Update, Resource: nodes,
			Object: node("node02", nil), OldObject: node("node02", nil)}, `nodes "node02" is forbidden: node "node01" is not allowed to modify node "node02"`},
		{"nor delete another's", node01, Attributes{Operation: Delete, Resource: nodes, OldObject: node("node02", nil)},
			`nodes "node02" is forbidden: node "node01" is not allowed to modify node "node02"`},
		{"a node may not label itself to attract restricted workloads", node01, Attributes{Operation: Create, Resource: nodes,
			Object: node("node01", map[string]string{"node-restriction.kubernetes.io/pci": "true", "node-role.kubernetes.io/control-plane": ""})},
			`nodes "node01" is forbidden: node "node01" is not allowed to set the following labels: node-restriction.kubernetes.io/pci, node-role.kubernetes.io/control-plane`},
		{"nor change such a label later", node01, Attributes{Operation: Update, Resource: nodes,
			Object: node("node01", nil), OldObject: node("node01", map[string]string{"node-restriction.kubernetes.io/pci": "true"})},
			`nodes "node01" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pci`},
		{"nor its taints", node01, Attributes{Operation: Update, Resource: nodes,
			Object: node("node01", nil), OldObject: node("node01", nil, corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule})},
			`nodes "node01" is forbidden: node "node01" is not allowed to modify taints`},
		{"a node makes the mirror pod of its static pod", node01, Attributes{Operation: Create, Resource: pods, Namespace: "default", Object: mirror(nil)}, ""},
		{"but not any other pod", node01, Attributes{Operation: Create, Resource: pods, Namespace: "default", Object: pod("node01")},
			`pods "web" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "node01" can only create mirror pods`},
		{"nor a mirror pod on another node", node01, Attributes{Operation: Create, Resource: pods, Namespace: "default",
			Object: mirror(func(p *corev1.Pod) { p.Spec.NodeName = "node02" })}, `pods "web" is forbidden: node "node01" can only create pods with spec.nodeName set to itself`},
		{"nor one owned by a Node of the same name made again", node01, Attributes{Operation: Create, Resource: pods, Namespace: "default",
			Object: mirror(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "old" })}, `pods "web" is forbidden: node node01 UID mismatch: expected old got n1`},
		{"nor one that mounts a Secret, which would let the node read it", node01, Attributes{Operation: Create, Resource: pods, Namespace: "default",
			Object: mirror(func(p *corev1.Pod) {
				p.Spec.Volumes = []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db"}}}}
			})}, `pods "web" is forbidden: node "node01" can not create pods that reference secrets`},
		{"a node reports its own pod's status", node01, Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default",
			Object: pod("node01"), OldObject: pod("node01")}, ""},
		{"not another node's pod's", node01, Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default",
			Object: pod("node02"), OldObject: pod("node02")}, `pods "web" is forbidden: node "node01" can only update pod status for pods with spec.nodeName set to itself`},
		{"nor relabels a pod through its status", node01, Attributes{Operation: Update, Resource: pods, Subresource: "status", Namespace: "default",
			Object: relabelled, OldObject: pod("node01")}, `pods "web" is forbidden: node "node01" cannot update labels through pod status`},
		{"a node deletes its own pod", node01, Attributes{Operation: Delete, Resource: pods, Namespace: "default", OldObject: pod("node01")}, ""},
		{"not another node's", node01, Attributes{Operation: Delete, Resource: pods, Namespace: "default", OldObject: pod("node02")},
			`pods "web" is forbidden: node "node01" can only delete pods with spec.nodeName set to itself`},
		{"nor replaces a pod", node01, Attributes{Operation: Update, Resource: pods, Namespace: "default", Object: pod("node01"), OldObject: pod("node01")},
			`pods "web" is forbidden: unexpected operation "UPDATE", node "node01" can only create and delete mirror pods`},
		{"a node takes its own Lease", node01, Attributes{Operation: Create, Resource: leases, Namespace: "kube-node-lease", Object: lease("kube-node-lease", "node01")}, ""},
		{"not another's", node01, Attributes{Operation: Create, Resource: leases, Namespace: "kube-node-lease", Object: lease("kube-node-lease", "node02")},
			`leases.coordination.k8s.io "node02" is forbidden: can only access node lease with the same name as the requesting node`},
		{"a node reports a claim's new capacity", node01, Attributes{Operation: Update, Resource: claims, Subresource: "status", Namespace: "default",
			Object: claim("2Gi", nil), OldObject: claim("1Gi", nil)}, ""},
		{"and nothing else of it", node01, Attributes{Operation: Update, Resource: claims, Namespace: "default",
			Object: claim("1Gi", map[string]string{"a": "b"}), OldObject: claim("1Gi", nil)}, `persistentvolumeclaims "data" is forbidden: may only update PVC status`},
		{"a node asks for the token of a pod on it", node01, Attributes{Operation: Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default",
			Object: token(boundTo("Pod", "web", "p1"))}, ""},
		{"not one bound to nothing", node01, Attributes{Operation: Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default",
			Object: token(nil)}, `serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{"nor one bound to a Node, even its own", node01, Attributes{Operation: Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default",
			Object: token(boundTo("Node", "node01", "n1"))}, `serviceaccounts "default" is forbidden: node requested token not bound to a pod`},
		{"nor one naming its pod without a uid", node01, Attributes{Operation: Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default",
			Object: token(boundTo("Pod", "web", ""))}, `serviceaccounts "default" is forbidden: node requested token with a pod binding without a uid`},
		{"nor one for an earlier pod of that name", node01, Attributes{Operation: Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default",
			Object: token(boundTo("Pod", "web", "old"))},
			`serviceaccounts "default" is forbidden: the UID in the bound object reference (old) does not match the UID in record. The object might have been deleted and then recreated`},
		{"nor one for another node's pod", node01, Attributes{Operation: Create, Resource: serviceAccounts, Subresource: "token", Namespace: "default",
			Object: token(boundTo("Pod", "db", "p2"))}, `serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node`},
		{"someone who is not a node is none of its business", jane, Attributes{Operation: Update, Resource: nodes,
			Object: node("node02", nil), OldObject: node("node02", nil)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := authentication.WithUser(context.Background(), tc.user)
			err := admitNodeRestriction(ctx, &tc.a, objs)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// The chain asks NodeRestriction about deletions, and the plugins that
// judge only writes never see one.
func TestTheChainAsksOnlyThePluginsThatJudgeADeletion(t *testing.T) {
	node01 := authenticationv1.UserInfo{Username: "system:node:node01", Groups: []string{"system:nodes"}}
	ctx := authentication.WithUser(context.Background(), node01)
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.PodSpec{NodeName: "node02"}}
	err := DefaultChain().Admit(ctx, &Attributes{Operation: Delete, Resource: pods, Namespace: "default", OldObject: other}, fakeObjects{})
	if err == nil {
		t.Fatal("node01 deleted node02's pod")
	}
	err = DefaultChain().Admit(context.Background(), &Attributes{Operation: Delete, Resource: pods, Namespace: "default", OldObject: other},
		fakeObjects{priorityClasses: []runtime.Object{}})
	if err != nil {
		t.Fatalf("a deletion by a user who is not a node: %v", err)
	}
}
