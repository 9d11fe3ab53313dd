package kubelet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/kubelet/config"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// Static pods (seed 003 §4.2): pods the kubelet runs from files in
// --pod-manifest-path, with no API server telling it to, which is how a
// kubeadm node runs its own control plane. The kubelet reads the
// directory every --file-check-frequency; a file added runs its pod, a
// file changed restarts it, a file removed stops it.
//
// So that `kubectl get pods` shows them, the kubelet creates a mirror pod
// for each: "<name>-<node>", annotated kubernetes.io/config.mirror and
// owned by the Node. The mirror only shows the static pod; deleting it
// deletes nothing that runs, and the kubelet creates it again.
//
// The static pod's identity in the runtime is its config hash, not the
// mirror's UID (which changes with every new mirror): the pipeline runs a
// copy of the mirror whose UID is the hash, and the status manager writes
// its status to the mirror (see kubelet/config's StaticPods.APIUID).

// The annotations the kubelet puts on a static pod's mirror.

// DefaultFileCheckFrequency is the kubelet's --file-check-frequency.
const DefaultFileCheckFrequency = 20 * time.Second

// runStaticPods reads the manifest directory now and then every
// FileCheckFrequency until ctx ends.
func (k *Kubelet) runStaticPods(ctx context.Context) {
	t := k.clock.NewTicker(k.cfg.FileCheckFrequency)
	defer t.Stop()
	for {
		k.readManifests(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// readManifests reads the manifest directory and queues the static pods
// that appeared, changed or went away. A file that is not a valid pod is
// skipped, saying why; a directory that cannot be read changes nothing.
func (k *Kubelet) readManifests(ctx context.Context) {
	entries, err := os.ReadDir(k.cfg.PodManifestPath)
	if err != nil {
		k.log.Warn("static pods: cannot read the manifest directory", "dir", k.cfg.PodManifestPath, "err", err)
		return
	}
	next := map[string]*config.StaticPod{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !isManifest(name) {
			continue
		}
		file := filepath.Join(k.cfg.PodManifestPath, name)
		sp, err := k.decodeManifest(file)
		if err != nil {
			k.log.Warn("static pods: skipping a manifest that is not a valid pod", "file", file, "err", err)
			continue
		}
		key := client.KeyOf(sp.Mirror)
		if other, dup := next[key]; dup {
			k.log.Warn("static pods: two manifests name the same pod; keeping the first", "pod", key, "file", file, "first", other.File)
			continue
		}
		next[key] = sp
	}
	old := k.static.Replace(next)
	for key, sp := range next {
		switch prev := old[key]; {
		case prev == nil:
			k.log.Info("static pod manifest found: running it", "pod", key, "file", sp.File, "hash", sp.Hash)
		case prev.Hash != sp.Hash:
			k.log.Info("static pod manifest changed: restarting the pod", "pod", key, "file", sp.File, "hash", sp.Hash)
		default:
			continue
		}
		k.queue.Add(key)
	}
	for key, sp := range old {
		if next[key] == nil {
			k.log.Info("static pod manifest removed: stopping the pod", "pod", key, "file", sp.File)
			k.stopStatic(ctx, key, sp)
		}
	}
}

func isManifest(name string) bool {
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// decodeManifest reads a pod manifest and makes its mirror: named after
// the node, bound to it, tolerating every NoExecute taint (a node's own
// pods are not evicted from it), annotated with its hash.
func (k *Kubelet) decodeManifest(file string) (*config.StaticPod, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		return nil, err
	}
	switch {
	case pod.Kind != "" && pod.Kind != "Pod":
		return nil, fmt.Errorf("kind %q: a static pod manifest holds one Pod", pod.Kind)
	case pod.Name == "":
		return nil, fmt.Errorf("metadata.name is required")
	case len(pod.Spec.Containers) == 0:
		return nil, fmt.Errorf("spec.containers: at least one container is required")
	}
	// The hash names this version of the pod on this node: a changed
	// file is a new pod.
	canonical, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte(k.cfg.NodeName+"\n"), canonical...))
	hash := hex.EncodeToString(sum[:16])

	mirror := pod.DeepCopy()
	mirror.TypeMeta = metav1.TypeMeta{}
	mirror.Name = pod.Name + "-" + k.cfg.NodeName
	if mirror.Namespace == "" {
		mirror.Namespace = metav1.NamespaceDefault
	}
	mirror.Annotations = maps.Clone(pod.Annotations)
	if mirror.Annotations == nil {
		mirror.Annotations = map[string]string{}
	}
	mirror.Annotations[kubetypes.ConfigMirrorAnnotationKey] = hash
	mirror.Annotations[kubetypes.ConfigHashAnnotationKey] = hash
	mirror.Annotations[kubetypes.ConfigSourceAnnotationKey] = "file"
	mirror.Annotations[kubetypes.ConfigSeenAnnotationKey] = k.clock.Now().UTC().Format(time.RFC3339Nano)
	mirror.Spec.NodeName = k.cfg.NodeName
	mirror.Spec.Tolerations = append(mirror.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	mirror.Status = corev1.PodStatus{}
	return &config.StaticPod{Mirror: mirror, Hash: hash, File: file}, nil
}

// syncStatic makes the node match the static pod named key and its
// mirror (nil if the API server has none).
func (k *Kubelet) syncStatic(ctx context.Context, key string, sp *config.StaticPod, mirror *corev1.Pod) error {
	switch {
	case sp == nil && mirror != nil && k.terminating.busy(kubetypes.RuntimeUID(mirror)):
		return nil // being stopped (stopStatic), which deletes the mirror after
	case sp == nil:
		// The manifest is gone: stop the pod, delete its mirror.
		if mirror != nil {
			if err := k.deleteMirror(ctx, mirror, "its manifest was removed"); err != nil {
				return err
			}
		}
		return k.forgetPod(ctx, key, "")
	case mirror == nil:
		if wait := k.static.RecreateWait(key, k.clock.Now()); wait > 0 {
			k.queue.AddAfter(key, wait)
			return nil
		}
		return k.createMirror(ctx, sp)
	case mirror.Annotations[kubetypes.ConfigMirrorAnnotationKey] != sp.Hash:
		// The manifest changed: the old mirror goes, the new one comes
		// when the deletion is seen; forgetPod below stops the old pod.
		if err := k.deleteMirror(ctx, mirror, "its manifest changed"); err != nil {
			return err
		}
		return k.forgetPod(ctx, key, types.UID(sp.Hash))
	case mirror.DeletionTimestamp != nil:
		// `kubectl delete` of a mirror deletes only the mirror: the
		// static pod keeps running, and a new mirror appears.
		k.static.MirrorDeleted(key, k.clock.Now())
		return k.deleteMirror(ctx, mirror, "it was deleted; the static pod runs on and gets a new mirror")
	}
	view := mirror.DeepCopy()
	view.SetGroupVersionKind(kubetypes.PodGVK)
	view.UID = types.UID(sp.Hash)
	k.static.SetMirrorUID(view.UID, mirror.UID)
	if err := k.forgetPod(ctx, key, view.UID); err != nil {
		return err
	}
	if podFinished(view) {
		return k.releasePod(ctx, view, "static pod finished")
	}
	return k.runPod(ctx, view)
}

// stopStatic stops the pod of a removed manifest as a deletion would:
// its containers get their grace period (nginx its stop signal, a
// sleeping shell its 30 s), then its sandbox and mirror go.
func (k *Kubelet) stopStatic(ctx context.Context, key string, sp *config.StaticPod) {
	view := sp.Mirror.DeepCopy()
	view.UID = types.UID(sp.Hash)
	view.SetGroupVersionKind(kubetypes.PodGVK)
	k.inBackground(ctx, view, "stopping a static pod", func() error {
		sb, err := k.runtime.podSandbox(ctx, view.UID)
		if err != nil {
			return err
		}
		if sb != nil {
			if err := k.stopContainers(ctx, view, sb, gracePeriod(view.Spec.TerminationGracePeriodSeconds)); err != nil {
				return err
			}
		}
		if obj, ok := k.informer.Cache().Get(key); ok {
			if err := k.deleteMirror(ctx, obj.(*corev1.Pod), "its manifest was removed"); err != nil {
				return err
			}
		}
		return k.forgetPod(ctx, key, "")
	})
}

// createMirror creates the static pod's mirror in the API server, owned
// by the Node so that it goes with the node.
func (k *Kubelet) createMirror(ctx context.Context, sp *config.StaticPod) error {
	mirror := sp.Mirror.DeepCopy()
	mirror.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: k.node.Name, UID: k.node.UID, Controller: ptr.To(true)}}
	out := &corev1.Pod{}
	err := k.client.Create(ctx, client.Pods, mirror.Namespace, mirror, out)
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil // the informer will show it
	case err != nil:
		return fmt.Errorf("create mirror pod: %w", err)
	}
	k.log.Info("created mirror pod: the API server now shows the static pod", "pod", client.KeyOf(out), "uid", out.UID, "hash", sp.Hash)
	return nil
}

// deleteMirror deletes the mirror pod at once: it has nothing to stop.
func (k *Kubelet) deleteMirror(ctx context.Context, mirror *corev1.Pod, why string) error {
	err := k.client.Delete(ctx, client.Pods, mirror.Namespace, mirror.Name, &metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: ptr.To(mirror.UID)}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete mirror pod: %w", err)
	}
	k.log.Info("deleted mirror pod: "+why, "pod", client.KeyOf(mirror), "uid", mirror.UID)
	return nil
}
