package dashboard

import (
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
)

// Step is one of seed 000 §一's thirteen, for one pod: what the seed says
// happens, who does it, and the records that show when it did.
type Step struct {
	N         int      `json:"n"`
	What      string   `json:"what"`
	Component string   `json:"component"`
	Records   []Record `json:"records,omitempty"`
	// Unobserved says, when no record shows the step, why not, and where
	// a learner can see it instead.
	Unobserved string `json:"unobserved,omitempty"`
}

// Record is one real record of a step: an API timestamp, an Event, or the
// dashboard's own watch delivery.
type Record struct {
	At time.Time `json:"at"`
	// Source names the record: "pod metadata.creationTimestamp",
	// "event Scheduled (default-scheduler)", "the dashboard's watch: ADDED".
	Source string `json:"source"`
	Detail string `json:"detail,omitempty"`
	// API is true for times the API server stores (kept to the second,
	// as Kubernetes keeps them), false for the dashboard's own clock.
	API bool `json:"api"`
}

// At is the step's time: its earliest record's; zero if unobserved.
func (s Step) At() time.Time {
	var t time.Time
	for _, r := range s.Records {
		if t.IsZero() || r.At.Before(t) {
			t = r.At
		}
	}
	return t
}

// Steps reads the thirteen steps of pod out of the dashboard's caches:
// the pod itself, its ReplicaSet and Deployment, the Events about them,
// and when the dashboard's own watch delivered each (StepsOf).
func (w *Watcher) Steps(pod *corev1.Pod) []Step {
	rs, dep := w.owners(pod)
	seen := Records{Events: w.eventsOf(pod, rs), Pod: w.sightings.Get(pod.UID)}
	switch {
	case dep != nil:
		seen.Top = w.sightings.Get(dep.UID)
	case rs != nil:
		seen.Top = w.sightings.Get(rs.UID)
	}
	return StepsOf(pod, rs, dep, seen)
}

// Records are what the steps are read from besides the objects: the
// Events about the pod (and its ReplicaSet's SuccessfulCreate naming it),
// and the dashboard's sightings of the pod and of the object the user
// created (its Deployment or ReplicaSet).
type Records struct {
	Events   []*corev1.Event
	Pod, Top Sighting
}

// StepsOf is the thirteen steps of pod, owned by rs and dep (nil if
// none), from seen. The seed's steps
// happen inside components that leave no record in the API (a watch
// delivery to the scheduler, etcd's notification to the API server):
// those say so, and name the component's log line (step=N) that shows
// them. Nothing is estimated.
func StepsOf(pod *corev1.Pod, rs *appsv1.ReplicaSet, dep *appsv1.Deployment, records Records) []Step {
	events, seen := records.Events, records.Pod

	// The object the user created: the Deployment, else a bare
	// ReplicaSet, else the pod itself.
	var top metav1.Object = pod
	topKind := "pod"
	switch {
	case dep != nil:
		top, topKind = dep, "Deployment"
	case rs != nil:
		top, topKind = rs, "ReplicaSet"
	}
	topName := topKind + " " + top.GetNamespace() + "/" + top.GetName()
	topSeen := records.Top
	if top == metav1.Object(pod) {
		topSeen = seen
	}
	controlled := rs != nil

	steps := []Step{
		{N: seedstep.ComponentsListWatch, What: "the controller manager, the scheduler and the kubelets list-watch the API server", Component: "all",
			Unobserved: "happens once, when each component starts, before any pod: their logs say `listed ... step=1` then `watching ... step=1`"},
		{N: seedstep.ClientSubmits, What: "a client (kubectl) asks the API server to create the " + topKind, Component: "kubectl",
			Unobserved: "a request leaves no record in the objects: the API server's audit log has it (logs/audit.log)"},
		{N: seedstep.StoredAndAcknowledged, What: "the API server stores the " + topKind + " in etcd and acknowledges the client", Component: "apiserver",
			Records: []Record{{At: top.GetCreationTimestamp().Time, Source: topName + " metadata.creationTimestamp", API: true}}},
		{N: seedstep.EtcdReportsCreate, What: "etcd sends the create event to the API server", Component: "etcd",
			Unobserved: "inside the API server only: its log line `etcd reported ... step=4`"},
		{N: seedstep.ControllerManagerWatches, What: "the API server passes the event to the controller manager's watch", Component: "controller-manager",
			Records: live(topSeen.Added, "the dashboard's watch: ADDED "+topName, "the same event reached the controller manager's watch; its delivery time is in no record, the dashboard's is")},
		{N: seedstep.ControllerCreatesPods, What: "the ReplicaSet controller sees too few replicas and creates the pod", Component: "controller-manager"},
		{N: seedstep.ControllerPodStored, What: "the API server stores the pod the controller created", Component: "apiserver",
			Records: []Record{{At: pod.CreationTimestamp.Time, Source: "pod metadata.creationTimestamp", API: true}}},
		{N: seedstep.EtcdReportsControllerPod, What: "etcd reports the pod; the API server passes it to the scheduler's watch", Component: "etcd, apiserver",
			Records: live(seen.Added, "the dashboard's watch: ADDED pod", "the scheduler's own delivery time is in its log (`queued unbound pod`, debug)")},
		{N: seedstep.SchedulerPicksNode, What: "the scheduler picks a node for the unbound pod", Component: "scheduler"},
		{N: seedstep.BindingStored, What: "the scheduler's binding is stored: spec.nodeName is set", Component: "scheduler, apiserver"},
		{N: seedstep.EtcdReportsBinding, What: "etcd reports the binding; the API server passes it to the node's kubelet", Component: "etcd, apiserver",
			Records: live(seen.Bound, "the dashboard's watch: first event with spec.nodeName", "the kubelet's delivery time is in its log (`pod bound to this node: starting it step=12`)")},
		{N: seedstep.KubeletStartsPod, What: "the node's kubelet sees the pod and starts its containers", Component: "kubelet " + pod.Spec.NodeName},
		{N: seedstep.PodStatusStored, What: "the kubelet reports the pod's status; the API server stores it", Component: "kubelet, apiserver"},
	}
	at := func(n int) *Step { return &steps[n-1] }

	if !controlled {
		for _, n := range []int{seedstep.ControllerManagerWatches, seedstep.ControllerCreatesPods} {
			at(n).Records, at(n).Unobserved = nil, "no controller: the pod was created directly"
		}
		at(seedstep.ControllerPodStored).What = "the pod is the object created: step 3 stored it"
	}
	for _, e := range events {
		r := Record{At: eventTime(e), Source: "event " + e.Reason + " (" + e.Source.Component + ")", Detail: e.Message, API: true}
		switch {
		case e.InvolvedObject.Kind == "ReplicaSet":
			at(seedstep.ControllerCreatesPods).Records = append(at(seedstep.ControllerCreatesPods).Records, r)
		case e.Reason == "Scheduled":
			at(seedstep.SchedulerPicksNode).Records = append(at(seedstep.SchedulerPicksNode).Records, r)
		case e.Reason == "Pulling" || e.Reason == "Pulled" || e.Reason == "Created" || e.Reason == "Started":
			at(seedstep.KubeletStartsPod).Records = append(at(seedstep.KubeletStartsPod).Records, r)
		}
	}
	if c := condition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionTrue {
		at(seedstep.BindingStored).Records = append(at(seedstep.BindingStored).Records,
			Record{At: c.LastTransitionTime.Time, Source: "pod condition PodScheduled lastTransitionTime", API: true})
	}
	if pod.Status.StartTime != nil {
		at(seedstep.KubeletStartsPod).Records = append(at(seedstep.KubeletStartsPod).Records,
			Record{At: pod.Status.StartTime.Time, Source: "pod status.startTime", Detail: "when the kubelet took the pod", API: true})
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if r := cs.State.Running; r != nil {
			at(seedstep.KubeletStartsPod).Records = append(at(seedstep.KubeletStartsPod).Records,
				Record{At: r.StartedAt.Time, Source: "containerStatuses[" + cs.Name + "].state.running.startedAt", API: true})
		}
	}
	for _, t := range []corev1.PodConditionType{corev1.ContainersReady, corev1.PodReady} {
		if c := condition(pod, t); c != nil && c.Status == corev1.ConditionTrue {
			at(seedstep.PodStatusStored).Records = append(at(seedstep.PodStatusStored).Records,
				Record{At: c.LastTransitionTime.Time, Source: "pod condition " + string(t) + " lastTransitionTime", API: true})
		}
	}
	at(seedstep.PodStatusStored).Records = append(at(seedstep.PodStatusStored).Records,
		live(seen.Ready, "the dashboard's watch: first event with Ready=True", "")...)

	for i := range steps {
		s := &steps[i]
		slices.SortStableFunc(s.Records, func(a, b Record) int { return a.At.Compare(b.At) })
		if len(s.Records) == 0 && s.Unobserved == "" {
			s.Unobserved = "not yet: no record of it so far"
		}
	}
	return steps
}

