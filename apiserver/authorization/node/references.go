package node

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/storage/ephemeral"
)

// kind is a kind of object a node may reach through its pods.
type kind uint8

const (
	secretKind kind = iota
	configMapKind
	claimKind // PersistentVolumeClaim
	serviceAccountKind
	resourceClaimKind
)

// ref names one object of a kind. Every kind a pod refers to is in the
// pod's namespace; a PersistentVolume's secrets name their own.
type ref struct {
	kind            kind
	namespace, name string
}

// podRefs is everything a pod bound to a node lets that node read, as
// Kubernetes' graph has it (pkg/api/v1/pod's VisitPodSecretNames and
// VisitPodConfigmapNames, and the graph's AddPod): its service account;
// the Secrets and ConfigMaps of its image pull secrets, its containers'
// env and envFrom (init, regular and ephemeral containers) and its
// volumes; its claims, including an ephemeral volume's generated one; and
// its resource claims. A mirror pod refers to nothing: a node makes it,
// and must not grant itself access by making one.
func podRefs(pod *corev1.Pod) []ref {
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return nil
	}
	return specRefs(pod)
}

// SpecUses says whether a pod's spec refers to any Secret or ConfigMap,
// mirror pod or not: NodeRestriction refuses a node's mirror pod that
// does.
func SpecUses(pod *corev1.Pod) (secrets, configMaps bool) {
	for _, r := range specRefs(pod) {
		secrets = secrets || r.kind == secretKind
		configMaps = configMaps || r.kind == configMapKind
	}
	return secrets, configMaps
}

// specRefs is what the pod's spec refers to (podRefs).
func specRefs(pod *corev1.Pod) []ref {
	var refs []ref
	add := func(k kind, name string) {
		if name != "" {
			refs = append(refs, ref{k, pod.Namespace, name})
		}
	}
	add(serviceAccountKind, pod.Spec.ServiceAccountName)
	for _, s := range pod.Spec.ImagePullSecrets {
		add(secretKind, s.Name)
	}
	envs := func(envFrom []corev1.EnvFromSource, env []corev1.EnvVar) {
		for _, e := range envFrom {
			if e.SecretRef != nil {
				add(secretKind, e.SecretRef.Name)
			}
			if e.ConfigMapRef != nil {
				add(configMapKind, e.ConfigMapRef.Name)
			}
		}
		for _, e := range env {
			if e.ValueFrom == nil {
				continue
			}
			if e.ValueFrom.SecretKeyRef != nil {
				add(secretKind, e.ValueFrom.SecretKeyRef.Name)
			}
			if e.ValueFrom.ConfigMapKeyRef != nil {
				add(configMapKind, e.ValueFrom.ConfigMapKeyRef.Name)
			}
		}
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			envs(c.EnvFrom, c.Env)
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		envs(c.EnvFrom, c.Env)
	}
	for i := range pod.Spec.Volumes {
		volumeRefs(pod, &pod.Spec.Volumes[i], add)
	}
	for _, c := range pod.Spec.ResourceClaims {
		add(resourceClaimKind, resourceClaimName(pod, c))
	}
	return refs
}

