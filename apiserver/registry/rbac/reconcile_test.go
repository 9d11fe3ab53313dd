package rbac_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/mkube/mkube/apiserver/authorization"
	"github.com/mkube/mkube/apiserver/authorization/rbac/bootstrappolicy"
	"github.com/mkube/mkube/apiserver/registry/rbac"
	"github.com/mkube/mkube/internal/testserver"
)

// Every start puts back what the defaults lost, keeps what was added,
// and leaves alone what is marked autoupdate: "false".
func TestReconcilingRestoresTheDefaults(t *testing.T) {
	s, p := startRBAC(t)
	getRole := func(name string) rbacv1.ClusterRole {
		var r rbacv1.ClusterRole
		if code := s.Do(http.MethodGet, clusterRoles+"/"+name, "", "", &r); code != http.StatusOK {
			t.Fatalf("get clusterrole %s: %d", name, code)
		}
		return r
	}
	put := func(path string, obj any) {
		data, _ := json.Marshal(obj)
		if code := s.Do(http.MethodPut, path, "application/json", string(data), nil); code != http.StatusOK {
			t.Fatalf("put %s: %d", path, code)
		}
	}
	view := getRole("system:aggregate-to-view") // view aggregates it; the controller manager fills view
	if view.Labels[bootstrappolicy.BootstrappingLabel] != bootstrappolicy.BootstrappingValue || view.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
		t.Fatalf("view: labels %v, annotations %v; want Kubernetes' bootstrapping label and autoupdate annotation", view.Labels, view.Annotations)
	}
	defaults := view.Rules
	extra := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}}
	view.Rules = append(view.Rules[1:], extra) // the first rule lost, one added
	put(clusterRoles+"/system:aggregate-to-view", view)

	edit := getRole("system:aggregate-to-edit")
	edit.Annotations[rbacv1.AutoUpdateAnnotationKey] = "false"
	edit.Rules = nil
	put(clusterRoles+"/system:aggregate-to-edit", edit)

	if code := s.Do(http.MethodDelete, clusterRoleBindings+"/system:basic-user", "", "", nil); code != http.StatusOK {
		t.Fatalf("delete system:basic-user: %d", code)
	}
	var admins rbacv1.ClusterRoleBinding
	s.Do(http.MethodGet, clusterRoleBindings+"/cluster-admin", "", "", &admins)
	admins.Subjects = nil
	put(clusterRoleBindings+"/cluster-admin", admins)

	if err := rbac.ReconcileDefaultPolicy(t.Context(), s.API, quiet); err != nil {
		t.Fatal(err)
	}
	// The lost rule comes back as Kubernetes' reconciliation adds it: one
	// rule a verb and resource.
	view = getRole("system:aggregate-to-view")
	if covered, missing := validation.Covers(view.Rules, defaults); !covered || !slices.ContainsFunc(view.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.APIGroups, "example.com")
	}) {
		t.Errorf("view after a restart: missing %v of the defaults, or the rule added: %v", missing, view.Rules)
	}
	if edit := getRole("system:aggregate-to-edit"); len(edit.Rules) != 0 {
		t.Errorf("edit, autoupdate false: %d rules after a restart, want none, as it was left", len(edit.Rules))
	}
	var basic, admin rbacv1.ClusterRoleBinding
	if code := s.Do(http.MethodGet, clusterRoleBindings+"/system:basic-user", "", "", &basic); code != http.StatusOK {
		t.Errorf("system:basic-user after a restart: %d, want it created again", code)
	}
	s.Do(http.MethodGet, clusterRoleBindings+"/cluster-admin", "", "", &admin)
	if len(admin.Subjects) != 1 || admin.Subjects[0].Name != "system:masters" {
		t.Errorf("cluster-admin's subjects after a restart: %v, want system:masters back", admin.Subjects)
	}
	// And the authorizer, fed from the watch cache, sees it all.
	jane := resource("create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "")
	jane.User = user("jane", "system:authenticated")
	testserver.Eventually(t, "jane may ask about herself again", func() (bool, string) {
		d, reason, _ := p.Authorize(context.Background(), jane)
		return d == authorization.Allow, reason
	})
}