// live is the record of a delivery the dashboard's watch saw, or none:
// the object was already so when the dashboard listed it (the epoch
// marker of Sightings) or it has not happened.
func live(at time.Time, source, detail string) []Record {
	if at.IsZero() || at.Unix() == 0 {
		return nil
	}
	return []Record{{At: at, Source: source, Detail: detail}}
}

// owners are the pod's controlling ReplicaSet and that one's Deployment,
// from the caches; nil where there is none.
func (w *Watcher) owners(pod *corev1.Pod) (*appsv1.ReplicaSet, *appsv1.Deployment) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return nil, nil
	}
	obj, ok := w.Cache(client.ReplicaSets).Get(pod.Namespace + "/" + ref.Name)
	if !ok {
		return nil, nil
	}
	rs := obj.(*appsv1.ReplicaSet)
	ref = metav1.GetControllerOf(rs)
	if ref == nil || ref.Kind != "Deployment" {
		return rs, nil
	}
	if obj, ok := w.Cache(client.Deployments).Get(pod.Namespace + "/" + ref.Name); ok {
		return rs, obj.(*appsv1.Deployment)
	}
	return rs, nil
}

// eventsOf are the Events about pod, and its ReplicaSet's SuccessfulCreate
// naming it ("Created pod: NAME").
func (w *Watcher) eventsOf(pod *corev1.Pod, rs *appsv1.ReplicaSet) []*corev1.Event {
	var out []*corev1.Event
	for _, obj := range w.Cache(client.Events).ByIndex(client.IndexByNamespace, pod.Namespace) {
		e := obj.(*corev1.Event)
		o := e.InvolvedObject
		switch {
		case o.Kind == "Pod" && o.Name == pod.Name && (o.UID == "" || o.UID == pod.UID):
			out = append(out, e)
		case rs != nil && o.Kind == "ReplicaSet" && o.Name == rs.Name && e.Reason == "SuccessfulCreate" &&
			strings.TrimPrefix(e.Message, "Created pod: ") == pod.Name:
			out = append(out, e)
		}
	}
	return out
}

// eventTime is when an Event happened: its first timestamp (a repeated
// event's later ones are not this pod's steps), else its eventTime.
func eventTime(e *corev1.Event) time.Time {
	if !e.FirstTimestamp.IsZero() {
		return e.FirstTimestamp.Time
	}
	return e.EventTime.Time
}

func condition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}
