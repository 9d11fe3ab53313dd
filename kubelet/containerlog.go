package kubelet

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mkube/mkube/kubelet/fakeruntime"
)

// writeStartLog is what a fake container prints when it starts: where it
// came from and what it would see, so `kubectl logs` teaches how the pod
// spec becomes a process — the command, the environment (including values
// taken from ConfigMaps and Secrets) and the volumes mounted into it.
func (k *Kubelet) writeStartLog(pod *corev1.Pod, c corev1.Container, ctr fakeruntime.Container) {
	w := func(format string, args ...any) { k.containerRuntime.WriteLog(ctr.ID, fmt.Sprintf(format, args...)) }
	w("mkube fake container %q of pod %s/%s on node %s (attempt %d)", c.Name, pod.Namespace, pod.Name, k.cfg.NodeName, ctr.Attempt)
	w("image: %s (imageID %s)", c.Image, ctr.ImageID)
	if len(c.Command)+len(c.Args) == 0 {
		w("command: the image's default entrypoint")
	} else {
		w("command: %s", strings.Join(append(append([]string{}, c.Command...), c.Args...), " "))
	}
	if c.WorkingDir != "" {
		w("working directory: %s", c.WorkingDir)
	}
	env := containerEnv(pod, c)
	w("environment (%d variables):", len(env))
	for _, e := range env {
		w("  %s", e)
	}
	for _, m := range c.VolumeMounts {
		ro := ""
		if m.ReadOnly {
			ro = " (read-only)"
		}
		w("mount: %s <- volume %q%s%s", m.MountPath, m.Name, volumeSource(pod, m.Name), ro)
	}
	for _, p := range c.Ports {
		w("listening on %d/%s", p.ContainerPort, p.Protocol)
	}
	w("started; running until the pod is deleted")
}

// containerEnv lists the variables the container would see: the ones the
// spec sets (values from ConfigMaps and Secrets named, not read), those of
// envFrom sources, and the kubelet's own (HOSTNAME, KUBERNETES_*).
func containerEnv(pod *corev1.Pod, c corev1.Container) []string {
	var out []string
	for _, src := range c.EnvFrom {
		switch {
		case src.ConfigMapRef != nil:
			out = append(out, fmt.Sprintf("%s* <- every key of ConfigMap %s", src.Prefix, src.ConfigMapRef.Name))
		case src.SecretRef != nil:
			out = append(out, fmt.Sprintf("%s* <- every key of Secret %s", src.Prefix, src.SecretRef.Name))
		}
	}
	for _, e := range c.Env {
		switch vf := e.ValueFrom; {
		case vf == nil:
			out = append(out, e.Name+"="+e.Value)
		case vf.ConfigMapKeyRef != nil:
			out = append(out, fmt.Sprintf("%s <- ConfigMap %s key %s", e.Name, vf.ConfigMapKeyRef.Name, vf.ConfigMapKeyRef.Key))
		case vf.SecretKeyRef != nil:
			out = append(out, fmt.Sprintf("%s <- Secret %s key %s", e.Name, vf.SecretKeyRef.Name, vf.SecretKeyRef.Key))
		case vf.FieldRef != nil:
			out = append(out, fmt.Sprintf("%s <- field %s", e.Name, vf.FieldRef.FieldPath))
		case vf.ResourceFieldRef != nil:
			out = append(out, fmt.Sprintf("%s <- resource %s", e.Name, vf.ResourceFieldRef.Resource))
		}
	}
	out = append(out, "HOSTNAME="+pod.Name)
	sort.Strings(out[len(out)-1:])
	return out
}

func volumeSource(pod *corev1.Pod, name string) string {
	for _, v := range pod.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch s := v.VolumeSource; {
		case s.EmptyDir != nil:
			return " (emptyDir)"
		case s.HostPath != nil:
			return " (hostPath " + s.HostPath.Path + ")"
		case s.ConfigMap != nil:
			return " (ConfigMap " + s.ConfigMap.Name + ")"
		case s.Secret != nil:
			return " (Secret " + s.Secret.SecretName + ")"
		case s.PersistentVolumeClaim != nil:
			return " (PersistentVolumeClaim " + s.PersistentVolumeClaim.ClaimName + ")"
		case s.NFS != nil:
			return " (nfs " + s.NFS.Server + ":" + s.NFS.Path + ")"
		}
	}
	return ""
}
