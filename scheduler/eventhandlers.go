package scheduler

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/internal/seedstep"
	"github.com/mkube/mkube/scheduler/framework"
)

// The informer handlers turn watch events into queue and cache changes.
// They run on the informers' goroutines and only update memory.
//
//	pod, unbound, ours    → queue (Add, Update, Delete)
//	pod, bound            → cache (AddPod, UpdatePod, RemovePod); a bound pod
//	                        gone frees room, a relabelled one may satisfy
//	                        affinity → MoveAllToActiveOrBackoffQueue
//	pod, becomes bound    → step 10 observed: off the queue, into the cache
//	node                  → cache; a change that may help → Move...
//	claim, volume, class  → added or changed: Move... (a claim bound, a
//	                        volume freed: the volume plugins' rejections)
//	CSINode               → added or changed: Move... (a node's volume
//	                        limit written or raised: NodeVolumeLimits')

func (s *Scheduler) addEventHandlers() {
	s.podInformer.AddHandler(client.Handler{OnAdd: s.onPodAdd, OnUpdate: s.onPodUpdate, OnDelete: s.onPodDelete})
	s.nodeInformer.AddHandler(client.Handler{OnAdd: s.onNodeAdd, OnUpdate: s.onNodeUpdate, OnDelete: s.onNodeDelete})
	storageEvents := func(add, update framework.ClusterEvent) client.Handler {
		return client.Handler{OnAdd: func(runtime.Object) { s.moveOnEvent(add) }, OnUpdate: func(_, _ runtime.Object) { s.moveOnEvent(update) }}
	}
	s.storage.claims.AddHandler(storageEvents(framework.PersistentVolumeClaimAdd, framework.PersistentVolumeClaimUpdate))
	s.storage.volumes.AddHandler(storageEvents(framework.PersistentVolumeAdd, framework.PersistentVolumeUpdate))
	s.storage.classes.AddHandler(storageEvents(framework.StorageClassAdd, framework.StorageClassUpdate))
	s.storage.csiNodes.AddHandler(storageEvents(framework.CSINodeAdd, framework.CSINodeUpdate))
}

// assigned reports whether the pod is bound to a node.
func assigned(pod *corev1.Pod) bool { return pod.Spec.NodeName != "" }

// responsibleForPod: this scheduler handles pods that name it (the API
// server defaults spec.schedulerName to default-scheduler).
func (s *Scheduler) responsibleForPod(pod *corev1.Pod) bool {
	name := pod.Spec.SchedulerName
	if name == "" {
		name = corev1.DefaultSchedulerName
	}
	return name == s.name
}

func (s *Scheduler) onPodAdd(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	switch {
	case assigned(pod):
		if err := s.cache.AddPod(pod); err != nil {
			s.log.Error("add pod to cache", "pod", framework.PodKey(pod), "err", err)
		}
		s.moveOnEvent(framework.AssignedPodAdd)
	case s.responsibleForPod(pod) && pod.DeletionTimestamp == nil:
		// Step 9: the scheduler sees the unbound pod.
		s.log.Debug("queued unbound pod", seedstep.Key, seedstep.SchedulerPicksNode, "pod", framework.PodKey(pod))
		s.queue.Add(pod)
	}
}

func (s *Scheduler) onPodUpdate(oldObj, newObj runtime.Object) {
	old, pod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	switch {
	case assigned(old):
		if err := s.cache.UpdatePod(old, pod); err != nil {
			s.log.Error("update pod in cache", "pod", framework.PodKey(pod), "err", err)
		}
		if !maps.Equal(old.Labels, pod.Labels) {
			s.moveOnEvent(framework.AssignedPodUpdateLabel)
		}
	case assigned(pod):
		// Step 10 as the watch shows it: the binding is stored. The pod
		// leaves the queue and counts on its node; if we assumed it,
		// this confirms the assumption.
		s.queue.Delete(old)
		if err := s.cache.AddPod(pod); err != nil {
			s.log.Error("add pod to cache", "pod", framework.PodKey(pod), "err", err)
		}
		s.moveOnEvent(framework.AssignedPodAdd)
	case !s.responsibleForPod(pod):
	case pod.DeletionTimestamp != nil:
		s.queue.Delete(pod) // being deleted: not worth a node
	default:
		s.queue.Update(old, pod)
	}
}

func (s *Scheduler) onPodDelete(obj runtime.Object) {
	pod := obj.(*corev1.Pod)
	if !assigned(pod) {
		s.queue.Delete(pod)
		return
	}
	// Deleted, or finished (Succeeded/Failed pods leave the watch): its
	// requests no longer count on the node.
	if err := s.cache.RemovePod(pod); err != nil {
		s.log.Error("remove pod from cache", "pod", framework.PodKey(pod), "err", err)
	}
	s.moveOnEvent(framework.AssignedPodDelete)
}

func (s *Scheduler) onNodeAdd(obj runtime.Object) {
	s.cache.AddNode(obj.(*corev1.Node))
	s.moveOnEvent(framework.NodeAdd)
}

func (s *Scheduler) onNodeUpdate(oldObj, newObj runtime.Object) {
	old, node := oldObj.(*corev1.Node), newObj.(*corev1.Node)
	s.cache.UpdateNode(old, node)
	// Kubelets rewrite their status often; only changes a plugin cares
	// about retry pods.
	if ev := nodeUpdateEvent(old, node); ev.ActionType != 0 {
		s.moveOnEvent(ev)
	}
}

func (s *Scheduler) onNodeDelete(obj runtime.Object) {
	s.cache.RemoveNode(obj.(*corev1.Node))
}

// moveOnEvent retries the unschedulable pods event may help.
func (s *Scheduler) moveOnEvent(event framework.ClusterEvent) {
	if n := s.queue.MoveAllToActiveOrBackoffQueue(event); n > 0 {
		s.log.Info("retrying unschedulable pods", "event", event.Label, "pods", n)
	}
}

// nodeUpdateEvent classifies what changed in a node, as kube-scheduler's
// node update handler does.
func nodeUpdateEvent(old, cur *corev1.Node) framework.ClusterEvent {
	var a framework.ActionType
	if !equality.Semantic.DeepEqual(old.Status.Allocatable, cur.Status.Allocatable) {
		a |= framework.UpdateNodeAllocatable
	}
	if !maps.Equal(old.Labels, cur.Labels) {
		a |= framework.UpdateNodeLabel
	}
	if old.Spec.Unschedulable != cur.Spec.Unschedulable || !equality.Semantic.DeepEqual(old.Spec.Taints, cur.Spec.Taints) {
		a |= framework.UpdateNodeTaint
	}
	if conditionStatuses(old) != conditionStatuses(cur) {
		a |= framework.UpdateNodeCondition
	}
	return framework.ClusterEvent{Resource: framework.Node, ActionType: a, Label: "NodeUpdate"}
}

// conditionStatuses summarises a node's conditions without their
// timestamps, which change on every heartbeat.
func conditionStatuses(n *corev1.Node) string {
	var b []byte
	for _, c := range n.Status.Conditions {
		b = append(b, c.Type...)
		b = append(b, '=')
		b = append(b, c.Status...)
		b = append(b, ';')
	}
	return string(b)
}
