// Package csitranslation is mkube's csi-translation-lib: it names the CSI
// driver that mkube's own provisioner stands for, so that the kubelet (in
// its CSINode) and the scheduler (NodeVolumeLimits) count the volumes of
// mkube.io/hostpath as one driver's.
//
// mkube.io/hostpath is run by the controller manager, as Kubernetes runs
// its in-tree provisioners (kubernetes.io/aws-ebs, kubernetes.io/gce-pd).
// Their names have a "/", which a CSI driver's may not (a CSI driver name
// is a DNS subdomain: ebs.csi.aws.com), so Kubernetes translates each
// in-tree name to the CSI driver that took it over (GetCSINameFromInTreeName:
// kubernetes.io/aws-ebs → ebs.csi.aws.com), and the kubelet's CSINode and
// the scheduler speak of that driver. mkube does the same for its one
// provisioner:
//
//	mkube.io/hostpath  →  hostpath.csi.mkube.io
package csitranslation

const (
	// HostPathProvisioner is mkube's provisioner, the StorageClass
	// standard's (apiserver/registry/storage).
	HostPathProvisioner = "mkube.io/hostpath"
	// HostPathDriver is the CSI driver it stands for, the name in each
	// node's CSINode (kubelet/nodestatus/csinode.go).
	HostPathDriver = "hostpath.csi.mkube.io"
)

// DriverOf is the CSI driver whose volumes a provisioner's are: the
// driver mkube's provisioner stands for, else the provisioner itself (an
// external CSI provisioner is named after its driver).
func DriverOf(provisioner string) string {
	if provisioner == HostPathProvisioner {
		return HostPathDriver
	}
	return provisioner
}
