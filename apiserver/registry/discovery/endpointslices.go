package discovery

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// EndpointSlices list a Service's endpoints in pieces: a slice holds
// endpoints of one address type that share one set of ports.
var EndpointSlices = &apiserver.Resource{
	GroupVersion: discoveryv1.SchemeGroupVersion, Name: "endpointslices", Kind: "EndpointSlice", Namespaced: true,
	New:     func() runtime.Object { return &discoveryv1.EndpointSlice{} },
	NewList: func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
	// kube-apiserver's strategy counts every write of the endpoints,
	// ports or labels in metadata.generation, from 1 at creation; the
	// generic storage here counts only changes of a .spec, which a slice
	// lacks, so only the first generation is set.
	PrepareForCreate: func(obj runtime.Object) { obj.(*discoveryv1.EndpointSlice).Generation = 1 },
	Default:          defaultEndpointSlice,
	Validate:         validateEndpointSlice,
	Columns: []apiserver.Column{{Name: "AddressType", Type: "string"}, {Name: "Ports", Type: "string"},
		{Name: "Endpoints", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		s := obj.(*discoveryv1.EndpointSlice)
		return []any{string(s.AddressType), portsCell(s.Ports), endpointsCell(s.Endpoints), apiserver.Age(s.CreationTimestamp, now)}
	},
}

// defaultEndpointSlice is SetDefaults_EndpointPort: a port without a name
// has the name "", without a protocol TCP. It also drops
// deprecatedTopology, as kube-apiserver does for every v1 request: the
// field is v1beta1's, and v1 clients may not set it.
func defaultEndpointSlice(obj runtime.Object) {
	s := obj.(*discoveryv1.EndpointSlice)
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			p.Name = ptr.To("")
		}
		if p.Protocol == nil {
			p.Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
	for i := range s.Endpoints {
		s.Endpoints[i].DeprecatedTopology = nil
	}
}

// cellMax is how many ports or addresses a cell shows before "+ N more...".
const cellMax = 3

// portsCell is kube-apiserver's formatDiscoveryPorts: the port numbers
// ("80,443"), a port without a number by its name, or "*".
func portsCell(ports []discoveryv1.EndpointPort) string {
	var list []string
	for _, p := range ports {
		cell := "*"
		if p.Port != nil {
			cell = strconv.Itoa(int(*p.Port))
		} else if p.Name != nil {
			cell = *p.Name
		}
		list = append(list, cell)
	}
	return listCell(list)
}

// endpointsCell is formatDiscoveryEndpoints: every address of every
// endpoint, ready or not ("10.0.0.1,10.0.0.2 + 3 more...").
func endpointsCell(endpoints []discoveryv1.Endpoint) string {
	var list []string
	for _, ep := range endpoints {
		list = append(list, ep.Addresses...)
	}
	return listCell(list)
}

// listCell is listWithMoreString: the first cellMax items, the count of
// the others, and "<unset>" for none (a placeholder slice shows
// "<unset>" twice).
func listCell(list []string) string {
	switch {
	case len(list) == 0:
		return "<unset>"
	case len(list) > cellMax:
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:cellMax], ","), len(list)-cellMax)
	}
	return strings.Join(list, ",")
}
