// Package imagelocality prefers nodes that already hold the pod's images.
//
// Seed priority: ImageLocalityPriority ("倾向于已经有要使用镜像的节点，镜像
// 总大小值越大，权重越高"). Kubernetes plugin: ImageLocality.
//
// A node that has the image starts the pod without pulling it; the bigger
// the image, the more time that saves. But if every pod went where its
// image already is, one node would get them all ("node heating"), so an
// image counts less the fewer nodes have it... no: the more a node's copy
// is one of many, the more it counts. Kubernetes' rule:
//
//	for each container (init containers included) whose image the node reports
//	(node.status.images, the name with ":latest" added when it has no tag):
//	  scaled = size × (nodes having the image / all nodes)
//	sum     = Σ scaled, clamped to [23MB, 1000MB × number of containers]
//	score   = 100 × (sum - 23MB) / (1000MB × containers - 23MB)
//
// Scaling by spread means an image present on 1 node of 100 hardly counts,
// so pods do not crowd onto the first node that pulled it; an image on
// every node counts in full (but then every node has it). Below 23MB an
// image is quick to pull and counts nothing; above 1000MB per container
// more size adds nothing.
//
// Worked example: 4 nodes; the pod has one container, image
// soscscs/myapp:v1 of 500MB, reported by node01 and node02.
//
//	node01  scaled = 500MB × 2/4 = 250MB   score = 100 × (250 - 23) / (1000 - 23) = 23
//	node02  the same                       23
//	node03  no image: sum 0 → clamped to 23MB → 0
//
// With weight 1 that is a nudge: resources and affinity outweigh it. When
// no node has any of the pod's images every node would score 0, and the
// plugin skips the pod.
//
// It all lives in image_locality.go.
package imagelocality

import (
	"strings"

	"github.com/mkube/mkube/scheduler/framework"
)

// Name is the plugin's name in kube-scheduler.
const Name = "ImageLocality"

// Kubernetes' thresholds. 23MB is about the size of a small base image,
// quick to pull anyway; 1000MB per container is where more size stops
// mattering.
const (
	mb                    int64 = 1024 * 1024
	minThreshold                = 23 * mb
	maxContainerThreshold       = 1000 * mb
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

var skip = framework.NewStatus(framework.Skip, "no node has any of the pod's images")

// ImageLocality is the plugin.
type ImageLocality struct{}

// New returns the plugin.
func New() *ImageLocality { return &ImageLocality{} }

func (*ImageLocality) Name() string { return Name }

// image is one container's image with its spread over the cluster.
type image struct {
	name   string  // normalised
	spread float64 // nodes having it / all nodes
}

type preScoreState struct {
	images        []image
	numContainers int
}

// PreScore looks up, once per cycle, how widely each of the pod's images
// is spread.
func (*ImageLocality) PreScore(state *framework.CycleState, pod *framework.PodInfo, _ []*framework.NodeInfo, all framework.NodeInfoLister) *framework.Status {
	s := &preScoreState{}
	total, present := all.NumNodes(), false
	add := func(name string) {
		name = normalizedImageName(name)
		var spread float64
		if n := all.NumNodesWithImage(name); n > 0 && total > 0 {
			spread, present = float64(n)/float64(total), true
		}
		s.images = append(s.images, image{name, spread})
	}
	for i := range pod.Pod.Spec.InitContainers {
		add(pod.Pod.Spec.InitContainers[i].Image)
	}
	for i := range pod.Pod.Spec.Containers {
		add(pod.Pod.Spec.Containers[i].Image)
	}
	if !present {
		return skip
	}
	s.numContainers = len(s.images)
	state.Write(preScoreStateKey, s)
	return nil
}

// Score sums the node's scaled image sizes and maps them onto 0-100.
func (*ImageLocality) Score(state *framework.CycleState, _ *framework.PodInfo, node *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(err)
	}
	var sum int64
	for _, img := range s.images {
		if size, ok := node.ImageSizes[img.name]; ok {
			sum += int64(float64(size) * img.spread)
		}
	}
	return calculatePriority(sum, s.numContainers), nil
}

// calculatePriority clamps sum to [minThreshold, maxContainerThreshold ×
// containers] and scales it to 0-100.
func calculatePriority(sum int64, numContainers int) int64 {
	maxThreshold := maxContainerThreshold * int64(numContainers)
	if maxThreshold <= minThreshold {
		return 0 // a pod without containers
	}
	sum = min(max(sum, minThreshold), maxThreshold)
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}

// normalizedImageName adds the tag a runtime assumes, ":latest", to a name
// without one, so "nginx" matches the "nginx:latest" a node reports. A
// ':' before the last '/' is a registry port, not a tag.
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}
