package version

import (
	"encoding/json"
	"testing"
)

func TestTheVersionStringsAgree(t *testing.T) {
	if GitVersion != "v1.32.0-mkube" || MajorMinor != "1.32" {
		t.Errorf("GitVersion %q, MajorMinor %q; want v1.32.0-mkube and 1.32", GitVersion, MajorMinor)
	}
	// /version's body, with the keys kubectl reads.
	body, err := json.Marshal(Info())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"major": "1", "minor": "32", "gitVersion": "v1.32.0-mkube", "gitCommit": "", "gitTreeState": "clean",
		"buildDate": "2026-11-30T00:00:00Z", "goVersion": "go1.26", "compiler": "gc", "platform": "linux/amd64"}
	if len(got) != len(want) {
		t.Errorf("/version = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("/version %s = %q, want %q", k, got[k], v)
		}
	}
}
