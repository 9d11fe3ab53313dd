package storage_test

import (
	"net/http"
	"testing"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const volumeAttachments = "/apis/storage.k8s.io/v1/volumeattachments"

// volumeAttachment is a VolumeAttachment named name with the spec and
// status given as JSON.
func volumeAttachment(name, spec, status string) string {
	return `{"apiVersion":"storage.k8s.io/v1","kind":"VolumeAttachment","metadata":{"name":"` + name + `"},"spec":{` + spec + `},"status":{` + status + `}}`
}

const attachPV = `"attacher":"ebs.csi.aws.com","nodeName":"node01","source":{"persistentVolumeName":"pv-1"}`

func TestAVolumeAttachmentsStatusIsTheAttachersAndKubectlGetShowsIt(t *testing.T) {
	s := testserver.StartServer(t)
	var va storagev1.VolumeAttachment
	// A client's status is dropped on create: the attacher writes it.
	if code := s.Do(http.MethodPost, volumeAttachments, "application/json", volumeAttachment("va-1", attachPV, `"attached":true`), &va); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if va.Status.Attached {
		t.Fatal("status kept on create")
	}
	if code := s.Do(http.MethodPatch, volumeAttachments+"/va-1/status", "application/merge-patch+json",
		`{"status":{"attached":true,"attachmentMetadata":{"devicePath":"/dev/xvdb"}}}`, &va); code != http.StatusOK || !va.Status.Attached {
		t.Fatalf("status patch: %d %+v", code, va.Status)
	}
	columns, rows := testserver.TableOf(t, s, volumeAttachments)
	if columns != "Name Attacher PV Node Attached Age" {
		t.Fatalf("columns: %s", columns)
	}
	if len(rows) != 1 || rows[0][1] != "ebs.csi.aws.com" || rows[0][2] != "pv-1" || rows[0][3] != "node01" || rows[0][4] != true {
		t.Fatalf("rows: %v", rows)
	}
}

func TestAVolumeAttachmentIsValidatedAsKubernetesDoes(t *testing.T) {
	s := testserver.StartServer(t)
	if code := s.Do(http.MethodPost, volumeAttachments, "application/json", volumeAttachment("va-1", attachPV, ""), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	inline := func(pv string) string {
		return volumeAttachment("x", `"attacher":"a.example.com","nodeName":"node01","source":{"inlineVolumeSpec":{`+pv+`}}`, "")
	}
	const csi = `"csi":{"driver":"a.example.com","volumeHandle":"h"}`
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("an attacher is required", volumeAttachments, volumeAttachment("x", `"nodeName":"node01","source":{"persistentVolumeName":"pv"}`, ""),
			"spec.attacher", "Required value"),
		testserver.Post("an attacher is a driver's name", volumeAttachments, volumeAttachment("x", `"attacher":"kubernetes.io/aws-ebs","nodeName":"n","source":{"persistentVolumeName":"pv"}`, ""),
			"spec.attacher", "a lowercase RFC 1123 subdomain"),
		testserver.Post("a source is required", volumeAttachments, volumeAttachment("x", `"attacher":"a.example.com","nodeName":"n","source":{}`, ""),
			"spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"),
		testserver.Post("but only one", volumeAttachments, volumeAttachment("x",
			`"attacher":"a.example.com","nodeName":"n","source":{"persistentVolumeName":"pv","inlineVolumeSpec":{`+csi+`}}`, ""),
			"spec.source", "Forbidden: must specify exactly one"),
		testserver.Post("a node's name is required", volumeAttachments, volumeAttachment("x", `"attacher":"a.example.com","source":{"persistentVolumeName":"pv"}`, ""),
			"spec.nodeName", "a lowercase RFC 1123 subdomain"),
		testserver.Post("a volume's name is a DNS subdomain", volumeAttachments, volumeAttachment("x", `"attacher":"a.example.com","nodeName":"n","source":{"persistentVolumeName":"PV_1"}`, ""),
			"spec.source.persistentVolumeName", "a lowercase RFC 1123 subdomain"),
		testserver.Post("an inline volume is a CSI one", volumeAttachments, inline(`"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/x"}`),
			"spec.source.inlineVolumeSpec.csi", "has to be specified in the context of inline volumes"),
		testserver.Post("without capacity", volumeAttachments, inline(csi+`,"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}`),
			"spec.source.inlineVolumeSpec.capacity", "may not be specified in the context of inline volumes"),
		testserver.Post("and kept when released", volumeAttachments, inline(csi+`,"accessModes":["ReadWriteOnce"],"persistentVolumeReclaimPolicy":"Delete"`),
			"spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy", "may only be Retain in the context of inline volumes"),
		testserver.MergePatch("the spec is fixed", volumeAttachments+"/va-1", `{"spec":{"nodeName":"node02"}}`, "spec", "field is immutable"),
	})
}
