package core_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/internal/testserver"
)

// Two Services asking for the same ClusterIP at the same instant: the
// allocation lists the Services in use, so without serialised writes both
// could see the address free and both be created.
func TestConcurrentServicesNeverShareAClusterIP(t *testing.T) {
	s := testserver.StartServer(t)
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"same-%d"},
				"spec":{"clusterIP":"10.96.0.50","ports":[{"port":80}]}}`, i)
			resp, err := http.Post(s.URL+"/api/v1/namespaces/default/services", "application/json", strings.NewReader(body))
			if err != nil {
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Service","metadata":{"name":"nodeport-%d"},
				"spec":{"type":"NodePort","ports":[{"port":80}]}}`, i)
			resp, err := http.Post(s.URL+"/api/v1/namespaces/default/services", "application/json", strings.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	created := 0
	for _, code := range codes {
		switch code {
		case http.StatusCreated:
			created++
		case http.StatusUnprocessableEntity: // "provided IP is already allocated"
		default:
			t.Errorf("create: status %d", code)
		}
	}
	if created != 1 {
		t.Errorf("%d Services were created with ClusterIP 10.96.0.50, want exactly 1", created)
	}

	var list corev1.ServiceList
	s.Do("GET", "/api/v1/namespaces/default/services", "", "", &list)
	ips, ports := map[string]string{}, map[int32]string{}
	for _, svc := range list.Items {
		if other, ok := ips[svc.Spec.ClusterIP]; ok {
			t.Errorf("%s and %s share ClusterIP %s", svc.Name, other, svc.Spec.ClusterIP)
		}
		ips[svc.Spec.ClusterIP] = svc.Name
		for _, p := range svc.Spec.Ports {
			if p.NodePort == 0 {
				continue
			}
			if other, ok := ports[p.NodePort]; ok {
				t.Errorf("%s and %s share NodePort %d", svc.Name, other, p.NodePort)
			}
			ports[p.NodePort] = svc.Name
		}
	}
	if len(ports) != n {
		t.Errorf("%d NodePorts allocated, want %d", len(ports), n)
	}
}

func TestAChosenNodePortMustBeFreeAndInRange(t *testing.T) {
	s := testserver.StartServer(t)
	type answer struct{ Message string } // a Status, or the created Service
	create := func(name string, port int) (int, answer) {
		var st answer
		code := s.Do("POST", "/api/v1/namespaces/default/services", "application/json", fmt.Sprintf(
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":%q},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":%d}]}}`, name, port), &st)
		return code, st
	}
	if code, st := create("first", 30080); code != http.StatusCreated {
		t.Fatalf("first Service on 30080: %d %s", code, st.Message)
	}
	if code, st := create("second", 30080); code != http.StatusUnprocessableEntity || !strings.Contains(st.Message, "provided port is already allocated") {
		t.Errorf("second Service on 30080: %d %q", code, st.Message)
	}
	if code, st := create("outside", 8080); code != http.StatusUnprocessableEntity || !strings.Contains(st.Message, "provided port is not in the valid range. The range of valid ports is 30000-32767") {
		t.Errorf("a NodePort outside the range: %d %q", code, st.Message)
	}
	// Its own port is not "already allocated" when the Service is updated.
	var st answer
	code := s.Do("PATCH", "/api/v1/namespaces/default/services/first", "application/merge-patch+json", `{"metadata":{"labels":{"x":"y"}}}`, &st)
	if code != http.StatusOK {
		t.Errorf("updating the Service that holds 30080: %d %s", code, st.Message)
	}
}

// Changing a Service's type wipes what the old type allocated and the new
// one has no use for, as Kubernetes does (the conformance spec "change the
// type from ClusterIP to ExternalName"), and back again allocates anew.
func TestChangingAServicesTypeDropsWhatItNoLongerNeeds(t *testing.T) {
	s := testserver.StartServer(t)
	const path = "/api/v1/namespaces/default/services/"
	var svc corev1.Service
	if code := s.Do(http.MethodPost, path, "application/json",
		`{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"type":"NodePort","ports":[{"port":80}]}}`, &svc); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("a NodePort Service without its addresses: %+v", svc.Spec)
	}

	// The client sends back what it read, with only the type changed.
	svc.Spec.Type = corev1.ServiceTypeClusterIP
	body, _ := json.Marshal(&svc)
	var clusterIP corev1.Service
	if code := s.Do(http.MethodPut, path+"web", "application/json", string(body), &clusterIP); code != http.StatusOK {
		t.Fatalf("to ClusterIP: %d", code)
	}
	if clusterIP.Spec.ClusterIP != svc.Spec.ClusterIP || clusterIP.Spec.Ports[0].NodePort != 0 || clusterIP.Spec.ExternalTrafficPolicy != "" {
		t.Errorf("NodePort → ClusterIP: clusterIP %q (was %q), nodePort %d, externalTrafficPolicy %q; want the IP kept, the rest gone",
			clusterIP.Spec.ClusterIP, svc.Spec.ClusterIP, clusterIP.Spec.Ports[0].NodePort, clusterIP.Spec.ExternalTrafficPolicy)
	}

	clusterIP.Spec.Type, clusterIP.Spec.ExternalName = corev1.ServiceTypeExternalName, "foo.example.com"
	body, _ = json.Marshal(&clusterIP)
	var external corev1.Service
	if code := s.Do(http.MethodPut, path+"web", "application/json", string(body), &external); code != http.StatusOK {
		t.Fatalf("to ExternalName: %d", code)
	}
	if external.Spec.ClusterIP != "" || external.Spec.ClusterIPs != nil || external.Spec.IPFamilies != nil || external.Spec.IPFamilyPolicy != nil {
		t.Errorf("ClusterIP → ExternalName kept %q %v %v %v, want no cluster IP or families",
			external.Spec.ClusterIP, external.Spec.ClusterIPs, external.Spec.IPFamilies, external.Spec.IPFamilyPolicy)
	}

	external.Spec.Type, external.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
	body, _ = json.Marshal(&external)
	var back corev1.Service
	if code := s.Do(http.MethodPut, path+"web", "application/json", string(body), &back); code != http.StatusOK || back.Spec.ClusterIP == "" {
		t.Errorf("ExternalName → ClusterIP: %d, clusterIP %q; want a new one", code, back.Spec.ClusterIP)
	}
}
