package core

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mkube/mkube/apiserver"
)

// ClusterDNSServiceIP is the cluster DNS's address, the tenth of the
// service range, which the kubelets' --cluster-dns names.
const ClusterDNSServiceIP = "10.96.0.10"

// CreateClusterDNSService creates kube-system/kube-dns if it is missing,
// as kubeadm's CoreDNS addon does: it holds 10.96.0.10, so no other
// Service is given the address the pods' resolv.conf names, and it is
// where `kubectl get svc -n kube-system` shows the cluster DNS. mkube
// runs no CoreDNS pods behind it: each node's runtime answers DNS at
// that address itself (network/dns), so the Service has no
// endpoints. Created once, not reconciled: an administrator may delete
// it, as an addon.
func CreateClusterDNSService(ctx context.Context, services *apiserver.Storage, log *slog.Logger) error {
	labels := map[string]string{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: metav1.NamespaceSystem, Labels: labels,
			Annotations: map[string]string{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: ClusterDNSServiceIP,
			Selector: map[string]string{"k8s-app": "kube-dns"}, SessionAffinity: corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Protocol: corev1.ProtocolTCP, Port: 9153, TargetPort: intstr.FromInt32(9153)},
			}},
	}
	_, err := services.Get(ctx, svc.Namespace, svc.Name)
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	if _, err := services.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	log.Info("created the cluster DNS Service", "object", "kube-system/kube-dns", "clusterIP", ClusterDNSServiceIP)
	return nil
}
