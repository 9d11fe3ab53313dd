package apiregistration_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/app"
	"github.com/mkube/mkube/apiserver/registry"
	"github.com/mkube/mkube/apiserver/registry/apiregistration"
	"github.com/mkube/mkube/internal/testserver"
)

const apiServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"

// startController runs a server and, instead of the server's own, an
// APIService controller on a fake clock (for the transition times), until
// the test ends. Its discovery checks answer what the returned checker is
// told.
func startController(t *testing.T) (*testserver.Server, *clocktesting.FakeClock, *fakeChecker) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	s := testserver.StartServerWithout(t, []string{app.APIServicesHook}, func(c *apiserver.Config) { c.Clock = clk })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	checker := &fakeChecker{err: errors.New("dial tcp 10.96.0.20:443: connect: connection refused")}
	if err := apiregistration.NewController(s.API, registry.Resources, checker, clk, slog.New(slog.DiscardHandler)).Start(ctx); err != nil {
		t.Fatal(err)
	}
	return s, clk, checker
}

// fakeChecker answers every discovery check with err, and counts them.
type fakeChecker struct {
	mu     sync.Mutex
	err    error
	checks int
}

func (f *fakeChecker) Check(_ context.Context, svc *apiregistrationv1.APIService) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks++
	if f.err != nil {
		return fmt.Errorf("failing or missing response from https://%s.%s.svc:443/apis/%s/%s: %w",
			svc.Spec.Service.Name, svc.Spec.Service.Namespace, svc.Spec.Group, svc.Spec.Version, f.err)
	}
	return nil
}

func (f *fakeChecker) set(err error) (checks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
	return f.checks
}

func getAPIService(t *testing.T, s *testserver.Server, name string) (*apiregistrationv1.APIService, int) {
	t.Helper()
	var raw json.RawMessage // a Status when not found
	code := s.Do(http.MethodGet, apiServicesPath+"/"+name, "", "", &raw)
	var svc apiregistrationv1.APIService
	if code == http.StatusOK {
		if err := json.Unmarshal(raw, &svc); err != nil {
			t.Fatal(err)
		}
	}
	return &svc, code
}

func available(t *testing.T, s *testserver.Server, name string) (apiregistrationv1.APIServiceCondition, bool) {
	t.Helper()
	svc, code := getAPIService(t, s, name)
	if code != http.StatusOK {
		return apiregistrationv1.APIServiceCondition{}, false
	}
	for _, c := range svc.Status.Conditions {
		if c.Type == apiregistrationv1.Available {
			return c, true
		}
	}
	return apiregistrationv1.APIServiceCondition{}, false
}

