package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/internal/testserver"
)

// Seed 003 §五's storage lifecycle with the real kubectl: static volumes
// and the claim that picks the right one, claims that cannot bind and say
// why, the three reclaim policies, dynamic provisioning through the
// default class, and a claim kept while a pod uses it. Pods do not mount
// claims yet (a later issue), so the test writes into the volumes'
// directories itself, where a pod's writes would land.
const staticVolumes = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-1g
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data/pv-1g}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node01]}]
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-5g
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data/pv-5g}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node01]}]
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-10g
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  hostPath: {path: /data/pv-10g}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node01]}]
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: recycled
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Recycle
  storageClassName: scratch
  hostPath: {path: /data/recycled}
  nodeAffinity:
    required:
      nodeSelectorTerms:
        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node01]}]
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: nfs-share
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Delete
  storageClassName: shared
  nfs: {server: nfs1, path: /exports/share}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: static
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 3Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: too-big
spec:
  storageClassName: ""
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 50Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: golden
spec:
  storageClassName: gold
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: scratch
spec:
  storageClassName: scratch
  volumeName: recycled
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: share
spec:
  storageClassName: shared
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
`

// A class whose volumes can grow, and a claim of it.
const expandableClaim = `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: expandable
provisioner: mkube.io/hostpath
allowVolumeExpansion: true
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: growing
spec:
  storageClassName: expandable
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

// Two claims of the default class: one to delete, one a pod holds.
const dynamicClaims = `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: dynamic
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: held
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata:
  name: user
spec:
  terminationGracePeriodSeconds: 0
  containers:
    - name: c
      image: busybox:1.36
      command: [sleep, "3600"]
  volumes:
    - name: data
      persistentVolumeClaim: {claimName: held}
`

