package kuberuntime

import (
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	kubecontainer "github.com/mkube/mkube/kubelet/container"
)

// What the kubelet asks its runtime for, in CRI's terms: a
// PodSandboxConfig per pod, a ContainerConfig per container instance.

// PodLogDirectory is the pod's log directory (the kubelet's
// BuildPodLogsDirectory).
func PodLogDirectory(root string, pod *corev1.Pod) string {
	return filepath.Join(root, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

// Configs builds the CRI configs of a node's sandboxes and containers.
// The functions are the kubelet's own (package kubelet's criConfigs
// fills them in).
type Configs struct {
	// PodLogsDir is where the runtime writes the containers' logs
	// (Config.PodLogsDir).
	PodLogsDir string
	// Hostname is the pod's hostname (the kubelet's etchosts.go).
	Hostname func(*corev1.Pod) string
	// ExpandArgs expands $(VAR) in a command or its args (package
	// envvars' ExpandArgs).
	ExpandArgs func(args []string, env []corev1.EnvVar) []string
	// VolumeMounts are the mounts of c's volumes (the kubelet's
	// volumes.go).
	VolumeMounts func(pod *corev1.Pod, c corev1.Container, env []corev1.EnvVar) []*runtimeapi.Mount
}

// SandboxConfig is the kubelet's generatePodSandboxConfig, for the
// attempt-th sandbox of pod.
func (b Configs) SandboxConfig(pod *corev1.Pod, attempt uint32) *runtimeapi.PodSandboxConfig {
	// A pod on the node's network shares the node's UTS namespace, so
	// its hostname is the node's.
	hostname := b.Hostname(pod) // the kubelet's etchosts.go
	if pod.Spec.HostNetwork {
		hostname = pod.Spec.NodeName
	}
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: pod.Name, Namespace: pod.Namespace, Uid: string(pod.UID), Attempt: attempt},
		Hostname:     hostname,
		LogDirectory: PodLogDirectory(b.PodLogsDir, pod),
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

// ContainerConfig is the kubelet's generateContainerConfig for the
// attempt-th instance of c, from the image imageRef that the pull (or
// ImageStatus) named, with the environment env (package envvars),
// against which $(VAR) in command and args is expanded. The user's spelling of
// the image goes along as user_specified_image: the pod status reports
// the image as the spec names it.
func (b Configs) ContainerConfig(pod *corev1.Pod, c corev1.Container, attempt uint32, imageRef string, env []corev1.EnvVar) *runtimeapi.ContainerConfig {
	labels := map[string]string{LabelPodName: pod.Name, LabelPodNamespace: pod.Namespace,
		LabelPodUID: string(pod.UID), LabelContainerName: c.Name, LabelNodeName: pod.Spec.NodeName}
	envs := make([]*runtimeapi.KeyValue, 0, len(env))
	for _, e := range env {
		envs = append(envs, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(e.Value)})
	}
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: c.Name, Attempt: attempt},
		Image:       &runtimeapi.ImageSpec{Image: imageRef, UserSpecifiedImage: c.Image},
		Command:     b.ExpandArgs(c.Command, env),
		Args:        b.ExpandArgs(c.Args, env),
		WorkingDir:  c.WorkingDir,
		Envs:        envs,
		Mounts:      b.VolumeMounts(pod, c, env), // the kubelet's volumes.go
		Labels:      labels,
		Annotations: containerAnnotations(c), // terminationmessage.go
		Linux: &runtimeapi.LinuxContainerConfig{Resources: ContainerResources(c),
			SecurityContext: containerSecurityContext(pod, c)}, // securitycontext.go
		// Relative to the sandbox's log directory: one file per attempt.
		LogPath: fmt.Sprintf("%s/%d.log", c.Name, attempt),
		// What kubectl attach and run -it connect to (cri/attach.go).
		Stdin: c.Stdin, StdinOnce: c.StdinOnce, Tty: c.TTY,
	}
}

// KubeletMounts are the files the kubelet itself binds into c beside its
// volumes, in the order of its makeMounts: the pod's /etc/hosts
// (the kubelet's etchosts.go), then the file of c's termination message
// (terminationmessage.go).
func (m *Manager) KubeletMounts(pod *corev1.Pod, sb *kubecontainer.PodSandbox, c corev1.Container) ([]*runtimeapi.Mount, error) {
	var out []*runtimeapi.Mount
	hosts, err := m.HostsMount(pod, sb, c)
	if err != nil {
		return nil, err
	}
	term, err := m.terminationLogMount(pod, c)
	if err != nil {
		return nil, err
	}
	for _, mount := range []*runtimeapi.Mount{hosts, term} {
		if mount != nil {
			out = append(out, mount)
		}
	}
	return out, nil
}

// ContainerResources is how the kubelet turns requests and limits into
// cgroup settings (kuberuntime's generateLinuxContainerResources): the
// memory limit is what the runtime OOM-kills above; cpu requests become
// shares (1024 per CPU, at least 2) and cpu limits a CFS quota per 100 ms
// period.
func ContainerResources(c corev1.Container) *runtimeapi.LinuxContainerResources {
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
