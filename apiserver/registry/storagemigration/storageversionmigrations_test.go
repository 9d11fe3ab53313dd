package storagemigration_test

import (
	"net/http"
	"testing"

	"github.com/mkube/mkube/internal/testserver"
)

const migrations = "/apis/storagemigration.k8s.io/v1/storageversionmigrations"

func migration(name, resource string) string {
	return `{"apiVersion":"storagemigration.k8s.io/v1","kind":"StorageVersionMigration","metadata":{"name":"` + name + `"},"spec":{"resource":` + resource + `}}`
}

func TestAMigrationNamesOneResourceAndItsOutcomeIsFinal(t *testing.T) {
	s := testserver.StartServer(t)
	if code := s.Do(http.MethodPost, migrations, "application/json", migration("secrets", `{"resource":"secrets"}`), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	status := migrations + "/secrets/status"
	succeeded := `{"status":{"resourceVersion":"42","conditions":[{"type":"Succeeded","status":"True","reason":"Done","message":"","lastTransitionTime":"2026-12-02T10:00:00Z"}]}}`
	if code := s.Do(http.MethodPatch, status, "application/merge-patch+json", succeeded, nil); code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	if columns, rows := testserver.TableOf(t, s, migrations); columns != "Name Resource Status" || rows[0][1] != "secrets" || rows[0][2] != "Succeeded" {
		t.Fatalf("columns %s, rows %v", columns, rows)
	}
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a resource is named", migrations, migration("x", `{"group":"apps"}`), "spec.resource.resource", "resource is required to be set"),
		testserver.Post("as a DNS-1035 label", migrations, migration("x", `{"resource":"Secrets"}`), "spec.resource.resource", "a DNS-1035 label"),
		testserver.Post("in a group that is a DNS subdomain", migrations, migration("x", `{"group":"Apps","resource":"deployments"}`), "spec.resource.group", "lowercase RFC 1123 subdomain"),
		testserver.MergePatch("the resource is fixed", migrations+"/secrets", `{"spec":{"resource":{"resource":"configmaps"}}}`, "spec", "field is immutable"),
		testserver.MergePatch("success is final", status,
			`{"status":{"conditions":[{"type":"Succeeded","status":"False","reason":"Undone","message":"","lastTransitionTime":"2026-12-02T10:00:00Z"}]}}`,
			"status.conditions", "Success condition cannot be set to false once it is true"),
		testserver.MergePatch("so is the resourceVersion migrated to", status, `{"status":{"resourceVersion":"43"}}`, "status.resourceVersion", "field is immutable"),
	})
}
