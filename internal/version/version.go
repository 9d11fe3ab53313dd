package version

import apimachineryversion "k8s.io/apimachinery/pkg/version"

// The Kubernetes version mkube speaks. "-mkube" marks it as not
// Kubernetes' own build, as a distribution's suffix does ("v1.32.0-eks-…").
const (
	Major      = "1"
	Minor      = "32"
	GitVersion = "v" + Major + "." + Minor + ".0-mkube"
	// MajorMinor is the short form user agents carry: kube-probe/1.32.
	MajorMinor = Major + "." + Minor
)

// Runtime is the version of mkube's container runtime, which it gives in
// the CRI's Version call (containerd would say "1.7.24"); the kubelet
// shows it as containerRuntimeVersion "mkube://v0.1.0".
const Runtime = "v0.1.0"

// Info is what the API server's /version answers, in the shape of
// kube-apiserver's. There is no build to describe, so the build fields are
// fixed rather than stamped by the linker.
func Info() apimachineryversion.Info {
	return apimachineryversion.Info{Major: Major, Minor: Minor, GitVersion: GitVersion, GitCommit: "", GitTreeState: "clean",
		BuildDate: "2026-11-30T00:00:00Z", GoVersion: "go1.26", Compiler: "gc", Platform: "linux/amd64"}
}
