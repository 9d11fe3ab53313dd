package envvars

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/kubelet/internal/kubelettest"
)

func TestServiceVars(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  *corev1.Service
		want []string
	}{
		{
			name: "the API server's service gives the variables in-cluster clients read",
			svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "kubernetes"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1",
				Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}}},
			want: []string{
				"KUBERNETES_SERVICE_HOST=10.96.0.1",
				"KUBERNETES_SERVICE_PORT=443",
				"KUBERNETES_SERVICE_PORT_HTTPS=443",
				"KUBERNETES_PORT=tcp://10.96.0.1:443",
				"KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443",
				"KUBERNETES_PORT_443_TCP_PROTO=tcp",
				"KUBERNETES_PORT_443_TCP_PORT=443",
				"KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1",
			},
		},
		{
			name: "dashes become underscores and names upper case, an unnamed port has no _SERVICE_PORT_<NAME>",
			svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "my-service"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20",
				Ports: []corev1.ServicePort{{Port: 3306, Protocol: corev1.ProtocolTCP}}}},
			want: []string{
				"MY_SERVICE_SERVICE_HOST=10.96.0.20",
				"MY_SERVICE_SERVICE_PORT=3306",
				"MY_SERVICE_PORT=tcp://10.96.0.20:3306",
				"MY_SERVICE_PORT_3306_TCP=tcp://10.96.0.20:3306",
				"MY_SERVICE_PORT_3306_TCP_PROTO=tcp",
				"MY_SERVICE_PORT_3306_TCP_PORT=3306",
				"MY_SERVICE_PORT_3306_TCP_ADDR=10.96.0.20",
			},
		},
		{
			name: "every port gets its own block, the first one the short names, and the protocol is lower case in URLs",
			svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "dns"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10",
				Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}, {Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP}}}},
			want: []string{
				"DNS_SERVICE_HOST=10.96.0.10",
				"DNS_SERVICE_PORT=53",
				"DNS_SERVICE_PORT_DNS=53",
				"DNS_SERVICE_PORT_DNS_TCP=53",
				"DNS_PORT=udp://10.96.0.10:53",
				"DNS_PORT_53_UDP=udp://10.96.0.10:53",
				"DNS_PORT_53_UDP_PROTO=udp",
				"DNS_PORT_53_UDP_PORT=53",
				"DNS_PORT_53_UDP_ADDR=10.96.0.10",
				"DNS_PORT_53_TCP=tcp://10.96.0.10:53",
				"DNS_PORT_53_TCP_PROTO=tcp",
				"DNS_PORT_53_TCP_PORT=53",
				"DNS_PORT_53_TCP_ADDR=10.96.0.10",
			},
		},
		{
			name: "a port without a protocol is TCP",
			svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.30",
				Ports: []corev1.ServicePort{{Port: 80}}}},
			want: []string{
				"WEB_SERVICE_HOST=10.96.0.30",
				"WEB_SERVICE_PORT=80",
				"WEB_PORT=tcp://10.96.0.30:80",
				"WEB_PORT_80_TCP=tcp://10.96.0.30:80",
				"WEB_PORT_80_TCP_PROTO=tcp",
				"WEB_PORT_80_TCP_PORT=80",
				"WEB_PORT_80_TCP_ADDR=10.96.0.30",
			},
		},
		{
			name: "an IPv6 cluster IP is bracketed in URLs",
			svc: &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "v6"}, Spec: corev1.ServiceSpec{ClusterIP: "fd00::10",
				Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}},
			want: []string{
				"V6_SERVICE_HOST=fd00::10",
				"V6_SERVICE_PORT=80",
				"V6_PORT=tcp://[fd00::10]:80",
				"V6_PORT_80_TCP=tcp://[fd00::10]:80",
				"V6_PORT_80_TCP_PROTO=tcp",
				"V6_PORT_80_TCP_PORT=80",
				"V6_PORT_80_TCP_ADDR=fd00::10",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := kubelettest.EnvLines(serviceVars(tc.svc)), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestServiceEnvPicksTheServicesAPodSees(t *testing.T) {
	svc := func(ns, name, ip string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	all := []*corev1.Service{
		svc("default", "kubernetes", "10.96.0.1"),
		svc("default", "web", "10.96.0.2"),
		svc("shop", "cart", "10.96.0.3"),
		svc("shop", "headless", corev1.ClusterIPNone),
		svc("shop", "external", ""),
		svc("other", "db", "10.96.0.4"),
	}
	for _, tc := range []struct {
		name        string
		services    []*corev1.Service
		namespace   string
		links       bool
		wantHostVar []string
	}{
		{"a pod sees its namespace's services with a cluster IP and the API server's, sorted by name",
			all, "shop", true, []string{"CART_SERVICE_HOST=10.96.0.3", "KUBERNETES_SERVICE_HOST=10.96.0.1"}},
		{"a pod in default sees default's services",
			all, "default", true, []string{"KUBERNETES_SERVICE_HOST=10.96.0.1", "WEB_SERVICE_HOST=10.96.0.2"}},
		{"without service links only the API server's service is left",
			all, "shop", false, []string{"KUBERNETES_SERVICE_HOST=10.96.0.1"}},
		{"without service links a pod in default still sees only the API server's",
			all, "default", false, []string{"KUBERNETES_SERVICE_HOST=10.96.0.1"}},
		{"a namespace's own kubernetes service hides the default one, whatever the listing order",
			[]*corev1.Service{svc("default", "kubernetes", "10.96.0.1"), svc("shop", "kubernetes", "10.96.0.9")},
			"shop", true, []string{"KUBERNETES_SERVICE_HOST=10.96.0.9"}},
		{"a namespace's own kubernetes service hides the default one listed after it",
			[]*corev1.Service{svc("shop", "kubernetes", "10.96.0.9"), svc("default", "kubernetes", "10.96.0.1")},
			"shop", true, []string{"KUBERNETES_SERVICE_HOST=10.96.0.9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hosts []string
			for _, e := range serviceEnv(tc.services, tc.namespace, tc.links) {
				if strings.HasSuffix(e.Name, "_SERVICE_HOST") {
					hosts = append(hosts, e.Name+"="+e.Value)
				}
			}
			if got, want := strings.Join(hosts, " "), strings.Join(tc.wantHostVar, " "); got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

// fakeSources serves ConfigMaps and Secrets from maps, and NotFound as
// the kubelet words it.
func fakeSources(cms []*corev1.ConfigMap, secrets []*corev1.Secret, services ...*corev1.Service) (envSources, *int) {
	reads := new(int)
	return envSources{
		configMap: func(name string) (*corev1.ConfigMap, error) {
			*reads++
			for _, cm := range cms {
				if cm.Name == name {
					return cm, nil
				}
			}
			return nil, NotFound("configmap", name, apiNotFound("configmaps", name))
		},
		secret: func(name string) (*corev1.Secret, error) {
			*reads++
			for _, s := range secrets {
				if s.Name == name {
					return s, nil
				}
			}
			return nil, NotFound("secret", name, apiNotFound("secrets", name))
		},
		services: services, hostIP: "192.168.1.10", podIP: "10.244.1.5",
	}, reads
}

// apiNotFound is the API server's answer to a GET of what does not exist.
func apiNotFound(resource, name string) error {
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func TestMakeEnv(t *testing.T) {
	special := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "special-config"},
		Data: map[string]string{"special.how": "very", "special.type": "charm"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "my-secret"},
		Data: map[string][]byte{"username": []byte("admin"), "password": []byte("admin123456")}}
	kubernetes := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1", Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP}}}}
	cmKey := func(name, key string, optional bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
	}
	secretKey := func(name, key string, optional bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
	}
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		want    []string // NAME=value, in order; the service variables after "KUBERNETES_SERVICE_HOST" are left out
		wantErr string
	}{
		{
			name: "seed 003's configMapKeyRef and secretKeyRef give the ConfigMap's value and the Secret's decoded bytes",
			c: corev1.Container{Env: []corev1.EnvVar{
				{Name: "SPECIAL_LEVEL_KEY", ValueFrom: cmKey("special-config", "special.how", false)},
				{Name: "USERNAME", ValueFrom: secretKey("my-secret", "username", false)},
			}},
			want: []string{"SPECIAL_LEVEL_KEY=very", "USERNAME=admin"},
		},
		{
			name: "envFrom gives every key, sorted, behind the prefix, and env overrides it in place",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{
					{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "special-config"}}},
					{Prefix: "DB_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "my-secret"}}},
				},
				Env: []corev1.EnvVar{{Name: "special.how", Value: "not very"}, {Name: "EXTRA", Value: "1"}},
			},
			want: []string{"special.how=not very", "special.type=charm", "DB_password=admin123456", "DB_username=admin", "EXTRA=1"},
		},
		{
			name: "$(VAR) expands against the variables defined before, envFrom's, and the services'",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "special-config"}}}},
				Env: []corev1.EnvVar{
					{Name: "LATER_REF", Value: "$(DEFINED_LATER)"},
					{Name: "GREETING", Value: "$(special.how) $(special.type)"},
					{Name: "API", Value: "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
					{Name: "ESCAPED", Value: "$$(GREETING)"},
					{Name: "DEFINED_LATER", Value: "x"},
				},
			},
			want: []string{"special.how=very", "special.type=charm", "LATER_REF=$(DEFINED_LATER)", "GREETING=very charm",
				"API=https://10.96.0.1:443", "ESCAPED=$(GREETING)", "DEFINED_LATER=x"},
		},
		{
			name: "a variable the container sets is not overwritten by a service's",
			c:    corev1.Container{Env: []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "mine"}}},
			want: []string{"KUBERNETES_SERVICE_HOST=mine"},
		},
		{
			name: "optional references to what is missing leave their variables out",
			c: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: ptr.To(true)}}},
				Env: []corev1.EnvVar{
					{Name: "A", ValueFrom: cmKey("absent", "k", true)},
					{Name: "B", ValueFrom: cmKey("special-config", "absent-key", true)},
					{Name: "C", ValueFrom: secretKey("absent", "k", true)},
					{Name: "D", ValueFrom: secretKey("my-secret", "absent-key", true)},
					{Name: "E", Value: "kept"},
				},
			},
			want: []string{"E=kept"},
		},
		{
			name:    "a missing ConfigMap fails with the kubelet's message",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("absent", "k", false)}}},
			wantErr: `configmap "absent" not found`,
		},
		{
			name:    "a missing Secret fails with the kubelet's message",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "A", ValueFrom: secretKey("absent", "k", false)}}},
			wantErr: `secret "absent" not found`,
		},
		{
			name:    "a missing ConfigMap key fails with the kubelet's message",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "A", ValueFrom: cmKey("special-config", "nope", false)}}},
			wantErr: `couldn't find key nope in ConfigMap shop/special-config`,
		},
		{
			name:    "a missing Secret key fails with the kubelet's message",
			c:       corev1.Container{Env: []corev1.EnvVar{{Name: "A", ValueFrom: secretKey("my-secret", "nope", false)}}},
			wantErr: `couldn't find key nope in Secret shop/my-secret`,
		},
		{
			name: "a missing envFrom ConfigMap fails too",
			c: corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}}}}},
			wantErr: `configmap "absent" not found`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{tc.c}}}
			src, _ := fakeSources([]*corev1.ConfigMap{special}, []*corev1.Secret{secret}, kubernetes)
			env, err := makeEnv(pod, tc.c, src)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range env {
				if strings.HasPrefix(e.Name, "KUBERNETES_") && e.Name != "KUBERNETES_SERVICE_HOST" {
					continue
				}
				got = append(got, e.Name+"="+e.Value)
			}
			want := tc.want
			if !strings.Contains(strings.Join(want, " "), "KUBERNETES_SERVICE_HOST=") {
				want = append(want, "KUBERNETES_SERVICE_HOST=10.96.0.1")
			}
			if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
				t.Errorf("got\n%s\nwant\n%s", g, w)
			}
		})
	}
}

func TestMakeEnvReadsEachObjectOnce(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cfg"}, Data: map[string]string{"a": "1", "b": "2"}}
	ref := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: key}}
	}
	c := corev1.Container{
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		Env:     []corev1.EnvVar{{Name: "A", ValueFrom: ref("a")}, {Name: "B", ValueFrom: ref("b")}},
	}
	src, reads := fakeSources([]*corev1.ConfigMap{cm}, nil)
	if _, err := makeEnv(&corev1.Pod{}, c, src); err != nil {
		t.Fatal(err)
	}
	if *reads != 1 {
		t.Errorf("read the ConfigMap %d times, want once", *reads)
	}
}
