package apiserver

import (
	"context"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Resource describes one kind the server stores. The handlers, the storage
// and the watch cache are generic; everything that differs between kinds is
// here, in the spirit of kube-apiserver's REST "strategies".
type Resource struct {
	GroupVersion schema.GroupVersion
	Name         string // plural, lower case: the path segment and the etcd key segment
	Kind         string
	Namespaced   bool
	ShortNames   []string // kubectl's abbreviations: po, deploy, ...
	Categories   []string // "all" puts the kind in `kubectl get all`
	// Verbs the resource supports, for discovery; nil means all eight.
	Verbs []string
	// Subresources beyond status and scale, each served by its own handler,
	// listed here for discovery (e.g. pods/binding, pods/eviction).
	Subresources []Subresource

	// New returns an empty object; NewList an empty list of them.
	New     func() runtime.Object
	NewList func() runtime.Object

	// Subresources the resource serves besides its main body.
	Status bool // PUT/PATCH .../status writes only .status; the main PUT keeps it
	Scale  bool // .../scale reads and writes spec.replicas as autoscaling/v1 Scale

	// PrepareForCreate resets what a client may not set on create (usually
	// the status). Optional.
	PrepareForCreate func(obj runtime.Object)
	// Default fills unset fields as Kubernetes' defaulting does. Optional.
	Default func(obj runtime.Object)
	// Validate checks an object; old is nil on create. Optional.
	Validate func(obj, old runtime.Object) field.ErrorList
	// StoredAs, for another version of a kind that already has storage,
	// converts to and from the stored type (events.k8s.io/v1 Events are
	// core/v1 Events in etcd). Optional: nil stores the type itself.
	StoredAs *Conversion
	// BeginDelete, on DELETE, marks obj as terminating and reports whether
	// its deletion must wait for something besides metadata.finalizers
	// (a namespace waits for its contents to go). Optional.
	BeginDelete func(obj runtime.Object) (wait bool)
	// Admit runs on create and update (old nil on create) after defaulting,
	// for rules that read other objects: a PriorityClass's value, a free
	// ClusterIP. It is kube-apiserver's admission chain, one kind at a
	// time. Optional.
	Admit func(ctx context.Context, s *Server, obj, old runtime.Object) error
	// SerializeWrites makes this server create and update objects of the
	// kind one at a time, admission and write together: for an Admit that
	// hands out from a shared pool (Service ClusterIPs and NodePorts), so
	// that two requests at once cannot both take the same free address.
	SerializeWrites bool
	// Virtual resources are computed, never stored: a create returns
	// Virtual's answer (e.g. SelfSubjectAccessReview). Optional.
	Virtual func(ctx context.Context, s *Server, obj runtime.Object) (runtime.Object, error)
	// Fields returns the values field selectors can match, beyond
	// metadata.name and metadata.namespace, which every kind has. Optional.
	Fields func(obj runtime.Object) fields.Set
	// Columns and Row render the kind as a Table for `kubectl get`: the
	// columns after Name, and the cells of one object. Nil means Name, Age.
	Columns []Column
	Row     func(obj runtime.Object, now time.Time) []any
	// GracePeriod decides whether a DELETE waits for somebody to finish the
	// object (pods: the kubelet), and for how long. Optional: nil deletes at once.
	GracePeriod func(obj runtime.Object, requested *int64) (seconds int64, graceful bool)
}

// Conversion maps a resource's type to the type it is stored as.
type Conversion struct {
	New                  func() runtime.Object // an empty stored object
	GVK                  schema.GroupVersionKind
	ToStored, FromStored func(runtime.Object) runtime.Object
}

// Subresource describes, for discovery, a subresource with its own kind.
type Subresource struct {
	Name, Group, Version, Kind string
	Verbs                      []string
}

// GroupResource names the resource in error messages ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Name}
}

// GVK is the kind's full name, written into every object the server returns.
func (r *Resource) GVK() schema.GroupVersionKind { return r.GroupVersion.WithKind(r.Kind) }

// Registry finds a Resource by group, version and plural name.
type Registry struct {
	byPath map[schema.GroupVersionResource]*Resource
}

// NewRegistry indexes the given resources.
func NewRegistry(resources ...*Resource) *Registry {
	reg := &Registry{byPath: map[schema.GroupVersionResource]*Resource{}}
	for _, r := range resources {
		reg.byPath[r.GroupVersion.WithResource(r.Name)] = r
	}
	return reg
}

// Lookup returns the resource served at /apis/<group>/<version>/<name>.
func (reg *Registry) Lookup(gv schema.GroupVersion, name string) (*Resource, bool) {
	r, ok := reg.byPath[gv.WithResource(name)]
	return r, ok
}

// All returns every resource, sorted by group, version and name.
func (reg *Registry) All() []*Resource {
	out := make([]*Resource, 0, len(reg.byPath))
	for _, r := range reg.byPath {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].GroupVersion.WithResource(out[i].Name), out[j].GroupVersion.WithResource(out[j].Name)
		return a.String() < b.String()
	})
	return out
}
