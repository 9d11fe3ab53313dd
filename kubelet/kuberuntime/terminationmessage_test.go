package kuberuntime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestTerminationMessages(t *testing.T) {
	disk := t.TempDir()
	const termFile = "/var/lib/kubelet/pods/uid-1/containers/c/0000beef"
	writeTerm := func(t *testing.T, content string) {
		t.Helper()
		p := filepath.Join(disk, termFile)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(logPath, []byte("2026-12-01T10:00:00Z stdout F first line\n"+
		"2026-12-01T10:00:01Z stderr F oops\n"+
		"2026-12-01T10:00:01Z stdout P DONE\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	status := func(policy corev1.TerminationMessagePolicy, exitCode int32) *runtimeapi.ContainerStatus {
		return &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: exitCode, LogPath: logPath,
			Annotations: containerAnnotations(corev1.Container{TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: policy}),
			Mounts:      []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: termFile}}}
	}
	tests := []struct {
		name    string
		file    string
		status  *runtimeapi.ContainerStatus
		want    string
		noDisks bool
	}{
		{"the file's content is the message", "OK", status(corev1.TerminationMessageReadFile, 0), "OK", false},
		{"an empty file is no message, even for a failed container by policy File", "", status(corev1.TerminationMessageReadFile, 1), "", false},
		{"FallbackToLogsOnError prefers the file", "written", status(corev1.TerminationMessageFallbackToLogsOnError, 1), "written", false},
		{"FallbackToLogsOnError takes the log's end when a failed container wrote nothing, a P line without newline",
			"", status(corev1.TerminationMessageFallbackToLogsOnError, 1), "first line\noops\nDONE", false},
		{"a container that succeeded does not fall back on its log", "", status(corev1.TerminationMessageFallbackToLogsOnError, 0), "", false},
		{"only the last 4096 bytes of the file are read", strings.Repeat("a", 100) + strings.Repeat("b", 4096),
			status(corev1.TerminationMessageReadFile, 0), strings.Repeat("b", 4096), false},
		{"without nodes' disks, a failed container's FallbackToLogsOnError still reads its log",
			"ignored", status(corev1.TerminationMessageFallbackToLogsOnError, 2), "first line\noops\nDONE", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeTerm(t, tt.file)
			d := disk
			if tt.noDisks {
				d = ""
			}
			if got := terminationMessage(tt.status, d); got != tt.want {
				t.Errorf("terminationMessage = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("the runtime's own message comes first", func(t *testing.T) {
		writeTerm(t, "bye")
		st := status(corev1.TerminationMessageReadFile, 128)
		st.Message = "failed to start"
		if got := terminationMessage(st, disk); got != "failed to start: bye" {
			t.Errorf("terminationMessage = %q", got)
		}
	})
}

func TestTheLogFallbackIsTheLast80LinesAndLast2KiB(t *testing.T) {
	tests := []struct {
		name  string
		lines int
		width int
		want  func(s string) bool
	}{
		{"of 100 short lines, the last 80", 100, 1, func(s string) bool {
			return strings.HasPrefix(s, "line 21:") && strings.HasSuffix(s, "line 100:x\n") && strings.Count(s, "\n") == 80
		}},
		{"of long lines, the last 2048 bytes", 10, 500, func(s string) bool {
			return len(s) == maxTerminationMessageLogLength && strings.HasSuffix(s, strings.Repeat("x", 500)+"\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for i := 1; i <= tt.lines; i++ {
				fmt.Fprintf(&b, "2026-12-01T10:00:00Z stdout F line %d:%s\n", i, strings.Repeat("x", tt.width))
			}
			p := filepath.Join(t.TempDir(), "0.log")
			if err := os.WriteFile(p, []byte(b.String()), 0o640); err != nil {
				t.Fatal(err)
			}
			if got := lastLogString(p); !tt.want(got) {
				t.Errorf("lastLogString = %q", got)
			}
		})
	}
}
