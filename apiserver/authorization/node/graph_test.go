package node

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func podWithSecret(name, node, secret string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: node, Volumes: []corev1.Volume{{Name: "s",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}}}}
}

var shared = ref{secretKind, "default", "shared"}

func TestTheGraphFollowsPodsAsTheyAreBoundAndDeleted(t *testing.T) {
	tests := []struct {
		name   string
		events func(f Feed)
		node01 bool // node01 reaches the secret "shared"
		node02 bool
	}{
		{"a pod not yet bound leads no node to its secret",
			func(f Feed) { f.Update(podWithSecret("a", "", "shared"), nil) }, false, false},
		{"binding it leads its node there",
			func(f Feed) {
				f.Update(podWithSecret("a", "", "shared"), nil)
				f.Update(podWithSecret("a", "node01", "shared"), podWithSecret("a", "", "shared"))
			}, true, false},
		{"two pods of two nodes lead both",
			func(f Feed) {
				f.Update(podWithSecret("a", "node01", "shared"), nil)
				f.Update(podWithSecret("b", "node02", "shared"), nil)
			}, true, true},
		{"deleting one pod keeps the other's node",
			func(f Feed) {
				f.Update(podWithSecret("a", "node01", "shared"), nil)
				f.Update(podWithSecret("b", "node02", "shared"), nil)
				f.Update(nil, podWithSecret("a", "node01", "shared"))
			}, false, true},
		{"a node keeps the secret while one of its two pods uses it",
			func(f Feed) {
				f.Update(podWithSecret("a", "node01", "shared"), nil)
				f.Update(podWithSecret("c", "node01", "shared"), nil)
				f.Update(nil, podWithSecret("a", "node01", "shared"))
			}, true, false},
		{"a status update changes nothing",
			func(f Feed) {
				p := podWithSecret("a", "node01", "shared")
				f.Update(p, nil)
				running := p.DeepCopy()
				running.Status.Phase = corev1.PodRunning
				f.Update(running, p)
			}, true, false},
		{"a pod made again under its name (a new uid) on another node moves the secret",
			func(f Feed) {
				f.Update(podWithSecret("a", "node01", "shared"), nil)
				again := podWithSecret("a", "node02", "shared")
				again.UID = "other"
				f.Update(again, nil)
			}, false, true},
		{"a mirror pod leads nowhere: a node may not grant itself a secret by making one",
			func(f Feed) {
				p := podWithSecret("a", "node01", "shared")
				p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
				f.Update(p, nil)
			}, false, false},
		{"a list replaces everything",
			func(f Feed) {
				f.Update(podWithSecret("a", "node01", "shared"), nil)
				f.Replace([]runtime.Object{podWithSecret("b", "node02", "shared")})
			}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph()
			tc.events(g.Pods())
			if got := g.reaches("node01", shared); got != tc.node01 {
				t.Errorf("node01 reaches the secret: %v, want %v", got, tc.node01)
			}
			if got := g.reaches("node02", shared); got != tc.node02 {
				t.Errorf("node02 reaches the secret: %v, want %v", got, tc.node02)
			}
		})
	}
}

func TestAVolumesSecretIsReachedThroughItsClaim(t *testing.T) {
	g := NewGraph()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"}, Spec: corev1.PodSpec{NodeName: "node01",
		Volumes: []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	g.Pods().Update(pod, nil)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{ISCSI: &corev1.ISCSIPersistentVolumeSource{SecretRef: &corev1.SecretReference{Name: "chap"}}}}}
	g.PersistentVolumes().Update(pv, nil)
	chap := ref{secretKind, "default", "chap"}
	if g.reaches("node01", chap) || g.volumeReaches("node01", "pv-1") {
		t.Error("an unbound volume leads the node to it or its secret")
	}
	bound := pv.DeepCopy()
	bound.Spec.ClaimRef = &corev1.ObjectReference{Namespace: "default", Name: "data"}
	g.PersistentVolumes().Update(bound, pv)
	if !g.reaches("node01", chap) || !g.volumeReaches("node01", "pv-1") {
		t.Error("once bound to the pod's claim, the node does not reach the volume and its secret (in the claim's namespace)")
	}
	g.PersistentVolumes().Update(nil, bound)
	if g.reaches("node01", chap) || g.volumeReaches("node01", "pv-1") {
		t.Error("a deleted volume still leads the node to its secret")
	}
}

func TestPodRefsNameEverythingAPodUses(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: corev1.PodSpec{
		ServiceAccountName: "sa",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
		InitContainers:     []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "init-env"}}}}}},
		Containers:         []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-env"}}}}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Env: []corev1.EnvVar{{Name: "X",
			ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "debug"}, Key: "k"}}}}}}},
		Volumes: []corev1.Volume{
			{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj-s"}}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}}}}}},
			{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		}}}
	want := map[ref]bool{
		{serviceAccountKind, "ns", "sa"}: true, {secretKind, "ns", "pull"}: true, {secretKind, "ns", "init-env"}: true,
		{configMapKind, "ns", "cm-env"}: true, {secretKind, "ns", "debug"}: true, {secretKind, "ns", "proj-s"}: true,
		{configMapKind, "ns", "kube-root-ca.crt"}: true, {claimKind, "ns", "p-scratch"}: true,
	}
	got := map[ref]bool{}
	for _, r := range podRefs(pod) {
		got[r] = true
	}
	for r := range want {
		if !got[r] {
			t.Errorf("podRefs lacks %+v", r)
		}
	}
	for r := range got {
		if !want[r] {
			t.Errorf("podRefs has %+v, which the pod does not use", r)
		}
	}
}
