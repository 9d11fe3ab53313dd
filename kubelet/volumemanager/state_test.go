package volumemanager

import "testing"

// A pod's volumes count as set up from their first successful setup on,
// its Multi-Attach error is reported once, and Forget starts it over.
func TestStateRemembersSetupsAndReportsOnce(t *testing.T) {
	var s State
	if s.SetUp("u1", false) || s.SetUp("u1", true) {
		t.Fatal("set up before its first successful setup")
	}
	if !s.SetUp("u1", false) {
		t.Error("a failed refresh forgot the earlier setup")
	}
	if !s.ReportMultiAttach("u1") || s.ReportMultiAttach("u1") || !s.MultiAttachReported("u1") {
		t.Error("the Multi-Attach error is not reported exactly once")
	}
	s.Forget("u1")
	if s.SetUp("u1", false) || s.MultiAttachReported("u1") {
		t.Error("Forget kept the pod")
	}
}
