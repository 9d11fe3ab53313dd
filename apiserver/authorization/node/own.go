package node

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/mkube/mkube/apiserver/authorization"
)

// What is a node's own by name or by field, rather than through its pods:
// its Lease, CSINode and Node, and the pods bound to it.

// ownLease: the node's heartbeat Lease, kube-node-lease/<node>. A create
// names no object yet: NodeRestriction checks the new Lease's name.
func ownLease(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch attrs.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return authorization.NoOpinion, "can only get, create, update, patch, or delete a node lease", nil
	}
	if attrs.Namespace != corev1.NamespaceNodeLease {
		return authorization.NoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", corev1.NamespaceNodeLease), nil
	}
	if attrs.Verb != "create" && attrs.Name != node {
		return authorization.NoOpinion, "can only access node lease with the same name as the requesting node", nil
	}
	return authorization.Allow, "", nil
}

// ownCSINode: the node's CSINode, as its Lease.
func ownCSINode(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch attrs.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return authorization.NoOpinion, "can only get, create, update, patch, or delete a CSINode", nil
	}
	if attrs.Subresource != "" {
		return authorization.NoOpinion, "cannot authorize CSINode subresources", nil
	}
	if attrs.Verb != "create" && attrs.Name != node {
		return authorization.NoOpinion, "can only access CSINode with the same name as the requesting node", nil
	}
	return authorization.Allow, "", nil
}

// ownNode: reading its own Node, by name (a node may look for its Node
// before it exists); creating and writing any Node and its status, which
// NodeRestriction narrows to its own.
func ownNode(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch attrs.Subresource {
	case "":
		switch attrs.Verb {
		case "create", "update", "patch":
			return authorization.Allow, "", nil
		case "get", "list", "watch":
			switch attrs.Name {
			case node:
				return authorization.Allow, "", nil
			case "":
				return authorization.NoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node), nil
			default:
				return authorization.NoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, attrs.Name), nil
			}
		}
	case "status":
		if attrs.Verb == "update" || attrs.Verb == "patch" {
			return authorization.Allow, "", nil
		}
	}
	return authorization.NoOpinion, "", nil
}

// pod: get of a pod bound to the node; list and watch of the pods bound
// to it (fieldSelector spec.nodeName=<node>) or of one of them by name;
// creating and deleting pods, status writes and evictions, which
// NodeRestriction narrows to mirror pods and the node's own pods.
func (a *Authorizer) pod(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	switch attrs.Subresource {
	case "":
		switch attrs.Verb {
		case "get":
			return a.boundPod(node, attrs)
		case "list", "watch":
			if selectsNode(attrs.FieldSelector, node) {
				return authorization.Allow, "", nil
			}
			if attrs.Name != "" {
				return a.boundPod(node, attrs)
			}
			return authorization.NoOpinion, "can only list/watch pods with spec.nodeName field selector", nil
		case "create", "delete":
			return authorization.Allow, "", nil
		}
	case "status":
		if attrs.Verb == "update" || attrs.Verb == "patch" {
			return authorization.Allow, "", nil
		}
	case "eviction":
		if attrs.Verb == "create" {
			return authorization.Allow, "", nil
		}
	}
	return authorization.NoOpinion, "", nil
}

func (a *Authorizer) boundPod(node string, attrs *authorization.Attributes) (authorization.Decision, string, error) {
	if attrs.Name == "" {
		return authorization.NoOpinion, "No Object name found", nil
	}
	if !a.graph.podBoundTo(node, attrs.Namespace, attrs.Name) {
		return authorization.NoOpinion, noRelationship(node), nil
	}
	return authorization.Allow, "", nil
}

// selectsNode: the field selector requires spec.nodeName=node (with "=",
// as the kubelet's fields.OneTermEqualSelector writes it).
func selectsNode(selector, node string) bool {
	if selector == "" {
		return false
	}
	fs, err := fields.ParseSelector(selector)
	if err != nil {
		return false
	}
	for _, r := range fs.Requirements() {
		if r.Field == "spec.nodeName" && r.Operator == selection.Equals && r.Value == node {
			return true
		}
	}
	return false
}
