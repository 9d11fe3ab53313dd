package node

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver/authorization"
)

func nodeUser(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: UserPrefix + name, Groups: []string{NodesGroup, "system:authenticated"}}
}

// web runs on node01 with a Secret volume, a ConfigMap env var, a claim
// and its service account; db is unbound and names the Secret "db".
func testGraph() *Graph {
	g := NewGraph()
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "node01", ServiceAccountName: "web-sa",
			Containers: []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}}}}},
			Volumes: []corev1.Volume{
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "web-tls"}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			}}}
	db := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "db"}}}}}}
	g.Pods().Replace([]runtime.Object{web, db})
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
		ClaimRef: &corev1.ObjectReference{Namespace: "default", Name: "data"},
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h",
			NodePublishSecretRef: &corev1.SecretReference{Name: "csi-creds"}}}}}
	g.PersistentVolumes().Replace([]runtime.Object{pv})
	return g
}

func TestTheNodeAuthorizerAllowsANodeWhatConcernsIt(t *testing.T) {
	authz := New(testGraph())
	res := func(verb, group, resource, sub, ns, name string) authorization.Attributes {
		return authorization.Attributes{User: nodeUser("node01"), Verb: verb, ResourceRequest: true, APIGroup: group,
			Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	watchPods := res("watch", "", "pods", "", "", "")
	watchPods.FieldSelector = "spec.nodeName=node01"
	otherNodesPods := watchPods
	otherNodesPods.FieldSelector = "spec.nodeName=node02"
	tests := []struct {
		name   string
		a      authorization.Attributes
		want   authorization.Decision
		reason string
	}{
		{"a node reads the Secret its pod mounts", res("get", "", "secrets", "", "default", "web-tls"), authorization.Allow, ""},
		{"and watches it by name, as a kubelet's per-object watch does", res("watch", "", "secrets", "", "default", "web-tls"), authorization.Allow, ""},
		{"a node is refused a Secret its pods do not use", res("get", "", "secrets", "", "default", "other"), authorization.NoOpinion,
			"no relationship found between node 'node01' and this object"},
		{"and a Secret an unbound pod uses", res("get", "", "secrets", "", "default", "db"), authorization.NoOpinion,
			"no relationship found between node 'node01' and this object"},
		{"and the same name in another namespace", res("get", "", "secrets", "", "kube-system", "web-tls"), authorization.NoOpinion,
			"no relationship found between node 'node01' and this object"},
		{"another node is refused the Secret node01's pod uses", authorization.Attributes{User: nodeUser("node02"), Verb: "get",
			ResourceRequest: true, Resource: "secrets", Namespace: "default", Name: "web-tls"}, authorization.NoOpinion,
			"no relationship found between node 'node02' and this object"},
		{"a node may not list Secrets", res("list", "", "secrets", "", "default", ""), authorization.NoOpinion, "No Object name found"},
		{"nor write them", res("update", "", "secrets", "", "default", "web-tls"), authorization.NoOpinion, "can only read resources of this type"},
		{"a ConfigMap of a pod's env", res("get", "", "configmaps", "", "default", "settings"), authorization.Allow, ""},
		{"the pod's claim", res("get", "", "persistentvolumeclaims", "", "default", "data"), authorization.Allow, ""},
		{"but only by get", res("watch", "", "persistentvolumeclaims", "", "default", "data"), authorization.NoOpinion,
			"can only get individual resources of this type"},
		{"the claim's volume", res("get", "", "persistentvolumes", "", "", "pv-1"), authorization.Allow, ""},
		{"and the Secret the volume's CSI driver publishes with, in the claim's namespace", res("get", "", "secrets", "", "default", "csi-creds"), authorization.Allow, ""},
		{"a token of its pod's service account", res("create", "", "serviceaccounts", "token", "default", "web-sa"), authorization.Allow, ""},
		{"not of another", res("create", "", "serviceaccounts", "token", "default", "default"), authorization.NoOpinion,
			"no relationship found between node 'node01' and this object"},
		{"its own pod", res("get", "", "pods", "", "default", "web"), authorization.Allow, ""},
		{"not another node's", res("get", "", "pods", "", "default", "db"), authorization.NoOpinion,
			"no relationship found between node 'node01' and this object"},
		{"the pods bound to it, by spec.nodeName", watchPods, authorization.Allow, ""},
		{"not another node's pods", otherNodesPods, authorization.NoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"not every pod", res("list", "", "pods", "", "", ""), authorization.NoOpinion, "can only list/watch pods with spec.nodeName field selector"},
		{"pod status writes, which NodeRestriction narrows", res("update", "", "pods", "status", "default", "db"), authorization.Allow, ""},
		{"its own Node", res("get", "", "nodes", "", "", "node01"), authorization.Allow, ""},
		{"not another Node", res("get", "", "nodes", "", "", "node02"), authorization.NoOpinion, "node 'node01' cannot read 'node02', only its own Node object"},
		{"not every Node", res("list", "", "nodes", "", "", ""), authorization.NoOpinion, "node 'node01' cannot read all nodes, only its own Node object"},
		{"its Lease", res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node01"), authorization.Allow, ""},
		{"not another's", res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "node02"), authorization.NoOpinion,
			"can only access node lease with the same name as the requesting node"},
		{"not a Lease elsewhere", res("create", "coordination.k8s.io", "leases", "", "default", ""), authorization.NoOpinion,
			`can only access leases in the "kube-node-lease" system namespace`},
		{"what system:node grants every node: Services", res("list", "", "services", "", "", ""), authorization.Allow, ""},
		{"and events", res("create", "", "events", "", "default", ""), authorization.Allow, ""},
		{"but nothing else", res("delete", "apps", "deployments", "", "default", "web"), authorization.NoOpinion, ""},
		{"a user not in system:nodes is not a node", authorization.Attributes{User: authenticationv1.UserInfo{Username: "system:node:node01"},
			Verb: "get", ResourceRequest: true, Resource: "secrets", Namespace: "default", Name: "web-tls"}, authorization.NoOpinion, ""},
		{"a node without a name may do nothing", authorization.Attributes{User: nodeUser(""), Verb: "list", ResourceRequest: true, Resource: "services"},
			authorization.NoOpinion, `unknown node for user "system:node:"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, reason, err := authz.Authorize(context.Background(), tc.a)
			if err != nil || d != tc.want || reason != tc.reason {
				t.Errorf("Authorize = %v, %q, %v; want %v, %q", d, reason, err, tc.want, tc.reason)
			}
		})
	}
}

// The 403 a kubelet gets for a Secret its pods do not use, word for word.
func TestARefusedNodeIsToldAsKubernetesTellsIt(t *testing.T) {
	chain := authorization.Chain([]string{authorization.ModeNode, authorization.ModeRBAC}, authorization.Union{}, New(testGraph()))
	a := authorization.Attributes{User: nodeUser("node01"), Verb: "get", ResourceRequest: true, Resource: "secrets", Namespace: "default", Name: "x"}
	d, reason, _ := chain.Authorize(context.Background(), a)
	want := `secrets "x" is forbidden: User "system:node:node01" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'node01' and this object`
	if got := authorization.Forbidden(a, reason).Error(); d != authorization.NoOpinion || got != want {
		t.Errorf("%v:\n got %s\nwant %s", d, got, want)
	}
}

func TestAFleetMayImpersonateNodesAndNothingElse(t *testing.T) {
	fleet := authenticationv1.UserInfo{Username: "mkube:kubelet-fleet", Groups: []string{FleetsGroup, "system:authenticated"}}
	imp := func(user authenticationv1.UserInfo, resource, name string) authorization.Attributes {
		return authorization.Attributes{User: user, Verb: "impersonate", ResourceRequest: true, Resource: resource, Name: name}
	}
	tests := []struct {
		name string
		a    authorization.Attributes
		want authorization.Decision
	}{
		{"a fleet may be any node", imp(fleet, "users", "system:node:fake-0042"), authorization.Allow},
		{"in system:nodes", imp(fleet, "groups", "system:nodes"), authorization.Allow},
		{"but not a nameless node", imp(fleet, "users", "system:node:"), authorization.NoOpinion},
		{"nor another user", imp(fleet, "users", "kubernetes-admin"), authorization.NoOpinion},
		{"nor another group", imp(fleet, "groups", "system:masters"), authorization.NoOpinion},
		{"nor a service account", imp(fleet, "serviceaccounts", "default"), authorization.NoOpinion},
		{"and a user outside the fleets group may not be a node", imp(authenticationv1.UserInfo{Username: "jane"}, "users", "system:node:node01"), authorization.NoOpinion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d, _, _ := (FleetImpersonation{}).Authorize(context.Background(), tc.a); d != tc.want {
				t.Errorf("Authorize = %v, want %v", d, tc.want)
			}
		})
	}
}

// Whatever a request says, the authorizer answers without panicking, has
// no opinion on anyone but nodes, and never lets a node read a Secret no
// pod of its leads to.
func FuzzAuthorize(f *testing.F) {
	f.Add("system:node:node01", "get", "", "secrets", "", "default", "web-tls", "")
	f.Add("system:node:node01", "watch", "", "pods", "", "", "", "spec.nodeName=node01")
	f.Add("jane", "get", "", "secrets", "", "default", "web-tls", "")
	f.Add("system:node:node01", "list", "", "pods", "", "", "", "spec.nodeName!=node01,metadata.name=web")
	authz := New(testGraph())
	f.Fuzz(func(t *testing.T, user, verb, group, resource, sub, ns, name, selector string) {
		a := authorization.Attributes{User: authenticationv1.UserInfo{Username: user, Groups: []string{NodesGroup}}, Verb: verb,
			ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, FieldSelector: selector}
		d, _, _ := authz.Authorize(context.Background(), a)
		node, isNode := Identify(a.User)
		if !isNode && d != authorization.NoOpinion {
			t.Fatalf("a non-node %q got %v", user, d)
		}
		if d == authorization.Allow && group == "" && resource == "secrets" && !authz.graph.reaches(node, ref{secretKind, ns, name}) {
			t.Fatalf("node %q may read secret %s/%s, which none of its pods uses", node, ns, name)
		}
	})
}
