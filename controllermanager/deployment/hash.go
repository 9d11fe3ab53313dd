package deployment

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/rand"
)

// templateHash names a pod template: the ReplicaSet of a Deployment is
// called <deployment>-<hash> and its pods carry the label
// pod-template-hash=<hash>, so two templates never share a ReplicaSet.
// Like Kubernetes: FNV-32a of the template, salted with collisionCount,
// encoded with apimachinery's SafeEncodeString (no vowels, so no words).
// Kubernetes hashes a spew dump of the struct and mkube its JSON, so the
// values differ from a real cluster's, but not their shape.
func templateHash(t *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	data, _ := json.Marshal(t)
	h.Write(data)
	if collisionCount != nil {
		var b [4]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisionCount))
		h.Write(b[:])
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// equalIgnoreHash compares a ReplicaSet's template with a Deployment's,
// ignoring the pod-template-hash label the controller added.
func equalIgnoreHash(rsTemplate, dTemplate *corev1.PodTemplateSpec) bool {
	a, b := rsTemplate.DeepCopy(), dTemplate.DeepCopy()
	delete(a.Labels, hashLabel)
	delete(b.Labels, hashLabel)
	if len(a.Labels) == 0 {
		a.Labels = nil
	}
	if len(b.Labels) == 0 {
		b.Labels = nil
	}
	return equality.Semantic.DeepEqual(a, b)
}
