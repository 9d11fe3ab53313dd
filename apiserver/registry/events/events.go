// Package events declares events.k8s.io/v1 Events.
//
// It all lives in events.go: the kind, stored as core/v1 Events and
// converted both ways, so that both APIs list the same events.
package events

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/core"
)

// events.k8s.io/v1 is the newer face of the same Events: one object in
// etcd (stored as core/v1, under /registry/events), seen through either
// API group, as in Kubernetes. The newer names: regarding for
// involvedObject, note for message, and the old fields kept as
// deprecated*.

var Events = &apiserver.Resource{
	GroupVersion: eventsv1.SchemeGroupVersion, Name: "events", Kind: "Event", Namespaced: true,
	ShortNames: []string{"ev"},
	New:        func() runtime.Object { return &eventsv1.Event{} },
	NewList:    func() runtime.Object { return &eventsv1.EventList{} },
	StoredAs: &apiserver.Conversion{
		New:        func() runtime.Object { return &corev1.Event{} },
		GVK:        corev1.SchemeGroupVersion.WithKind("Event"),
		ToStored:   func(obj runtime.Object) (runtime.Object, error) { return eventToCore(obj.(*eventsv1.Event)), nil },
		FromStored: func(obj runtime.Object) (runtime.Object, error) { return eventFromCore(obj.(*corev1.Event)), nil },
	},
	Columns: core.EventColumns,
	Row: func(obj runtime.Object, now time.Time) []any {
		return core.EventRow(eventToCore(obj.(*eventsv1.Event)), now)
	},
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		// The newer API asks every writer to say who and when.
		ev := obj.(*eventsv1.Event)
		var errs field.ErrorList
		if ev.EventTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
		}
		if ev.ReportingController == "" {
			errs = append(errs, field.Required(field.NewPath("reportingController"), ""))
		}
		if ev.Action == "" {
			errs = append(errs, field.Required(field.NewPath("action"), ""))
		}
		return errs
	},
	Fields: func(obj runtime.Object) fields.Set {
		ev := obj.(*eventsv1.Event)
		return fields.Set{
			"regarding.kind": ev.Regarding.Kind, "regarding.namespace": ev.Regarding.Namespace,
			"regarding.name": ev.Regarding.Name, "regarding.uid": string(ev.Regarding.UID),
			"regarding.apiVersion": ev.Regarding.APIVersion, "regarding.resourceVersion": ev.Regarding.ResourceVersion,
			"regarding.fieldPath": ev.Regarding.FieldPath,
			"reason":              ev.Reason, "type": ev.Type, "reportingController": ev.ReportingController,
		}
	},
}

func eventToCore(ev *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta: ev.ObjectMeta, InvolvedObject: ev.Regarding, Related: ev.Related,
		Reason: ev.Reason, Message: ev.Note, Type: ev.Type, Action: ev.Action, EventTime: ev.EventTime,
		ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance,
		Source: ev.DeprecatedSource, FirstTimestamp: ev.DeprecatedFirstTimestamp,
		LastTimestamp: ev.DeprecatedLastTimestamp, Count: ev.DeprecatedCount,
	}
	if ev.Series != nil {
		out.Series = &corev1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
	}
	return out
}

func eventFromCore(ev *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		ObjectMeta: ev.ObjectMeta, Regarding: ev.InvolvedObject, Related: ev.Related,
		Reason: ev.Reason, Note: ev.Message, Type: ev.Type, Action: ev.Action, EventTime: ev.EventTime,
		ReportingController: ev.ReportingController, ReportingInstance: ev.ReportingInstance,
		DeprecatedSource: ev.Source, DeprecatedFirstTimestamp: ev.FirstTimestamp,
		DeprecatedLastTimestamp: ev.LastTimestamp, DeprecatedCount: ev.Count,
	}
	if ev.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: ev.Series.Count, LastObservedTime: ev.Series.LastObservedTime}
	}
	return out
}
