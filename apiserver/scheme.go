package apiserver

import (
	"reflect"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
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
	if err := apiregistrationv1.AddToScheme(s); err != nil { // APIServices
		panic(err)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}

// learnConversions teaches the scheme each StoredAs conversion, both
// ways: the field manager of one version reads managedFields written
// through another (`kubectl autoscale` records autoscaling/v1, `kubectl
// edit` then writes autoscaling/v2), and converts the object to each, as
// Kubernetes' scheme does through its internal types. Each pair is
// added once, by the first server that serves it, before it decodes
// anything: the scheme is shared and not safe to change while read.
func learnConversions(resources []*Resource) {
	conversionsMu.Lock()
	defer conversionsMu.Unlock()
	for _, r := range resources {
		c := r.StoredAs
		if c == nil || learned[r.GVK()] {
			continue
		}
		learned[r.GVK()] = true
		addConversion(scheme, r.New(), c.New(), c.ToStored)
		addConversion(scheme, c.New(), r.New(), c.FromStored)
	}
}

var (
	conversionsMu sync.Mutex
	learned       = map[schema.GroupVersionKind]bool{} // the resources whose conversions the scheme knows
)

func addConversion(s *runtime.Scheme, from, to runtime.Object, convert func(runtime.Object) (runtime.Object, error)) {
	err := s.AddConversionFunc(from, to, func(a, b any, _ conversion.Scope) error {
		out, err := convert(a.(runtime.Object))
		if err != nil {
			return err
		}
		reflect.ValueOf(b).Elem().Set(reflect.ValueOf(out).Elem())
		return nil
	})
	if err != nil {
		panic(err)
	}
}
