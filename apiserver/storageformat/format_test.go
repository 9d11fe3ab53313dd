package storageformat_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver/storageformat"
)

func testScheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func deployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-1", Labels: map[string]string{"app": "web", "tier": "front"},
			CreationTimestamp: metav1.Date(2026, 12, 8, 1, 2, 3, 0, time.UTC)},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.25"}}}}},
	}
}

func configMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}, Data: map[string]string{"b": "2", "a": "1"}}
}

func customResource() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "tab", "namespace": "default"}, "spec": map[string]any{"cronSpec": "* * * * */5"}}}
}

// Each object written in each format reads back equal, into a fresh
// object, under either setting: the format is in the value, not in the
// reader's flag.
func TestEveryFormatReadsBackUnderEitherSetting(t *testing.T) {
	scheme := testScheme(t)
	tests := []struct {
		name      string
		obj       runtime.Object
		empty     func() runtime.Object
		writes    storageformat.MediaType
		wantProto bool
	}{
		{"a Deployment stored as JSON is JSON", deployment(), func() runtime.Object { return &appsv1.Deployment{} }, storageformat.JSON, false},
		{"a Deployment stored as protobuf is protobuf", deployment(), func() runtime.Object { return &appsv1.Deployment{} }, storageformat.Protobuf, true},
		{"a ConfigMap stored as protobuf is protobuf", configMap(), func() runtime.Object { return &corev1.ConfigMap{} }, storageformat.Protobuf, true},
		{"a custom resource stays JSON when protobuf is asked for: it has no protobuf encoding", customResource(),
			func() runtime.Object { return &unstructured.Unstructured{} }, storageformat.Protobuf, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value, err := storageformat.NewCodec(tt.writes, scheme).Encode(tt.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := storageformat.IsProtobuf(value); got != tt.wantProto {
				t.Fatalf("IsProtobuf = %v, want %v; value %q", got, tt.wantProto, value)
			}
			if !tt.wantProto && !json.Valid(value) {
				t.Fatalf("value is not JSON: %q", value)
			}
			for _, reads := range []storageformat.MediaType{storageformat.JSON, storageformat.Protobuf} {
				got := tt.empty()
				if err := storageformat.NewCodec(reads, scheme).Decode(value, got); err != nil {
					t.Fatalf("decode under %s: %v", reads, err)
				}
				got.GetObjectKind().SetGroupVersionKind(tt.obj.GetObjectKind().GroupVersionKind()) // protobuf leaves it to the caller
				if !equality.Semantic.DeepEqual(got, tt.obj) {
					t.Errorf("decoded under %s:\n got %#v\nwant %#v", reads, got, tt.obj)
				}
			}
		})
	}
}

// The protobuf value is what kube-apiserver writes: the magic, then a
// runtime.Unknown naming apiVersion and kind, and it is smaller.
func TestProtobufValueIsKubernetesEnvelope(t *testing.T) {
	scheme := testScheme(t)
	pb, err := storageformat.NewCodec(storageformat.Protobuf, scheme).Encode(deployment())
	if err != nil {
		t.Fatal(err)
	}
	js, _ := storageformat.NewCodec(storageformat.JSON, scheme).Encode(deployment())
	if !bytes.HasPrefix(pb, []byte("k8s\x00")) {
		t.Errorf("protobuf value starts %q, want the magic k8s\\x00", pb[:8])
	}
	var unk runtime.Unknown
	if err := unk.Unmarshal(pb[4:]); err != nil {
		t.Fatalf("the envelope is not a runtime.Unknown: %v", err)
	}
	if unk.APIVersion != "apps/v1" || unk.Kind != "Deployment" {
		t.Errorf("envelope names %s %s, want apps/v1 Deployment", unk.APIVersion, unk.Kind)
	}
	if len(pb) >= len(js) {
		t.Errorf("protobuf is %d bytes, JSON %d: protobuf should be smaller", len(pb), len(js))
	}
}

// A value of another kind than the key's is an error, not a silent
// empty object.
func TestDecodeRefusesAnotherKind(t *testing.T) {
	scheme := testScheme(t)
	value, _ := storageformat.NewCodec(storageformat.Protobuf, scheme).Encode(configMap())
	err := storageformat.NewCodec(storageformat.Protobuf, scheme).Decode(value, &appsv1.Deployment{})
	if err == nil || !strings.Contains(err.Error(), "ConfigMap") {
		t.Errorf("decode a ConfigMap into a Deployment: %v, want an error naming ConfigMap", err)
	}
}

func TestReadableShowsEitherFormatAsJSON(t *testing.T) {
	scheme := testScheme(t)
	codec := storageformat.NewCodec(storageformat.JSON, scheme)
	for _, writes := range []storageformat.MediaType{storageformat.JSON, storageformat.Protobuf} {
		value, _ := storageformat.NewCodec(writes, scheme).Encode(deployment())
		data, format, err := codec.Readable(value)
		if err != nil || format != writes {
			t.Fatalf("Readable of a %s value: format %q, %v", writes, format, err)
		}
		var got appsv1.Deployment
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatalf("Readable of a %s value is not JSON: %v\n%s", writes, err, data)
		}
		if !equality.Semantic.DeepEqual(&got, deployment()) {
			t.Errorf("Readable of a %s value:\n got %s", writes, data)
		}
	}
	if _, _, err := codec.Readable([]byte("\x01\x02 not an object")); err == nil {
		t.Error("Readable of bytes that are neither format: no error")
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    storageformat.MediaType
		wantErr bool
	}{
		{"", storageformat.JSON, false},
		{"application/json", storageformat.JSON, false},
		{"application/vnd.kubernetes.protobuf", storageformat.Protobuf, false},
		{"application/yaml", "", true},
		{"protobuf", "", true},
	}
	for _, tt := range tests {
		got, err := storageformat.Parse(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("Parse(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
