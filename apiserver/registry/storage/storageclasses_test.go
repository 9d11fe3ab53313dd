package storage_test

import (
	"net/http"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const classes = "/apis/storage.k8s.io/v1/storageclasses"

func TestAStorageClassIsDefaultedAndValidatedAsKubernetesDoes(t *testing.T) {
	s := testserver.StartServer(t)
	var sc storagev1.StorageClass
	body := `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"fast"},"provisioner":"mkube.io/hostpath","parameters":{"tier":"ssd"}}`
	if code := s.Do(http.MethodPost, classes, "application/json", body, &sc); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if *sc.ReclaimPolicy != "Delete" || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate {
		t.Fatalf("defaults: reclaimPolicy %s, volumeBindingMode %s", *sc.ReclaimPolicy, *sc.VolumeBindingMode)
	}

	tests := []struct {
		name, method, path, contentType, body string
		field, message                        string
	}{
		{"a provisioner is required", http.MethodPost, classes, "application/json",
			`{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"x"}}`, "provisioner", "Required value"},
		{"Recycle is not a class's policy", http.MethodPost, classes, "application/json",
			`{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"x"},"provisioner":"p","reclaimPolicy":"Recycle"}`,
			"reclaimPolicy", `Unsupported value: "Recycle"`},
		{"parameters are fixed once created", http.MethodPatch, classes + "/fast", "application/merge-patch+json",
			`{"parameters":{"tier":"hdd"}}`, "parameters", "updates to parameters are forbidden."},
		{"so is the binding mode", http.MethodPatch, classes + "/fast", "application/merge-patch+json",
			`{"volumeBindingMode":"WaitForFirstConsumer"}`, "volumeBindingMode", "field is immutable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var st metav1.Status
			if code := s.Do(tc.method, tc.path, tc.contentType, tc.body, &st); code != http.StatusUnprocessableEntity {
				t.Fatalf("got %d %s, want 422", code, st.Message)
			}
			if len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field || !strings.Contains(st.Message, tc.message) {
				t.Fatalf("got %q (causes %+v), want %s: %s", st.Message, st.Details.Causes, tc.field, tc.message)
			}
		})
	}
}

func TestEveryClusterStartsWithTheDefaultClassStandardAndKubectlGetSaysSo(t *testing.T) {
	s := testserver.StartServer(t)
	req, _ := http.NewRequest(http.MethodGet, s.URL+classes, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("get: %d", code)
	}
	var headers []string
	for _, c := range table.ColumnDefinitions {
		headers = append(headers, c.Name)
	}
	if got := strings.Join(headers, " "); got != "Name Provisioner ReclaimPolicy VolumeBindingMode AllowVolumeExpansion Age" {
		t.Fatalf("columns: %s", got)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("want only the bootstrap class, got %d rows", len(table.Rows))
	}
	if cells := table.Rows[0].Cells; cells[0] != "standard (default)" || cells[1] != "mkube.io/hostpath" ||
		cells[2] != "Delete" || cells[3] != "Immediate" || cells[4] != "false" {
		t.Fatalf("row: %v", cells)
	}
}
