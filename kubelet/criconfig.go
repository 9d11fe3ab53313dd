package kubelet

import (
	"fmt"
	"maps"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What the kubelet asks its runtime for, in CRI's terms: a
// PodSandboxConfig per pod, a ContainerConfig per container instance.

// The labels the kubelet puts on every sandbox and container it creates
// (pkg/kubelet/types/labels.go). It finds its pods by them after a
// restart, and `crictl ps --label io.kubernetes.pod.name=web` relies on
// them.
const (
	labelPodName       = "io.kubernetes.pod.name"
	labelPodNamespace  = "io.kubernetes.pod.namespace"
	labelPodUID        = "io.kubernetes.pod.uid"
	labelContainerName = "io.kubernetes.container.name"
)

// DefaultPodLogsDir is where the kubelet asks runtimes to write container
// logs, as Kubernetes' --pod-logs-dir: one directory per pod,
// <namespace>_<pod>_<uid>, with <container>/<attempt>.log in it.
const DefaultPodLogsDir = "/var/log/pods"

// podLogDirectory is the pod's log directory (the kubelet's
// BuildPodLogsDirectory).
func podLogDirectory(root string, pod *corev1.Pod) string {
	return filepath.Join(root, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// podLabels are the sandbox's labels: the pod's own, the kubelet's, and
// mkube's node name (fleet.go).
func podLabels(pod *corev1.Pod) map[string]string {
	labels := maps.Clone(pod.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[labelPodName], labels[labelPodNamespace], labels[labelPodUID] = pod.Name, pod.Namespace, string(pod.UID)
	labels[labelNodeName] = pod.Spec.NodeName
	return labels
}

// sandboxConfig is the kubelet's generatePodSandboxConfig, for the
// attempt-th sandbox of pod.
func sandboxConfig(pod *corev1.Pod, attempt uint32, podLogsDir string) *runtimeapi.PodSandboxConfig {
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname:     hostname,
		LogDirectory: podLogDirectory(podLogsDir, pod),
		Labels:       podLabels(pod),
	}
	if pod.Spec.HostNetwork {
		cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}}
	}
	return cfg
}

// containerConfig is the kubelet's generateContainerConfig for the
// attempt-th instance of c, from the image imageRef that the pull (or
// ImageStatus) named. The user's spelling of the image goes along as
// user_specified_image: the pod status reports the image as the spec
// names it.
func containerConfig(pod *corev1.Pod, c corev1.Container, attempt uint32, imageRef string) *runtimeapi.ContainerConfig {
	labels := map[string]string{labelPodName: pod.Name, labelPodNamespace: pod.Namespace,
		labelPodUID: string(pod.UID), labelContainerName: c.Name, labelNodeName: pod.Spec.NodeName}
	return &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:      &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image},
		Command:    c.Command,
		Args:       c.Args,
		WorkingDir: c.WorkingDir,
		Envs:       containerEnvs(pod, c),
		Mounts:     containerMounts(pod, c),
		Labels:     labels,
		Linux:      &runtimeapi.LinuxContainerConfig{Resources: containerResources(c)},
		// Relative to the sandbox's log directory: one file per attempt.
		LogPath: fmt.Sprintf("%s/%d.log", c.Name, attempt),
	}
}

// containerResources is how the kubelet turns requests and limits into
// cgroup settings (kuberuntime's generateLinuxContainerResources): the
// memory limit is what the runtime OOM-kills above; cpu requests become
// shares (1024 per CPU, at least 2) and cpu limits a CFS quota per 100 ms
// period.
func containerResources(c corev1.Container) *runtimeapi.LinuxContainerResources {
	const cfsPeriod = 100_000 // µs
	r := &runtimeapi.LinuxContainerResources{CpuShares: 2}
	if cpu, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
		r.CpuShares = max(cpu.MilliValue()*1024/1000, 2)
	}
	if cpu, ok := c.Resources.Limits[corev1.ResourceCPU]; ok {
		r.CpuPeriod, r.CpuQuota = cfsPeriod, max(cpu.MilliValue()*cfsPeriod/1000, 1000)
	}
	if mem, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
		r.MemoryLimitInBytes = mem.Value()
	}
	return r
}

// containerEnvs are the variables whose values the kubelet knows without
// reading other objects: literal values and the downward API's pod
// fields. Values from ConfigMaps, Secrets and resources are not resolved
// yet, so those variables are left out (CreateContainerConfigError for a
// missing ConfigMap comes with them).
func containerEnvs(pod *corev1.Pod, c corev1.Container) []*runtimeapi.KeyValue {
	var out []*runtimeapi.KeyValue
	for _, e := range c.Env {
		switch vf := e.ValueFrom; {
		case vf == nil:
			out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
		case vf.FieldRef != nil:
			if v, ok := podField(pod, vf.FieldRef.FieldPath); ok {
				out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(v)})
			}
		}
	}
	return out
}

// podField is a downward-API field the kubelet knows before the pod runs.
func podField(pod *corev1.Pod, path string) (string, bool) {
	switch path {
	case "metadata.name":
		return pod.Name, true
	case "metadata.namespace":
		return pod.Namespace, true
	case "metadata.uid":
		return string(pod.UID), true
	case "spec.nodeName":
		return pod.Spec.NodeName, true
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, true
	}
	return "", false
}

// containerMounts maps each volumeMount to the host directory the
// kubelet would have set up for the volume: a hostPath volume's own path,
// or for the others the kubelet's per-pod volume directory,
// /var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~<plugin>/<volume>.
func containerMounts(pod *corev1.Pod, c corev1.Container) []*runtimeapi.Mount {
	var out []*runtimeapi.Mount
	for _, m := range c.VolumeMounts {
		out = append(out, &runtimeapi.Mount{ContainerPath: m.MountPath, HostPath: volumeHostPath(pod, m.Name), Readonly: m.ReadOnly})
	}
	return out
}

func volumeHostPath(pod *corev1.Pod, name string) string {
	plugin := "empty-dir"
	for _, v := range pod.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch s := v.VolumeSource; {
		case s.HostPath != nil:
			return s.HostPath.Path
		case s.ConfigMap != nil:
			plugin = "configmap"
		case s.Secret != nil:
			plugin = "secret"
		case s.Projected != nil:
			plugin = "projected"
		case s.PersistentVolumeClaim != nil:
			plugin = "csi"
		case s.NFS != nil:
			plugin = "nfs"
		}
	}
	return fmt.Sprintf("/var/lib/kubelet/pods/%s/volumes/kubernetes.io~%s/%s", pod.UID, plugin, name)
}
