package storage_test

import (
	"net/http"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/internal/testserver"
)

const csiDrivers = "/apis/storage.k8s.io/v1/csidrivers"

// csiDriver is a CSIDriver named name with the spec given as JSON.
func csiDriver(name, spec string) string {
	return `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"` + name + `"},"spec":{` + spec + `}}`
}

func TestACSIDriverIsDefaultedAsKubernetesDoes(t *testing.T) {
	s := testserver.StartServer(t)
	var d storagev1.CSIDriver
	if code := s.Do(http.MethodPost, csiDrivers, "application/json", csiDriver("inline.example.com", ""), &d); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	sp := d.Spec
	if !ptr.Deref(sp.AttachRequired, false) || ptr.Deref(sp.PodInfoOnMount, true) || ptr.Deref(sp.StorageCapacity, true) ||
		ptr.Deref(sp.RequiresRepublish, true) || ptr.Deref(sp.SELinuxMount, true) || ptr.Deref(sp.PreventPodSchedulingIfMissing, true) {
		t.Fatalf("booleans: %+v", sp)
	}
	if *sp.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy ||
		len(sp.VolumeLifecycleModes) != 1 || sp.VolumeLifecycleModes[0] != storagev1.VolumeLifecyclePersistent {
		t.Fatalf("fsGroupPolicy %v, modes %v", *sp.FSGroupPolicy, sp.VolumeLifecycleModes)
	}
}

func TestEveryClusterListsMkubesDriverAndKubectlGetShowsKubernetesColumns(t *testing.T) {
	s := testserver.StartServer(t)
	body := csiDriver("inline.example.com", `"volumeLifecycleModes":["Persistent","Ephemeral"],"tokenRequests":[{"audience":"vault"}]`)
	if code := s.Do(http.MethodPost, csiDrivers, "application/json", body, nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	columns, rows := testserver.TableOf(t, s, csiDrivers)
	if columns != "Name AttachRequired PodInfoOnMount StorageCapacity TokenRequests RequiresRepublish Modes Age" {
		t.Fatalf("columns: %s", columns)
	}
	want := [][]any{
		{"hostpath.csi.mkube.io", false, false, false, "<unset>", false, "Persistent"},
		{"inline.example.com", true, false, false, "vault", false, "Persistent,Ephemeral"},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows: %v", rows)
	}
	for i, w := range want {
		for j, cell := range w {
			if rows[i][j] != cell {
				t.Fatalf("row %d cell %d: got %v, want %v (%v)", i, j, rows[i][j], cell, rows[i])
			}
		}
	}
}

func TestACSIDriverIsValidatedAsKubernetesDoes(t *testing.T) {
	s := testserver.StartServer(t)
	if code := s.Do(http.MethodPost, csiDrivers, "application/json", csiDriver("fast.example.com", ""), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	// What the driver wants at mount may change; what volumes exist does not.
	if code := s.Do(http.MethodPatch, csiDrivers+"/fast.example.com", "application/merge-patch+json",
		`{"spec":{"podInfoOnMount":true,"storageCapacity":true}}`, nil); code != http.StatusOK {
		t.Fatalf("changing podInfoOnMount: %d", code)
	}
	one := csiDrivers + "/fast.example.com"
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("the name is a DNS subdomain", csiDrivers, csiDriver("Fast_Driver", ""), "metadata.name", "a lowercase RFC 1123 subdomain"),
		testserver.Post("fsGroupPolicy is one Kubernetes knows", csiDrivers, csiDriver("x", `"fsGroupPolicy":"Always"`),
			"spec.fsGroupPolicy", `Unsupported value: "Always"`),
		testserver.Post("so is a lifecycle mode", csiDrivers, csiDriver("x", `"volumeLifecycleModes":["Inline"]`),
			"spec.volumeLifecycleModes", `Unsupported value: "Inline"`),
		testserver.Post("one token per audience", csiDrivers, csiDriver("x", `"tokenRequests":[{"audience":"a"},{"audience":"a"}]`),
			"spec.tokenRequests[1].audience", `Duplicate value: "a"`),
		testserver.Post("a token lives at least 10 minutes", csiDrivers, csiDriver("x", `"tokenRequests":[{"audience":"a","expirationSeconds":60}]`),
			"spec.tokenRequests[0].expirationSeconds", "may not specify a duration less than 10 minutes"),
		testserver.Post("the allocatable count is refreshed at most every 10 seconds", csiDrivers, csiDriver("x", `"nodeAllocatableUpdatePeriodSeconds":5`),
			"spec.nodeAllocatableUpdatePeriodSeconds", "must be greater than or equal to 10 seconds"),
		testserver.Post("tokens in secrets need tokens", csiDrivers, csiDriver("x", `"serviceAccountTokenInSecrets":true`),
			"spec.serviceAccountTokenInSecrets", "serviceAccountTokenInSecrets is set but no tokenRequests are specified"),
		testserver.MergePatch("attachRequired is fixed, at Kubernetes' path attachedRequired", one, `{"spec":{"attachRequired":false}}`,
			"spec.attachedRequired", "field is immutable"),
		testserver.MergePatch("so are the lifecycle modes", one, `{"spec":{"volumeLifecycleModes":["Ephemeral"]}}`,
			"spec.volumeLifecycleModes", "field is immutable"),
	})
}
