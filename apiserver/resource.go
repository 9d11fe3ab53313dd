package apiserver

import (
	"context"
	"sort"
	"time"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver/admission"
)

// Resource describes one kind the server stores. The handlers, the storage
// and the watch cache are generic; everything that differs between kinds is
// here, in the spirit of kube-apiserver's REST "strategies". Each kind's
// Resource is declared in apiserver/registry/<group>/.
type Resource struct {
	GroupVersion schema.GroupVersion
	Name         string // plural, lower case: the path segment and the etcd key segment
	Kind         string
	Namespaced   bool
	ShortNames   []string // kubectl's abbreviations: po, deploy, ...
	Categories   []string // "all" puts the kind in `kubectl get all`
	// Verbs the resource supports, for discovery; nil means all eight.
	Verbs []string
	// Subresources: status, scale, binding, eviction, log, finalize...
	// Each brings its own handler; discovery and routing read this list.
	Subresources []Subresource

	// New returns an empty object; NewList an empty list of them.
	New     func() runtime.Object
	NewList func() runtime.Object

	// PrepareForCreate resets what a client may not set on create (usually
	// the status). Optional.
	PrepareForCreate func(obj runtime.Object)
	// Default fills unset fields as Kubernetes' defaulting does. Optional.
	Default func(obj runtime.Object)
	// Validate checks an object; old is nil on create. Optional.
	Validate func(obj, old runtime.Object) field.ErrorList
	// NameRule checks metadata.name. Optional: nil is a DNS subdomain, as
	// most kinds; RBAC's take any path segment ("system:basic-user").
	NameRule apivalidation.ValidateNameFunc
	// Admit runs on create and update (old nil on create) after the
	// admission chain, for this kind's own rules that read other objects
	// (a free ClusterIP). Optional.
	Admit func(ctx context.Context, objs admission.Objects, obj, old runtime.Object) error
	// SerializeWrites makes this server create and update objects of the
	// kind one at a time, admission and write together: for an Admit that
	// hands out from a shared pool (Service ClusterIPs and NodePorts), so
	// that two requests at once cannot both take the same free address.
	SerializeWrites bool
	// StatusWritesMetadata lets a write to the status subresource change
	// labels and annotations too, as the status strategies of Ingresses
	// (and most kinds of Kubernetes' first years) allow: only the spec is
	// kept. Without it only .status changes, as the newer kinds and pods
	// (ResetObjectMetaForStatus).
	StatusWritesMetadata bool
	// StoredAs, for another version of a kind that already has storage,
	// converts to and from the stored type (events.k8s.io/v1 Events are
	// core/v1 Events in etcd). Optional: nil stores the type itself.
	StoredAs *Conversion
	// BeginDelete, on DELETE, marks obj as terminating and reports whether
	// its deletion must wait for something besides metadata.finalizers
	// (a namespace waits for its contents to go). Optional.
	BeginDelete func(obj runtime.Object) (wait bool)
	// GracePeriod decides whether a DELETE waits for somebody to finish the
	// object (pods: the kubelet), and for how long. Optional: nil deletes at once.
	GracePeriod func(obj runtime.Object, requested *int64) (seconds int64, graceful bool)
	// Virtual resources are computed, never stored: a create returns
	// Virtual's answer (e.g. SelfSubjectAccessReview). Optional.
	Virtual func(ctx context.Context, obj runtime.Object) (runtime.Object, error)
	// Bootstrap lists the objects every cluster starts with (the built-in
	// namespaces, the system PriorityClasses); Start creates those that
	// are missing. Optional.
	Bootstrap []runtime.Object

	// Fields returns the values field selectors can match, beyond
	// metadata.name and metadata.namespace, which every kind has. Optional.
	Fields func(obj runtime.Object) fields.Set
	// Columns and Row render the kind as a Table for `kubectl get`: the
	// columns after Name, and the cells of one object. Nil means Name, Age.
	Columns []Column
	Row     func(obj runtime.Object, now time.Time) []any
	// NameCell is the Name cell when it says more than metadata.name (the
	// default StorageClass is "standard (default)"). Optional.
	NameCell func(obj runtime.Object) string

	// Custom resources (package customresource) have no Go type: their
	// objects are unstructured.Unstructured, and these say what reflection
	// says for the built-in kinds.
	//
	// Decode reads a request body (JSON or YAML) as an object of the kind,
	// with the fields the kind does not know dropped and named, for field
	// validation. Optional: nil decodes into New's Go type.
	Decode func(data []byte) (obj runtime.Object, unknown []string, err error)
	// Schema is the kind's published OpenAPI schema (v3 and v2), for
	// kubectl explain and kubectl's validation. Optional: nil reflects
	// over New's Go type.
	Schema *Schema
	// StorageName is the etcd key segment of the kind's objects: "" is
	// Name; custom resources are "<group>/<plural>", as in Kubernetes'
	// /registry/<group>/<plural>, so that they never meet a built-in kind.
	StorageName string

	// WriteStep and EventStep name the step of seed 000 that a write, or
	// an etcd event, of this kind is (0: none), so the log reads like the
	// tutorial. EventStep also gives the log line's attributes. Optional.
	WriteStep func(info RequestInfo, obj runtime.Object) (step int, what string)
	EventStep func(obj, prev runtime.Object) (step int, what string, attrs []any)
}

