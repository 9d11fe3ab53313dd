package persistentvolume_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/persistentvolume"
	"github.com/mkube/mkube/internal/testserver"
)

// These tests run the whole controller manager against a real API server:
// the binder, the expander and the protection controllers together, with
// the admission plugins and the default class of the server.

func start(t *testing.T) (*client.Client, string) {
	root := t.TempDir()
	c := client.New(testserver.Start(t), "persistentvolume-test")
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c, log, controllermanager.Options{PersistentVolume: persistentvolume.Options{
			NodeRoot: filepath.Join(root, "nodes"), NFSRoot: filepath.Join(root, "nfs")}})
	})
	return c, root
}

func newClaim(name, size, class string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &class,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}}}}
}

func claimPhase(c *client.Client, name string) func() (bool, string) {
	return func() (bool, string) {
		var pvc corev1.PersistentVolumeClaim
		err := c.Get(context.Background(), client.PersistentVolumeClaims, "default", name, &pvc)
		return err == nil && pvc.Status.Phase == corev1.ClaimBound, fmt.Sprintf("%s %v", pvc.Status.Phase, err)
	}
}

func TestAStaticVolumeIsBoundReleasedAndKeptWithItsData(t *testing.T) {
	c, root := start(t)
	ctx := context.Background()
	pv := &corev1.PersistentVolume{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"}, ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports/pv1"}}}}
	if err := c.Create(ctx, client.PersistentVolumes, "", pv, nil); err != nil {
		t.Fatal(err)
	}
	// A claim made while the volume is still Pending would wait for the
	// next resync (15s), as in Kubernetes.
	testserver.Eventually(t, "the volume is Available", func() (bool, string) {
		var got corev1.PersistentVolume
		err := c.Get(ctx, client.PersistentVolumes, "", "pv1", &got)
		return err == nil && got.Status.Phase == corev1.VolumeAvailable, string(got.Status.Phase)
	})
	if err := c.Create(ctx, client.PersistentVolumeClaims, "default", newClaim("data", "1Gi", ""), nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the claim is bound", claimPhase(c, "data"))
	data := filepath.Join(root, "nfs", "nfs1", "exports", "pv1", "db")
	os.MkdirAll(filepath.Dir(data), 0o755)
	os.WriteFile(data, []byte("rows"), 0o644)

	// In use, the claim is only Terminating: the pod is on a node.
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "node01", Containers: []corev1.Container{{Name: "db", Image: "busybox:1.36"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	if err := c.Create(ctx, client.Pods, "default", pod, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, client.PersistentVolumeClaims, "default", "data", nil); err != nil {
		t.Fatal(err)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := c.Get(ctx, client.PersistentVolumeClaims, "default", "data", &pvc); err != nil || pvc.DeletionTimestamp == nil {
		t.Fatalf("the claim a pod uses is gone or not terminating: %v", err)
	}
	if err := c.Delete(ctx, client.Pods, "default", "db", &metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the claim is gone, its volume Released", func() (bool, string) {
		err := c.Get(ctx, client.PersistentVolumeClaims, "default", "data", &pvc)
		var got corev1.PersistentVolume
		c.Get(ctx, client.PersistentVolumes, "", "pv1", &got)
		return apierrors.IsNotFound(err) && got.Status.Phase == corev1.VolumeReleased, fmt.Sprintf("claim: %v; volume %s", err, got.Status.Phase)
	})
	if _, err := os.Stat(data); err != nil {
		t.Fatalf("Retain lost the data: %v", err)
	}
}

func TestAClaimOfTheDefaultClassGetsAVolumeThatGrowsAndGoesWithIt(t *testing.T) {
	c, root := start(t)
	ctx := context.Background()
	class := `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"growing"},"provisioner":"mkube.io/hostpath","allowVolumeExpansion":true}`
	if err := c.Do(ctx, "POST", "/apis/storage.k8s.io/v1/storageclasses", json.RawMessage(class), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, client.PersistentVolumeClaims, "default", newClaim("data", "1Gi", "growing"), nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the claim is bound to a provisioned volume", claimPhase(c, "data"))
	var pvc corev1.PersistentVolumeClaim
	if err := c.Get(ctx, client.PersistentVolumeClaims, "default", "data", &pvc); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "nfs", "mkube-provisioner", pvc.Spec.VolumeName)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("no directory for the volume: %v", err)
	}
	pvc.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("3Gi")
	if err := c.Update(ctx, client.PersistentVolumeClaims, "default", "data", &pvc, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the volume and the claim have 3Gi", func() (bool, string) {
		var got corev1.PersistentVolumeClaim
		var pv corev1.PersistentVolume
		c.Get(ctx, client.PersistentVolumeClaims, "default", "data", &got)
		c.Get(ctx, client.PersistentVolumes, "", pvc.Spec.VolumeName, &pv)
		has, size := got.Status.Capacity[corev1.ResourceStorage], pv.Spec.Capacity[corev1.ResourceStorage]
		return has.String() == "3Gi" && size.String() == "3Gi", "claim " + has.String() + ", volume " + size.String()
	})
	testserver.Eventually(t, "kubectl describe pvc shows the resizer's events", func() (bool, string) {
		var events corev1.EventList
		c.List(ctx, client.Events, "default", client.ListOptions{FieldSelector: "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=data"}, &events)
		var got []string
		for _, e := range events.Items {
			got = append(got, e.Source.Component+" "+e.Reason+": "+e.Message)
		}
		return slices.Contains(got, "external-resizer mkube.io/hostpath VolumeResizeSuccessful: Resize volume succeeded"), fmt.Sprint(got)
	})
	if err := c.Delete(ctx, client.PersistentVolumeClaims, "default", "data", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the volume and its directory are gone", func() (bool, string) {
		err := c.Get(ctx, client.PersistentVolumes, "", pvc.Spec.VolumeName, &corev1.PersistentVolume{})
		_, serr := os.Stat(dir)
		return apierrors.IsNotFound(err) && os.IsNotExist(serr), fmt.Sprintf("volume: %v; directory: %v", err, serr)
	})
}
