package apiserver

import (
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

var (
	builtinKind = &Resource{Name: "pods", Kind: "Pod",
		New: func() runtime.Object { return &corev1.Pod{} }, NewList: func() runtime.Object { return &corev1.PodList{} }}
	customKind = &Resource{Name: "widgets", Kind: "Widget",
		New: func() runtime.Object { return &unstructured.Unstructured{} }, NewList: func() runtime.Object { return &unstructured.UnstructuredList{} }}
)

const (
	clientGoAccept   = "application/vnd.kubernetes.protobuf,application/json" // client-go's generated clients
	kubectlGetAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	metadataAccept   = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	everyMediaType   = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
	everyStream      = "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
)

// The media type of an answer is the first the client accepts that the
// resource can be given in, as kube-apiserver chooses it.
func TestNegotiationPicksTheFirstAcceptedMediaTheKindCanBeGivenIn(t *testing.T) {
	tests := []struct {
		name   string
		res    *Resource
		watch  bool
		accept string
		// want is the Content-Type of the answer, or the 406's message.
		want      string
		wantTable bool
	}{
		{"no Accept header is JSON", builtinKind, false, "", "application/json", false},
		{"*/* is JSON, the server's first", builtinKind, false, "*/*", "application/json", false},
		{"client-go's default is protobuf for a built-in kind", builtinKind, false, clientGoAccept, "application/vnd.kubernetes.protobuf", false},
		{"client-go's default is JSON for a custom resource", customKind, false, clientGoAccept, "application/json", false},
		{"protobuf alone for a custom resource is not acceptable, in Kubernetes' words", customKind, false, "application/vnd.kubernetes.protobuf", everyMediaType, false},
		{"JSON before protobuf is JSON", builtinKind, false, "application/json,application/vnd.kubernetes.protobuf", "application/json", false},
		{"a lower q-value comes later", builtinKind, false, "application/json;q=0.1,application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf", false},
		{"YAML when asked", builtinKind, false, "application/yaml", "application/yaml", false},
		{"application/* is JSON", builtinKind, false, "application/*", "application/json", false},
		{"text/html alone is not acceptable", builtinKind, false, "text/html", everyMediaType, false},
		{"kubectl get's Table is a Table in JSON", builtinKind, false, kubectlGetAccept, "application/json", true},
		{"a Table in protobuf is passed over for the next choice", builtinKind, false, "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", "application/json", false},
		{"a Table of an unknown version is passed over", builtinKind, false, "application/json;as=Table;v=v2;g=meta.k8s.io,application/json", "application/json", false},
		{"a Table alone in protobuf is not acceptable", builtinKind, false, "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", everyMediaType, false},
		{"the metadata client's PartialObjectMetadata is not served: the object itself in JSON", builtinKind, false, metadataAccept, "application/json", false},
		{"a watch with client-go's default streams protobuf", builtinKind, true, clientGoAccept, "application/vnd.kubernetes.protobuf;stream=watch", false},
		{"a watch with stream=watch named streams protobuf", builtinKind, true, "application/vnd.kubernetes.protobuf;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch", false},
		{"a watch of a custom resource with client-go's default streams JSON", customKind, true, clientGoAccept, "application/json", false},
		{"a watch of a custom resource in protobuf alone is not acceptable", customKind, true, "application/vnd.kubernetes.protobuf", everyStream, false},
		{"a watch in YAML alone is not acceptable: YAML has no stream", builtinKind, true, "application/yaml", everyStream, false},
		{"kubectl get -w streams Tables in JSON", builtinKind, true, kubectlGetAccept, "application/json", true},
		{"a watch without Accept streams JSON", builtinKind, true, "", "application/json", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/api/v1/pods", nil)
			if tc.accept != "" {
				r.Header.Set("Accept", tc.accept)
			}
			var mt mediaType
			var err error
			got := ""
			if tc.watch {
				if mt, err = negotiateStream(r, tc.res); err == nil {
					got = mt.streamContentType()
				}
			} else {
				if mt, err = negotiateOutput(r, tc.res); err == nil {
					got = mt.info.MediaType
				}
			}
			if err != nil {
				st := asStatus(err)
				if !apierrors.IsNotAcceptable(err) || st.Code != 406 {
					t.Fatalf("error %v (%+v), want a 406 NotAcceptable", err, st)
				}
				got = st.Message
			}
			if got != tc.want || mt.table != tc.wantTable {
				t.Errorf("Accept %q: %q (table %v), want %q (table %v)", tc.accept, got, mt.table, tc.want, tc.wantTable)
			}
		})
	}
}
