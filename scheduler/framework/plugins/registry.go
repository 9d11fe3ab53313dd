// Package plugins assembles a scheduling profile: it knows every plugin
// by its kube-scheduler name (the Registry), and builds the Framework a
// configuration asks for (config.Profile, by default config.DefaultPlugins:
// every plugin, kube-scheduler's order and weights).
//
// It all lives in registry.go: NewInTreeRegistry, NewProfile and Default.
// Each plugin is a package of its own below it.
package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mkube/mkube/scheduler/config"
	"github.com/mkube/mkube/scheduler/framework"
	"github.com/mkube/mkube/scheduler/framework/plugins/imagelocality"
	"github.com/mkube/mkube/scheduler/framework/plugins/interpodaffinity"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeaffinity"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodename"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeports"
	"github.com/mkube/mkube/scheduler/framework/plugins/noderesources"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodeunschedulable"
	"github.com/mkube/mkube/scheduler/framework/plugins/nodevolumelimits"
	"github.com/mkube/mkube/scheduler/framework/plugins/podtopologyspread"
	"github.com/mkube/mkube/scheduler/framework/plugins/selectorspread"
	"github.com/mkube/mkube/scheduler/framework/plugins/tainttoleration"
	"github.com/mkube/mkube/scheduler/framework/plugins/volumebinding"
	"github.com/mkube/mkube/scheduler/framework/plugins/volumerestrictions"
	"github.com/mkube/mkube/scheduler/framework/plugins/volumezone"
)

// Factory builds a plugin from its pluginConfig args (nil if none).
type Factory func(args json.RawMessage, h framework.Handle) (framework.Plugin, error)

// Registry maps plugin names to their factories.
type Registry map[string]Factory

// NewInTreeRegistry returns every plugin mkube has.
func NewInTreeRegistry() Registry {
	withHandle := func(newPlugin func(framework.Handle) framework.Plugin) Factory {
		return func(args json.RawMessage, h framework.Handle) (framework.Plugin, error) {
			if len(args) > 0 && string(args) != "null" {
				return nil, fmt.Errorf("takes no args")
			}
			return newPlugin(h), nil
		}
	}
	noArgs := func(newPlugin func() framework.Plugin) Factory {
		return withHandle(func(framework.Handle) framework.Plugin { return newPlugin() })
	}
	return Registry{
		nodeunschedulable.Name:  noArgs(func() framework.Plugin { return nodeunschedulable.New() }),
		nodename.Name:           noArgs(func() framework.Plugin { return nodename.New() }),
		tainttoleration.Name:    noArgs(func() framework.Plugin { return tainttoleration.New() }),
		nodeaffinity.Name:       noArgs(func() framework.Plugin { return nodeaffinity.New() }),
		nodeports.Name:          noArgs(func() framework.Plugin { return nodeports.New() }),
		volumerestrictions.Name: withHandle(func(h framework.Handle) framework.Plugin { return volumerestrictions.New(h) }),
		nodevolumelimits.Name:   withHandle(func(h framework.Handle) framework.Plugin { return nodevolumelimits.New(h) }),
		volumebinding.Name:      withHandle(func(h framework.Handle) framework.Plugin { return volumebinding.New(h) }),
		volumezone.Name:         withHandle(func(h framework.Handle) framework.Plugin { return volumezone.New(h) }),
		imagelocality.Name:      noArgs(func() framework.Plugin { return imagelocality.New() }),
		selectorspread.Name:     withHandle(func(h framework.Handle) framework.Plugin { return selectorspread.New(h) }),
		podtopologyspread.Name:  withHandle(func(h framework.Handle) framework.Plugin { return podtopologyspread.New(h) }),
		interpodaffinity.Name:   withHandle(func(h framework.Handle) framework.Plugin { return interpodaffinity.New(h) }),
		noderesources.Name: func(args json.RawMessage, _ framework.Handle) (framework.Plugin, error) {
			var a noderesources.FitArgs
			if err := decodeArgs(args, &a); err != nil {
				return nil, err
			}
			return noderesources.NewWithArgs(a)
		},
		noderesources.BalancedAllocationName: func(args json.RawMessage, _ framework.Handle) (framework.Plugin, error) {
			var a noderesources.BalancedAllocationArgs
			if err := decodeArgs(args, &a); err != nil {
				return nil, err
			}
			return noderesources.NewBalancedAllocationWithArgs(a)
		},
	}
}

// decodeArgs decodes a plugin's args strictly: an unknown field is an
// error, not a silent default.
func decodeArgs(args json.RawMessage, into any) error {
	if len(args) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(into); err != nil {
		return fmt.Errorf("args: %w", err)
	}
	return nil
}

// NewProfile builds the plugins profile asks for (nil: the default
// profile), in order, for framework.New.
func NewProfile(profile *config.Profile, h framework.Handle) ([]framework.PluginSpec, error) {
	if profile == nil {
		profile = &config.Profile{}
	}
	enabled, err := profile.Resolve()
	if err != nil {
		return nil, err
	}
	registry := NewInTreeRegistry()
	specs := make([]framework.PluginSpec, 0, len(enabled))
	for _, e := range enabled {
		factory, ok := registry[e.Name]
		if !ok {
			return nil, fmt.Errorf("plugin %q: mkube has no such plugin", e.Name)
		}
		p, err := factory(e.Args, h)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", e.Name, err)
		}
		var has framework.ExtensionPoints
		if _, ok := p.(framework.FilterPlugin); ok {
			has |= framework.AtFilter
		}
		if _, ok := p.(framework.ScorePlugin); ok {
			has |= framework.AtScore
		}
		switch {
		case e.Named&framework.AtFilter != 0 && has&framework.AtFilter == 0:
			return nil, fmt.Errorf("plugin %s is enabled at filter but does not filter", e.Name)
		case e.Named&framework.AtScore != 0 && has&framework.AtScore == 0:
			return nil, fmt.Errorf("plugin %s is enabled at score but does not score", e.Name)
		case e.At&has == 0:
			continue // enabled only where it has nothing to do (a score plugin after filter-only changes)
		}
		specs = append(specs, framework.PluginSpec{Plugin: p, Weight: e.Weight, At: e.At & has})
	}
	return specs, nil
}

// Default returns the default profile's plugins.
func Default(h framework.Handle) []framework.PluginSpec {
	specs, err := NewProfile(nil, h)
	if err != nil {
		panic(err) // the default profile names only plugins of the registry
	}
	return specs
}

// NewDefaultFramework builds a framework with the default profile.
func NewDefaultFramework(h framework.Handle) (*framework.Framework, error) {
	return framework.New(Default(h)...)
}
