package rbac

import (
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// binding is a ClusterRoleBinding or a RoleBinding, whichever is set.
type binding struct {
	cluster    *rbacv1.ClusterRoleBinding
	namespaced *rbacv1.RoleBinding
}

func (b binding) object() any {
	if b.cluster != nil {
		return b.cluster
	}
	return b.namespaced
}

// describe names the binding as Kubernetes' allow reasons do, with the
// first of its subjects that is the user:
//
//	ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"
//	RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"
func (b binding) describe(user authenticationv1.UserInfo) string {
	if b.cluster != nil {
		return fmt.Sprintf("ClusterRoleBinding %q of %s %q to %s", b.cluster.Name, b.cluster.RoleRef.Kind, b.cluster.RoleRef.Name,
			describeSubject(user, b.cluster.Subjects, ""))
	}
	rb := b.namespaced
	return fmt.Sprintf("RoleBinding %q of %s %q to %s", rb.Name+"/"+rb.Namespace, rb.RoleRef.Kind, rb.RoleRef.Name,
		describeSubject(user, rb.Subjects, rb.Namespace))
}

// describeSubject is `Kind "name"`, and `ServiceAccount "name/namespace"`
// (Kubernetes' order) for an account.
func describeSubject(user authenticationv1.UserInfo, subjects []rbacv1.Subject, bindingNamespace string) string {
	for _, s := range subjects {
		if !AppliesTo(user, s, bindingNamespace) {
			continue
		}
		if s.Kind == rbacv1.ServiceAccountKind {
			ns := s.Namespace
			if ns == "" {
				ns = bindingNamespace
			}
			return fmt.Sprintf("%s %q", s.Kind, s.Name+"/"+ns)
		}
		return fmt.Sprintf("%s %q", s.Kind, s.Name)
	}
	return "nobody"
}

// AppliesTo reports whether a binding's subject is user: the same name
// (User), one of its groups (Group, which is how system:authenticated,
// system:unauthenticated and system:serviceaccounts:<ns> are bound), or
// the user system:serviceaccount:<ns>:<name> (ServiceAccount, whose
// namespace defaults to the binding's).
func AppliesTo(user authenticationv1.UserInfo, s rbacv1.Subject, bindingNamespace string) bool {
	switch s.Kind {
	case rbacv1.UserKind:
		return user.Username == s.Name
	case rbacv1.GroupKind:
		return slices.Contains(user.Groups, s.Name)
	case rbacv1.ServiceAccountKind:
		ns := s.Namespace
		if ns == "" {
			ns = bindingNamespace
		}
		return ns != "" && user.Username == serviceAccountPrefix+ns+":"+s.Name
	}
	return false
}
