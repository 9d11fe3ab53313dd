package core_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const (
	volumesPath = "/api/v1/persistentvolumes"
	claimsPath  = "/api/v1/namespaces/default/persistentvolumeclaims"
)

// tableOf GETs path as the Table kubectl asks for.
func tableOf(t *testing.T, s *testserver.Server, path string) *metav1.Table {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("get %s: %d", path, code)
	}
	return &table
}

func headers(table *metav1.Table) string {
	var out []string
	for _, c := range table.ColumnDefinitions {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}

func TestAVolumeIsDefaultedProtectedAndPrintedAsKubeAPIServerPrintsIt(t *testing.T) {
	s := testserver.StartServer(t)
	var pv corev1.PersistentVolume
	body := `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1"},"spec":{"capacity":{"storage":"5Gi"},
		"accessModes":["ReadWriteMany","ReadWriteOnce"],"nfs":{"server":"nfs1","path":"/exports/pv1"}}}`
	if code := s.Do(http.MethodPost, volumesPath, "application/json", body, &pv); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *pv.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
		pv.Status.Phase != corev1.VolumePending {
		t.Fatalf("defaults: policy %q, mode %v, phase %q", pv.Spec.PersistentVolumeReclaimPolicy, pv.Spec.VolumeMode, pv.Status.Phase)
	}
	if !slices.Equal(pv.Finalizers, []string{"kubernetes.io/pv-protection"}) {
		t.Fatalf("finalizers %v, want the pv-protection one", pv.Finalizers)
	}
	table := tableOf(t, s, volumesPath)
	if got, want := headers(table), "Name,Capacity,Access Modes,Reclaim Policy,Status,Claim,StorageClass,VolumeAttributesClass,Reason,Age,VolumeMode"; got != want {
		t.Fatalf("columns\n  %s\nwant\n  %s", got, want)
	}
	cells := table.Rows[0].Cells
	if cells[0] != "pv1" || cells[1] != "5Gi" || cells[2] != "RWO,RWX" || cells[3] != "Retain" || cells[4] != "Pending" ||
		cells[5] != "" || cells[6] != "" || cells[7] != "<unset>" || cells[10] != "Filesystem" {
		t.Fatalf("row %v", cells)
	}
	var st metav1.Status
	body = `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"bad"},"spec":{"accessModes":["ReadWriteOnce"]}}`
	if code := s.Do(http.MethodPost, volumesPath, "application/json", body, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, "spec.capacity: Required value") || !strings.Contains(st.Message, "must specify a volume type") {
		t.Fatalf("an invalid volume: %d %s", code, st.Message)
	}
}

func TestANewClaimGetsTheDefaultClassAndItsProtection(t *testing.T) {
	s := testserver.StartServer(t)
	tests := []struct {
		name, class string // class: the JSON of storageClassName, "" for none
		want        string
	}{
		{"a claim naming no class gets the default class", "", "standard"},
		{"a claim naming one keeps it", `"storageClassName":"fast",`, "fast"},
		{"a claim asking for no class at all keeps none", `"storageClassName":"",`, ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := []string{"a", "b", "c"}[i]
			body := `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"` + name + `"},"spec":{` + tc.class +
				`"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`
			var pvc corev1.PersistentVolumeClaim
			if code := s.Do(http.MethodPost, claimsPath, "application/json", body, &pvc); code != http.StatusCreated {
				t.Fatalf("create: %d", code)
			}
			if got := *pvc.Spec.StorageClassName; got != tc.want {
				t.Fatalf("storageClassName %q, want %q", got, tc.want)
			}
			if !slices.Equal(pvc.Finalizers, []string{"kubernetes.io/pvc-protection"}) || pvc.Status.Phase != corev1.ClaimPending {
				t.Fatalf("finalizers %v, phase %q", pvc.Finalizers, pvc.Status.Phase)
			}
		})
	}
	table := tableOf(t, s, claimsPath)
	if got, want := headers(table), "Name,Status,Volume,Capacity,Access Modes,StorageClass,VolumeAttributesClass,Age,VolumeMode"; got != want {
		t.Fatalf("columns\n  %s\nwant\n  %s", got, want)
	}
	if cells := table.Rows[0].Cells; cells[0] != "a" || cells[1] != "Pending" || cells[3] != "" || cells[5] != "standard" || cells[6] != "<unset>" {
		t.Fatalf("row %v", cells)
	}
}

func TestOnlyAClaimOfAClassThatAllowsExpansionMayGrow(t *testing.T) {
	s := testserver.StartServer(t)
	body := `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"growing"},"provisioner":"mkube.io/hostpath","allowVolumeExpansion":true}`
	if code := s.Do(http.MethodPost, "/apis/storage.k8s.io/v1/storageclasses", "application/json", body, nil); code != http.StatusCreated {
		t.Fatalf("create class: %d", code)
	}
	for _, c := range []struct{ name, class string }{{"fixed", "standard"}, {"grows", "growing"}} {
		body := `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"` + c.name + `"},"spec":{"storageClassName":"` + c.class +
			`","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`
		if code := s.Do(http.MethodPost, claimsPath, "application/json", body, nil); code != http.StatusCreated {
			t.Fatalf("create %s: %d", c.name, code)
		}
		// What the PersistentVolume controller does when it binds the claim.
		status := `{"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}}`
		if code := s.Do(http.MethodPatch, claimsPath+"/"+c.name+"/status", "application/merge-patch+json", status, nil); code != http.StatusOK {
			t.Fatalf("status %s: %d", c.name, code)
		}
	}
	grow := `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`
	var st metav1.Status
	if code := s.Do(http.MethodPatch, claimsPath+"/fixed", "application/merge-patch+json", grow, &st); code != http.StatusForbidden ||
		st.Message != `persistentvolumeclaims "fixed" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize` {
		t.Fatalf("growing a claim of class standard: %d %q", code, st.Message)
	}
	var pvc corev1.PersistentVolumeClaim
	if code := s.Do(http.MethodPatch, claimsPath+"/grows", "application/merge-patch+json", grow, &pvc); code != http.StatusOK {
		t.Fatalf("growing a claim of class growing: %d", code)
	}
	if q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "2Gi" {
		t.Fatalf("request %s, want 2Gi", q.String())
	}
}
