package envvars

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A container's environment is built when the container is created, as
// the kubelet's makeEnvironmentVariables builds it (seed 003 §六.4.3 and
// §七.3.1: a Secret's and a ConfigMap's keys as environment variables):
//
//  1. envFrom, in order: every key of each ConfigMap or Secret, behind
//     the source's prefix;
//  2. env, in order: a value with its $(VAR) references expanded against
//     the variables so far and the service variables (expansion.go), or
//     a valueFrom resolved: a ConfigMap's or Secret's key, a pod field, a
//     resource (the kubelet's downwardapi.go, as Builder's PodField and
//     ResourceField). A name set twice keeps the later value,
//     which is how env wins over envFrom;
//  3. the service variables (serviceEnv) whose names are still free.
//
// A missing ConfigMap, Secret or key fails the container's creation
// (CreateContainerConfigError) unless the reference is optional: then the
// variable, or the source's keys, are just left out. The values are read
// once: editing the ConfigMap later changes nothing in a running
// container, only in the next one.
//
// Kubernetes collects the variables in a map and hands them to the
// runtime in its random order; here they keep the order of their first
// definition, so that `env` prints the same lines every time.

// envSources is what a container's variables are read from, besides its
// pod and its own spec.
type envSources struct {
	// configMap and secret read an object of the pod's namespace; one
	// that does not exist is a NotFound error.
	configMap func(name string) (*corev1.ConfigMap, error)
	secret    func(name string) (*corev1.Secret, error)
	services  []*corev1.Service // every Service of the cluster
	// hostIP and podIP are status.hostIP and status.podIP, for fieldRefs.
	hostIP, podIP string
	// allocatable is the node's: the limit of a container that sets none,
	// for resourceFieldRefs.
	allocatable corev1.ResourceList
	// podField and resourceField resolve a fieldRef and a
	// resourceFieldRef (Builder's PodField and ResourceField).
	podField      func(pod *corev1.Pod, path, hostIP, podIP string) (string, error)
	resourceField func(pod *corev1.Pod, c corev1.Container, sel *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error)
}

// envList is a container's variables in the order of their first
// definition; setting one again replaces its value in place.
type envList struct {
	names  []string
	values map[string]string
}

func (l *envList) set(name, value string) {
	if _, ok := l.values[name]; !ok {
		l.names = append(l.names, name)
	}
	l.values[name] = value
}

// makeEnv is container c's environment. An error is why the container
// cannot be created, worded as the kubelet words it.
func makeEnv(pod *corev1.Pod, c corev1.Container, src envSources) ([]corev1.EnvVar, error) {
	configMap, secret := readOnce(src.configMap), readOnce(src.secret)
	services := serviceEnv(src.services, pod.Namespace, pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks)
	serviceVars := make(map[string]string, len(services))
	for _, e := range services {
		serviceVars[e.Name] = e.Value
	}
	env := &envList{values: map[string]string{}}

	// 1. envFrom. The keys are sorted: a map has no order of its own.
	// Every key is kept, "special.how" too: since relaxed variable names
	// (KEP-4369, GA in 1.34) the kubelet no longer skips keys that are not
	// C identifiers, nor records InvalidEnvironmentVariableNames.
	for _, from := range c.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := configMap(from.ConfigMapRef.Name)
			if apierrors.IsNotFound(err) && IsOptional(from.ConfigMapRef.Optional) {
				continue
			}
			if err != nil {
				return nil, err
			}
			data = cm.Data
		case from.SecretRef != nil:
			s, err := secret(from.SecretRef.Name)
			if apierrors.IsNotFound(err) && IsOptional(from.SecretRef.Optional) {
				continue
			}
			if err != nil {
				return nil, err
			}
			data = make(map[string]string, len(s.Data))
			for k, v := range s.Data {
				data[k] = string(v) // the bytes, decoded from the API's base64
			}
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			env.set(from.Prefix+k, data[k])
		}
	}

	// 2. env.
	for _, e := range c.Env {
		value := e.Value
		if value != "" || e.ValueFrom == nil {
			env.set(e.Name, Expand(value, lookupIn(env.values, serviceVars)))
			continue
		}
		switch vf := e.ValueFrom; {
		case vf.FieldRef != nil:
			v, err := src.podField(pod, vf.FieldRef.FieldPath, src.hostIP, src.podIP)
			if err != nil {
				return nil, err
			}
			value = v
		case vf.ResourceFieldRef != nil:
			v, err := src.resourceField(pod, c, vf.ResourceFieldRef, src.allocatable)
			if err != nil {
				return nil, err
			}
			value = v
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			cm, err := configMap(ref.Name)
			if apierrors.IsNotFound(err) && IsOptional(ref.Optional) {
				continue
			}
			if err != nil {
				return nil, err
			}
			v, ok := cm.Data[ref.Key]
			if !ok && IsOptional(ref.Optional) {
				continue
			}
			if !ok {
				return nil, fmt.Errorf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			value = v
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			s, err := secret(ref.Name)
			if apierrors.IsNotFound(err) && IsOptional(ref.Optional) {
				continue
			}
			if err != nil {
				return nil, err
			}
			v, ok := s.Data[ref.Key]
			if !ok && IsOptional(ref.Optional) {
				continue
			}
			if !ok {
				return nil, fmt.Errorf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)
			}
			value = string(v)
		}
		env.set(e.Name, value)
	}

	// 3. The service variables nobody set.
	out := make([]corev1.EnvVar, 0, len(env.names)+len(services))
	for _, name := range env.names {
		out = append(out, corev1.EnvVar{Name: name, Value: env.values[name]})
	}
	for _, e := range services {
		if _, taken := env.values[e.Name]; !taken {
			out = append(out, e)
		}
	}
	return out, nil
}

