package config

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/mkube/mkube/client"
	kubetypes "github.com/mkube/mkube/kubelet/types"
)

// Run reads the manifest directory now and then every
// FileCheckFrequency until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	t := m.o.Clock.NewTicker(m.o.FileCheckFrequency)
	defer t.Stop()
	for {
		m.readManifests(ctx)
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
func (m *Manager) readManifests(ctx context.Context) {
	entries, err := os.ReadDir(m.o.ManifestPath)
	if err != nil {
		m.o.Log.Warn("static pods: cannot read the manifest directory", "dir", m.o.ManifestPath, "err", err)
		return
	}
	next := map[string]*StaticPod{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !isManifest(name) {
			continue
		}
		file := filepath.Join(m.o.ManifestPath, name)
		sp, err := m.decodeManifest(file)
		if err != nil {
			m.o.Log.Warn("static pods: skipping a manifest that is not a valid pod", "file", file, "err", err)
			continue
		}
		key := client.KeyOf(sp.Mirror)
		if other, dup := next[key]; dup {
			m.o.Log.Warn("static pods: two manifests name the same pod; keeping the first", "pod", key, "file", file, "first", other.File)
			continue
		}
		next[key] = sp
	}
	old := m.o.Pods.Replace(next)
	for key, sp := range next {
		switch prev := old[key]; {
		case prev == nil:
			m.o.Log.Info("static pod manifest found: running it", "pod", key, "file", sp.File, "hash", sp.Hash)
		case prev.Hash != sp.Hash:
			m.o.Log.Info("static pod manifest changed: restarting the pod", "pod", key, "file", sp.File, "hash", sp.Hash)
		default:
			continue
		}
		m.o.Queue.Add(key)
	}
	for key, sp := range old {
		if next[key] == nil {
			m.o.Log.Info("static pod manifest removed: stopping the pod", "pod", key, "file", sp.File)
			m.stopStatic(ctx, key, sp)
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
func (m *Manager) decodeManifest(file string) (*StaticPod, error) {
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
	nodeName := m.o.NodeName
	sum := sha256.Sum256(append([]byte(nodeName+"\n"), canonical...))
	hash := hex.EncodeToString(sum[:16])

	mirror := pod.DeepCopy()
	mirror.TypeMeta = metav1.TypeMeta{}
	mirror.Name = pod.Name + "-" + nodeName
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
	mirror.Annotations[kubetypes.ConfigSeenAnnotationKey] = m.o.Clock.Now().UTC().Format(time.RFC3339Nano)
	mirror.Spec.NodeName = nodeName
	mirror.Spec.Tolerations = append(mirror.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	mirror.Status = corev1.PodStatus{}
	return &StaticPod{Mirror: mirror, Hash: hash, File: file}, nil
}
