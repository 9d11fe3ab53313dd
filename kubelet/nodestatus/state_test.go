package nodestatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
)

// With a report frequency, a status is worth writing when it changed or
// the last one is that old; the stats are read when a container changed
// or they are that old, and again after a failed reading.
func TestStateWritesAndReadsOnlyWhenDue(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC))
	s := NewState(clk, 5*time.Minute)
	images := []corev1.ContainerImage{{Names: []string{"nginx"}, SizeBytes: 1}}
	s.Reported(images, "", false)
	if s.Changed(images, "", false) {
		t.Error("an unchanged status is due at once")
	}
	if !s.Changed(nil, "", false) || !s.Changed(images, "down", false) || !s.Changed(images, "", true) {
		t.Error("a changed status is not due")
	}
	clk.Step(5 * time.Minute)
	if !s.Changed(images, "", false) {
		t.Error("a status reportFrequency old is not due")
	}

	if !s.StatsDue() {
		t.Error("stats never read are not due")
	}
	used := int64(42)
	if got := s.RuntimeAnswered(&used); got != 42 {
		t.Errorf("memory used = %d, want 42", got)
	}
	if s.StatsDue() {
		t.Error("stats just read are due again")
	}
	s.ContainersChanged()
	if !s.StatsDue() {
		t.Error("stats are not due after a container changed")
	}
	if down, _ := s.RuntimeFailed(true, time.Minute); down {
		t.Error("a runtime that just answered is down")
	}
	if !s.StatsDue() {
		t.Error("stats whose reading failed are not due again")
	}
	clk.Step(time.Minute)
	if down, last := s.RuntimeFailed(false, time.Minute); !down || len(last) != 1 {
		t.Errorf("down = %v with images %v, want down with the images last written", down, last)
	}
	if got := s.RuntimeAnswered(nil); got != 42 {
		t.Errorf("memory used without a reading = %d, want the last, 42", got)
	}
}
