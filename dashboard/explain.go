package dashboard

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/explanation"
)

// Explained is the "why this node" view of a pod: what `mkube explain
// pod` prints (Text, from the same package) and the explanation itself
// for the page to draw as a table. Both come from the annotation
// mkube.io/scheduling-explanation that the scheduler puts on its
// Binding (step 10) and the API server copies onto the pod.
type Explained struct {
	Text        string                   `json:"text"`
	Explanation *explanation.Explanation `json:"explanation,omitempty"` // nil: pending, or bound without the scheduler
	Nodes       []string                 `json:"nodes"`                 // every node in the cluster now, to say which the table leaves out
}

// Explain reads pod's explanation.
func (w *Watcher) Explain(pod *corev1.Pod, nodes []string) (Explained, error) {
	var b strings.Builder
	if err := explanation.WritePod(&b, pod); err != nil {
		return Explained{}, err
	}
	out := Explained{Text: b.String(), Nodes: nodes}
	if v, ok := pod.Annotations[explanation.AnnotationKey]; ok && pod.Spec.NodeName != "" {
		e, err := explanation.Decode(v)
		if err != nil {
			return Explained{}, err
		}
		out.Explanation = e
	}
	return out, nil
}