// When Start returns, every built-in group-version has its Local
// APIService, available, as kube-apiserver's autoregister leaves them.
func TestTheBuiltinGroupVersionsAreRegisteredLocalAndAvailable(t *testing.T) {
	s, clk, checker := startController(t)
	var list apiregistrationv1.APIServiceList
	if code := s.Do(http.MethodGet, apiServicesPath, "", "", &list); code != http.StatusOK {
		t.Fatalf("list: %d", code)
	}
	want := apiregistration.BuiltinAPIServices(registry.Resources, slog.New(slog.DiscardHandler))
	if len(list.Items) != len(want) {
		t.Errorf("%d APIServices, want %d", len(list.Items), len(want))
	}
	for _, svc := range list.Items {
		c := svc.Status.Conditions
		if want[svc.Name] == nil || len(c) != 1 || c[0].Status != apiregistrationv1.ConditionTrue || c[0].Reason != "Local" ||
			c[0].Message != "Local APIServices are always available" || !c[0].LastTransitionTime.Time.Equal(clk.Now()) {
			t.Errorf("%s: %+v", svc.Name, svc.Status)
		}
	}
	if core, _ := getAPIService(t, s, "v1."); core.Spec.Group != "" || core.Spec.GroupPriorityMinimum != 18000 {
		t.Errorf("v1.: %+v", core.Spec)
	}

	// A built-in one changed by hand is restored at the next start only
	// ("onstart"), like kube-apiserver: here it is left as it is.
	if code := s.Do(http.MethodPatch, apiServicesPath+"/v1.apps", "application/merge-patch+json", `{"spec":{"versionPriority":7}}`, nil); code != http.StatusOK {
		t.Fatalf("patch: %d", code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := apiregistration.NewController(s.API, registry.Resources, checker, clk, slog.New(slog.DiscardHandler)).Start(ctx); err != nil {
		t.Fatal(err)
	}
	if apps, _ := getAPIService(t, s, "v1.apps"); apps.Spec.VersionPriority != 15 {
		t.Errorf("after a restart, v1.apps has versionPriority %d, want 15 again", apps.Spec.VersionPriority)
	}
}

// A custom resource's group-version gets a Local APIService with the
// low priorities of crdregistration, and loses it with its definition.
func TestACustomResourceDefinitionRegistersItsGroupVersion(t *testing.T) {
	s, _, _ := startController(t)
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
	"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
	{"name":"v1beta1","served":false,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
	if code := s.Do(http.MethodPost, crds, "application/json", crd, nil); code != http.StatusCreated {
		t.Fatalf("create the definition: %d", code)
	}
	testserver.Eventually(t, "v1.example.com is registered and available", func() (bool, string) {
		svc, code := getAPIService(t, s, "v1.example.com")
		c, _ := available(t, s, "v1.example.com")
		return code == http.StatusOK && svc.Spec.GroupPriorityMinimum == 1000 && svc.Spec.VersionPriority == 100 &&
			svc.Labels["kube-aggregator.kubernetes.io/automanaged"] == "true" && c.Status == apiregistrationv1.ConditionTrue, c.Reason
	})
	if _, code := getAPIService(t, s, "v1beta1.example.com"); code != http.StatusNotFound {
		t.Errorf("a version not served has an APIService: %d", code)
	}
	if code := s.Do(http.MethodDelete, crds+"/widgets.example.com", "", "", nil); code != http.StatusOK {
		t.Fatalf("delete the definition: %d", code)
	}
	testserver.Eventually(t, "v1.example.com is gone with its definition", func() (bool, string) {
		_, code := getAPIService(t, s, "v1.example.com")
		return code == http.StatusNotFound, http.StatusText(code)
	})
}

// An aggregated API server's APIService is available once its Service
// exists and answers the discovery check, and is checked again every
// 30 s, so that a server that goes away is found out.
func TestAServiceBackedAPIServiceIsAvailableOnceItsServiceAnswers(t *testing.T) {
	s, clk, checker := startController(t)
	body := `{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.metrics.k8s.io"},
	"spec":{"group":"metrics.k8s.io","version":"v1beta1","service":{"namespace":"kube-system","name":"metrics-server"},
	"groupPriorityMinimum":100,"versionPriority":100,"insecureSkipTLSVerify":true}}`
	var created apiregistrationv1.APIService
	if code := s.Do(http.MethodPost, apiServicesPath, "application/json", body, &created); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if created.Spec.Service.Port == nil || *created.Spec.Service.Port != 443 || len(created.Status.Conditions) != 0 {
		t.Errorf("created: port %v, status %+v", created.Spec.Service.Port, created.Status)
	}
	testserver.Eventually(t, "ServiceNotFound", func() (bool, string) {
		c, _ := available(t, s, "v1beta1.metrics.k8s.io")
		return c.Status == apiregistrationv1.ConditionFalse && c.Reason == "ServiceNotFound" &&
			c.Message == `service/metrics-server in "kube-system" is not present`, c.Reason + ": " + c.Message
	})
	first, _ := available(t, s, "v1beta1.metrics.k8s.io")

	clk.Step(time.Minute)
	svc := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"metrics-server","namespace":"kube-system"},"spec":{"ports":[{"port":443}]}}`
	if code := s.Do(http.MethodPost, "/api/v1/namespaces/kube-system/services", "application/json", svc, nil); code != http.StatusCreated {
		t.Fatalf("create the service: %d", code)
	}
	testserver.Eventually(t, "FailedDiscoveryCheck", func() (bool, string) {
		c, _ := available(t, s, "v1beta1.metrics.k8s.io")
		return c.Reason == "FailedDiscoveryCheck" && c.Message ==
				"failing or missing response from https://metrics-server.kube-system.svc:443/apis/metrics.k8s.io/v1beta1: dial tcp 10.96.0.20:443: connect: connection refused",
			c.Reason + ": " + c.Message
	})
	if c, _ := available(t, s, "v1beta1.metrics.k8s.io"); !c.LastTransitionTime.Equal(&first.LastTransitionTime) {
		t.Errorf("still False, yet the transition time moved: %v, was %v", c.LastTransitionTime, first.LastTransitionTime)
	}

	// The table kubectl prints.
	var table metav1.Table
	req, _ := http.NewRequest(http.MethodGet, s.URL+apiServicesPath+"/v1beta1.metrics.k8s.io", nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if code := s.DoRequest(req, &table); code != http.StatusOK || len(table.Rows) != 1 {
		t.Fatalf("table: %d %+v", code, table)
	}
	if cells := table.Rows[0].Cells; cells[1] != "kube-system/metrics-server" || cells[2] != "False (FailedDiscoveryCheck)" {
		t.Errorf("row %v", cells)
	}

	// The server answers: at the next check, 5 s after a failed one, the
	// APIService is available; then it is checked every 30 s.
	before := checker.set(nil)
	clk.Step(5 * time.Second)
	testserver.Eventually(t, "Passed", func() (bool, string) {
		c, _ := available(t, s, "v1beta1.metrics.k8s.io")
		return c.Status == apiregistrationv1.ConditionTrue && c.Reason == "Passed" && c.Message == "all checks passed" &&
			c.LastTransitionTime.Time.Equal(clk.Now()), c.Reason + ": " + c.Message
	})
	checks := checker.set(errors.New("connection reset by peer"))
	if checks <= before {
		t.Fatalf("no check after 5 s")
	}
	clk.Step(29 * time.Second)
	if c, _ := available(t, s, "v1beta1.metrics.k8s.io"); c.Status != apiregistrationv1.ConditionTrue {
		t.Fatalf("checked again before 30 s: %+v", c)
	}
	clk.Step(time.Second)
	testserver.Eventually(t, "False again after 30 s", func() (bool, string) {
		c, _ := available(t, s, "v1beta1.metrics.k8s.io")
		return c.Status == apiregistrationv1.ConditionFalse && c.Reason == "FailedDiscoveryCheck", c.Reason + ": " + c.Message
	})
}