// volumeRefs adds what one of the pod's volumes names.
func volumeRefs(pod *corev1.Pod, v *corev1.Volume, add func(kind, string)) {
	switch s := &v.VolumeSource; {
	case s.Secret != nil:
		add(secretKind, s.Secret.SecretName)
	case s.ConfigMap != nil:
		add(configMapKind, s.ConfigMap.Name)
	case s.Projected != nil:
		for _, p := range s.Projected.Sources {
			if p.Secret != nil {
				add(secretKind, p.Secret.Name)
			}
			if p.ConfigMap != nil {
				add(configMapKind, p.ConfigMap.Name)
			}
		}
	case s.PersistentVolumeClaim != nil:
		add(claimKind, s.PersistentVolumeClaim.ClaimName)
	case s.Ephemeral != nil:
		add(claimKind, ephemeral.VolumeClaimName(pod, v))
	case s.CSI != nil && s.CSI.NodePublishSecretRef != nil:
		add(secretKind, s.CSI.NodePublishSecretRef.Name)
	case s.AzureFile != nil:
		add(secretKind, s.AzureFile.SecretName)
	case s.CephFS != nil && s.CephFS.SecretRef != nil:
		add(secretKind, s.CephFS.SecretRef.Name)
	case s.Cinder != nil && s.Cinder.SecretRef != nil:
		add(secretKind, s.Cinder.SecretRef.Name)
	case s.FlexVolume != nil && s.FlexVolume.SecretRef != nil:
		add(secretKind, s.FlexVolume.SecretRef.Name)
	case s.RBD != nil && s.RBD.SecretRef != nil:
		add(secretKind, s.RBD.SecretRef.Name)
	case s.ScaleIO != nil && s.ScaleIO.SecretRef != nil:
		add(secretKind, s.ScaleIO.SecretRef.Name)
	case s.ISCSI != nil && s.ISCSI.SecretRef != nil:
		add(secretKind, s.ISCSI.SecretRef.Name)
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		add(secretKind, s.StorageOS.SecretRef.Name)
	}
}

// resourceClaimName is the ResourceClaim a pod's claim entry stands for:
// the one it names, or the one made from its template, which the pod's
// status records; "" while that is not made yet.
func resourceClaimName(pod *corev1.Pod, c corev1.PodResourceClaim) string {
	if c.ResourceClaimName != nil {
		return *c.ResourceClaimName
	}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == c.Name && s.ResourceClaimName != nil {
			return *s.ResourceClaimName
		}
	}
	return ""
}

// volumeSecrets are the Secrets of a PersistentVolume that the kubelet
// mounting it reads (pkg/api/v1/persistentvolume's VisitPVSecretNames,
// kubeletVisible: a CSI driver's node-side secrets, an in-tree plugin's
// secretRef), each in the namespace it names, else its claim's.
func volumeSecrets(pv *corev1.PersistentVolume) []ref {
	claimNS := ""
	if pv.Spec.ClaimRef != nil {
		claimNS = pv.Spec.ClaimRef.Namespace
	}
	var refs []ref
	add := func(namespace, name string) {
		if name == "" {
			return
		}
		if namespace == "" {
			namespace = claimNS
		}
		refs = append(refs, ref{secretKind, namespace, name})
	}
	addRef := func(r *corev1.SecretReference) {
		if r != nil {
			add(r.Namespace, r.Name)
		}
	}
	exact := func(namespace, name string) { // Cinder and StorageOS: no claim's namespace to fall back on
		if name != "" {
			refs = append(refs, ref{secretKind, namespace, name})
		}
	}
	switch s := &pv.Spec.PersistentVolumeSource; {
	case s.CSI != nil:
		addRef(s.CSI.NodePublishSecretRef)
		addRef(s.CSI.NodeStageSecretRef)
		addRef(s.CSI.NodeExpandSecretRef)
	case s.AzureFile != nil:
		ns := ""
		if s.AzureFile.SecretNamespace != nil {
			ns = *s.AzureFile.SecretNamespace
		}
		add(ns, s.AzureFile.SecretName)
	case s.CephFS != nil:
		addRef(s.CephFS.SecretRef)
	case s.Cinder != nil && s.Cinder.SecretRef != nil:
		exact(s.Cinder.SecretRef.Namespace, s.Cinder.SecretRef.Name)
	case s.FlexVolume != nil:
		addRef(s.FlexVolume.SecretRef)
	case s.RBD != nil:
		addRef(s.RBD.SecretRef)
	case s.ScaleIO != nil:
		addRef(s.ScaleIO.SecretRef)
	case s.ISCSI != nil:
		addRef(s.ISCSI.SecretRef)
	case s.StorageOS != nil && s.StorageOS.SecretRef != nil:
		exact(s.StorageOS.SecretRef.Namespace, s.StorageOS.SecretRef.Name)
	}
	return refs
}
