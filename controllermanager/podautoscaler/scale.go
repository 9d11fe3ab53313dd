package podautoscaler

import (
	"context"
	"fmt"
	"strings"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/client"
)

// scales reads and writes any target's scale subresource, upstream's
// scale client with its discovery RESTMapper: the resource serving a
// kind is learned from the API server's discovery, so Deployments,
// ReplicaSets, StatefulSets and any custom resource with a scale
// subresource are scaled the same way.
type scales struct {
	client *client.Client

	mu        sync.Mutex
	resources map[schema.GroupVersionKind]string // learned from discovery; a kind not found is asked again next time (a CRD may come)
}

func newScales(c *client.Client) *scales {
	return &scales{client: c, resources: map[schema.GroupVersionKind]string{}}
}

// groupVersionPath is where a group version is served: /api/v1 or /apis/GROUP/VERSION.
func groupVersionPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// resourceFor is the resource (plural) serving kind at apiVersion.
func (s *scales) resourceFor(ctx context.Context, apiVersion, kind string) (string, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return "", err
	}
	gvk := gv.WithKind(kind)
	s.mu.Lock()
	res, ok := s.resources[gvk]
	s.mu.Unlock()
	if ok {
		return res, nil
	}
	var list metav1.APIResourceList
	if err := s.client.Do(ctx, "GET", groupVersionPath(gv), nil, &list); err != nil {
		return "", fmt.Errorf("unable to determine resource for scale target reference: %v", err)
	}
	for _, r := range list.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			s.mu.Lock()
			s.resources[gvk] = r.Name
			s.mu.Unlock()
			return r.Name, nil
		}
	}
	return "", fmt.Errorf("unable to determine resource for scale target reference: no matches for kind %q in version %q", kind, apiVersion)
}

// scalePath is the scale subresource of the target, "" with the error if
// its kind is not served.
func (s *scales) scalePath(ctx context.Context, namespace string, ref targetRef) (string, error) {
	res, err := s.resourceFor(ctx, ref.APIVersion, ref.Kind)
	if err != nil {
		return "", err
	}
	gv, _ := schema.ParseGroupVersion(ref.APIVersion) // parsed by resourceFor
	return groupVersionPath(gv) + "/namespaces/" + namespace + "/" + res + "/" + ref.Name + "/scale", nil
}

// get reads the target's Scale.
func (s *scales) get(ctx context.Context, namespace string, ref targetRef) (*autoscalingv1.Scale, error) {
	path, err := s.scalePath(ctx, namespace, ref)
	if err != nil {
		return nil, err
	}
	scale := &autoscalingv1.Scale{}
	if err := s.client.Do(ctx, "GET", path, nil, scale); err != nil {
		return nil, err
	}
	return scale, nil
}

// update writes scale back (with its resourceVersion: a concurrent change
// is a conflict, retried at the next sync).
func (s *scales) update(ctx context.Context, namespace string, ref targetRef, scale *autoscalingv1.Scale) error {
	path, err := s.scalePath(ctx, namespace, ref)
	if err != nil {
		return err
	}
	scale.APIVersion, scale.Kind = "autoscaling/v1", "Scale"
	return s.client.Do(ctx, "PUT", path, scale, nil)
}
