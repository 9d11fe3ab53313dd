package config

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/client"
)

// The mirror pods' client (upstream's pkg/kubelet/pod mirror_client.go).

// createMirror creates the static pod's mirror in the API server, owned
// by the Node so that it goes with the node.
func (m *Manager) createMirror(ctx context.Context, sp *StaticPod) error {
	node := m.o.Node()
	mirror := sp.Mirror.DeepCopy()
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID, Controller: ptr.To(true)}}
	out := &corev1.Pod{}
	err := m.o.Client.Create(ctx, client.Pods, mirror.Namespace, mirror, out)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil // the informer will show it
	case err != nil:
		return fmt.Errorf("create mirror pod: %w", err)
	}
	m.o.Log.Info("created mirror pod: the API server now shows the static pod", "pod", client.KeyOf(out), "uid", out.UID, "hash", sp.Hash)
	return nil
}

// deleteMirror deletes the mirror pod at once: it has nothing to stop.
func (m *Manager) deleteMirror(ctx context.Context, mirror *corev1.Pod, why string) error {
	err := m.o.Client.Delete(ctx, client.Pods, mirror.Namespace, mirror.Name, &metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: ptr.To(mirror.UID)}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete mirror pod: %w", err)
	}
	m.o.Log.Info("deleted mirror pod: "+why, "pod", client.KeyOf(mirror), "uid", mirror.UID)
	return nil
}
