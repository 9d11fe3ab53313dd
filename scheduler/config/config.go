// Package config reads the scheduler's configuration file (the --config
// flag of cmd/scheduler): the part of kube-scheduler's
// KubeSchedulerConfiguration that says which plugins run, with which
// weights, and how many nodes to look at. It is the seed's "优先级由一系列键值
// 对组成，键是该优先级项的名称，值是它的权重" as a file.
//
// Format, YAML or JSON (see scheduler/config-example.yaml):
//
//	apiVersion: kubescheduler.config.k8s.io/v1
//	kind: KubeSchedulerConfiguration
//	percentageOfNodesToScore: 50          # 0-100; 0 = Kubernetes' adaptive default
//	profiles:                             # exactly one: mkube runs one profile
//	- schedulerName: default-scheduler    # the spec.schedulerName it serves
//	  plugins:
//	    multiPoint:                       # every extension point the plugin has
//	      enabled:  [{name: X, weight: 5}]
//	      disabled: [{name: Y}]           # or {name: "*"}: none of the defaults
//	    filter:                           # predicates (with their PreFilter)
//	      enabled:  [...]
//	      disabled: [...]
//	    score:                            # priorities (with PreScore, NormalizeScore)
//	      enabled:  [{name: ImageLocality, weight: 3}]
//	      disabled: [{name: NodeResourcesBalancedAllocation}]
//	    postFilter:                       # DefaultPreemption, the one PostFilter
//	      disabled: [{name: DefaultPreemption}]   # no preemption
//	  pluginConfig:
//	  - name: NodeResourcesFit
//	    args: {scoringStrategy: {type: MostAllocated}}
//
// The lists change the default profile (DefaultPlugins) the way
// kube-scheduler's do: a disabled plugin leaves the default list ("*":
// all of them) for that extension point; an enabled plugin that is already
// there keeps its place and takes the new weight; another is added at the
// end. Weights are 1-100; a score is 0-100 per plugin, then × weight.
// Fields mkube does not read (clientConnection, leaderElection...) are
// rejected rather than silently ignored, so a typo cannot pass unnoticed.
//
// Where things live:
//
//	file                what it holds
//	config.go           the file's types (KubeSchedulerConfiguration, Profile, Plugins, PluginConfig), Load and Parse, and Resolve: the default profile changed by the file
//	default_plugins.go  DefaultPlugins: the default profile's plugins, in order, with their score weights
package config

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/mkube/mkube/scheduler/framework"
)

// KubeSchedulerConfiguration is the file's top level.
type KubeSchedulerConfiguration struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// PercentageOfNodesToScore: in clusters of 100 nodes or more, stop
	// filtering once this percentage of the nodes fits. nil or 0: adaptive.
	PercentageOfNodesToScore *int32    `json:"percentageOfNodesToScore,omitempty"`
	Profiles                 []Profile `json:"profiles,omitempty"`
}

// Profile is one scheduler profile: a name and its plugins.
type Profile struct {
	SchedulerName string `json:"schedulerName,omitempty"`
	// PercentageOfNodesToScore overrides the top-level one.
	PercentageOfNodesToScore *int32         `json:"percentageOfNodesToScore,omitempty"`
	Plugins                  *Plugins       `json:"plugins,omitempty"`
	PluginConfig             []PluginConfig `json:"pluginConfig,omitempty"`
}

// Plugins are the changes to the default plugins, by extension point.
type Plugins struct {
	MultiPoint PluginSet `json:"multiPoint,omitempty"`
	Filter     PluginSet `json:"filter,omitempty"`
	Score      PluginSet `json:"score,omitempty"`
	PostFilter PluginSet `json:"postFilter,omitempty"`
}

// DefaultPreemption is the PostFilter plugin, on by default: a pod that
// fits nowhere may evict pods of lower priority (framework/preemption).
const DefaultPreemption = "DefaultPreemption"

// Preemption says whether the profile keeps DefaultPreemption, with
// kube-scheduler's precedence: the postFilter lists (enabled, then
// disabled, by name or "*") override the multiPoint ones, and a plugin
// named in an enabled list is on whatever "*" says.
func (p *Profile) Preemption() bool {
	if p == nil || p.Plugins == nil {
		return true
	}
	for _, set := range []PluginSet{p.Plugins.PostFilter, p.Plugins.MultiPoint} {
		switch {
		case names(set.Enabled, DefaultPreemption):
			return true
		case names(set.Disabled, DefaultPreemption) || names(set.Disabled, "*"):
			return false
		}
	}
	return true
}

