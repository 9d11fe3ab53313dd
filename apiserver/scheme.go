package apiserver

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// scheme knows every Go type of Kubernetes' built-in API groups (client-go
// registers them all), so request bodies in JSON, YAML or protobuf decode
// into the real k8s.io/api structs, and a kind added to the registry needs
// nothing here.
var scheme = newScheme()

// codecs builds the decoders; UniversalDeserializer recognises the body's
// format by its content and never converts or defaults.
var codecs = serializer.NewCodecFactory(scheme)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil { // CustomResourceDefinitions
		panic(err)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}
