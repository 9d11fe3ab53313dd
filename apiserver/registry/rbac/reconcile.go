package rbac

import (
	"context"
	"fmt"
	"log/slog"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-helpers/auth/rbac/reconciliation"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authorization"
	rbacauthz "github.com/mkube/mkube/apiserver/authorization/rbac"
	"github.com/mkube/mkube/apiserver/authorization/rbac/bootstrappolicy"
)

// Feed hands the server's roles and bindings to the RBAC authorizer's
// policy: each kind is listed into it before Feed returns, and every
// change follows. Call it after srv.Start, before serving.
func Feed(ctx context.Context, srv *apiserver.Server, p *rbacauthz.Policy) error {
	for _, f := range []struct {
		res  *apiserver.Resource
		feed rbacauthz.Feed
	}{
		{Roles, p.Roles()}, {ClusterRoles, p.ClusterRoles()},
		{RoleBindings, p.RoleBindings()}, {ClusterRoleBindings, p.ClusterRoleBindings()},
	} {
		if err := srv.Follow(ctx, f.res.GroupVersionResource(), f.feed); err != nil {
			return err
		}
	}
	return nil
}

// apiserverUser is who the server writes the default policy as: a
// member of system:masters, as kube-apiserver's loopback client is.
var apiserverUser = authenticationv1.UserInfo{Username: "system:apiserver", Groups: []string{authorization.Masters}}

// conflictRetries: a second API server starting at the same time is the
// only other writer of the defaults, so a few immediate retries suffice.
const conflictRetries = 3

// ReconcileDefaultPolicy makes the default ClusterRoles and
// ClusterRoleBindings (package bootstrappolicy) hold at least what
// Kubernetes gives them, as kube-apiserver's rbac/bootstrap-roles hook
// does at every start: a missing one is created; one that lost rules,
// subjects, its label or annotation gets them back, keeping what an
// administrator added; one annotated rbac.authorization.kubernetes.io/
// autoupdate: "false" is left alone. Call it after srv.Start; log may
// be nil.
func ReconcileDefaultPolicy(ctx context.Context, srv *apiserver.Server, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	ctx = authentication.WithUser(ctx, apiserverUser)
	clusterRoles := clusterRoleStore(ctx, srv.StorageFor(ClusterRoles.GroupVersionResource()))
	for _, role := range bootstrappolicy.ClusterRoles() {
		if err := reconcileRole(log, "clusterrole", reconciliation.ClusterRoleRuleOwner{ClusterRole: &role}, clusterRoles); err != nil {
			return err
		}
	}
	roles := roleStore(ctx, srv.StorageFor(Roles.GroupVersionResource()))
	for _, role := range bootstrappolicy.Roles() {
		if err := reconcileRole(log, "role", reconciliation.RoleRuleOwner{Role: &role}, roles); err != nil {
			return err
		}
	}
	bindings := clusterRoleBindingStore{ctx, srv.StorageFor(ClusterRoleBindings.GroupVersionResource())}
	for _, b := range bootstrappolicy.ClusterRoleBindings() {
		opts := reconciliation.ReconcileRoleBindingOptions{RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &b}, Confirm: true, Client: bindings}
		err := retryOnConflict(func() error {
			res, err := opts.Run()
			if err == nil {
				logReconciled(log, "clusterrolebinding", b.Name, res.Operation, res.Protected, len(res.MissingSubjects) > 0)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("reconcile clusterrolebinding %s: %w", b.Name, err)
		}
	}
	return nil
}

// reconcileRole creates role, or gives it back the rules it lost.
func reconcileRole(log *slog.Logger, kind string, role reconciliation.RuleOwner, st ruleOwnerStore) error {
	opts := reconciliation.ReconcileRoleOptions{Role: role, Confirm: true, Client: st}
	err := retryOnConflict(func() error {
		res, err := opts.Run()
		if err == nil {
			logReconciled(log, kind, role.GetName(), res.Operation, res.Protected, len(res.MissingRules) > 0)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("reconcile %s %s: %w", kind, role.GetName(), err)
	}
	return nil
}

func retryOnConflict(fn func() error) error {
	var err error
	for range conflictRetries {
		if err = fn(); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

func logReconciled(log *slog.Logger, kind, name string, op reconciliation.ReconcileOperation, protected, missing bool) {
	object := kind + "." + rbacv1.GroupName + "/" + name
	switch {
	case protected && missing:
		log.Warn("default RBAC object lacks Kubernetes' defaults but is annotated autoupdate=false", "object", object)
	case op == reconciliation.ReconcileCreate:
		log.Debug("created default RBAC object", "object", object)
	case op == reconciliation.ReconcileUpdate, op == reconciliation.ReconcileRecreate:
		log.Info("restored the defaults of an RBAC object", "object", object)
	}
}

// Start is what the API server does for RBAC once its storage runs:
// reconcile the default policy, then feed the authorizer's policy p.
func Start(ctx context.Context, srv *apiserver.Server, p *rbacauthz.Policy, log *slog.Logger) error {
	if err := ReconcileDefaultPolicy(ctx, srv, log); err != nil {
		return err
	}
	return Feed(ctx, srv, p)
}
