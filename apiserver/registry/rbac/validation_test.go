package rbac_test

import (
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const (
	roles               = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles"
	clusterRoles        = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
	roleBindings        = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
	clusterRoleBindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
)

func manifest(kind, name, rest string) string {
	return `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"` + kind + `","metadata":{"name":"` + name + `"},` + rest + `}`
}

const janeRef = `"subjects":[{"kind":"User","name":"jane","apiGroup":"rbac.authorization.k8s.io"}],`

func TestRBACObjectsAreValidatedAsKubernetesDoes(t *testing.T) {
	s := testserver.StartServer(t)
	for _, body := range []struct{ path, body string }{
		{roles, manifest("Role", "pod-reader", `"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get","watch","list"]}]`)},
		{roleBindings, manifest("RoleBinding", "read-pods", janeRef+`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-reader"}`)},
	} {
		if code := s.Do(http.MethodPost, body.path, "application/json", body.body, nil); code != http.StatusCreated {
			t.Fatalf("create %s: %d", body.path, code)
		}
	}

	tests := []struct {
		name, method, path, contentType, body string
		causes                                []string // field: message, in order
	}{
		{"the seed's RoleBinding, roleRef's fields swapped, is refused on both", http.MethodPost, roleBindings, "application/json",
			manifest("RoleBinding", "swapped", janeRef+`"roleRef":{"apiGroup":"Role","kind":"pod-reader","name":"rbac.authorization.k8s.io"}`),
			[]string{`roleRef.apiGroup: Unsupported value: "Role": supported values: "rbac.authorization.k8s.io"`,
				`roleRef.kind: Unsupported value: "pod-reader": supported values: "Role", "ClusterRole"`}},
		{"a ClusterRoleBinding may only name a ClusterRole", http.MethodPost, clusterRoleBindings, "application/json",
			manifest("ClusterRoleBinding", "x", janeRef+`"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"pod-reader"}`),
			[]string{`roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"`}},
		{"a roleRef needs a name", http.MethodPost, roleBindings, "application/json",
			manifest("RoleBinding", "x", janeRef+`"roleRef":{"kind":"Role"}`),
			[]string{`roleRef.name: Required value`}},
		{"a roleRef cannot change", http.MethodPatch, roleBindings + "/read-pods", "application/merge-patch+json",
			`{"roleRef":{"name":"other"}}`,
			[]string{`roleRef: Invalid value: {"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"other"}: cannot change roleRef`}},
		{"a subject's kind is User, Group or ServiceAccount", http.MethodPost, roleBindings, "application/json",
			manifest("RoleBinding", "x", `"subjects":[{"kind":"Robot","name":"r2"}],"roleRef":{"kind":"Role","name":"pod-reader"}`),
			[]string{`subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"`}},
		{"a ServiceAccount is in the core group", http.MethodPost, roleBindings, "application/json",
			manifest("RoleBinding", "x", `"subjects":[{"kind":"ServiceAccount","name":"default","apiGroup":"rbac.authorization.k8s.io"}],"roleRef":{"kind":"Role","name":"pod-reader"}`),
			[]string{`subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""`}},
		{"in a ClusterRoleBinding a ServiceAccount needs its namespace", http.MethodPost, clusterRoleBindings, "application/json",
			manifest("ClusterRoleBinding", "x", `"subjects":[{"kind":"ServiceAccount","name":"default"}],"roleRef":{"kind":"ClusterRole","name":"view"}`),
			[]string{`subjects[0].namespace: Required value`}},
		{"a rule needs verbs", http.MethodPost, roles, "application/json",
			manifest("Role", "x", `"rules":[{"apiGroups":[""],"resources":["pods"]}]`),
			[]string{`rules[0].verbs: Required value: verbs must contain at least one value`}},
		{"a resource rule needs groups and resources", http.MethodPost, clusterRoles, "application/json",
			manifest("ClusterRole", "x", `"rules":[{"verbs":["get"]}]`),
			[]string{`rules[0].apiGroups: Required value: resource rules must supply at least one api group`,
				`rules[0].resources: Required value: resource rules must supply at least one resource`}},
		{"an aggregationRule selects something", http.MethodPost, clusterRoles, "application/json",
			manifest("ClusterRole", "x", `"aggregationRule":{"clusterRoleSelectors":[]}`),
			[]string{`aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil`}},
		{"with valid selectors", http.MethodPost, clusterRoles, "application/json",
			manifest("ClusterRole", "x", `"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"a b":"c"}}]}`),
			[]string{`aggregationRule.clusterRoleSelectors[0].matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
				`aggregationRule.clusterRoleSelectors[0]: Invalid value: {"matchLabels":{"a b":"c"}}: invalid label selector.`}},
		{"a Role cannot grant paths", http.MethodPost, roles, "application/json",
			manifest("Role", "x", `"rules":[{"nonResourceURLs":["/healthz"],"verbs":["get"]}]`),
			[]string{`rules[0].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs`}},
		{"a rule is for resources or paths, not both", http.MethodPost, clusterRoles, "application/json",
			manifest("ClusterRole", "x", `"rules":[{"nonResourceURLs":["/healthz"],"resources":["pods"],"verbs":["get"]}]`),
			[]string{`rules[0].nonResourceURLs: Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(tc.method, tc.path, tc.contentType, tc.body, &st); code != http.StatusUnprocessableEntity {
				t.Fatalf("%d %s, want 422 Invalid", code, st.Message)
			}
			var got []string
			for _, c := range st.Details.Causes {
				got = append(got, c.Field+": "+c.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tc.causes, "\n") {
				t.Errorf("causes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.causes, "\n"))
			}
		})
	}
}

// RBAC names are path segments: the default roles' colons are fine.
func TestRBACNamesMayHaveColons(t *testing.T) {
	s := testserver.StartServer(t)
	var created struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Subjects []struct {
			APIGroup string `json:"apiGroup"`
		} `json:"subjects"`
	}
	body := manifest("ClusterRoleBinding", "system:my-binding", `"subjects":[{"kind":"Group","name":"system:authenticated"}],"roleRef":{"kind":"ClusterRole","name":"system:basic-user"}`)
	if code := s.Do(http.MethodPost, clusterRoleBindings, "application/json", body, &created); code != http.StatusCreated {
		t.Fatalf("create system:my-binding: %d", code)
	}
	if created.Metadata.Name != "system:my-binding" || created.Subjects[0].APIGroup != "rbac.authorization.k8s.io" {
		t.Errorf("created %+v: want the name kept and the Group subject defaulted to rbac.authorization.k8s.io", created)
	}
	if code := s.Do(http.MethodPost, clusterRoles, "application/json", manifest("ClusterRole", "a/b", `"rules":[]`), nil); code != http.StatusUnprocessableEntity {
		t.Errorf("a name with a slash: %d, want 422: it is no path segment", code)
	}
}
