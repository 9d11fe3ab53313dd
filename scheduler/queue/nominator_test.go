package queue

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/scheduler/framework"
	st "github.com/mkube/mkube/scheduler/internal/schedtest"
)

// nominatedTo lists, per node, the names of the pods nominated there that
// count against pod.
func nominatedTo(q *PriorityQueue, pod *corev1.Pod) map[string][]string {
	out := map[string][]string{}
	for node, pods := range q.NominatedPodsFor(pod) {
		for _, p := range pods {
			out[node] = append(out[node], p.Pod.Name)
		}
		slices.Sort(out[node])
	}
	return out
}

func TestNominatedPods(t *testing.T) {
	high := st.MakePod("high").Priority(1000).Obj()
	tests := []struct {
		name string
		run  func(q *PriorityQueue)
		want map[string][]string // as seen by a pod of priority 500
	}{
		{"a pod whose status names a node is nominated there as soon as it is queued (a restarted scheduler remembers)",
			func(q *PriorityQueue) { q.Add(st.MakePod("high").Priority(1000).NominatedNodeName("node01").Obj()) },
			map[string][]string{"node01": {"high"}}},
		{"a preemption nominates the pod before its status says so",
			func(q *PriorityQueue) {
				q.Add(high)
				q.AddNominatedPod(framework.NewPodInfo(high), framework.Nominate("node01"))
			},
			map[string][]string{"node01": {"high"}}},
		{"an update that does not touch nominatedNodeName keeps a nomination the status does not show yet",
			func(q *PriorityQueue) {
				q.Add(high)
				q.AddNominatedPod(framework.NewPodInfo(high), framework.Nominate("node01"))
				relabelled := high.DeepCopy()
				relabelled.Labels = map[string]string{"x": "y"}
				q.Update(high, relabelled)
			},
			map[string][]string{"node01": {"high"}}},
		{"a status that moves the nomination moves it",
			func(q *PriorityQueue) {
				old := st.MakePod("high").Priority(1000).NominatedNodeName("node01").Obj()
				q.Add(old)
				q.Update(old, st.MakePod("high").Priority(1000).NominatedNodeName("node02").Obj())
			},
			map[string][]string{"node02": {"high"}}},
		{"clearing the nomination ends it",
			func(q *PriorityQueue) {
				q.Add(high)
				q.AddNominatedPod(framework.NewPodInfo(high), framework.Nominate("node01"))
				q.AddNominatedPod(framework.NewPodInfo(high), framework.ClearNomination)
			},
			map[string][]string{}},
		{"ModeNoop leaves the nomination alone",
			func(q *PriorityQueue) {
				q.AddNominatedPod(framework.NewPodInfo(high), framework.Nominate("node01"))
				q.AddNominatedPod(framework.NewPodInfo(high), framework.NominatingInfo{})
			},
			map[string][]string{"node01": {"high"}}},
		{"the pod being deleted, or bound, ends its nomination",
			func(q *PriorityQueue) {
				q.Add(st.MakePod("high").Priority(1000).NominatedNodeName("node01").Obj())
				q.Delete(high)
			},
			map[string][]string{}},
		{"assuming the pod on a node ends its nomination",
			func(q *PriorityQueue) {
				q.AddNominatedPod(framework.NewPodInfo(high), framework.Nominate("node01"))
				if !q.DeleteNominatedPodIfExists(high) {
					panic("the nomination was not there")
				}
			},
			map[string][]string{}},
		{"only pods of higher or equal priority count: a lower one does not hold the room against this pod",
			func(q *PriorityQueue) {
				q.AddNominatedPod(framework.NewPodInfo(st.MakePod("equal").Priority(500).Obj()), framework.Nominate("node01"))
				q.AddNominatedPod(framework.NewPodInfo(st.MakePod("low").Priority(10).Obj()), framework.Nominate("node01"))
				q.AddNominatedPod(framework.NewPodInfo(high), framework.Nominate("node02"))
			},
			map[string][]string{"node01": {"equal"}, "node02": {"high"}}},
		{"a pod never counts against itself",
			func(q *PriorityQueue) {
				q.AddNominatedPod(framework.NewPodInfo(st.MakePod("me").Priority(500).Obj()), framework.Nominate("node01"))
			},
			map[string][]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newTestQueue()
			tt.run(q)
			got := nominatedTo(q, st.MakePod("me").Priority(500).Obj())
			if len(got) != len(tt.want) {
				t.Fatalf("nominated = %v, want %v", got, tt.want)
			}
			for node, pods := range tt.want {
				if !slices.Equal(got[node], pods) {
					t.Errorf("nominated = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestNoNominatedPodsCostsNothing(t *testing.T) {
	q, _ := newTestQueue()
	q.Add(st.MakePod("web").Obj())
	if got := q.NominatedPodsFor(st.MakePod("other").Obj()); got != nil {
		t.Errorf("NominatedPodsFor = %v, want nil", got)
	}
}
