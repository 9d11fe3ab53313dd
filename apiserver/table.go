package apiserver

import (
	"mime"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// `kubectl get` does not format objects itself: it asks the server for a
// Table (Accept: application/json;as=Table;v=v1;g=meta.k8s.io) and prints
// its cells. Each Resource declares its columns and a function filling one
// row, after kube-apiserver's printers; columns with priority 1 are the
// extra ones `-o wide` shows.

// Column is one column of a Table.
type Column struct {
	Name     string
	Type     string // string, integer, number, boolean or date
	Priority int32  // 0: always shown; 1: only with -o wide
}

// wantsTable reports whether the client asked for a Table.
func wantsTable(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "as=Table")
}

// acceptsPlain: the client also takes the object itself, as JSON or
// YAML (its Accept header has such a media type without "as=", or none).
func acceptsPlain(r *http.Request) bool {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		base, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["as"] != "" {
			continue
		}
		switch base {
		case "application/json", "application/yaml", "application/*", "*/*":
			return true
		}
	}
	return false
}

// columnsOf returns the Table columns of a resource: Name, then its own
// columns, or Name and Age when it declares none.
func columnsOf(res *Resource) []metav1.TableColumnDefinition {
	cols := res.Columns
	if cols == nil {
		cols = []Column{{Name: "Age", Type: "date"}}
	}
	out := []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name",
		Description: "Name must be unique within a namespace."}}
	for _, c := range cols {
		out = append(out, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Priority: c.Priority})
	}
	return out
}

// rowOf renders one object: its name, then the resource's cells.
func rowOf(res *Resource, obj runtime.Object, now time.Time, includeObject string) metav1.TableRow {
	m, _ := meta.Accessor(obj)
	name := m.GetName()
	if res.NameCell != nil {
		name = res.NameCell(obj)
	}
	cells := []any{name}
	if res.Row != nil {
		cells = append(cells, res.Row(obj, now)...)
	} else {
		cells = append(cells, Age(m.GetCreationTimestamp(), now))
	}
	row := metav1.TableRow{Cells: cells}
	switch includeObject {
	case "None":
	case "Object":
		row.Object = runtime.RawExtension{Object: obj}
	default: // Metadata, what kubectl asks for: -A and --show-labels read it
		row.Object = runtime.RawExtension{Object: &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: "meta.k8s.io/v1"},
			ObjectMeta: *objectMetaOf(m),
		}}
	}
	return row
}

// newTable renders objects as a Table.
func newTable(res *Resource, objs []runtime.Object, includeObject string, now time.Time, withColumns bool) *metav1.Table {
	t := &metav1.Table{TypeMeta: metav1.TypeMeta{Kind: "Table", APIVersion: "meta.k8s.io/v1"}, Rows: []metav1.TableRow{}}
	if withColumns {
		t.ColumnDefinitions = columnsOf(res)
	}
	for _, obj := range objs {
		t.Rows = append(t.Rows, rowOf(res, obj, now, includeObject))
	}
	return t
}

func objectMetaOf(m metav1.Object) *metav1.ObjectMeta {
	if om, ok := m.(*metav1.ObjectMeta); ok {
		return om.DeepCopy()
	}
	return &metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
		ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		Labels: m.GetLabels(), Annotations: m.GetAnnotations()}
}

// Age is how kubectl shows a timestamp: "5m2s", "3d", or "<unknown>".
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// OrNone is kubectl's placeholder for an empty cell.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