// PluginSet enables and disables plugins at one extension point.
type PluginSet struct {
	Enabled  []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugin names a plugin; Weight matters for scores only.
type Plugin struct {
	Name   string `json:"name"`
	Weight *int32 `json:"weight,omitempty"`
}

// PluginConfig holds one plugin's arguments, decoded by the plugin.
type PluginConfig struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// The apiVersion and kind a file may declare (or leave out).
const (
	APIVersion = "kubescheduler.config.k8s.io/v1"
	Kind       = "KubeSchedulerConfiguration"
)

// Load reads and checks a configuration file.
func Load(path string) (*KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scheduler config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scheduler config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse decodes a configuration from YAML or JSON and checks it.
func Parse(data []byte) (*KubeSchedulerConfiguration, error) {
	cfg := &KubeSchedulerConfiguration{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, err
	}
	if cfg.APIVersion != "" && cfg.APIVersion != APIVersion {
		return nil, fmt.Errorf("apiVersion %q: mkube reads %s", cfg.APIVersion, APIVersion)
	}
	if cfg.Kind != "" && cfg.Kind != Kind {
		return nil, fmt.Errorf("kind %q: want %s", cfg.Kind, Kind)
	}
	if len(cfg.Profiles) > 1 {
		return nil, fmt.Errorf("%d profiles: mkube runs one", len(cfg.Profiles))
	}
	for _, p := range []*int32{cfg.PercentageOfNodesToScore, cfg.Profile().PercentageOfNodesToScore} {
		if p != nil && (*p < 0 || *p > 100) {
			return nil, fmt.Errorf("percentageOfNodesToScore %d is not in [0, 100]", *p)
		}
	}
	if _, err := cfg.Profile().Resolve(); err != nil {
		return nil, err
	}
	if pl := cfg.Profile().Plugins; pl != nil {
		for _, e := range pl.PostFilter.Enabled {
			if e.Name != DefaultPreemption {
				return nil, fmt.Errorf("postFilter plugin %q: mkube has only %s", e.Name, DefaultPreemption)
			}
		}
	}
	return cfg, nil
}

// Profile returns the one profile (an empty one if the file has none).
func (c *KubeSchedulerConfiguration) Profile() *Profile {
	if c == nil || len(c.Profiles) == 0 {
		return &Profile{}
	}
	return &c.Profiles[0]
}

// Percentage is the percentageOfNodesToScore in force: the profile's, else
// the top level's, else 0 (adaptive).
func (c *KubeSchedulerConfiguration) Percentage() int32 {
	if p := c.Profile().PercentageOfNodesToScore; p != nil {
		return *p
	}
	if c != nil && c.PercentageOfNodesToScore != nil {
		return *c.PercentageOfNodesToScore
	}
	return 0
}

// EnabledPlugin is one plugin of a resolved profile. The configuration
// does not know which extension points a plugin has: multiPoint enables a
// plugin at those it has, while naming it under filter or score (Named)
// says it must have that one.
type EnabledPlugin struct {
	Name   string
	Weight int64                     // for scores; 1 if not given
	At     framework.ExtensionPoints // where it is enabled
	Named  framework.ExtensionPoints // where the file enabled it by name
	Args   json.RawMessage           // from pluginConfig, or nil
}

// Resolve applies the profile's lists to DefaultPlugins and returns the
// enabled plugins in order: the defaults that remain, in their order, then
// the added ones in the order the file names them.
func (p *Profile) Resolve() ([]EnabledPlugin, error) {
	var set Plugins
	if p.Plugins != nil {
		set = *p.Plugins
	}
	// multiPoint: the defaults, changed by the file's multiPoint lists.
	var out []EnabledPlugin
	if !names(set.MultiPoint.Disabled, "*") {
		for _, d := range DefaultPlugins {
			if !names(set.MultiPoint.Disabled, d.Name) {
				out = append(out, EnabledPlugin{Name: d.Name, Weight: d.Weight, At: framework.AtFilter | framework.AtScore})
			}
		}
	}
	index := func(name string) int {
		return slices.IndexFunc(out, func(e EnabledPlugin) bool { return e.Name == name })
	}
	enable := func(pl Plugin, at framework.ExtensionPoints, named bool) error {
		if pl.Name == "" || pl.Name == "*" {
			return fmt.Errorf("an enabled plugin needs a name")
		}
		w := int64(0)
		if pl.Weight != nil {
			if *pl.Weight < 1 || *pl.Weight > 100 {
				return fmt.Errorf("plugin %s: weight %d is not in [1, 100]", pl.Name, *pl.Weight)
			}
			w = int64(*pl.Weight)
		}
		i := index(pl.Name)
		if i < 0 {
			out = append(out, EnabledPlugin{Name: pl.Name, Weight: 1})
			i = len(out) - 1
		}
		out[i].At |= at
		if named {
			out[i].Named |= at
		}
		if w > 0 {
			out[i].Weight = w
		}
		return nil
	}
	for _, pl := range set.MultiPoint.Enabled {
		if pl.Name == DefaultPreemption {
			continue // a PostFilter, not a filter or score: see Preemption
		}
		if err := enable(pl, framework.AtFilter|framework.AtScore, false); err != nil {
			return nil, err
		}
	}
	// filter and score: take plugins out of one extension point, or add them.
	for i := range out {
		if names(set.Filter.Disabled, "*") || names(set.Filter.Disabled, out[i].Name) {
			out[i].At &^= framework.AtFilter
		}
		if names(set.Score.Disabled, "*") || names(set.Score.Disabled, out[i].Name) {
			out[i].At &^= framework.AtScore
		}
	}
	for _, pl := range set.Filter.Enabled {
		if err := enable(pl, framework.AtFilter, true); err != nil {
			return nil, err
		}
	}
	for _, pl := range set.Score.Enabled {
		if err := enable(pl, framework.AtScore, true); err != nil {
			return nil, err
		}
	}
	out = slices.DeleteFunc(out, func(e EnabledPlugin) bool { return e.At == 0 })
	for _, pc := range p.PluginConfig {
		i := index(pc.Name)
		if i < 0 {
			return nil, fmt.Errorf("pluginConfig for %s, which is not enabled", pc.Name)
		}
		out[i].Args = pc.Args
	}
	return out, nil
}

// disables says whether list names the plugin (used for enabled lists too).
func names(list []Plugin, name string) bool {
	return slices.ContainsFunc(list, func(p Plugin) bool { return p.Name == name })
}
