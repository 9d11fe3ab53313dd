package volumeplugin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// files lists the files under root, relative, sorted.
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func write(t *testing.T, root string, rel ...string) {
	t.Helper()
	for _, r := range rel {
		p := filepath.Join(root, filepath.FromSlash(r))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func onNode(node string) *corev1.VolumeNodeAffinity {
	return &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}}
}

func TestRecycleScrubsTheVolumesDirectoriesAndNothingElse(t *testing.T) {
	everywhere := []string{"nodes/node01/data/pv/a", "nodes/node01/data/pv/sub/b", "nodes/node02/data/pv/c", "nodes/node01/other/keep", "nfs/nfs1/exports/pv/d", "nfs/nfs1/exports/keep"}
	tests := []struct {
		name    string
		source  corev1.PersistentVolumeSource
		node    string // the volume's node affinity, if any
		left    []string
		wantErr string // "" for none
	}{
		{"a hostPath volume on one node is scrubbed there only",
			corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv"}}, "node01",
			[]string{"nfs/nfs1/exports/keep", "nfs/nfs1/exports/pv/d", "nodes/node01/other/keep", "nodes/node02/data/pv/c"}, ""},
		{"a hostPath volume with no node is scrubbed on every node",
			corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv"}}, "",
			[]string{"nfs/nfs1/exports/keep", "nfs/nfs1/exports/pv/d", "nodes/node01/other/keep"}, ""},
		{"an nfs volume is scrubbed on its server",
			corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports/pv"}}, "",
			[]string{"nfs/nfs1/exports/keep", "nodes/node01/data/pv/a", "nodes/node01/data/pv/sub/b", "nodes/node01/other/keep", "nodes/node02/data/pv/c"}, ""},
		{"an nfs server that climbs out of the NFS root is refused",
			corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "..", Path: "/nodes"}}, "",
			everywhere, `".." is not an NFS server name`},
		{"a csi volume has no recycler",
			corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "hostpath.csi.k8s.io", VolumeHandle: "vol-1"}}, "",
			everywhere, ErrNoRecycler.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, everywhere...)
			h := Host{NodeRoot: filepath.Join(root, "nodes"), NFSRoot: filepath.Join(root, "nfs")}
			pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: tc.source}}
			if tc.node != "" {
				pv.Spec.NodeAffinity = onNode(tc.node)
			}
			if err := h.Recycle(pv); (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			slices.Sort(tc.left)
			if got := files(t, root); !slices.Equal(got, tc.left) {
				t.Fatalf("left\n  %v\nwant\n  %v", got, tc.left)
			}
		})
	}
}

func TestTheDeleterOfAVolumeIsItsProvisionersOrItsSources(t *testing.T) {
	tests := []struct {
		name          string
		source        corev1.PersistentVolumeSource
		provisionedBy string
		wantPlugin    string
		wantErr       string // of finding the deleter, or else of deleting
		external      bool
		gone          string // the file deleting removes
	}{
		{"a provisioned volume is deleted by mkube.io/hostpath",
			corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: ProvisionedServer, Path: "/pvc-1"}},
			ProvisionerName, ProvisionerName, "", false, "nfs/mkube-provisioner/pvc-1/b"},
		{"a csi volume of another driver is that driver's to delete",
			corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}},
			"ebs.csi.aws.com", "", "", true, ""},
		{"a static nfs volume has no deleter",
			corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs1", Path: "/exports/pv"}},
			"", "", "no deletable volume plugin matched", false, ""},
		{"a hostPath volume under /tmp is deleted",
			corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp/pv"}},
			"", HostPathPluginName, "", false, "nodes/node01/tmp/pv/a"},
		{"a hostPath volume elsewhere is not",
			corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data/pv"}},
			"", HostPathPluginName, "host_path deleter only supports /tmp/.+ but received provided /data/pv", false, ""},
		{"a volume said to be provisioned that is not the provisioner's directory is refused",
			corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: ProvisionedServer, Path: "/"}},
			ProvisionerName, ProvisionerName, `volume "pv" is not a directory mkube.io/hostpath provisioned`, false, ""},
		{"a static volume on the provisioner's server is not the provisioner's to delete",
			corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: ProvisionedServer, Path: "/pvc-1"}},
			"", "", "no deletable volume plugin matched", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "nodes/node01/tmp/pv/a", "nfs/mkube-provisioner/pvc-1/b", "nodes/node01/data/pv/c")
			h := Host{NodeRoot: filepath.Join(root, "nodes"), NFSRoot: filepath.Join(root, "nfs")}
			pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: tc.source}}
			plugin, del, err := h.Deleter(pv, tc.provisionedBy)
			if err == nil && del != nil {
				err = del()
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Fatalf("got error %v, want %q", err, tc.wantErr)
			}
			if plugin != tc.wantPlugin || (del == nil && err == nil) != tc.external {
				t.Fatalf("plugin %q (external: %v), want %q (external: %v)", plugin, del == nil, tc.wantPlugin, tc.external)
			}
			left := files(t, root)
			if tc.gone != "" && slices.Contains(left, tc.gone) {
				t.Fatalf("%s is still there", tc.gone)
			}
			want := 3
			if tc.gone != "" {
				want = 2
			}
			if len(left) != want {
				t.Fatalf("left %v: deleting took more than the volume", left)
			}
		})
	}
}

