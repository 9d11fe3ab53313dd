package persistentvolume

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestAClaimGetsTheSmallestVolumeThatSatisfiesIt(t *testing.T) {
	withClass := func(pv *corev1.PersistentVolume, c string) *corev1.PersistentVolume {
		pv.Spec.StorageClassName = c
		return pv
	}
	withLabels := func(pv *corev1.PersistentVolume, l map[string]string) *corev1.PersistentVolume {
		pv.Labels = l
		return pv
	}
	withPhase := func(pv *corev1.PersistentVolume, p corev1.PersistentVolumePhase) *corev1.PersistentVolume {
		pv.Status.Phase = p
		return pv
	}
	reservedFor := func(pv *corev1.PersistentVolume, claim string) *corev1.PersistentVolume {
		pv.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: claim}
		return pv
	}
	block := func(pv *corev1.PersistentVolume) *corev1.PersistentVolume {
		pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeBlock)
		return pv
	}
	deleted := func(pv *corev1.PersistentVolume) *corev1.PersistentVolume {
		pv.DeletionTimestamp = &metav1.Time{}
		return pv
	}
	data := claim("data", "2Gi", rwo)
	tests := []struct {
		name    string
		claim   *corev1.PersistentVolumeClaim
		volumes []*corev1.PersistentVolume
		delay   bool
		want    string // "" for none
	}{
		{"of three volumes, the smallest that is big enough", data,
			[]*corev1.PersistentVolume{volume("big", "10Gi", rwo), volume("small", "1Gi", rwo), volume("fits", "3Gi", rwo)}, false, "fits"},
		{"exactly the size asked for fits", data, []*corev1.PersistentVolume{volume("exact", "2Gi", rwo), volume("more", "3Gi", rwo)}, false, "exact"},
		{"no volume big enough is no volume", data, []*corev1.PersistentVolume{volume("small", "1Gi", rwo)}, false, ""},
		{"a volume must offer every access mode asked for", claim("shared", "1Gi", rwo, rwx),
			[]*corev1.PersistentVolume{volume("once", "1Gi", rwo), volume("many", "5Gi", rwo, rwx, rox)}, false, "many"},
		{"volumes with fewer access modes go first, even bigger ones", data,
			[]*corev1.PersistentVolume{volume("a", "1Gi", rwo), volume("b", "5Gi", rwo), volume("c", "3Gi", rwo, rwx), volume("d", "10Gi", rwo)}, false, "b"},
		{"a claim with a class gets a volume of that class", claimOfClass("fast"),
			[]*corev1.PersistentVolume{volume("plain", "2Gi", rwo), withClass(volume("ssd", "5Gi", rwo), "fast")}, false, "ssd"},
		{"a claim without a class gets no volume of a class", data,
			[]*corev1.PersistentVolume{withClass(volume("ssd", "5Gi", rwo), "fast")}, false, ""},
		{"a claim's selector picks by label", claimWithSelector(map[string]string{"tier": "gold"}),
			[]*corev1.PersistentVolume{withLabels(volume("silver", "2Gi", rwo), map[string]string{"tier": "silver"}),
				withLabels(volume("gold", "5Gi", rwo), map[string]string{"tier": "gold"})}, false, "gold"},
		{"a volume reserved for the claim wins over a smaller free one", data,
			[]*corev1.PersistentVolume{volume("free", "2Gi", rwo), reservedFor(volume("mine", "10Gi", rwo), "data")}, false, "mine"},
		{"a volume reserved for another claim is not taken", data,
			[]*corev1.PersistentVolume{reservedFor(volume("theirs", "2Gi", rwo), "other")}, false, ""},
		{"a volume bound to this claim's old self (another UID) is not taken", data,
			[]*corev1.PersistentVolume{func() *corev1.PersistentVolume {
				pv := reservedFor(volume("old", "2Gi", rwo), "data")
				pv.Spec.ClaimRef.UID = types.UID("uid-of-a-deleted-claim")
				return pv
			}()}, false, ""},
		{"a Released volume is not taken", data, []*corev1.PersistentVolume{withPhase(volume("used", "2Gi", rwo), corev1.VolumeReleased)}, false, ""},
		{"a volume being deleted is not taken", data, []*corev1.PersistentVolume{deleted(volume("going", "2Gi", rwo))}, false, ""},
		{"a block volume does not serve a filesystem claim", data, []*corev1.PersistentVolume{block(volume("raw", "2Gi", rwo))}, false, ""},
		{"binding WaitForFirstConsumer leaves free volumes to the scheduler", data, []*corev1.PersistentVolume{volume("free", "2Gi", rwo)}, true, ""},
		{"but not volumes reserved for the claim", data, []*corev1.PersistentVolume{reservedFor(volume("mine", "2Gi", rwo), "data")}, true, "mine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findBestMatch(tc.claim, tc.volumes, tc.delay)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if got != nil {
				name = got.Name
			}
			if name != tc.want {
				t.Fatalf("got volume %q, want %q", name, tc.want)
			}
		})
	}
}

func claimOfClass(c string) *corev1.PersistentVolumeClaim {
	pvc := claim("data", "2Gi", rwo)
	pvc.Spec.StorageClassName = &c
	return pvc
}

func claimWithSelector(labels map[string]string) *corev1.PersistentVolumeClaim {
	pvc := claim("data", "1Gi", rwo)
	pvc.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	return pvc
}
