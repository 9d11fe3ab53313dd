// Package volumeplugin is the storage side of the PersistentVolume
// controller, after kube-controller-manager's in-tree volume plugins
// (pkg/volume/hostpath, pkg/volume/nfs) and a CSI driver's provisioner:
// for each kind of volume, where its data is, and whether it can be
// recycled, deleted or provisioned.
//
// mkube's disks and NFS servers are directories of the machine (see the
// kubelet's --node-root and --nfs-root). A volume's data is at
//
//	hostPath  <node-root>/<node>/<path>, on each node its nodeAffinity names
//	          (kubernetes.io/hostname In [...]); without one, on every node
//	          (each directory of <node-root>): Kubernetes' hostPath volumes
//	          are single-node test volumes, so a pod gets whatever the node
//	          it lands on has at that path, and reclaiming one reclaims them all
//	local     <node-root>/<node>/<path>, on the node of its nodeAffinity
//	nfs       <nfs-root>/<server>/<path>, the same for every node
//
// What this package provisions (mkube.io/hostpath) is, for a claim bound
// at once, an nfs volume of the reserved server "mkube-provisioner", path
// /pvc-<claim uid>: a directory under the NFS root,
// <nfs-root>/mkube-provisioner/pvc-<uid>, which every node sees, so the
// data follows its pod to any node, and a kubelet mounts it as it mounts
// any nfs volume. For a WaitForFirstConsumer claim it is a hostPath volume
// /var/lib/mkube-provisioner/pvc-<uid> on the disk of the node the
// scheduler chose, pinned there by node affinity. That is also where a
// kubelet finds a claim's data: the claim names its volume
// (spec.volumeName), the volume's source says which of the above it is.
//
// Where things live:
//
//	file             what it holds
//	volumeplugin.go  Host, where the storage is; the directories of a volume's data; Recycle, and Deleter per source
//	provision.go     Provision: mkube.io/hostpath, for a claim bound at once or on the node the scheduler chose
package volumeplugin

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The names of the plugins, as the controller's events and the
// pv.kubernetes.io/provisioned-by annotation give them.
const (
	HostPathPluginName = "kubernetes.io/host-path"
	// ProvisionerName is mkube's provisioner.
	ProvisionerName = "mkube.io/hostpath"
	// ProvisionedServer is the NFS server its volumes are on: the
	// directory <nfs-root>/mkube-provisioner.
	ProvisionedServer = "mkube-provisioner"
)

// Kubernetes' VolumePluginMgr's words for a volume no plugin handles.
var (
	ErrNoRecycler = errors.New("no recyclable volume plugin matched")
	ErrNoDeleter  = errors.New("no deletable volume plugin matched")
)

// Host is where the storage is on this machine: the kubelets'
// --node-root and --nfs-root. An empty one cannot be reached.
type Host struct {
	NodeRoot, NFSRoot string
}

// dirs returns the directories that hold pv's data, for the sources this
// package knows (none for the others).
func (h Host) dirs(pv *corev1.PersistentVolume) ([]string, error) {
	switch s := pv.Spec.PersistentVolumeSource; {
	case s.HostPath != nil:
		return h.onNodes(pv, s.HostPath.Path)
	case s.Local != nil:
		return h.onNodes(pv, s.Local.Path)
	case s.NFS != nil:
		return h.onNFS(s.NFS.Server, s.NFS.Path)
	}
	return nil, nil
}

