package admission

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

// ServiceAccount (seed 003 §六.3): a pod that names no service account
// runs as its namespace's "default" one, and a new pod gets the service
// account's credentials mounted into every container at
// /var/run/secrets/kubernetes.io/serviceaccount: a projected volume
// kube-api-access-<5 chars> of its token, the cluster's CA (ca.crt, from
// the ConfigMap kube-root-ca.crt that the controller manager puts in
// every namespace) and its namespace, as Kubernetes' plugin mounts them.
// automountServiceAccountToken: false, on the pod or on its service
// account, leaves them out.
//
// Kubernetes' plugin sets the name on create; mkube also does it on
// update, so that a `kubectl replace` of a manifest that leaves the field
// out is not taken for a change of it.
var ServiceAccount = Plugin{Name: "ServiceAccount", Admit: admitServiceAccount}

// ServiceAccountMountPath is where the credentials are.
const ServiceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// tokenExpirationSeconds is the token's lifetime Kubernetes asks for: an
// hour and seven seconds (the kubelet refreshes it at 80%).
const tokenExpirationSeconds = 3607

var serviceAccounts = corev1.SchemeGroupVersion.WithResource("serviceaccounts")

func admitServiceAccount(ctx context.Context, a *Attributes, objs Objects) error {
	if !isPodWrite(a) {
		return nil
	}
	pod := a.Object.(*corev1.Pod)
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil // a mirror pod is the kubelet's copy of its static pod: left as it is, and it may use no service account
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
	}
	pod.Spec.DeprecatedServiceAccount = pod.Spec.ServiceAccountName
	if a.Operation != Create {
		return nil // a pod's volumes are fixed
	}
	if !automount(ctx, pod, objs) {
		return nil
	}
	mountServiceAccountToken(pod, "kube-api-access-"+utilrand.String(5))
	return nil
}

// automount: the pod says so, or else its service account does; true by
// default, and for a service account not created yet.
func automount(ctx context.Context, pod *corev1.Pod, objs Objects) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if obj, err := objs.Get(ctx, serviceAccounts, pod.Namespace, pod.Spec.ServiceAccountName); err == nil {
		if sa := obj.(*corev1.ServiceAccount); sa.AutomountServiceAccountToken != nil {
			return *sa.AutomountServiceAccountToken
		}
	}
	return true
}

// mountServiceAccountToken adds the projected volume name and mounts it
// in each container that does not mount something there already.
func mountServiceAccountToken(pod *corev1.Pod, name string) {
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](tokenExpirationSeconds), Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}})
	mount := corev1.VolumeMount{Name: name, ReadOnly: true, MountPath: ServiceAccountMountPath}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !mountsAt(cs[i], ServiceAccountMountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
			}
		}
	}
}

func mountsAt(c corev1.Container, path string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}
