package kuberuntime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/kubelet/volumemanager"
)

// Termination messages: how a container says why it ended. The kubelet
// gives each container instance an empty file of the node, bind-mounted
// at its terminationMessagePath (default /dev/termination-log); once the
// container has exited it reads the file into the status'
// state.terminated.message, which `kubectl describe pod` shows as
// "Message". With terminationMessagePolicy FallbackToLogsOnError, a
// container that failed (exit code not 0) and wrote nothing there gets
// the end of its log instead (kuberuntime's getTerminationMessage and
// readLastStringFromContainerLogs).

// The limits of a termination message (pkg/kubelet/container): the file
// is read up to its last 4 KiB; the log fallback takes the last 80 lines,
// of which the last 2 KiB. A status is stored in etcd with the pod, and
// all of a pod's messages together must stay small (the API server
// refuses more than 12 KiB).
const (
	maxTerminationMessageLength    = 4 * 1024
	maxTerminationMessageLogLines  = 80
	maxTerminationMessageLogLength = 2 * 1024
)

// The annotations the kubelet puts on a container so that reading its
// status later needs nothing but the runtime's answer (kuberuntime's
// labels.go).
const (
	annotationTerminationMessagePath   = "io.kubernetes.container.terminationMessagePath"
	annotationTerminationMessagePolicy = "io.kubernetes.container.terminationMessagePolicy"
)

// reasonContainerCannotRun is the exit reason of a container that never
// ran, whose logs are not worth reading.
const reasonContainerCannotRun = "ContainerCannotRun"

// terminationLogMount makes the file of c's next instance and the mount
// that shows it at c's terminationMessagePath (kuberuntime's makeMounts):
// /var/lib/kubelet/pods/<uid>/containers/<name>/<random>, one per
// instance, mode 0666 so that any user the container runs as can write
// it. Without nodes' disks (NodeRoot "") there is no file and no message.
func (m *Manager) terminationLogMount(pod *corev1.Pod, c corev1.Container) (*runtimeapi.Mount, error) {
	if m.NodeRoot == "" || c.TerminationMessagePath == "" {
		return nil, nil
	}
	nodePath := path.Join(volumemanager.PodDir(pod.UID), "containers", c.Name, fmt.Sprintf("%08x", rand.Uint32()))
	file := m.OnDisk(nodePath)
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		return nil, fmt.Errorf("create termination log: %w", err)
	}
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		return nil, fmt.Errorf("create termination log: %w", err)
	}
	if err := os.Chmod(file, 0o666); err != nil { // past the kubelet's umask
		return nil, fmt.Errorf("create termination log: %w", err)
	}
	return &runtimeapi.Mount{ContainerPath: c.TerminationMessagePath, HostPath: nodePath}, nil
}

// containerAnnotations are the container config's annotations: where its
// termination message is, and by which policy it is read.
func containerAnnotations(c corev1.Container) map[string]string {
	return map[string]string{
		annotationTerminationMessagePath:   c.TerminationMessagePath,
		annotationTerminationMessagePolicy: string(c.TerminationMessagePolicy),
	}
}

// terminationMessage is the message of an exited container st (its
// node's disk at nodeDisk): the runtime's own message, then, after ": ",
// what the container wrote at its terminationMessagePath, or the end of
// its log if the policy falls back to it (toKubeContainerStatus).
func terminationMessage(st *runtimeapi.ContainerStatus, nodeDisk string) string {
	msg := st.GetMessage()
	policy := corev1.TerminationMessagePolicy(st.GetAnnotations()[annotationTerminationMessagePolicy])
	// A container that could not even start has no logs to fall back on.
	fallback := policy == corev1.TerminationMessageFallbackToLogsOnError && st.GetExitCode() != 0 && st.GetReason() != reasonContainerCannotRun
	written, checkLogs := readTerminationLog(st, nodeDisk, fallback)
	if checkLogs {
		written = lastLogString(st.GetLogPath())
	}
	if written != "" {
		if msg != "" {
			msg += ": "
		}
		msg += written
	}
	return msg
}

// readTerminationLog reads the file mounted at the container's
// terminationMessagePath, up to its last maxTerminationMessageLength
// bytes; checkLogs says to read the log instead: fallback is set and the
// file is empty or missing.
func readTerminationLog(st *runtimeapi.ContainerStatus, nodeDisk string, fallback bool) (message string, checkLogs bool) {
	at := st.GetAnnotations()[annotationTerminationMessagePath]
	if at == "" || nodeDisk == "" {
		return "", fallback
	}
	for _, m := range st.GetMounts() {
		if m.GetContainerPath() != at {
			continue
		}
		file := filepath.Join(nodeDisk, filepath.FromSlash(path.Clean("/"+m.GetHostPath())))
		data, _, err := readTail(file, maxTerminationMessageLength)
		if errors.Is(err, os.ErrNotExist) {
			return "", fallback
		}
		if err != nil {
			return fmt.Sprintf("Error on reading termination log %s: %v", file, err), false
		}
		return string(data), fallback && len(data) == 0
	}
	return "", fallback
}

// readTail reads at most the last max bytes of the file; cut says the
// file was longer (what was read may begin within a line).
func readTail(file string, max int64) (data []byte, cut bool, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if size := fi.Size(); size > max {
		if _, err := f.Seek(size-max, io.SeekStart); err != nil {
			return nil, false, err
		}
		cut = true
	}
	data, err = io.ReadAll(io.LimitReader(f, max))
	return data, cut, err
}

// lastLogString is the end of a container's CRI log as `kubectl logs
// --tail=80` prints it, of which the last maxTerminationMessageLogLength
// bytes: a full (F) line ends in "\n", a partial (P) one does not, so a
// last `echo -n DONE` is "DONE".
func lastLogString(logPath string) string {
	if logPath == "" {
		return ""
	}
	// 80 lines of at most 16 KiB each (containerd's max_container_log_line_size).
	data, cut, err := readTail(logPath, maxTerminationMessageLogLines*16*1024)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return ""
		}
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	if cut {
		lines = lines[1:] // the rest of a line that began before
	}
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if len(lines) > maxTerminationMessageLogLines {
		lines = lines[len(lines)-maxTerminationMessageLogLines:]
	}
	var out bytes.Buffer
	for _, line := range lines {
		// <time> <stream> <tag> <text>
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 4)
		if len(f) < 3 {
			continue // not in the format
		}
		text := ""
		if len(f) == 4 {
			text = f[3]
		}
		out.WriteString(text)
		if runtimeapi.LogTag(f[2]) != runtimeapi.LogTagPartial {
			out.WriteByte('\n')
		}
	}
	s := out.String()
	if len(s) > maxTerminationMessageLogLength {
		s = s[len(s)-maxTerminationMessageLogLength:]
	}
	return s
}
