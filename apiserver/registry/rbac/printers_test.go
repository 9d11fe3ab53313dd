package rbac_test

import (
	"net/http"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// kubectl get prints what the server's Table says, as kube-apiserver's
// printers: NAME, CREATED AT for roles; NAME, ROLE, AGE and, with -o
// wide, USERS, GROUPS, SERVICEACCOUNTS for bindings.
func TestRBACTablesAreKubeAPIServers(t *testing.T) {
	s := testserver.StartServer(t)
	for _, o := range []struct{ path, body string }{
		{roles, manifest("Role", "pod-reader", `"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]`)},
		{roleBindings, manifest("RoleBinding", "read-pods", `"subjects":[{"kind":"User","name":"jane"},{"kind":"User","name":"joe"},`+
			`{"kind":"Group","name":"manager"},{"kind":"ServiceAccount","name":"ci","namespace":"build"}],"roleRef":{"kind":"Role","name":"pod-reader"}`)},
	} {
		if code := s.Do(http.MethodPost, o.path, "application/json", o.body, nil); code != http.StatusCreated {
			t.Fatalf("create %s: %d", o.path, code)
		}
	}
	tests := []struct {
		name, path string
		columns    []string
		cells      func(created time.Time) []any
	}{
		{"a Role", roles, []string{"Name", "Created At"}, func(c time.Time) []any { return []any{"pod-reader", c.UTC().Format(time.RFC3339)} }},
		{"a RoleBinding", roleBindings, []string{"Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"},
			func(time.Time) []any {
				return []any{"read-pods", "Role/pod-reader", "0s", "jane, joe", "manager", "build/ci"}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, s.URL+tc.path, nil)
			req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			var table metav1.Table
			if code := s.DoRequest(req, &table); code != http.StatusOK || len(table.Rows) != 1 {
				t.Fatalf("GET %s as Table: %d, %d rows", tc.path, code, len(table.Rows))
			}
			var cols []string
			for _, c := range table.ColumnDefinitions {
				cols = append(cols, c.Name)
			}
			if !reflect.DeepEqual(cols, tc.columns) {
				t.Errorf("columns %v, want %v", cols, tc.columns)
			}
			var meta struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			s.Do(http.MethodGet, tc.path+"/"+table.Rows[0].Cells[0].(string), "", "", &meta)
			want := tc.cells(meta.Metadata.CreationTimestamp.Time)
			got := table.Rows[0].Cells
			if len(got) > 2 && len(got) == len(want) && want[2] == "0s" {
				want[2] = got[2] // the age: a second may have passed
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("cells %#v, want %#v", got, want)
			}
		})
	}
}
