package persistentvolume

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/controllermanager/persistentvolume/volumeplugin"
	"github.com/mkube/mkube/internal/storagepolicy"
)

// The lifecycle as data: each case is a starting state of claims,
// volumes, classes, pods and files, and the state the controller
// converges to, written as `kubectl get` would tell it (fake_test.go's
// describe), with the events it recorded and the files left.
func TestTheLifecycleOfClaimsAndVolumes(t *testing.T) {
	immediate, delayed := storagev1.VolumeBindingImmediate, storagev1.VolumeBindingWaitForFirstConsumer
	tests := []struct {
		name   string
		start  []runtime.Object
		files  []string // under the test's root: nodes/<node>/..., nfs/<server>/...
		want   []string
		events []string
		left   []string // the files afterwards (nil: as they were)
	}{
		{
			name:  "a claim binds to the volume that fits, both become Bound",
			start: []runtime.Object{claim("data", "1Gi", rwo), volume("pv1", "5Gi", rwo)},
			want: []string{
				"pv/pv1 Bound claim=default/data [bound-by-controller]",
				"pvc/data Bound volume=pv1 capacity=5Gi [bind-completed bound-by-controller]",
			},
		},
		{
			name:   "a claim no volume fits, with no class, waits and says why",
			start:  []runtime.Object{claim("data", "10Gi", rwo), volume("pv1", "5Gi", rwo)},
			want:   []string{"pv/pv1 Available", "pvc/data Pending"},
			events: []string{"pvc/data Normal FailedBinding no persistent volumes available for this claim and no storage class is set"},
		},
		{
			name:   "a claim of a class that does not exist says so",
			start:  []runtime.Object{claimOfClass("gold")},
			want:   []string{"pvc/data Pending class=gold"},
			events: []string{`pvc/data Warning ProvisioningFailed storageclass.storage.k8s.io "gold" not found`},
		},
		{
			name:  "a claim of the mkube.io/hostpath class gets a volume made for it",
			start: []runtime.Object{class("fast", volumeplugin.ProvisionerName, immediate), claimOfClass("fast")},
			want: []string{
				"pv/pvc-uid-data Bound claim=default/data [bound-by-controller provisioned-by=mkube.io/hostpath]",
				"pvc/data Bound volume=pvc-uid-data capacity=2Gi class=fast [bind-completed bound-by-controller provisioner=mkube.io/hostpath]",
			},
			events: []string{"pvc/data Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-data using mkube.io/hostpath"},
			left:   []string{"nfs/mkube-provisioner/pvc-uid-data/"},
		},
		{
			name:  "a claim of an external provisioner's class is left to it",
			start: []runtime.Object{class("ebs", "ebs.csi.aws.com", immediate), claimOfClass("ebs")},
			want:  []string{"pvc/data Pending class=ebs [provisioner=ebs.csi.aws.com]"},
			events: []string{"pvc/data Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' " +
				"or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."},
		},
		{
			name:   "a WaitForFirstConsumer claim waits for a pod",
			start:  []runtime.Object{class("local", volumeplugin.ProvisionerName, delayed), claimOfClass("local"), volume("pv1", "5Gi", rwo)},
			want:   []string{"pv/pv1 Available", "pvc/data Pending class=local"},
			events: []string{"pvc/data Normal WaitForFirstConsumer waiting for first consumer to be created before binding"},
		},
		{
			name:   "then for the scheduler to place its pod",
			start:  []runtime.Object{class("local", volumeplugin.ProvisionerName, delayed), claimOfClass("local"), podUsing("web", "data", "")},
			want:   []string{"pvc/data Pending class=local"},
			events: []string{"pvc/data Normal WaitForPodScheduled waiting for pod web to be scheduled"},
		},
		{
			name: "and is provisioned on the node the scheduler has chosen, pinned there",
			start: []runtime.Object{class("local", volumeplugin.ProvisionerName, delayed), selectedNode(claimOfClass("local"), "node01"),
				&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node01"}}, podUsing("web", "data", "node01")},
			want: []string{
				"pv/pvc-uid-data Bound claim=default/data [bound-by-controller provisioned-by=mkube.io/hostpath]",
				"pvc/data Bound volume=pvc-uid-data capacity=2Gi class=local [bind-completed bound-by-controller provisioner=mkube.io/hostpath]",
			},
			events: []string{"pvc/data Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-data using mkube.io/hostpath"},
			left:   []string{"nodes/node01/var/lib/mkube-provisioner/pvc-uid-data/"},
		},
		{
			name: "a claim with no class gets the default class made since, then a volume",
			start: []runtime.Object{func() runtime.Object {
				sc := class("standard", volumeplugin.ProvisionerName, immediate)
				sc.Annotations = map[string]string{storagepolicy.IsDefaultClassAnnotation: "true"}
				return sc
			}(), func() runtime.Object { c := claim("data", "1Gi", rwo); c.Spec.StorageClassName = nil; return c }()},
			want: []string{
				"pv/pvc-uid-data Bound claim=default/data [bound-by-controller provisioned-by=mkube.io/hostpath]",
				"pvc/data Bound volume=pvc-uid-data capacity=1Gi class=standard [bind-completed bound-by-controller provisioner=mkube.io/hostpath]",
			},
			events: []string{"pvc/data Normal ProvisioningSucceeded Successfully provisioned volume pvc-uid-data using mkube.io/hostpath"},
			left:   []string{"nfs/mkube-provisioner/pvc-uid-data/"},
		},
		{
			name:  "a claim naming its volume binds to it, the claim's choice not the controller's",
			start: []runtime.Object{prebound(claim("data", "1Gi", rwo), "pv2"), volume("pv1", "1Gi", rwo), volume("pv2", "5Gi", rwo)},
			want: []string{
				"pv/pv1 Available",
				"pv/pv2 Bound claim=default/data [bound-by-controller]",
				"pvc/data Bound volume=pv2 capacity=5Gi [bind-completed]",
			},
		},
		{
			name:   "a claim naming a volume too small for it waits and says why",
			start:  []runtime.Object{prebound(claim("data", "10Gi", rwo), "pv1"), volume("pv1", "5Gi", rwo)},
			want:   []string{"pv/pv1 Available", "pvc/data Pending volume=pv1"},
			events: []string{`pvc/data Warning VolumeMismatch Cannot bind to requested volume "pv1": requested PV is too small`},
		},
		{
			name:  "a volume reserved for a claim by name binds to it, the user's choice",
			start: []runtime.Object{claim("data", "1Gi", rwo), volume("pv1", "1Gi", rwo), reserved(volume("pv2", "5Gi", rwo), "data")},
			want: []string{
				"pv/pv1 Available",
				"pv/pv2 Bound claim=default/data",
				"pvc/data Bound volume=pv2 capacity=5Gi [bind-completed bound-by-controller]",
			},
		},
		{
			name: "a volume half bound when the controller stopped is bound the rest of the way",
			start: []runtime.Object{claim("data", "1Gi", rwo), func() runtime.Object {
				pv := boundTo(volume("pv1", "1Gi", rwo), "data")
				pv.Status.Phase = corev1.VolumeAvailable
				return pv
			}()},
			want: []string{
				"pv/pv1 Bound claim=default/data [bound-by-controller]",
				"pvc/data Bound volume=pv1 capacity=1Gi [bind-completed bound-by-controller]",
			},
		},
		{
			name:  "Retain: the claim's volume is Released, its data kept",
			start: []runtime.Object{boundTo(volume("pv1", "1Gi", rwo), "gone")},
			files: []string{"nodes/node01/data/pv1/db"},
			want:  []string{"pv/pv1 Released claim=default/gone [bound-by-controller]"},
		},
		{
			name:  "Recycle: the volume is scrubbed and Available again",
			start: []runtime.Object{policy(boundTo(volume("pv1", "1Gi", rwo), "gone"), corev1.PersistentVolumeReclaimRecycle)},
			files: []string{"nodes/node01/data/pv1/db", "nodes/node01/data/pv1/logs/today", "nodes/node01/data/other"},
			want:  []string{"pv/pv1 Available"},
			events: []string{
				"pv/pv1 Normal RecyclerPod Recycler pod: the controller manager scrubbed the volume's data itself (mkube runs no recycler pod)",
				"pv/pv1 Normal VolumeRecycled Volume recycled",
			},
			left: []string{"nodes/node01/data/other", "nodes/node01/data/pv1/"},
		},
		{
			name:   "Recycle waits while a pod still uses the deleted claim",
			start:  []runtime.Object{policy(boundTo(volume("pv1", "1Gi", rwo), "gone"), corev1.PersistentVolumeReclaimRecycle), podUsing("web", "gone", "node01")},
			files:  []string{"nodes/node01/data/pv1/db"},
			want:   []string{"pv/pv1 Released claim=default/gone [bound-by-controller]"},
			events: []string{"pv/pv1 Normal VolumeFailedRecycle Volume is used by pods: default/web"},
		},
		{
			name: "Delete: a provisioned volume's directory and the volume go",
			start: []runtime.Object{func() runtime.Object {
				pv := policy(boundTo(volume("pvc-1", "1Gi", rwo), "gone"), corev1.PersistentVolumeReclaimDelete)
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{
					Server: volumeplugin.ProvisionedServer, Path: "/pvc-1"}}
				pv.Annotations["pv.kubernetes.io/provisioned-by"] = volumeplugin.ProvisionerName
				pv.Finalizers = []string{inTreeDeleteFinalizer}
				return pv
			}()},
			files: []string{"nfs/mkube-provisioner/pvc-1/db", "nfs/mkube-provisioner/pvc-2/db"},
			want:  nil,
			left:  []string{"nfs/mkube-provisioner/pvc-2/db"},
		},
		{
			name: "Delete of a static nfs volume fails: nothing here can delete an NFS export",
			start: []runtime.Object{func() runtime.Object {
				pv := policy(boundTo(volume("pv1", "1Gi", rwo), "gone"), corev1.PersistentVolumeReclaimDelete)
				pv.Spec.PersistentVolumeSource = corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports/pv1"}}
				return pv
			}()},
			files:  []string{"nfs/nfs1/exports/pv1/db"},
			want:   []string{`pv/pv1 Failed claim=default/gone [bound-by-controller] message=error getting deleter volume plugin for volume "pv1": no deletable volume plugin matched`},
			events: []string{`pv/pv1 Warning VolumeFailedDelete error getting deleter volume plugin for volume "pv1": no deletable volume plugin matched`},
		},
		{
			name:   "a bound claim whose volume was deleted is Lost",
			start:  []runtime.Object{bound(claim("data", "1Gi", rwo), "pv1")},
			want:   []string{"pvc/data Lost volume=pv1 [bind-completed bound-by-controller]"},
			events: []string{"pvc/data Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is lost!"},
		},
		{
			name: "a volume the controller bound to a claim that went to another volume is freed",
			start: []runtime.Object{bound(claim("data", "1Gi", rwo), "pv2"), boundTo(volume("pv1", "1Gi", rwo), "data"),
				boundTo(volume("pv2", "1Gi", rwo), "data")},
			want: []string{
				"pv/pv1 Available",
				"pv/pv2 Bound claim=default/data [bound-by-controller]",
				"pvc/data Bound volume=pv2 capacity=1Gi [bind-completed bound-by-controller]",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(root, filepath.FromSlash(f))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte("data"), 0o644)
			}
			w := newWorld(volumeplugin.Host{NodeRoot: filepath.Join(root, "nodes"), NFSRoot: filepath.Join(root, "nfs")})
			w.add(tc.start...)
			if err := w.settle(); err != nil {
				t.Fatal(err)
			}
			if got := w.describe(); !slices.Equal(got, tc.want) {
				t.Errorf("state\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if !slices.Equal(dedupe(w.rec.events), tc.events) {
				t.Errorf("events\n  %s\nwant\n  %s", strings.Join(w.rec.events, "\n  "), strings.Join(tc.events, "\n  "))
			}
			left := tc.left
			if left == nil {
				left = tc.files
			}
			if got := tree(root); !slices.Equal(got, sorted(left)) {
				t.Errorf("files\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(sorted(left), "\n  "))
			}
		})
	}
}

