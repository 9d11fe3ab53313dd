package rbac

import (
	"context"
	"errors"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/auth/rbac/reconciliation"

	"github.com/mkube/mkube/apiserver"
)

// The storages of the default ClusterRoles and ClusterRoleBindings, in
// the shapes component-helpers' reconciliation writes through
// (reconciliation.RuleOwnerModifier and RoleBindingModifier), where
// kube-apiserver passes its loopback clients.

type ruleOwnerStore struct {
	ctx  context.Context
	st   *apiserver.Storage
	wrap func(runtime.Object) reconciliation.RuleOwner // a ClusterRole's or a Role's adapter
}

func clusterRoleStore(ctx context.Context, st *apiserver.Storage) ruleOwnerStore {
	return ruleOwnerStore{ctx, st, func(obj runtime.Object) reconciliation.RuleOwner {
		return reconciliation.ClusterRoleRuleOwner{ClusterRole: obj.(*rbacv1.ClusterRole)}
	}}
}

func roleStore(ctx context.Context, st *apiserver.Storage) ruleOwnerStore {
	return ruleOwnerStore{ctx, st, func(obj runtime.Object) reconciliation.RuleOwner {
		return reconciliation.RoleRuleOwner{Role: obj.(*rbacv1.Role)}
	}}
}

func (s ruleOwnerStore) Get(namespace, name string) (reconciliation.RuleOwner, error) {
	return s.ruleOwner(s.st.Get(s.ctx, namespace, name))
}

func (s ruleOwnerStore) Create(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	return s.ruleOwner(s.st.Create(s.ctx, in.GetObject().DeepCopyObject()))
}

func (s ruleOwnerStore) Update(in reconciliation.RuleOwner) (reconciliation.RuleOwner, error) {
	return s.ruleOwner(update(s.ctx, s.st, in.GetObject()))
}

func (s ruleOwnerStore) ruleOwner(obj runtime.Object, err error) (reconciliation.RuleOwner, error) {
	if err != nil {
		return nil, err
	}
	return s.wrap(obj), nil
}

type clusterRoleBindingStore struct {
	ctx context.Context
	st  *apiserver.Storage
}

func (s clusterRoleBindingStore) Get(namespace, name string) (reconciliation.RoleBinding, error) {
	obj, err := s.st.Get(s.ctx, namespace, name)
	return roleBinding(obj, err)
}

func (s clusterRoleBindingStore) Create(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	return roleBinding(s.st.Create(s.ctx, in.GetObject().DeepCopyObject()))
}

func (s clusterRoleBindingStore) Update(in reconciliation.RoleBinding) (reconciliation.RoleBinding, error) {
	return roleBinding(update(s.ctx, s.st, in.GetObject()))
}

// Delete is how reconciliation replaces a binding whose roleRef changed
// (roleRef is immutable): delete, then create.
func (s clusterRoleBindingStore) Delete(namespace, name string, uid types.UID) error {
	_, _, err := s.st.Delete(s.ctx, namespace, name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	return err
}

func roleBinding(obj runtime.Object, err error) (reconciliation.RoleBinding, error) {
	if err != nil {
		return nil, err
	}
	return reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: obj.(*rbacv1.ClusterRoleBinding)}, nil
}

// update writes want if the stored object is still the one it was
// computed from (the same resourceVersion), else answers Conflict.
func update(ctx context.Context, st *apiserver.Storage, want runtime.Object) (runtime.Object, error) {
	m := want.(metav1.Object)
	return st.Update(ctx, m.GetNamespace(), m.GetName(), func(cur runtime.Object) (runtime.Object, error) {
		if cur.(metav1.Object).GetResourceVersion() != m.GetResourceVersion() {
			return nil, apierrors.NewConflict(st.Resource().GroupResource(), m.GetName(), errors.New("changed while it was reconciled"))
		}
		return want.DeepCopyObject(), nil
	})
}
