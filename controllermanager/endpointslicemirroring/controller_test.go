package endpointslicemirroring_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager/controller"
	"github.com/mkube/mkube/controllermanager/endpointslicemirroring"
	"github.com/mkube/mkube/internal/testserver"
)

// A selector-less Service's Endpoints, written by its user, is mirrored
// into a slice through its create, update and delete (the conformance
// spec's steps); a Service with a selector's is left alone.
func TestACustomEndpointsIsMirrored(t *testing.T) {
	c := client.New(testserver.Start(t), "mirroring-test")
	logs := &testserver.LogBuffer{}
	d := controller.NewDeps(c, slog.New(slog.NewTextHandler(logs, nil)), nil)
	ctrl := endpointslicemirroring.New(d, endpointslicemirroring.Options{})
	testserver.Background(t, d.Run)
	testserver.Background(t, ctrl.Run)
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	ctx := context.Background()
	for _, svc := range []*corev1.Service{
		{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "pg", Port: 5432}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}}},
	} {
		svc.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}
		if err := c.Create(ctx, client.Services, "default", svc, nil); err != nil {
			t.Fatal(err)
		}
	}
	endpoints := func(name, ip string) *corev1.Endpoints {
		return &corev1.Endpoints{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Endpoints"}, ObjectMeta: metav1.ObjectMeta{Name: name},
			Subsets: []corev1.EndpointSubset{{Ports: []corev1.EndpointPort{{Name: "pg", Port: 5432}}, Addresses: []corev1.EndpointAddress{{IP: ip}}}}}
	}
	mirrored := func(service string) string {
		var list discoveryv1.EndpointSliceList
		if err := c.List(ctx, client.EndpointSlices, "default", client.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + service}, &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				out = append(out, e.Addresses[0])
			}
		}
		return strings.Join(out, ",")
	}
	ep := endpoints("db", "10.1.2.3")
	if err := c.Create(ctx, client.Endpoints, "default", ep, ep); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, client.Endpoints, "default", endpoints("web", "10.9.9.9"), nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "db mirrored", func() (bool, string) { got := mirrored("db"); return got == "10.1.2.3", got })

	ep.Subsets[0].Addresses[0].IP = "10.2.3.4"
	if err := c.Update(ctx, client.Endpoints, "default", "db", ep, nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the update mirrored", func() (bool, string) { got := mirrored("db"); return got == "10.2.3.4", got })

	if err := c.Delete(ctx, client.Endpoints, "default", "db", nil); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the deletion mirrored", func() (bool, string) { got := mirrored("db"); return got == "", got })
	if got := mirrored("web"); got != "" {
		t.Errorf("a selector's Service's Endpoints was mirrored: %s", got)
	}
}