func podUsing(name, claimName, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node,
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}}}}
}

func selectedNode(pvc *corev1.PersistentVolumeClaim, node string) *corev1.PersistentVolumeClaim {
	pvc.Annotations = map[string]string{"volume.kubernetes.io/selected-node": node}
	return pvc
}

func prebound(pvc *corev1.PersistentVolumeClaim, volumeName string) *corev1.PersistentVolumeClaim {
	pvc.Spec.VolumeName = volumeName
	return pvc
}

// bound makes a claim look bound by the controller to the volume.
func bound(pvc *corev1.PersistentVolumeClaim, volumeName string) *corev1.PersistentVolumeClaim {
	pvc.Spec.VolumeName = volumeName
	pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
	pvc.Status.Phase = corev1.ClaimBound
	pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]}
	return pvc
}

func reserved(pv *corev1.PersistentVolume, claimName string) *corev1.PersistentVolume {
	pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: claimName}
	return pv
}

func policy(pv *corev1.PersistentVolume, p corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
	pv.Spec.PersistentVolumeReclaimPolicy = p
	return pv
}

// tree lists root's files, and its empty directories with a slash.
func tree(root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !d.IsDir() {
			out = append(out, rel)
		} else if entries, _ := os.ReadDir(p); len(entries) == 0 {
			out = append(out, rel+"/")
		}
		return nil
	})
	return sorted(out)
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// dedupe drops repeats of an event: the recorder aggregates them.
func dedupe(events []string) []string {
	var out []string
	for _, e := range events {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}
