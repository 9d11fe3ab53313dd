package apiserver

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// filter is what a list or watch asks for: a namespace, a label selector
// (equality- and set-based: app=web, tier in (a,b), !canary) and a field
// selector over the fields the kind exposes (spec.nodeName=node01).
type filter struct {
	namespace string // "" = all namespaces
	labels    labels.Selector
	fields    fields.Selector
	res       *Resource
}

// newFilter parses the selectors of a request; errors are 400 BadRequest.
func newFilter(res *Resource, namespace, labelSelector, fieldSelector string) (*filter, error) {
	ls, err := labels.Parse(labelSelector)
	if err != nil {
		return nil, badRequest("unable to parse requirement: %v", err)
	}
	fs, err := fields.ParseSelector(fieldSelector)
	if err != nil {
		return nil, badRequest("invalid field selector: %v", err)
	}
	f := &filter{namespace: namespace, labels: ls, fields: fs, res: res}
	// Reject fields the kind does not expose, as Kubernetes does.
	known := f.fieldSet(res.New())
	for _, r := range fs.Requirements() {
		if _, ok := known[r.Field]; !ok {
			return nil, badRequest("field label not supported: %s", r.Field)
		}
	}
	return f, nil
}

func (f *filter) fieldSet(obj runtime.Object) fields.Set {
	set := fields.Set{}
	if f.res.Fields != nil {
		set = f.res.Fields(obj)
	}
	m, _ := meta.Accessor(obj)
	set["metadata.name"] = m.GetName()
	if f.res.Namespaced {
		set["metadata.namespace"] = m.GetNamespace()
	}
	return set
}

// matches reports whether obj passes the filter. A nil obj never does.
func (f *filter) matches(obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if f.namespace != "" && m.GetNamespace() != f.namespace {
		return false
	}
	if !f.labels.Empty() && !f.labels.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	return f.fields.Empty() || f.fields.Matches(f.fieldSet(obj))
}
