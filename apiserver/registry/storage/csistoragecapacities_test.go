package storage_test

import (
	"net/http"
	"testing"

	"github.com/mkube/mkube/internal/testserver"
)

const capacities = "/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities"

// capacity is a CSIStorageCapacity named name with its fields given as JSON.
func capacity(name, fields string) string {
	return `{"apiVersion":"storage.k8s.io/v1","kind":"CSIStorageCapacity","metadata":{"name":"` + name + `"},` + fields + `}`
}

const zoneA = `"nodeTopology":{"matchLabels":{"topology.kubernetes.io/zone":"a"}}`

func TestACSIStorageCapacityIsValidatedAsKubernetesDoesAndKubectlGetShowsIt(t *testing.T) {
	s := testserver.StartServer(t)
	for name, fields := range map[string]string{
		"fast-a":    zoneA + `,"storageClassName":"fast","capacity":"10Gi"`,
		"unknown-a": zoneA + `,"storageClassName":"slow"`,
	} {
		if code := s.Do(http.MethodPost, capacities, "application/json", capacity(name, fields), nil); code != http.StatusCreated {
			t.Fatalf("create %s: %d", name, code)
		}
	}
	columns, rows := testserver.TableOf(t, s, capacities)
	if columns != "Name StorageClassName Capacity" {
		t.Fatalf("columns: %s", columns)
	}
	if len(rows) != 2 || rows[0][1] != "fast" || rows[0][2] != "10Gi" || rows[1][2] != "<unset>" {
		t.Fatalf("rows: %v", rows)
	}
	// The numbers change as volumes come and go.
	if code := s.Do(http.MethodPatch, capacities+"/fast-a", "application/merge-patch+json", `{"capacity":"5Gi","maximumVolumeSize":"1Gi"}`, nil); code != http.StatusOK {
		t.Fatalf("changing the capacity: %d", code)
	}

	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a class's name is required", capacities, capacity("x", zoneA), "storageClassName", "a lowercase RFC 1123 subdomain"),
		testserver.Post("a capacity is not negative", capacities, capacity("x", zoneA+`,"storageClassName":"fast","capacity":"-1Gi"`),
			"capacity", "must be greater than or equal to 0"),
		testserver.Post("the topology is a valid selector", capacities, capacity("x", `"storageClassName":"fast","nodeTopology":{"matchExpressions":[{"key":"zone","operator":"Near"}]}`),
			"nodeTopology.matchExpressions[0].operator", `Invalid value: "Near": not a valid selector operator`),
		testserver.MergePatch("the class is fixed", capacities+"/fast-a", `{"storageClassName":"slow"}`, "storageClassName", "field is immutable"),
		testserver.MergePatch("so is the topology", capacities+"/fast-a", `{"nodeTopology":{"matchLabels":{"topology.kubernetes.io/zone":"b"}}}`,
			"nodeTopology", "field is immutable"),
	})
}
