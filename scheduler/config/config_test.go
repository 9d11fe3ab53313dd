package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mkube/mkube/scheduler/framework"
)

// describe renders a resolved profile as "Name:weight:fs" (f = filter,
// s = score) for comparing.
func describe(enabled []EnabledPlugin) string {
	var parts []string
	for _, e := range enabled {
		at := ""
		if e.At&framework.AtFilter != 0 {
			at += "f"
		}
		if e.At&framework.AtScore != 0 {
			at += "s"
		}
		parts = append(parts, fmt.Sprintf("%s:%d:%s", e.Name, e.Weight, at))
	}
	return strings.Join(parts, " ")
}

const defaults = "NodeUnschedulable:0:fs NodeName:0:fs TaintToleration:3:fs NodeAffinity:2:fs NodePorts:0:fs NodeResourcesFit:1:fs " +
	"VolumeRestrictions:0:fs NodeVolumeLimits:0:fs VolumeBinding:0:fs VolumeZone:0:fs PodTopologySpread:2:fs InterPodAffinity:2:fs NodeResourcesBalancedAllocation:1:fs ImageLocality:1:fs"

func TestResolve(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"an empty file is the default profile", ``, defaults},
		{"a score weight changes the weight and keeps the plugin in place",
			`profiles: [{plugins: {score: {enabled: [{name: ImageLocality, weight: 5}]}}}]`,
			strings.Replace(defaults, "ImageLocality:1", "ImageLocality:5", 1)},
		{"disabling a plugin at score keeps its filter",
			`profiles: [{plugins: {score: {disabled: [{name: TaintToleration}]}}}]`,
			strings.Replace(defaults, "TaintToleration:3:fs", "TaintToleration:3:f", 1)},
		{"disabling every default score and enabling one leaves only that score",
			`profiles: [{plugins: {score: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit, weight: 1}]}}}]`,
			"NodeUnschedulable:0:f NodeName:0:f TaintToleration:3:f NodeAffinity:2:f NodePorts:0:f NodeResourcesFit:1:fs " +
				"VolumeRestrictions:0:f NodeVolumeLimits:0:f VolumeBinding:0:f VolumeZone:0:f PodTopologySpread:2:f InterPodAffinity:2:f NodeResourcesBalancedAllocation:1:f ImageLocality:1:f"},
		{"disabling a plugin at multiPoint removes it altogether",
			`profiles: [{plugins: {multiPoint: {disabled: [{name: ImageLocality}, {name: NodePorts}]}}}]`,
			strings.NewReplacer(" NodePorts:0:fs", "", " ImageLocality:1:fs", "").Replace(defaults)},
		{"a plugin enabled only at filter after '*' at multiPoint",
			`{"profiles": [{"plugins": {"multiPoint": {"disabled": [{"name": "*"}]}, "filter": {"enabled": [{"name": "NodeName"}]}}}]}`,
			"NodeName:1:f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.Profile().Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); d != tt.want {
				t.Errorf("got  %s\nwant %s", d, tt.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"a misspelt extension point", `profiles: [{plugins: {socre: {}}}]`, `unknown field "socre"`},
		{"fields mkube does not read", `clientConnection: {kubeconfig: x}`, `unknown field "clientConnection"`},
		{"another apiVersion", `apiVersion: kubescheduler.config.k8s.io/v1beta1`, `mkube reads kubescheduler.config.k8s.io/v1`},
		{"two profiles", `profiles: [{schedulerName: a}, {schedulerName: b}]`, "2 profiles: mkube runs one"},
		{"a weight above 100", `profiles: [{plugins: {score: {enabled: [{name: ImageLocality, weight: 101}]}}}]`, "weight 101 is not in [1, 100]"},
		{"a percentage above 100", `percentageOfNodesToScore: 150`, "not in [0, 100]"},
		{"a postFilter plugin mkube does not have", `profiles: [{plugins: {postFilter: {enabled: [{name: MyPreemption}]}}}]`,
			`postFilter plugin "MyPreemption": mkube has only DefaultPreemption`},
		{"args for a plugin that is not enabled", `profiles: [{plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}, pluginConfig: [{name: NodeResourcesFit}]}]`,
			"pluginConfig for NodeResourcesFit, which is not enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestTheExampleFileSpellsOutTheDefaults(t *testing.T) {
	cfg, err := Load("../config-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := cfg.Profile().Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if d := describe(got); d != defaults {
		t.Errorf("got  %s\nwant %s", d, defaults)
	}
	if cfg.Profile().SchedulerName != "default-scheduler" || cfg.Percentage() != 0 {
		t.Errorf("schedulerName %q, percentage %d", cfg.Profile().SchedulerName, cfg.Percentage())
	}
	if got[5].Name != "NodeResourcesFit" || !strings.Contains(string(got[5].Args), "LeastAllocated") {
		t.Errorf("NodeResourcesFit args = %s", got[5].Args)
	}
}

func TestPercentage(t *testing.T) {
	cfg, _ := Parse([]byte("percentageOfNodesToScore: 30\nprofiles: [{percentageOfNodesToScore: 70}]"))
	if cfg.Percentage() != 70 {
		t.Errorf("the profile's percentage should win: %d", cfg.Percentage())
	}
	cfg, _ = Parse([]byte("percentageOfNodesToScore: 30"))
	if cfg.Percentage() != 30 {
		t.Errorf("got %d", cfg.Percentage())
	}
}

func TestPreemption(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       bool
	}{
		{"no file: preemption is on, as in kube-scheduler", ``, true},
		{"other changes leave it on", `profiles: [{plugins: {score: {disabled: [{name: ImageLocality}]}}}]`, true},
		{"disabled under postFilter by name: off", `profiles: [{plugins: {postFilter: {disabled: [{name: DefaultPreemption}]}}}]`, false},
		{"every postFilter disabled with *: off", `profiles: [{plugins: {postFilter: {disabled: [{name: "*"}]}}}]`, false},
		{"disabled under multiPoint: off", `profiles: [{plugins: {multiPoint: {disabled: [{name: DefaultPreemption}]}}}]`, false},
		{"every default disabled under multiPoint, then DefaultPreemption enabled under postFilter: on",
			`profiles: [{plugins: {multiPoint: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit}]}, postFilter: {enabled: [{name: DefaultPreemption}]}}}]`, true},
		{"enabled under multiPoint is not taken for a filter or score plugin", `profiles: [{plugins: {multiPoint: {enabled: [{name: DefaultPreemption}]}}}]`, true},
		{"disabled under postFilter overrides enabled under multiPoint",
			`profiles: [{plugins: {multiPoint: {enabled: [{name: DefaultPreemption}]}, postFilter: {disabled: [{name: "*"}]}}}]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Profile().Preemption(); got != tt.want {
				t.Errorf("Preemption() = %v, want %v", got, tt.want)
			}
		})
	}
}