func TestTheProvisionerMakesADirectoryUnderTheNFSRootAndAnNFSVolumeForIt(t *testing.T) {
	root := t.TempDir()
	h := Host{NFSRoot: root}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "1234"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("3Gi")}}}}
	pv, err := h.Provision(Options{PVName: "pvc-1234", Claim: claim, ReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
		MountOptions: []string{"noatime"}})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "mkube-provisioner", "pvc-1234")); err != nil || !fi.IsDir() {
		t.Fatalf("no directory: %v", err)
	}
	q := pv.Spec.Capacity[corev1.ResourceStorage]
	if pv.Name != "pvc-1234" || q.String() != "3Gi" || pv.Spec.NFS.Server != ProvisionedServer || pv.Spec.NFS.Path != "/pvc-1234" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		!slices.Equal(pv.Spec.MountOptions, []string{"noatime"}) || pv.Spec.NodeAffinity != nil {
		t.Fatalf("volume %+v", pv.Spec)
	}
	claim.Spec.Selector = &metav1.LabelSelector{}
	if _, err := h.Provision(Options{PVName: "pvc-1234", Claim: claim}); err == nil || err.Error() != "claim Selector is not supported" {
		t.Fatalf("a claim with a selector: %v", err)
	}
}

func TestForAWaitForFirstConsumerClaimTheProvisionerMakesAHostPathVolumeOnTheChosenNodePinnedThere(t *testing.T) {
	root := t.TempDir()
	h := Host{NodeRoot: root}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default", UID: "1234"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	pv, err := h.Provision(Options{PVName: "pvc-1234", Claim: claim, ReclaimPolicy: corev1.PersistentVolumeReclaimDelete, Node: "node02"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "node02", "var", "lib", "mkube-provisioner", "pvc-1234")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("no directory on node02's disk: %v", err)
	}
	if pv.Spec.HostPath == nil || pv.Spec.HostPath.Path != "/var/lib/mkube-provisioner/pvc-1234" || pv.Spec.NFS != nil {
		t.Fatalf("source %+v", pv.Spec.PersistentVolumeSource)
	}
	if nodes := affinityNodes(pv); !slices.Equal(nodes, []string{"node02"}) {
		t.Fatalf("pinned to %v, want [node02]", nodes)
	}
	_, del, err := h.Deleter(pv, ProvisionerName)
	if err != nil || del == nil {
		t.Fatalf("deleter: %v", err)
	}
	if err := del(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the directory outlived its volume: %v", err)
	}
	if _, err := h.Provision(Options{PVName: "pvc-1", Claim: claim, Node: "../etc"}); err == nil {
		t.Fatal("a node name reaching outside the node root was accepted")
	}
}
