package discovery_test

import (
	"net/http"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"

func TestTheAPIServerDefaultsValidatesAndPrintsEndpointSlices(t *testing.T) {
	s := testserver.StartServer(t)
	var created discoveryv1.EndpointSlice
	body := `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"generateName":"web-","labels":{"kubernetes.io/service-name":"web"}},
		"addressType":"IPv4","endpoints":[{"addresses":["10.244.1.2"]}],"ports":[{"port":8080}]}`
	if code := s.Do(http.MethodPost, slices, "application/json", body, &created); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if p := created.Ports[0]; p.Name == nil || *p.Name != "" || p.Protocol == nil || *p.Protocol != "TCP" {
		t.Fatalf("the port is defaulted to name \"\" and protocol TCP: %+v", p)
	}
	if !strings.HasPrefix(created.Name, "web-") || created.Generation != 1 {
		t.Fatalf("name %q, generation %d: want web-xxxxx, 1", created.Name, created.Generation)
	}

	// Bad input is refused with Kubernetes' message, and nothing changes.
	var st metav1.Status
	bad := `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"bad"},
		"addressType":"IPv4","endpoints":[{"addresses":["127.0.0.1"]}]}`
	if code := s.Do(http.MethodPost, slices, "application/json", bad, &st); code != http.StatusUnprocessableEntity {
		t.Fatalf("a loopback endpoint: got %d, want 422", code)
	}
	if want := `EndpointSlice.discovery.k8s.io "bad" is invalid: endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`; st.Message != want {
		t.Fatalf("message %q\nwant    %q", st.Message, want)
	}
	if code := s.Do(http.MethodPatch, slices+"/"+created.Name, "application/merge-patch+json", `{"addressType":"IPv6"}`, &st); code != http.StatusUnprocessableEntity ||
		!strings.Contains(st.Message, "addressType: Invalid value: \"IPv6\": field is immutable") {
		t.Fatalf("changing the address type: %d %s", code, st.Message)
	}

	// `kubectl get endpointslices -l kubernetes.io/service-name=web`.
	req, _ := http.NewRequest(http.MethodGet, s.URL+slices+"?labelSelector=kubernetes.io%2Fservice-name%3Dweb", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var table metav1.Table
	if code := s.DoRequest(req, &table); code != http.StatusOK {
		t.Fatalf("get: %d", code)
	}
	var headers []string
	for _, c := range table.ColumnDefinitions {
		headers = append(headers, c.Name)
	}
	if got := strings.Join(headers, " "); got != "Name AddressType Ports Endpoints Age" {
		t.Fatalf("columns: %s", got)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("rows: %v", table.Rows)
	}
	if cells := table.Rows[0].Cells; cells[0] != created.Name || cells[1] != "IPv4" || cells[2] != "8080" || cells[3] != "10.244.1.2" {
		t.Fatalf("row: %v", cells)
	}
}
