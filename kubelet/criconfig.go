package kubelet

import (
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	// A pod on the node's network shares the node's UTS namespace, so
	// its hostname is the node's.
	hostname := podHostname(pod) // etchosts.go
	if pod.Spec.HostNetwork {
		hostname = pod.Spec.NodeName
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname:     hostname,
		LogDirectory: podLogDirectory(podLogsDir, pod),
		Labels:       podLabels(pod),
	}
	// The containers' ports, as the kubelet's MakePortMappings gives
	// them: the runtime (containerd's portmap plugin) opens each hostPort
	// on the node.
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			cfg.PortMappings = append(cfg.PortMappings, &runtimeapi.PortMapping{Protocol: runtimeProtocol(p.Protocol),
				ContainerPort: p.ContainerPort, HostPort: p.HostPort, HostIp: p.HostIP})
		}
	}
	if pod.Spec.HostNetwork {
		cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE}}}
	}
	// The pod's securityContext.sysctls, which the runtime sets in the
	// pod's namespaces before its containers start.
	if sc := pod.Spec.SecurityContext; sc != nil && len(sc.Sysctls) > 0 {
		if cfg.Linux == nil {
			cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{}
		}
		cfg.Linux.Sysctls = map[string]string{}
		for _, s := range sc.Sysctls {
			cfg.Linux.Sysctls[s.Name] = s.Value
		}
	}
	return cfg
}

// runtimeProtocol is a port's protocol as the CRI names it (TCP by
// default).
func runtimeProtocol(p corev1.Protocol) runtimeapi.Protocol {
	switch p {
	case corev1.ProtocolUDP:
		return runtimeapi.Protocol_UDP
	case corev1.ProtocolSCTP:
		return runtimeapi.Protocol_SCTP
	}
	return runtimeapi.Protocol_TCP
}

// containerConfig is the kubelet's generateContainerConfig for the
// attempt-th instance of c, from the image imageRef that the pull (or
// ImageStatus) named, with the environment env (envvars.go), against
// which $(VAR) in command and args is expanded. The user's spelling of
// the image goes along as user_specified_image: the pod status reports
// the image as the spec names it.
func containerConfig(pod *corev1.Pod, c corev1.Container, attempt uint32, imageRef string, env []corev1.EnvVar) *runtimeapi.ContainerConfig {
	labels := map[string]string{labelPodName: pod.Name, labelPodNamespace: pod.Namespace,
		labelPodUID: string(pod.UID), labelContainerName: c.Name, labelNodeName: pod.Spec.NodeName}
	envs := make([]*runtimeapi.KeyValue, 0, len(env))
	for _, e := range env {
		envs = append(envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:       &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image},
		Command:     expandArgs(c.Command, env),
		Args:        expandArgs(c.Args, env),
		WorkingDir:  c.WorkingDir,
		Envs:        envs,
		Mounts:      volumeMounts(pod, c, env), // volumes.go
		Labels:      labels,
		Annotations: containerAnnotations(c), // terminationmessage.go
		Linux: &runtimeapi.LinuxContainerConfig{Resources: containerResources(c),
			SecurityContext: containerSecurityContext(pod, c)}, // securitycontext.go
		// Relative to the sandbox's log directory: one file per attempt.
		LogPath: fmt.Sprintf("%s/%d.log", c.Name, attempt),
		// What kubectl attach and run -it connect to (cri/attach.go).
		Stdin: c.Stdin, StdinOnce: c.StdinOnce, Tty: c.TTY,
	}
}

// kubeletMounts are the files the kubelet itself binds into c beside its
// volumes, in the order of its makeMounts: the pod's /etc/hosts
// (etchosts.go), then the file of c's termination message
// (terminationmessage.go).
func (k *Kubelet) kubeletMounts(pod *corev1.Pod, sb *kubecontainer.PodSandbox, c corev1.Container) ([]*runtimeapi.Mount, error) {
	var out []*runtimeapi.Mount
	hosts, err := k.hostsMount(pod, sb, c)
	if err != nil {
		return nil, err
	}
	term, err := k.terminationLogMount(pod, c)
	if err != nil {
		return nil, err
	}
	for _, m := range []*runtimeapi.Mount{hosts, term} {
		if m != nil {
			out = append(out, m)
		}
	}
	return out, nil
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

// podField is a fieldRef's value (the downward API's
// podFieldSelectorRuntimeValue): one of the pod's own fields, or what
// the kubelet knows of it once its sandbox exists, its IP and its node's.
// A label or annotation the pod lacks is "".
//
//	metadata.labels['app'] of a pod labelled app=web = "web"
func podField(pod *corev1.Pod, path, hostIP, podIP string) (string, error) {
	if field, key, ok := subscripted(path); ok {
		switch field {
		case "metadata.labels":
			return pod.Labels[key], nil
		case "metadata.annotations":
			return pod.Annotations[key], nil
		}
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	// The plural fields list every IP family, comma-separated; a node
	// and a pod of mkube have one IPv4 address each.
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	}
	return "", fmt.Errorf("field label not supported: %s", path)
}

// subscripted splits "metadata.labels['app']" into its field and key.
func subscripted(path string) (field, key string, ok bool) {
	field, rest, ok := strings.Cut(path, "['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", "", false
	}
	return field, strings.TrimSuffix(rest, "']"), true
}

// resourceField is a resourceFieldRef's value (the downward API's
// ExtractContainerResourceValue): a request or limit of the container
// sel names (c itself by default), in units of sel's divisor (default 1),
// rounded up. A cpu, memory or ephemeral-storage limit the container does
// not set is the node's allocatable, the most it may use (the kubelet's
// defaultPodLimitsForDownwardAPI); a request it does not set is 0.
//
//	requests.cpu 250m, divisor 1m                   = 250
//	requests.cpu 250m, divisor 1                    = 1 (rounded up)
//	limits.memory unset on an 8Gi node, divisor 1Mi = 8192
func resourceField(pod *corev1.Pod, c corev1.Container, sel *corev1.ResourceFieldSelector, allocatable corev1.ResourceList) (string, error) {
	if sel.ContainerName != "" && sel.ContainerName != c.Name {
		var ok bool
		if c, ok = containerNamed(pod, sel.ContainerName); !ok { // volumesources.go
			return "", fmt.Errorf("container %s not found", sel.ContainerName)
		}
	}
	kind, name, _ := strings.Cut(sel.Resource, ".")
	res := corev1.ResourceName(name)
	defaulted := res == corev1.ResourceCPU || res == corev1.ResourceMemory || res == corev1.ResourceEphemeralStorage
	if !defaulted && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
		return "", fmt.Errorf("unsupported container resource : %s", sel.Resource)
	}
	var q resource.Quantity
	switch kind {
	case "requests":
		q = c.Resources.Requests[res]
	case "limits":
		limit, set := c.Resources.Limits[res]
		if !set && defaulted {
			limit = allocatable[res]
		}
		q = limit
	default:
		return "", fmt.Errorf("unsupported container resource : %s", sel.Resource)
	}
	divisor := sel.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	// cpu in millicores, so that 250m divides by 1m; the others in units.
	n, d := q.Value(), divisor.Value()
	if res == corev1.ResourceCPU {
		n, d = q.MilliValue(), divisor.MilliValue()
	}
	if d <= 0 {
		return "", fmt.Errorf("invalid divisor %s for %s", divisor.String(), sel.Resource)
	}
	return strconv.FormatInt((n+d-1)/d, 10), nil
}
