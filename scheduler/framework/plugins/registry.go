// Package plugins assembles the scheduler's default profile: which
// plugins run, in which order, with which score weights. It is the
// mkube counterpart of kube-scheduler's default KubeSchedulerConfiguration
// profile, limited to the plugins mkube implements.
package plugins

import (
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeaffinity"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodename"
	"github.com/mkube/mkube/scheduler/framework/plugins/noderesources"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeunschedulable"
	"github.com/mkube/mkube/scheduler/framework/plugins/tainttoleration"
)

// Default lists the enabled plugins in kube-scheduler's filter order. The
// order matters for the FailedScheduling message, since a node reports only
// the first filter that rejects it: a cordoned node short of cpu counts as
// "node(s) were unschedulable", not "Insufficient cpu".
//
//	seed name                 Kubernetes plugin   extension points   weight
//	CheckNodeUnschedulable    NodeUnschedulable   Filter
//	PodFitsHost               NodeName            Filter
//	PodToleratesNodeTaints    TaintToleration     Filter
//	PodSelectorMatches        NodeAffinity        Filter
//	PodFitsResources          NodeResourcesFit    Filter, Score      1
//	LeastRequestedPriority      (its LeastAllocated scoring strategy)
func Default() []framework.PluginSpec {
	return []framework.PluginSpec{
		{Plugin: nodeunschedulable.New()},
		{Plugin: nodename.New()},
		{Plugin: tainttoleration.New()},
		{Plugin: nodeaffinity.New()},
		{Plugin: noderesources.New(), Weight: 1},
	}
}

// NewDefaultFramework builds a framework with Default.
func NewDefaultFramework() (*framework.Framework, error) {
	return framework.New(Default()...)
}