// isDirName: a name that is one directory of a root (a node, an NFS
// server), so that no volume reaches outside the roots.
func isDirName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, `/\`)
}

// onNodes is a node path on the nodes pv's affinity names, or on all.
func (h Host) onNodes(pv *corev1.PersistentVolume, p string) ([]string, error) {
	if h.NodeRoot == "" {
		return nil, errors.New("this controller manager has no --node-root to reach the nodes' disks")
	}
	nodes := affinityNodes(pv)
	if len(nodes) == 0 {
		entries, err := os.ReadDir(h.NodeRoot)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				nodes = append(nodes, e.Name())
			}
		}
	}
	var out []string
	for _, n := range nodes {
		if !isDirName(n) {
			return nil, fmt.Errorf("%q is not a node name", n)
		}
		out = append(out, filepath.Join(h.NodeRoot, n, filepath.FromSlash(path.Clean("/"+p))))
	}
	return out, nil
}

// affinityNodes are the node names pv's required node affinity lists.
func affinityNodes(pv *corev1.PersistentVolume) []string {
	var out []string
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, r := range term.MatchExpressions {
			if r.Key == corev1.LabelHostname && r.Operator == corev1.NodeSelectorOpIn {
				out = append(out, r.Values...)
			}
		}
	}
	return out
}

func (h Host) onNFS(server, p string) ([]string, error) {
	if h.NFSRoot == "" {
		return nil, errors.New("this controller manager has no --nfs-root to reach the NFS servers")
	}
	if !isDirName(server) {
		return nil, fmt.Errorf("%q is not an NFS server name", server)
	}
	return []string{filepath.Join(h.NFSRoot, server, filepath.FromSlash(path.Clean("/"+p)))}, nil
}

// provisioned is the directory of a volume this package provisioned; a
// volume that says it was but whose source is not such a directory is
// refused, so that a hand-made volume cannot have, say, the whole NFS
// root deleted.
func (h Host) provisioned(pv *corev1.PersistentVolume) ([]string, error) {
	if hp := pv.Spec.HostPath; hp != nil {
		nodes := affinityNodes(pv)
		if len(nodes) != 1 || path.Dir(path.Clean(hp.Path)) != ProvisionedNodeDir {
			return nil, fmt.Errorf("volume %q is not a directory %s provisioned", pv.Name, ProvisionerName)
		}
		return h.onNodes(pv, hp.Path)
	}
	n := pv.Spec.NFS
	if n == nil || n.Server != ProvisionedServer || path.Dir(path.Clean("/"+n.Path)) != "/" || path.Clean("/"+n.Path) == "/" {
		return nil, fmt.Errorf("volume %q is not a directory %s provisioned", pv.Name, ProvisionerName)
	}
	return h.onNFS(n.Server, n.Path)
}

// Recycle scrubs pv for its next claim: what its directories hold is
// deleted, the directories stay ("rm -rf <volume>/*", what Kubernetes'
// recycler pod runs). Only hostPath and nfs volumes can be recycled.
func (h Host) Recycle(pv *corev1.PersistentVolume) error {
	if pv.Spec.HostPath == nil && pv.Spec.NFS == nil {
		return ErrNoRecycler
	}
	dirs, err := h.dirs(pv)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue // nothing there to scrub
		}
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// hostPathDeletable is the in-tree hostPath deleter's rule: it deletes
// only what could be scratch space.
var hostPathDeletable = regexp.MustCompile("/tmp/.+")

// Deleter finds what deletes pv's storage, as kube-controller-manager's
// findDeletablePlugin does: the plugin named by provisioned-by, or else
// the one for its source. A nil func and no error means the volume is an
// external provisioner's to delete (a CSI volume of another driver); the
// controller leaves it alone. name is the plugin's name.
func (h Host) Deleter(pv *corev1.PersistentVolume, provisionedBy string) (name string, del func() error, err error) {
	switch {
	case provisionedBy == ProvisionerName:
		return ProvisionerName, func() error {
			dirs, err := h.provisioned(pv)
			if err != nil {
				return err
			}
			return os.RemoveAll(dirs[0])
		}, nil
	case provisionedBy != "" && !isInTree(provisionedBy), pv.Spec.CSI != nil:
		return "", nil, nil
	case pv.Spec.HostPath != nil:
		return HostPathPluginName, func() error {
			if !hostPathDeletable.MatchString(pv.Spec.HostPath.Path) {
				return fmt.Errorf("host_path deleter only supports /tmp/.+ but received provided %s", pv.Spec.HostPath.Path)
			}
			dirs, err := h.dirs(pv)
			for _, dir := range dirs {
				if err == nil {
					err = os.RemoveAll(dir)
				}
			}
			return err
		}, nil
	}
	return "", nil, ErrNoDeleter
}

func isInTree(plugin string) bool { return strings.HasPrefix(plugin, "kubernetes.io/") }
