package rbac

import (
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Policy is every Role, ClusterRole, RoleBinding and ClusterRoleBinding,
// in memory, with the bindings indexed by subject. The API server feeds it
// through the four Feeds (apiserver.Server.Follow): first each kind's
// objects, then every change. The objects are the watch cache's, shared
// and never modified.
type Policy struct {
	mu                  sync.RWMutex // writers: the four feeds; readers: every request
	roles               map[types.NamespacedName]*rbacv1.Role
	clusterRoles        map[string]*rbacv1.ClusterRole
	roleBindings        map[types.NamespacedName]*rbacv1.RoleBinding
	clusterRoleBindings map[string]*rbacv1.ClusterRoleBinding

	clusterBySubject bindingIndex[subjectKey, *rbacv1.ClusterRoleBinding]
	roleBySubject    bindingIndex[namespacedKey, *rbacv1.RoleBinding]
}

// NewPolicy is an empty policy: until it is fed, RBAC grants nothing.
func NewPolicy() *Policy {
	return &Policy{
		roles: map[types.NamespacedName]*rbacv1.Role{}, clusterRoles: map[string]*rbacv1.ClusterRole{},
		roleBindings: map[types.NamespacedName]*rbacv1.RoleBinding{}, clusterRoleBindings: map[string]*rbacv1.ClusterRoleBinding{},
		clusterBySubject: bindingIndex[subjectKey, *rbacv1.ClusterRoleBinding]{},
		roleBySubject:    bindingIndex[namespacedKey, *rbacv1.RoleBinding]{},
	}
}

// Feed takes one kind's objects into the Policy. Its two methods are what
// apiserver.Server.Follow calls.
type Feed struct {
	p     *Policy
	clear func(p *Policy) // forgets every object of the kind
}

// The feeds of the four kinds.
func (p *Policy) Roles() Feed        { return Feed{p, func(p *Policy) { clear(p.roles) }} }
func (p *Policy) ClusterRoles() Feed { return Feed{p, func(p *Policy) { clear(p.clusterRoles) }} }
func (p *Policy) RoleBindings() Feed {
	return Feed{p, func(p *Policy) { clear(p.roleBindings); clear(p.roleBySubject) }}
}
func (p *Policy) ClusterRoleBindings() Feed {
	return Feed{p, func(p *Policy) { clear(p.clusterRoleBindings); clear(p.clusterBySubject) }}
}

// Replace makes objs the kind's whole set: at the start, and again if the
// feed fell behind the watch cache and had to list.
func (f Feed) Replace(objs []runtime.Object) {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	f.clear(f.p)
	for _, obj := range objs {
		f.p.put(obj)
	}
}

// Update applies one change: obj is nil for a deletion, prev for a creation.
func (f Feed) Update(obj, prev runtime.Object) {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	if obj == nil {
		f.p.remove(prev)
		return
	}
	f.p.put(obj)
}

// put stores obj, replacing (and unindexing) what had its name.
func (p *Policy) put(obj runtime.Object) {
	p.remove(obj)
	switch o := obj.(type) {
	case *rbacv1.Role:
		p.roles[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = o
	case *rbacv1.ClusterRole:
		p.clusterRoles[o.Name] = o
	case *rbacv1.RoleBinding:
		p.roleBindings[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = o
		for _, k := range subjectKeys(o.Subjects, o.Namespace) {
			p.roleBySubject.add(namespacedKey{o.Namespace, k}, o)
		}
	case *rbacv1.ClusterRoleBinding:
		p.clusterRoleBindings[o.Name] = o
		for _, k := range subjectKeys(o.Subjects, "") {
			p.clusterBySubject.add(k, o)
		}
	}
}

// remove forgets the stored object with obj's name, if any.
func (p *Policy) remove(obj runtime.Object) {
	switch o := obj.(type) {
	case *rbacv1.Role:
		delete(p.roles, types.NamespacedName{Namespace: o.Namespace, Name: o.Name})
	case *rbacv1.ClusterRole:
		delete(p.clusterRoles, o.Name)
	case *rbacv1.RoleBinding:
		key := types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
		if old, ok := p.roleBindings[key]; ok {
			for _, k := range subjectKeys(old.Subjects, old.Namespace) {
				p.roleBySubject.remove(namespacedKey{old.Namespace, k}, old)
			}
			delete(p.roleBindings, key)
		}
	case *rbacv1.ClusterRoleBinding:
		if old, ok := p.clusterRoleBindings[o.Name]; ok {
			for _, k := range subjectKeys(old.Subjects, "") {
				p.clusterBySubject.remove(k, old)
			}
			delete(p.clusterRoleBindings, o.Name)
		}
	}
}
