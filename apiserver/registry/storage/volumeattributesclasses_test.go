package storage_test

import (
	"net/http"
	"testing"

	"github.com/mkube/mkube/internal/testserver"
)

const attributesClasses = "/apis/storage.k8s.io/v1/volumeattributesclasses"

// attributesClass is a VolumeAttributesClass named name with its fields given as JSON.
func attributesClass(name, fields string) string {
	return `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttributesClass","metadata":{"name":"` + name + `"},` + fields + `}`
}

func TestAVolumeAttributesClassIsValidatedAsKubernetesDoesAndKubectlGetShowsIt(t *testing.T) {
	s := testserver.StartServer(t)
	body := attributesClass("gold", `"driverName":"ebs.csi.aws.com","parameters":{"iops":"3000"}`)
	if code := s.Do(http.MethodPost, attributesClasses, "application/json", body, nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	columns, rows := testserver.TableOf(t, s, attributesClasses)
	if columns != "Name DriverName Age" || len(rows) != 1 || rows[0][0] != "gold" || rows[0][1] != "ebs.csi.aws.com" {
		t.Fatalf("columns %s, rows %v", columns, rows)
	}
	// Labels may change; what the class asks of volumes may not.
	if code := s.Do(http.MethodPatch, attributesClasses+"/gold", "application/merge-patch+json", `{"metadata":{"labels":{"tier":"gold"}}}`, nil); code != http.StatusOK {
		t.Fatalf("labelling: %d", code)
	}

	one := attributesClasses + "/gold"
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a driver is required", attributesClasses, attributesClass("x", `"parameters":{"iops":"1"}`), "driverName", "Required value"),
		testserver.Post("a driver's name is a qualified name", attributesClasses, attributesClass("x", `"driverName":"ebs csi","parameters":{"iops":"1"}`),
			"driverName", "name part must consist of"),
		testserver.Post("a class has parameters", attributesClasses, attributesClass("x", `"driverName":"ebs.csi.aws.com"`),
			"parameters", "must contain at least one key/value pair"),
		testserver.Post("with names", attributesClasses, attributesClass("x", `"driverName":"ebs.csi.aws.com","parameters":{"":"1"}`),
			"parameters", "field can not be empty."),
		testserver.MergePatch("the driver is fixed", one, `{"driverName":"pd.csi.storage.gke.io"}`, "driverName", "updates to driverName are forbidden."),
		testserver.MergePatch("so are the parameters", one, `{"parameters":{"iops":"6000"}}`, "parameters", "updates to parameters are forbidden."),
	})
}
