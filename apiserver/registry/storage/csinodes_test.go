package storage_test

import (
	"net/http"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const csiNodes = "/apis/storage.k8s.io/v1/csinodes"

// csiNode is a CSINode named name with one driver given as JSON.
func csiNode(name, driver string) string {
	return `{"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"` + name + `"},"spec":{"drivers":[` + driver + `]}}`
}

const hostPathDriver = `{"name":"hostpath.csi.mkube.io","nodeID":"node01","topologyKeys":["kubernetes.io/hostname"],"allocatable":{"count":2}}`

func TestACSINodeIsValidatedAsKubernetesDoes(t *testing.T) {
	s := testserver.StartServer(t)
	var created storagev1.CSINode
	if code := s.Do(http.MethodPost, csiNodes, "application/json", csiNode("node01", hostPathDriver), &created); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if d := created.Spec.Drivers; len(d) != 1 || *d[0].Allocatable.Count != 2 {
		t.Fatalf("created: %+v", created.Spec)
	}
	// MutableCSINodeAllocatableCount: a driver's count may change.
	var patched storagev1.CSINode
	if code := s.Do(http.MethodPatch, csiNodes+"/node01", "application/json-patch+json",
		`[{"op":"replace","path":"/spec/drivers/0/allocatable/count","value":5}]`, &patched); code != http.StatusOK {
		t.Fatalf("changing the allocatable count: %d", code)
	}

	long := strings.Repeat("a", 64)
	tests := []struct {
		name, method, path, contentType, body string
		field, message                        string
	}{
		{"a driver needs a name", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"nodeID":"x"}`), "spec.drivers[0].name", "Required value"},
		{"a driver's name is a DNS subdomain", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"host_path","nodeID":"x"}`), "spec.drivers[0].name", "a lowercase RFC 1123 subdomain"},
		{"a provisioner's name such as mkube.io/hostpath is not a driver's", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"mkube.io/hostpath","nodeID":"x"}`), "spec.drivers[0].name", "a lowercase RFC 1123 subdomain"},
		{"a driver's name has at most 63 characters", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"`+long+`","nodeID":"x"}`), "spec.drivers[0].name", "63"},
		{"a driver needs the node's ID", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"hostpath.csi.mkube.io"}`), "spec.drivers[0].nodeID", "Required value"},
		{"a node ID has at most 256 characters", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"hostpath.csi.mkube.io","nodeID":"`+strings.Repeat("n", 257)+`"}`), "spec.drivers[0].nodeID", "must be 256 characters or less"},
		{"an allocatable count is not negative", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"hostpath.csi.mkube.io","nodeID":"x","allocatable":{"count":-1}}`), "spec.drivers[0].allocatable.count",
			"must be greater than or equal to 0"},
		{"a topology key is a qualified name, reported at the driver", http.MethodPost, csiNodes, "application/json",
			csiNode("x", `{"name":"hostpath.csi.mkube.io","nodeID":"x","topologyKeys":["bad key"]}`), "spec.drivers[0]", "name part must consist of"},
		{"a driver is listed once", http.MethodPost, csiNodes, "application/json",
			csiNode("x", hostPathDriver+","+hostPathDriver), "spec.drivers[1].name", `Duplicate value: "hostpath.csi.mkube.io"`},
		{"the name is a node's", http.MethodPost, csiNodes, "application/json",
			csiNode("Node_01", hostPathDriver), "metadata.name", "a lowercase RFC 1123 subdomain"},
		{"a driver keeps its node ID", http.MethodPatch, csiNodes + "/node01", "application/json-patch+json",
			`[{"op":"replace","path":"/spec/drivers/0/nodeID","value":"elsewhere"}]`, "spec.drivers", "field is immutable"},
		{"and its topology keys", http.MethodPatch, csiNodes + "/node01", "application/json-patch+json",
			`[{"op":"replace","path":"/spec/drivers/0/topologyKeys","value":["topology.kubernetes.io/zone"]}]`, "spec.drivers", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(tc.method, tc.path, tc.contentType, tc.body, &st); code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s, want 422", code, st.Message)
			}
			if st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field || !strings.Contains(st.Message, tc.message) {
				t.Fatalf("got %q (details %+v), want %s: %s", st.Message, st.Details, tc.field, tc.message)
			}
		})
	}
}

func TestKubectlGetCSINodeCountsTheDrivers(t *testing.T) {
	s := testserver.StartServer(t)
	if code := s.Do(http.MethodPost, csiNodes, "application/json", csiNode("node01", hostPathDriver), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, s.URL+csiNodes, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("get: %d", code)
	}
	var headers []string
	for _, c := range table.ColumnDefinitions {
		headers = append(headers, c.Name)
	}
	if got := strings.Join(headers, " "); got != "Name Drivers Age" {
		t.Fatalf("columns: %s", got)
	}
	if len(table.Rows) != 1 || table.Rows[0].Cells[0] != "node01" || table.Rows[0].Cells[1] != float64(1) {
		t.Fatalf("rows: %+v", table.Rows)
	}
}
