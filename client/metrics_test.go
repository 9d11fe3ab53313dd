package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/client"
)

func TestClientRecordsRestClientSeries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/namespaces/default/pods/missing" {
			http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"}}`))
	}))
	defer srv.Close()
	host := mustHost(t, srv.URL)
	reg := prometheus.NewRegistry()
	c := client.New(srv.URL, "test")
	c.SetMetrics(client.NewMetrics(reg))
	c.Get(context.Background(), client.Pods, "default", "web", &corev1.Pod{})
	c.Get(context.Background(), client.Pods, "default", "missing", &corev1.Pod{})
	c.Impersonate("someone").Get(context.Background(), client.Pods, "default", "web", &corev1.Pod{})

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.Metric {
			key := f.GetName()
			for _, l := range m.Label {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			if m.Counter != nil {
				got[key] = m.Counter.GetValue()
			} else {
				got[key] = float64(m.Histogram.GetSampleCount())
			}
		}
	}
	for key, want := range map[string]float64{
		"rest_client_requests_total,code=200,host=" + host + ",method=GET": 2, // the impersonating client's too
		"rest_client_requests_total,code=404,host=" + host + ",method=GET": 1,
		"rest_client_request_duration_seconds,host=" + host + ",verb=GET":  3,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v (all: %v)", key, got[key], want, got)
		}
	}
}

func mustHost(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
