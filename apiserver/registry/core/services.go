package core

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"net"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/admission"
)

// Services give a set of pods (chosen by label selector) one stable
// virtual IP, the ClusterIP, and Endpoints list the IPs of the ready pods
// behind it (seed 003, Service and Endpoints). The API server allocates
// the ClusterIP from the service range, and NodePorts from 30000-32767,
// as kube-apiserver's --service-cluster-ip-range and
// --service-node-port-range do.

// serviceCIDR is Kubernetes' default service range; .1 is the apiserver's
// own "kubernetes" service in a real cluster, so allocation starts at .2.
var serviceCIDR = mustCIDR("10.96.0.0/12")

const nodePortMin, nodePortMax = 30000, 32767

var serviceKind = schema.GroupKind{Kind: "Service"}

func mustCIDR(s string) *net.IPNet {
	_, n, err := net.ParseCIDR(s)
	if err != nil {
		panic(err)
	}
	return n
}

var Services = &apiserver.Resource{
	GroupVersion: v1, Name: "services", Kind: "Service", Namespaced: true,
	ShortNames: []string{"svc"}, Categories: []string{"all"},
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource, serviceProxySubresource},
	// Kubernetes' service status strategy keeps only the spec.
	StatusWritesMetadata: true,
	New:                  func() runtime.Object { return &corev1.Service{} },
	NewList:              func() runtime.Object { return &corev1.ServiceList{} },
	Columns: []apiserver.Column{{Name: "Type", Type: "string"}, {Name: "Cluster-IP", Type: "string"}, {Name: "External-IP", Type: "string"},
		{Name: "Port(s)", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "Selector", Type: "string", Priority: 1}},
	Row:     serviceRow,
	Default: defaultService,
	Validate: func(obj, old runtime.Object) field.ErrorList {
		svc := obj.(*corev1.Service)
		var errs field.ErrorList
		ports := field.NewPath("spec", "ports")
		if len(svc.Spec.Ports) == 0 && svc.Spec.Type != corev1.ServiceTypeExternalName && svc.Spec.ClusterIP != corev1.ClusterIPNone {
			errs = append(errs, field.Required(ports, ""))
		}
		names := sets.New[string]()
		for i, p := range svc.Spec.Ports {
			if p.Port < 1 || p.Port > 65535 {
				errs = append(errs, field.Invalid(ports.Index(i).Child("port"), p.Port, "must be between 1 and 65535, inclusive"))
			}
			if len(svc.Spec.Ports) > 1 && p.Name == "" {
				errs = append(errs, field.Required(ports.Index(i).Child("name"), ""))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(ports.Index(i).Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		// The cluster IP is fixed once allocated, unless the Service
		// changes to or from ExternalName (validateUpgradeDowngradeClusterIPs).
		if old != nil && needsClusterIP(old.(*corev1.Service)) && needsClusterIP(svc) {
			prev := old.(*corev1.Service).Spec.ClusterIP
			if prev != "" && svc.Spec.ClusterIP != prev {
				errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIP"), svc.Spec.ClusterIP, "field is immutable"))
			}
		}
		return errs
	},
	Admit:           allocateServiceAddresses,
	SerializeWrites: true,
}

func defaultService(obj runtime.Object) {
	svc := obj.(*corev1.Service)
	if svc.Spec.Type == "" {
		svc.Spec.Type = corev1.ServiceTypeClusterIP
	}
	if svc.Spec.SessionAffinity == "" {
		svc.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		if svc.Spec.InternalTrafficPolicy == nil {
			p := corev1.ServiceInternalTrafficPolicyCluster
			svc.Spec.InternalTrafficPolicy = &p
		}
		if len(svc.Spec.IPFamilies) == 0 {
			svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		}
		if svc.Spec.IPFamilyPolicy == nil {
			p := corev1.IPFamilyPolicySingleStack
			svc.Spec.IPFamilyPolicy = &p
		}
	}
	if (svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer) && svc.Spec.ExternalTrafficPolicy == "" {
		svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	for i := range svc.Spec.Ports {
		p := &svc.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

// allocateServiceAddresses gives a new Service its ClusterIP (and
// NodePorts), keeping what an update already has. Free addresses are
// found by listing the Services; the storage serialises Service writes
// (SerializeWrites), so two Services created at once cannot both take one
// address. That holds within one API server: kube-apiserver keeps an
// allocation bitmap in etcd, which also covers several API servers
// sharing an etcd (--etcd-servers); mkube does not.
func allocateServiceAddresses(ctx context.Context, objs admission.Objects, obj, old runtime.Object) error {
	svc := obj.(*corev1.Service)
	if old != nil {
		prev := old.(*corev1.Service)
		dropTypeDependentFields(svc, prev)
		if needsClusterIP(prev) && needsClusterIP(svc) && svc.Spec.ClusterIP == "" {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = prev.Spec.ClusterIP, prev.Spec.ClusterIPs
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	usedIPs, usedPorts, err := serviceAddressesInUse(ctx, objs, svc)
	if err != nil {
		return err
	}
	if svc.Spec.ClusterIP == "" {
		ip, err := freeClusterIP(svc.Namespace+"/"+svc.Name, usedIPs)
		if err != nil {
			return err
		}
		svc.Spec.ClusterIP = ip
	} else if svc.Spec.ClusterIP != corev1.ClusterIPNone && (old == nil || old.(*corev1.Service).Spec.ClusterIP != svc.Spec.ClusterIP) {
		if ip := net.ParseIP(svc.Spec.ClusterIP); ip == nil || !serviceCIDR.Contains(ip) {
			return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIP"), svc.Spec.ClusterIP,
				"failed to allocate IP "+svc.Spec.ClusterIP+": the provided IP ("+svc.Spec.ClusterIP+") is not in the valid range. The range of valid IPs is "+serviceCIDR.String())})
		}
		if usedIPs.Has(svc.Spec.ClusterIP) {
			return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{field.Invalid(field.NewPath("spec", "clusterIPs").Index(0), svc.Spec.ClusterIP,
				"failed to allocate IP "+svc.Spec.ClusterIP+": provided IP is already allocated")})
		}
	}
	svc.Spec.ClusterIPs = []string{svc.Spec.ClusterIP}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		kept := sets.New[int32]() // this Service's own ports before the update
		if old != nil {
			for _, p := range old.(*corev1.Service).Spec.Ports {
				kept.Insert(p.NodePort)
			}
		}
		for i := range svc.Spec.Ports {
			if port := svc.Spec.Ports[i].NodePort; port != 0 {
				// A port the user chose: in range and nobody else's.
				path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
				switch {
				case kept.Has(port):
				case port < nodePortMin || port > nodePortMax:
					return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{field.Invalid(path, port,
						fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", nodePortMin, nodePortMax))})
				case usedPorts.Has(port):
					return apierrors.NewInvalid(serviceKind, svc.Name, field.ErrorList{field.Invalid(path, port, "provided port is already allocated")})
				}
				usedPorts.Insert(port)
				continue
			}
			port, err := freeNodePort(usedPorts)
			if err != nil {
				return err
			}
			svc.Spec.Ports[i].NodePort = port
			usedPorts.Insert(port)
		}
	}
	return nil
}

// needsClusterIP: every type but ExternalName, a DNS alias, has a
// cluster IP (or None).
func needsClusterIP(svc *corev1.Service) bool { return svc.Spec.Type != corev1.ServiceTypeExternalName }

func needsNodePorts(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

// dropTypeDependentFields is Kubernetes' rule for an update that changes
// a Service's type: what the old type had allocated or defaulted, and the
// new type has no use for, is wiped, if the user left it as it was (a
// field the user changed is theirs, and validation judges it). A
// ClusterIP Service becoming ExternalName loses its cluster IP and IP
// families; a NodePort one becoming ClusterIP, its node ports.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if svc.Spec.ClusterIP == old.Spec.ClusterIP && slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(svc.Spec.IPFamilies, old.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if reflect.DeepEqual(svc.Spec.IPFamilyPolicy, old.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePorts(old) && !needsNodePorts(svc) {
		same := len(svc.Spec.Ports) == len(old.Spec.Ports)
		for i := 0; same && i < len(svc.Spec.Ports); i++ {
			same = svc.Spec.Ports[i].NodePort == old.Spec.Ports[i].NodePort
		}
		if same {
			for i := range svc.Spec.Ports {
				svc.Spec.Ports[i].NodePort = 0
			}
		}
		if svc.Spec.ExternalTrafficPolicy == old.Spec.ExternalTrafficPolicy {
			svc.Spec.ExternalTrafficPolicy = ""
		}
	}
}

// serviceAddressesInUse lists the ClusterIPs and NodePorts of every other Service.
func serviceAddressesInUse(ctx context.Context, objs admission.Objects, self *corev1.Service) (sets.Set[string], sets.Set[int32], error) {
	ips, ports := sets.New[string](), sets.New[int32]()
	services, err := objs.List(ctx, v1.WithResource("services"), "")
	if err != nil {
		return nil, nil, err
	}
	for _, o := range services {
		svc := o.(*corev1.Service)
		if svc.Namespace == self.Namespace && svc.Name == self.Name {
			continue
		}
		ips.Insert(svc.Spec.ClusterIP)
		for _, p := range svc.Spec.Ports {
			ports.Insert(p.NodePort)
		}
	}
	return ips, ports, nil
}

// freeClusterIP starts from a hash of the Service's name, so a learner
// recreating a Service often gets the same address back, and probes on.
func freeClusterIP(name string, used sets.Set[string]) (string, error) {
	ones, bits := serviceCIDR.Mask.Size()
	size := uint32(1) << (bits - ones)
	base := binary.BigEndian.Uint32(serviceCIDR.IP.To4())
	h := fnv.New32a()
	h.Write([]byte(name))
	start := h.Sum32() % size
	for i := uint32(0); i < size; i++ {
		off := (start + i) % size
		if off < 2 || off == size-1 { // network, the "kubernetes" service, broadcast
			continue
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], base+off)
		if ip := net.IP(b[:]).String(); !used.Has(ip) {
			return ip, nil
		}
	}
	return "", apierrors.NewInternalError(fmt.Errorf("the service range %s is full", serviceCIDR))
}

func freeNodePort(used sets.Set[int32]) (int32, error) {
	for p := int32(nodePortMin); p <= nodePortMax; p++ {
		if !used.Has(p) {
			return p, nil
		}
	}
	return 0, apierrors.NewInternalError(fmt.Errorf("no free NodePort in %d-%d", nodePortMin, nodePortMax))
}

func serviceRow(obj runtime.Object, now time.Time) []any {
	svc := obj.(*corev1.Service)
	var ports []string
	for _, p := range svc.Spec.Ports {
		s := fmt.Sprintf("%d/%s", p.Port, p.Protocol)
		if p.NodePort != 0 {
			s = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol)
		}
		ports = append(ports, s)
	}
	external := "<none>"
	if len(svc.Spec.ExternalIPs) > 0 {
		external = strings.Join(svc.Spec.ExternalIPs, ",")
	} else if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		external = "<pending>"
	} else if svc.Spec.Type == corev1.ServiceTypeExternalName {
		external = svc.Spec.ExternalName
	}
	var sel []string
	for k, v := range svc.Spec.Selector {
		sel = append(sel, k+"="+v)
	}
	sort.Strings(sel)
	return []any{string(svc.Spec.Type), apiserver.OrNone(svc.Spec.ClusterIP), external, apiserver.OrNone(strings.Join(ports, ",")),
		apiserver.Age(svc.CreationTimestamp, now), apiserver.OrNone(strings.Join(sel, ","))}
}
