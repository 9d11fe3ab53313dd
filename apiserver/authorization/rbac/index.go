package rbac

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// subjectKey is how a binding's subject is looked up: a user name or a
// group name. A ServiceAccount subject is the user Kubernetes names it,
// system:serviceaccount:<namespace>:<name>, so one lookup by user name
// finds the bindings of both.
type subjectKey struct {
	group bool
	name  string
}

// namespacedKey is a subject within one namespace's RoleBindings.
type namespacedKey struct {
	namespace string
	subject   subjectKey
}

// serviceAccountPrefix starts the user name of every ServiceAccount.
const serviceAccountPrefix = "system:serviceaccount:"

// subjectKeys are the keys a binding's subjects are found under. A
// ServiceAccount without a namespace takes the binding's (a RoleBinding
// may name "its own" namespace's accounts); in a ClusterRoleBinding,
// which has none, such a subject matches nobody, as in Kubernetes.
func subjectKeys(subjects []rbacv1.Subject, bindingNamespace string) []subjectKey {
	keys := make([]subjectKey, 0, len(subjects))
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			keys = append(keys, subjectKey{name: s.Name})
		case rbacv1.GroupKind:
			keys = append(keys, subjectKey{group: true, name: s.Name})
		case rbacv1.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			if ns != "" {
				keys = append(keys, subjectKey{name: serviceAccountPrefix + ns + ":" + s.Name})
			}
		}
	}
	return keys
}

// bindingIndex maps a key to the bindings that name it, in the order they
// came. B is *rbacv1.ClusterRoleBinding or *rbacv1.RoleBinding; K is
// subjectKey or namespacedKey.
type bindingIndex[K comparable, B comparable] map[K][]B

func (ix bindingIndex[K, B]) add(k K, b B) {
	for _, have := range ix[k] {
		if have == b {
			return // a subject named twice in one binding
		}
	}
	ix[k] = append(ix[k], b)
}

func (ix bindingIndex[K, B]) remove(k K, b B) {
	list := ix[k]
	for i, have := range list {
		if have == b {
			if len(list) == 1 {
				delete(ix, k)
			} else {
				ix[k] = slices.Delete(list, i, i+1)
			}
			return
		}
	}
}
