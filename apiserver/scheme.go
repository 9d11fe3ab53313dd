package apiserver

import (
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// scheme knows every Go type the server accepts, so request bodies in JSON,
// YAML or protobuf decode into the real k8s.io/api structs.
var scheme = newScheme()

// codecs builds the decoders; UniversalDeserializer recognises the body's
// format by its content and never converts or defaults.
var codecs = serializer.NewCodecFactory(scheme)

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, coordinationv1.AddToScheme, autoscalingv1.AddToScheme,
		policyv1.AddToScheme, schedulingv1.AddToScheme, authorizationv1.AddToScheme, eventsv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}