// Schema is a kind's OpenAPI schema by its name, v3 and v2, and a
// revision that changes whenever they do (so kubectl fetches them again).
// Both refer to ObjectMeta, which the documents then include.
type Schema struct {
	Name       string
	Schema, V2 map[string]any
	Revision   string
}

// storageName is the etcd key segment of the resource's objects.
func (r *Resource) storageName() string {
	if r.StorageName != "" {
		return r.StorageName
	}
	return r.Name
}

// Conversion maps a resource's type to the type it is stored as. A
// conversion may fail (a custom resource's conversion webhook does not
// answer): the request that needed it fails, with nothing written.
type Conversion struct {
	New                  func() runtime.Object // an empty stored object
	GVK                  schema.GroupVersionKind
	ToStored, FromStored func(runtime.Object) (runtime.Object, error)
}

// Subresource is a path below one object (pods/web/binding) with a handler
// of its own. Group, Version and Kind name the body it takes and returns,
// for discovery: empty means the resource's own (pods/status is a Pod).
type Subresource struct {
	Name                 string
	Group, Version, Kind string
	Verbs                []string
	// AnyMethod takes, beyond the verbs' methods, those that have no verb
	// (OPTIONS): a proxy's. Kubernetes' request info gives them none, so
	// only RBAC's "*" allows them.
	AnyMethod bool
	Serve     func(q *Request)
	// Update, for a subresource that writes part of an object
	// (WritesSubresource: a CSR's approval), is its update strategy: from
	// the stored object and the client's, the object to store, or the
	// errors that make the write Invalid; now is the write's time on the
	// server's clock (a condition's lastUpdateTime). The kind's Validate
	// does not run: Update validates. Optional.
	Update func(cur, next runtime.Object, now time.Time) (runtime.Object, field.ErrorList)
}

// GroupResource names the resource in error messages ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Name}
}

// GroupVersionResource is the resource's full name, as admission sees it.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return r.GroupVersion.WithResource(r.Name)
}

// GVK is the kind's full name, written into every object the server returns.
func (r *Resource) GVK() schema.GroupVersionKind { return r.GroupVersion.WithKind(r.Kind) }

// subresource finds a declared subresource by name.
func (r *Resource) subresource(name string) (*Subresource, bool) {
	for i := range r.Subresources {
		if r.Subresources[i].Name == name {
			return &r.Subresources[i], true
		}
	}
	return nil, false
}

// hasStatus: the kind's .status belongs to its status subresource, so the
// main PUT keeps the stored one.
func (r *Resource) hasStatus() bool {
	_, ok := r.subresource(statusName)
	return ok
}

// Registry finds a Resource by group, version and plural name.
type Registry struct {
	byPath map[schema.GroupVersionResource]*Resource
}

// NewRegistry indexes the given resources.
func NewRegistry(resources ...*Resource) *Registry {
	reg := &Registry{byPath: map[schema.GroupVersionResource]*Resource{}}
	for _, r := range resources {
		reg.byPath[r.GroupVersionResource()] = r
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
		return out[i].GroupVersionResource().String() < out[j].GroupVersionResource().String()
	})
	return out
}
