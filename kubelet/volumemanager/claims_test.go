package volumemanager

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/record"
	"github.com/mkube/mkube/internal/testserver"
)

// boundClaim creates the claim name and the volume pv bound to it, both
// Bound, as the PV controller leaves them.
func boundClaim(t *testing.T, c *client.Client, name string, pv *corev1.PersistentVolume) {
	t.Helper()
	ctx := context.Background()
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv.Name, StorageClassName: new(string), AccessModes: pv.Spec.AccessModes,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if err := c.Create(ctx, client.PersistentVolumeClaims, "default", claim, claim); err != nil {
		t.Fatal(err)
	}
	pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "default", Name: name, UID: claim.UID}
	pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}
	if err := c.Create(ctx, client.PersistentVolumes, "", pv, nil); err != nil {
		t.Fatal(err)
	}
	claim.Status.Phase = corev1.ClaimBound
	if err := c.UpdateStatus(ctx, client.PersistentVolumeClaims, "default", name, claim, nil); err != nil {
		t.Fatal(err)
	}
}

func pvOf(name string, src corev1.PersistentVolumeSource, modes ...corev1.PersistentVolumeAccessMode) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: src, AccessModes: modes}}
}

func podWithClaim(name, claim string, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("u-" + name)},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}}
}

func TestClaimVolumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and an API server")
	}
	c := client.New(testserver.Start(t), "kubelet-test")
	ctx := context.Background()
	rwo, rwx := corev1.ReadWriteOnce, corev1.ReadWriteMany
	boundClaim(t, c, "host", pvOf("pv-host", corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/host"}}, rwo))
	boundClaim(t, c, "share", pvOf("pv-share", corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports/share"}}, rwx))
	boundClaim(t, c, "single", pvOf("pv-single", corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports/single"}}, rwo))
	boundClaim(t, c, "csi", pvOf("pv-csi", corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}, rwo))
	local := pvOf("pv-local", corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/mnt/disk1"}}, rwo)
	local.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node01"}}}}}}}
	boundClaim(t, c, "local", local)
	pending := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{rwo},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	if err := c.Create(ctx, client.PersistentVolumeClaims, "default", pending, nil); err != nil {
		t.Fatal(err)
	}
	// A pod on node02 holds the ReadWriteOnce claims single and share.
	for _, claim := range []string{"single", "share"} {
		if err := c.Create(ctx, client.Pods, "default", podWithClaim("holder-"+claim, claim, "node02"), nil); err != nil {
			t.Fatal(err)
		}
	}

	root, nfs := t.TempDir(), t.TempDir()
	k := NewManager(Options{NodeName: "node01", NodeRoot: root, NFSRoot: nfs, Client: c,
		Log: slog.New(slog.DiscardHandler), Recorder: record.New(c, "kubelet", "node01", slog.New(slog.DiscardHandler))})
	unprocessed := "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], failed to process volumes=[data]: "
	tests := []struct {
		name     string
		claim    string
		wantErr  string
		wantData string // where the volume directory links to
	}{
		{"a claim of a hostPath volume is the node's directory", "host", "", filepath.Join(root, "node01", "data", "host")},
		{"a claim of an nfs volume others may share is the export, whoever else uses it", "share", "", filepath.Join(nfs, "nfs1", "exports", "share")},
		{"a claim not bound yet waits", "pending", unprocessed + "error processing PVC default/pending: PVC is not bound", ""},
		{"a missing claim waits for it", "nope",
			unprocessed + `error processing PVC default/nope: failed to fetch PVC from API server: persistentvolumeclaims "nope" not found`, ""},
		{"a ReadWriteOnce volume a pod on another node uses cannot be attached here", "single",
			`Multi-Attach error for volume "pv-single" Volume is already used by pod(s) holder-single`, ""},
		{"a local volume's path must exist on the node", "local", `MountVolume.NewMounter initialization failed for volume "pv-local" : path "/mnt/disk1" does not exist`, ""},
		{"a volume of a source mkube has no plugin for", "csi",
			unprocessed + `failed to get Plugin from volumeSpec for volume "pv-csi" err=no volume plugin matched`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podWithClaim("p-"+tt.claim, tt.claim, "node01")
			err := k.setUpClaims(ctx, pod)
			if got := errText(err); got != tt.wantErr {
				t.Fatalf("setUpClaims: %s\nwant %s", got, tt.wantErr)
			}
			if tt.wantData == "" {
				return
			}
			link, err := os.Readlink(k.OnDisk(Dir(pod.UID, pod.Spec.Volumes[0])))
			if err != nil || link != tt.wantData {
				t.Errorf("the volume directory links to %q (%v), want %q", link, err, tt.wantData)
			}
		})
	}
	// Once the holder is gone, the volume can be attached here.
	if err := c.Delete(ctx, client.Pods, "default", "holder-single", &metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if err := k.setUpClaims(ctx, podWithClaim("p-single", "single", "node01")); err != nil {
		t.Errorf("after the other pod went: %v", err)
	}
	if !k.state.MultiAttachReported("u-p-single") {
		t.Error("the Multi-Attach error was not recorded as reported")
	}
}
