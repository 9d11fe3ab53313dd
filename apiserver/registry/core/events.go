package core

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// Events are what components tell the user about an object (`kubectl
// describe` lists them). events.k8s.io/v1 serves the same stored objects
// (package events).
var Events = &apiserver.Resource{
	GroupVersion: v1, Name: "events", Kind: "Event", Namespaced: true,
	ShortNames: []string{"ev"}, Columns: EventColumns, Row: EventRow,
	New:     func() runtime.Object { return &corev1.Event{} },
	NewList: func() runtime.Object { return &corev1.EventList{} },
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		ev := obj.(*corev1.Event)
		if ev.InvolvedObject.Namespace != "" && ev.InvolvedObject.Namespace != ev.Namespace {
			return field.ErrorList{field.Invalid(field.NewPath("involvedObject", "namespace"), ev.InvolvedObject.Namespace, "does not match event.namespace")}
		}
		return nil
	},
	Fields: func(obj runtime.Object) fields.Set {
		ev := obj.(*corev1.Event)
		// An events.k8s.io Event has no source: its reportingController
		// stands for it, as in Kubernetes' ToSelectableFields.
		source := cmp.Or(ev.Source.Component, ev.ReportingController)
		return fields.Set{
			"involvedObject.kind":            ev.InvolvedObject.Kind,
			"involvedObject.namespace":       ev.InvolvedObject.Namespace,
			"involvedObject.name":            ev.InvolvedObject.Name,
			"involvedObject.uid":             string(ev.InvolvedObject.UID),
			"involvedObject.apiVersion":      ev.InvolvedObject.APIVersion,
			"involvedObject.resourceVersion": ev.InvolvedObject.ResourceVersion,
			"involvedObject.fieldPath":       ev.InvolvedObject.FieldPath,
			"reason":                         ev.Reason,
			"reportingComponent":             ev.ReportingController,
			"source":                         source,
			"type":                           ev.Type,
		}
	},
}

// EventColumns: Kubernetes prints events with the name last, wide only.
var EventColumns = []apiserver.Column{
	{Name: "Last Seen", Type: "string"}, {Name: "Type", Type: "string"}, {Name: "Reason", Type: "string"},
	{Name: "Object", Type: "string"}, {Name: "Subobject", Type: "string", Priority: 1},
	{Name: "Source", Type: "string", Priority: 1}, {Name: "Message", Type: "string"},
	{Name: "First Seen", Type: "string", Priority: 1}, {Name: "Count", Type: "string", Priority: 1},
}

func EventRow(obj runtime.Object, now time.Time) []any {
	ev := obj.(*corev1.Event)
	last := ev.LastTimestamp
	if last.IsZero() {
		last = metav1.NewTime(ev.EventTime.Time)
	}
	first := ev.FirstTimestamp
	if first.IsZero() {
		first = last
	}
	source := ev.Source.Component
	if ev.Source.Host != "" {
		source += ", " + ev.Source.Host
	}
	return []any{apiserver.Age(last, now), ev.Type, ev.Reason,
		strings.ToLower(ev.InvolvedObject.Kind) + "/" + ev.InvolvedObject.Name, ev.InvolvedObject.FieldPath,
		source, strings.TrimSpace(ev.Message), apiserver.Age(first, now), fmt.Sprint(max(ev.Count, 1))}
}
