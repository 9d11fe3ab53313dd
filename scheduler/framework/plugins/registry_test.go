package plugins

import (
	"strings"
	"testing"

	"github.com/mkube/mkube/scheduler/config"
	"github.com/mkube/mkube/scheduler/framework"
)

func build(t *testing.T, yaml string) (*framework.Framework, error) {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	specs, err := NewProfile(cfg.Profile(), framework.Handle{})
	if err != nil {
		return nil, err
	}
	return framework.New(specs...)
}

func TestTheDefaultProfileIsKubernetesOrderAndWeights(t *testing.T) {
	fwk, err := NewDefaultFramework(framework.Handle{})
	if err != nil {
		t.Fatal(err)
	}
	filters, scores := fwk.ListPlugins()
	wantFilters := "NodeUnschedulable,NodeName,TaintToleration,NodeAffinity,NodePorts,NodeResourcesFit,VolumeRestrictions,NodeVolumeLimits,VolumeBinding,VolumeZone,PodTopologySpread,InterPodAffinity"
	wantScores := "TaintToleration:3,NodeAffinity:2,NodeResourcesFit:1,PodTopologySpread:2,InterPodAffinity:2,NodeResourcesBalancedAllocation:1,ImageLocality:1"
	if got := strings.Join(filters, ","); got != wantFilters {
		t.Errorf("filters %s\nwant    %s", got, wantFilters)
	}
	if got := strings.Join(scores, ","); got != wantScores {
		t.Errorf("scores %s\nwant   %s", got, wantScores)
	}
}

func TestNewProfile(t *testing.T) {
	tests := []struct {
		name        string
		yaml        string
		wantScores  string
		wantFilters int
		wantErr     string
	}{
		{"disabling every score leaves the filters and no score", `profiles: [{plugins: {score: {disabled: [{name: "*"}]}}}]`, "", 12, ""},
		{"disabling every filter leaves the scores", `profiles: [{plugins: {filter: {disabled: [{name: "*"}]}}}]`,
			"TaintToleration:3,NodeAffinity:2,NodeResourcesFit:1,PodTopologySpread:2,InterPodAffinity:2,NodeResourcesBalancedAllocation:1,ImageLocality:1", 0, ""},
		{"an unknown plugin is an error", `profiles: [{plugins: {score: {enabled: [{name: NodeResourcesMostAllocated}]}}}]`, "", 0,
			`plugin "NodeResourcesMostAllocated": mkube has no such plugin`},
		{"a filter named under score is an error", `profiles: [{plugins: {multiPoint: {disabled: [{name: "*"}]}, score: {enabled: [{name: NodePorts}]}}}]`, "", 0,
			"plugin NodePorts is enabled at score but does not score"},
		{"args with a misspelt field are an error", `profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategi: {}}}]}]`, "", 0,
			`unknown field "scoringStrategi"`},
		{"args for a plugin that takes none are an error", `profiles: [{pluginConfig: [{name: NodePorts, args: {x: 1}}]}]`, "", 0, "takes no args"},
		{"MostAllocated is accepted", `profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}]}]`,
			"TaintToleration:3,NodeAffinity:2,NodeResourcesFit:1,PodTopologySpread:2,InterPodAffinity:2,NodeResourcesBalancedAllocation:1,ImageLocality:1", 12, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fwk, err := build(t, tt.yaml)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			filters, scores := fwk.ListPlugins()
			if got := strings.Join(scores, ","); got != tt.wantScores || len(filters) != tt.wantFilters {
				t.Errorf("scores %s, %d filters; want %s, %d", got, len(filters), tt.wantScores, tt.wantFilters)
			}
		})
	}
}
