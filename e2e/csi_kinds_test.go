package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// The kinds of storage.k8s.io that CSI drivers and their sidecars write,
// with the real kubectl: a driver's CSIDriver, the VolumeAttachment its
// external attacher answers, the CSIStorageCapacity its provisioner
// publishes, and a VolumeAttributesClass. The cluster lists mkube's own
// driver, the one each kubelet reports in its CSINode.
const csiKinds = `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: ebs.csi.aws.com
spec:
  volumeLifecycleModes: [Persistent, Ephemeral]
  tokenRequests: [{audience: sts.amazonaws.com}]
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata:
  name: csi-0123
spec:
  attacher: ebs.csi.aws.com
  nodeName: node01
  source: {persistentVolumeName: pv-ebs}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata:
  name: gp3-zone-a
capacity: 100Gi
storageClassName: gp3
nodeTopology:
  matchLabels: {topology.kubernetes.io/zone: a}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: gold
driverName: ebs.csi.aws.com
parameters: {iops: "6000"}
`

// A class that modifies nothing, which Kubernetes refuses.
const emptyAttributesClass = `apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata:
  name: empty
driverName: ebs.csi.aws.com
`

func TestCSIKindsWithKubectl(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "csi.yaml", csiKinds))

	// The kubelet's CSINode names mkube's driver, and the cluster has its
	// CSIDriver: no attaching, no pod info at mount.
	testserver.EventuallyWithin(t, 30*time.Second, "node01's CSINode lists mkube's driver", func() (bool, string) {
		out, _, _ := k.kubectl(t, "get", "csinode", "node01", "-o", "jsonpath={.spec.drivers[*].name}")
		return out == "hostpath.csi.mkube.io", out
	})
	drivers := parseTable(t, k.mustKubectl(t, "get", "csidrivers"))
	if got := strings.Join(drivers.header, " "); got != "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE" {
		t.Fatalf("kubectl get csidrivers columns: %s", got)
	}
	for name, want := range map[string]string{
		"hostpath.csi.mkube.io": "false false false <unset> false Persistent",
		"ebs.csi.aws.com":       "true false false sts.amazonaws.com false Persistent,Ephemeral",
	} {
		r := drivers.row(t, "NAME", name)
		if got := strings.Join([]string{r["ATTACHREQUIRED"], r["PODINFOONMOUNT"], r["STORAGECAPACITY"], r["TOKENREQUESTS"],
			r["REQUIRESREPUBLISH"], r["MODES"]}, " "); got != want {
			t.Errorf("kubectl get csidrivers %s: %s, want %s", name, got, want)
		}
	}

	// The attacher reports through volumeattachments/status.
	k.mustKubectl(t, "patch", "volumeattachment", "csi-0123", "--subresource", "status", "--type", "merge", "-p", `{"status":{"attached":true}}`)
	va := parseTable(t, k.mustKubectl(t, "get", "volumeattachments")).row(t, "NAME", "csi-0123")
	if va["ATTACHER"] != "ebs.csi.aws.com" || va["PV"] != "pv-ebs" || va["NODE"] != "node01" || va["ATTACHED"] != "true" {
		t.Errorf("kubectl get volumeattachments: %v", va)
	}
	capacity := parseTable(t, k.mustKubectl(t, "get", "csistoragecapacities"))
	if got := strings.Join(capacity.header, " "); got != "NAME STORAGECLASSNAME CAPACITY" {
		t.Fatalf("kubectl get csistoragecapacities columns: %s", got)
	}
	if r := capacity.row(t, "NAME", "gp3-zone-a"); r["STORAGECLASSNAME"] != "gp3" || r["CAPACITY"] != "100Gi" {
		t.Errorf("kubectl get csistoragecapacities: %v", r)
	}
	if r := parseTable(t, k.mustKubectl(t, "get", "vac")).row(t, "NAME", "gold"); r["DRIVERNAME"] != "ebs.csi.aws.com" {
		t.Errorf("kubectl get vac: %v", r)
	}

	// Refused with Kubernetes' messages: a class without parameters, and a
	// driver whose volumes would stop being attached.
	errOut := k.mustFail(t, "apply", "-f", k.manifest(t, "empty.yaml", emptyAttributesClass))
	if !strings.Contains(errOut, `The VolumeAttributesClass "empty" is invalid: parameters: Required value: must contain at least one key/value pair`) {
		t.Errorf("an empty class: %s", errOut)
	}
	errOut = k.mustFail(t, "patch", "csidriver", "ebs.csi.aws.com", "--type", "merge", "-p", `{"spec":{"attachRequired":false}}`)
	if !strings.Contains(errOut, "spec.attachedRequired: Invalid value: false: field is immutable") {
		t.Errorf("changing attachRequired: %s", errOut)
	}
}