// IsOptional: a reference marked optional, whose object or key may be
// missing (the volume sources' too).
func IsOptional(optional *bool) bool { return optional != nil && *optional }

// readOnce reads each object once per container, however many variables
// refer to it, as the kubelet does. A failed read is tried again.
func readOnce[T any](read func(string) (*T, error)) func(string) (*T, error) {
	seen := map[string]*T{}
	return func(name string) (*T, error) {
		if obj, ok := seen[name]; ok {
			return obj, nil
		}
		obj, err := read(name)
		if err == nil {
			seen[name] = obj
		}
		return obj, err
	}
}

// serviceEnv is the variables of the Services a pod in namespace sees
// (pkg/kubelet/envvars, the docker-links convention): those of its
// namespace when enableServiceLinks is true (the default), and always the
// API server's, default/kubernetes, which in-cluster clients find by
// KUBERNETES_SERVICE_HOST and _PORT. A namespace's own Service named
// kubernetes hides the default one. Only Services with a cluster IP
// count: a headless one (None) or an ExternalName has no address to give.
//
// They come sorted by Service name, each Service's in the order
// serviceVars makes them.
func serviceEnv(services []*corev1.Service, namespace string, enableServiceLinks bool) []corev1.EnvVar {
	seen := map[string]*corev1.Service{}
	for _, svc := range services {
		if ip := svc.Spec.ClusterIP; ip == "" || ip == corev1.ClusterIPNone {
			continue
		}
		switch {
		case svc.Namespace == namespace && enableServiceLinks:
			seen[svc.Name] = svc
		case svc.Namespace == metav1.NamespaceDefault && svc.Name == "kubernetes":
			if _, ok := seen[svc.Name]; !ok {
				seen[svc.Name] = svc
			}
		}
	}
	var out []corev1.EnvVar
	for _, name := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, serviceVars(seen[name])...)
	}
	return out
}

// serviceVars are one Service's variables. For `redis-primary` with
// 10.96.0.11 and port 6379 named "redis":
//
//	REDIS_PRIMARY_SERVICE_HOST=10.96.0.11
//	REDIS_PRIMARY_SERVICE_PORT=6379             (the first port)
//	REDIS_PRIMARY_SERVICE_PORT_REDIS=6379       (each named port)
//	REDIS_PRIMARY_PORT=tcp://10.96.0.11:6379    (the first port, as Docker links)
//	REDIS_PRIMARY_PORT_6379_TCP=tcp://10.96.0.11:6379
//	REDIS_PRIMARY_PORT_6379_TCP_PROTO=tcp
//	REDIS_PRIMARY_PORT_6379_TCP_PORT=6379
//	REDIS_PRIMARY_PORT_6379_TCP_ADDR=10.96.0.11
func serviceVars(svc *corev1.Service) []corev1.EnvVar {
	prefix := envVarName(svc.Name)
	ip := svc.Spec.ClusterIP
	if len(svc.Spec.Ports) == 0 {
		return []corev1.EnvVar{{Name: prefix + "_SERVICE_HOST", Value: ip}}
	}
	out := []corev1.EnvVar{
		{Name: prefix + "_SERVICE_HOST", Value: ip},
		{Name: prefix + "_SERVICE_PORT", Value: strconv.Itoa(int(svc.Spec.Ports[0].Port))},
	}
	for _, p := range svc.Spec.Ports {
		if p.Name != "" {
			out = append(out, corev1.EnvVar{Name: prefix + "_SERVICE_PORT_" + envVarName(p.Name), Value: strconv.Itoa(int(p.Port))})
		}
	}
	for i, p := range svc.Spec.Ports {
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		port := strconv.Itoa(int(p.Port))
		url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
		if i == 0 {
			out = append(out, corev1.EnvVar{Name: prefix + "_PORT", Value: url})
		}
		name := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
		out = append(out,
			corev1.EnvVar{Name: name, Value: url},
			corev1.EnvVar{Name: name + "_PROTO", Value: strings.ToLower(proto)},
			corev1.EnvVar{Name: name + "_PORT", Value: port},
			corev1.EnvVar{Name: name + "_ADDR", Value: ip})
	}
	return out
}

// envVarName is a Service or port name as a variable name: upper case,
// with "-" as "_" ("redis-primary" → REDIS_PRIMARY).
func envVarName(s string) string {
	return strings.ToUpper(strings.ReplaceAll(s, "-", "_"))
}