func TestStorage(t *testing.T) {
	t.Parallel()
	c := startCluster(t, nil, "node01")
	k := newKubectl(t, c)
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "static.yaml", staticVolumes))

	pvc := func(name string) map[string]string {
		t.Helper()
		return parseTable(t, k.mustKubectl(t, "get", "pvc", name)).rows[0]
	}
	pv := func(name string) map[string]string {
		t.Helper()
		return parseTable(t, k.mustKubectl(t, "get", "pv", name)).rows[0]
	}
	waitFor := func(what string, cond func() (bool, string)) {
		t.Helper()
		testserver.EventuallyWithin(t, 30*time.Second, what, cond)
	}
	gone := func(kind, name string) func() (bool, string) {
		return func() (bool, string) {
			_, errOut, code := k.kubectl(t, "get", kind, name)
			return code != 0 && strings.Contains(errOut, "NotFound"), errOut
		}
	}

	// Binding: of 1Gi, 5Gi and 10Gi, a 3Gi claim gets the 5Gi volume.
	waitFor("the static claim is bound", func() (bool, string) {
		row := pvc("static")
		return row["STATUS"] == "Bound", row["STATUS"]
	})
	if row := pvc("static"); row["VOLUME"] != "pv-5g" || row["CAPACITY"] != "5Gi" || row["ACCESS MODES"] != "RWO" {
		t.Fatalf("kubectl get pvc static: %v", row)
	}
	if row := pv("pv-5g"); row["STATUS"] != "Bound" || row["CLAIM"] != "default/static" || row["RECLAIM POLICY"] != "Retain" {
		t.Fatalf("kubectl get pv pv-5g: %v", row)
	}
	for _, name := range []string{"pv-1g", "pv-10g"} {
		if row := pv(name); row["STATUS"] != "Available" || row["CLAIM"] != "" {
			t.Fatalf("kubectl get pv %s: %v", name, row)
		}
	}

	// Claims that cannot bind say why in kubectl describe.
	for _, tc := range []struct{ claim, want string }{
		{"too-big", `FailedBinding\s.*no persistent volumes available for this claim and no storage class is set`},
		{"golden", `ProvisioningFailed\s.*storageclass.storage.k8s.io "gold" not found`},
	} {
		waitFor("kubectl describe pvc "+tc.claim+" says why", func() (bool, string) {
			out := k.mustKubectl(t, "describe", "pvc", tc.claim)
			return matches(tc.want, out) && matches(`Status:\s+Pending`, out), out
		})
	}

	// Retain: the claim goes, the volume is Released with its data.
	data := filepath.Join(c.dir, "nodes", "node01", "data", "pv-5g", "db")
	writeStorageFile(t, data)
	k.mustKubectl(t, "delete", "pvc", "static")
	waitFor("pv-5g is Released", func() (bool, string) {
		row := pv("pv-5g")
		return row["STATUS"] == "Released" && row["CLAIM"] == "default/static", row["STATUS"]
	})
	if _, err := os.Stat(data); err != nil {
		t.Fatalf("Retain lost the data: %v", err)
	}

	// Recycle: scrubbed and Available again.
	waitFor("the scratch claim is bound to the recycled volume", func() (bool, string) {
		row := pvc("scratch")
		return row["STATUS"] == "Bound" && row["VOLUME"] == "recycled", row["STATUS"]
	})
	old := filepath.Join(c.dir, "nodes", "node01", "data", "recycled", "old", "data")
	writeStorageFile(t, old)
	k.mustKubectl(t, "delete", "pvc", "scratch")
	waitFor("the recycled volume is Available", func() (bool, string) {
		row := pv("recycled")
		return row["STATUS"] == "Available" && row["CLAIM"] == "", row["STATUS"]
	})
	if entries, err := os.ReadDir(filepath.Dir(filepath.Dir(old))); err != nil || len(entries) != 0 {
		t.Fatalf("the recycled volume still holds %v (%v)", entries, err)
	}
	if out := k.mustKubectl(t, "describe", "pv", "recycled"); !matches(`VolumeRecycled\s.*Volume recycled`, out) {
		t.Fatalf("kubectl describe pv recycled:\n%s", out)
	}

	// Delete of a static nfs volume: nothing can delete an NFS export, the
	// volume is Failed and says so.
	waitFor("the share claim is bound", func() (bool, string) {
		row := pvc("share")
		return row["STATUS"] == "Bound" && row["VOLUME"] == "nfs-share", row["STATUS"]
	})
	k.mustKubectl(t, "delete", "pvc", "share")
	waitFor("the nfs volume is Failed", func() (bool, string) {
		out := k.mustKubectl(t, "describe", "pv", "nfs-share")
		return matches(`Status:\s+Failed`, out) &&
			strings.Contains(out, `error getting deleter volume plugin for volume "nfs-share": no deletable volume plugin matched`), out
	})

	// Dynamic provisioning through the default class, and Delete.
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "dynamic.yaml", dynamicClaims))
	var volume string
	waitFor("the dynamic claim is bound to a provisioned volume", func() (bool, string) {
		row := pvc("dynamic")
		volume = row["VOLUME"]
		return row["STATUS"] == "Bound" && strings.HasPrefix(volume, "pvc-") && row["STORAGECLASS"] == "standard", strings.Join([]string{row["STATUS"], volume}, " ")
	})
	if row := pv(volume); row["RECLAIM POLICY"] != "Delete" || row["STORAGECLASS"] != "standard" || row["CLAIM"] != "default/dynamic" {
		t.Fatalf("kubectl get pv %s: %v", volume, row)
	}
	dir := filepath.Join(c.dir, "nfs", "mkube-provisioner", volume)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("no directory for %s: %v", volume, err)
	}
	if out := k.mustKubectl(t, "describe", "pvc", "dynamic"); !matches(`ProvisioningSucceeded\s.*Successfully provisioned volume `+volume+` using mkube.io/hostpath`, out) {
		t.Fatalf("kubectl describe pvc dynamic:\n%s", out)
	}
	// Resize: the default class does not let its volumes grow, so the
	// claim keeps its size; a class with allowVolumeExpansion grows both
	// the volume and the claim, with the resizer's events.
	grow := func(claim string) (string, int) {
		_, errOut, code := k.kubectl(t, "patch", "pvc", claim, "-p", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
		return errOut, code
	}
	refused := `Error from server (Forbidden): persistentvolumeclaims "dynamic" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`
	if errOut, code := grow("dynamic"); code == 0 || strings.TrimSpace(errOut) != refused {
		t.Fatalf("growing a claim of standard: exit %d %q\nwant %s", code, errOut, refused)
	}
	if row := pvc("dynamic"); row["CAPACITY"] != "1Gi" {
		t.Fatalf("a refused resize changed the claim: %v", row)
	}
	k.mustKubectl(t, "apply", "-f", k.manifest(t, "expandable.yaml", expandableClaim))
	var grown string
	waitFor("the growing claim is bound", func() (bool, string) {
		row := pvc("growing")
		grown = row["VOLUME"]
		return row["STATUS"] == "Bound" && row["CAPACITY"] == "1Gi", row["STATUS"] + " " + row["CAPACITY"]
	})
	if errOut, code := grow("growing"); code != 0 {
		t.Fatalf("growing a claim of expandable: %s", errOut)
	}
	waitFor("the claim and its volume have 2Gi", func() (bool, string) {
		claim, vol := pvc("growing"), pv(grown)
		return claim["CAPACITY"] == "2Gi" && vol["CAPACITY"] == "2Gi", claim["CAPACITY"] + " " + vol["CAPACITY"]
	})
	if out := k.mustKubectl(t, "describe", "pvc", "growing"); !matches(`Resizing\s.*External resizer is resizing volume `+grown, out) ||
		!matches(`VolumeResizeSuccessful\s.*Resize volume succeeded`, out) {
		t.Fatalf("kubectl describe pvc growing:\n%s", out)
	}

	k.mustKubectl(t, "delete", "pvc", "dynamic")
	waitFor("the provisioned volume is gone", gone("pv", volume))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the provisioned directory is still there: %v", err)
	}

	// Protection: a claim a pod uses is only Terminating until the pod goes.
	waitFor("the pod using held is on node01", func() (bool, string) {
		out := k.mustKubectl(t, "get", "pod", "user", "-o", "jsonpath={.spec.nodeName}")
		return out == "node01", out
	})
	k.mustKubectl(t, "delete", "pvc", "held", "--wait=false")
	if row := pvc("held"); row["STATUS"] != "Terminating" {
		t.Fatalf("kubectl get pvc held: %v", row)
	}
	if out := k.mustKubectl(t, "describe", "pvc", "held"); !matches(`Used By:\s+user\n`, out) {
		t.Fatalf("kubectl describe pvc held does not say the pod uses it:\n%s", out)
	}
	t.Logf("kubectl get pv,pvc:\n%s", k.mustKubectl(t, "get", "pv,pvc"))
	k.mustKubectl(t, "delete", "pod", "user", "--wait=false")
	waitFor("the claim goes with its pod", gone("pvc", "held"))
}

// matches reports whether kubectl's output matches a regular expression.
func matches(pattern, out string) bool { return regexp.MustCompile(pattern).MatchString(out) }

// writeFile writes a file where a pod's writes to a volume would land.
func writeStorageFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("rows\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
