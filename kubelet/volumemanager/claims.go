package volumemanager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/client"
)

// persistentVolumeClaim volumes, seed 003 §五's Using: the pod names a
// claim, the claim names its volume, and the volume's source says where
// the data is:
//
//	hostPath  NodeRoot/<node>/<path>     the node's own directory
//	local     NodeRoot/<node>/<path>     the same, which must exist (the administrator's disk)
//	nfs       NFSRoot/<server>/<path>    the same for every node: what mkube.io/hostpath provisions
//
// The pod's volume directory (Dir) becomes a link to it, as an nfs
// volume's does, so what one pod writes there is there for the next pod
// that mounts the claim, on whichever node the volume allows.
//
// Before the first mount, as the kubelet's volume manager does:
//
//  1. process (its desired-state populator): GET the claim, which must be
//     Bound and not being deleted, and GET its volume, which must be
//     bound to that claim; else FailedMount with Kubernetes' words,
//     `Unable to attach or mount volumes: unmounted volumes=[data],
//     unattached volumes=[data], failed to process volumes=[data]: error
//     processing PVC default/data: PVC is not bound`, and the pod waits.
//     GETs, not informers: a kubelet's RBAC role (system:node) may get
//     claims and volumes but not list or watch them, and Kubernetes'
//     kubelet GETs them too;
//  2. attach: a volume that allows one node at a time (no ReadWriteMany or
//     ReadOnlyMany mode: Kubernetes' IsMultiAttachAllowed) must not be in
//     use by a pod on another node. Kubernetes' attach-detach controller,
//     which knows where every volume is attached, refuses such an attach
//     with one FailedAttachVolume event, `Multi-Attach error for volume
//     "pvc-..." Volume is already used by pod(s) web-0`; mkube's kubelet
//     asks the API server which unfinished pods of the namespace use the
//     claim (one LIST of the namespace's pods, only then: a mounted claim
//     costs a readlink per sync, whatever the fleet's size), records the
//     same event as attachdetach-controller, and the pod waits until the
//     other pod is gone. Two pods starting at the same instant on two
//     nodes may both pass: the controller's single loop would not let
//     them; it is the price of checking from the nodes;
//  3. mount: link the volume directory to the data.
//
// A claim's mount is read-only if the claim source says readOnly
// (package kubelet's volumeMounts): for a volume of a claim, Kubernetes'
// volume plugins take read-only-ness from the claim source, not from the
// volume's own source (the nfs plugin's getVolumeSource), and so does
// mkube.

// claimError is a claim volume that could not be processed, worded as
// the kubelet's FailedMount event (WaitForAttachAndMount's error).
type claimError struct {
	volumes []string // the pod's volumes that could not be processed, sorted
	errs    []string // why, one each
}

func (e *claimError) Error() string {
	list := "[" + strings.Join(e.volumes, " ") + "]"
	return fmt.Sprintf("Unable to attach or mount volumes: unmounted volumes=%s, unattached volumes=%s, failed to process volumes=%s: %s",
		list, list, list, strings.Join(e.errs, "; "))
}

func (*claimError) reason() string { return "FailedMount" }

// attachError is a volume already attached to another node.
type attachError struct {
	volume string // the PersistentVolume
	pods   []string
}

func (e *attachError) Error() string {
	return fmt.Sprintf("Multi-Attach error for volume %q Volume is already used by pod(s) %s", e.volume, strings.Join(e.pods, ", "))
}

func (*attachError) reason() string { return "FailedAttachVolume" }

// attachDetachController signs the Multi-Attach event as Kubernetes' does.
const attachDetachController = "attachdetach-controller"

// claimVolume is a claim volume processed: where its data is to come from.
type claimVolume struct {
	volume corev1.Volume
	claim  *corev1.PersistentVolumeClaim
	pv     *corev1.PersistentVolume
}

// setUpClaims processes, attaches and mounts the pod's claim volumes not
// mounted yet (see above).
func (m *Manager) setUpClaims(ctx context.Context, pod *corev1.Pod) error {
	var todo []claimVolume
	failed := &claimError{}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		if _, err := os.Readlink(m.OnDisk(Dir(pod.UID, v))); err == nil {
			continue // mounted before
		}
		cv, err := m.processClaim(ctx, pod, v)
		if err != nil {
			failed.volumes = append(failed.volumes, v.Name)
			failed.errs = append(failed.errs, err.Error())
			continue
		}
		todo = append(todo, cv)
	}
	if len(failed.volumes) > 0 {
		slices.Sort(failed.volumes)
		return failed
	}
	for _, cv := range todo {
		if err := m.attachClaim(ctx, pod, cv); err != nil {
			return err
		}
		data, err := m.claimData(cv.pv)
		if err != nil {
			return err
		}
		if err := linkVolume(m.OnDisk(Dir(pod.UID, cv.volume)), data); err != nil {
			return &mountError{volume: cv.pv.Name, err: err}
		}
		m.opts.Log.Info("claim mounted", "pod", client.KeyOf(pod), "volume", cv.volume.Name, "claim", cv.claim.Name, "persistentVolume", cv.pv.Name, "data", data)
	}
	return nil
}

// processClaim reads the claim and its volume, as the kubelet's
// desired-state populator does, with its errors.
func (m *Manager) processClaim(ctx context.Context, pod *corev1.Pod, v corev1.Volume) (claimVolume, error) {
	name := v.PersistentVolumeClaim.ClaimName
	wrap := func(err error) error { return fmt.Errorf("error processing PVC %s/%s: %w", pod.Namespace, name, err) }
	claim := &corev1.PersistentVolumeClaim{}
	if err := m.opts.Client.Get(ctx, client.PersistentVolumeClaims, pod.Namespace, name, claim); err != nil {
		return claimVolume{}, wrap(fmt.Errorf("failed to fetch PVC from API server: %w", err))
	}
	switch {
	case claim.DeletionTimestamp != nil:
		return claimVolume{}, wrap(errors.New("PVC is being deleted"))
	case claim.Status.Phase != corev1.ClaimBound:
		return claimVolume{}, wrap(errors.New("PVC is not bound"))
	case claim.Spec.VolumeName == "":
		return claimVolume{}, wrap(errors.New("PVC has empty pvc.Spec.VolumeName"))
	}
	pv := &corev1.PersistentVolume{}
	pvName := claim.Spec.VolumeName
	if err := m.opts.Client.Get(ctx, client.PersistentVolumes, "", pvName, pv); err != nil {
		return claimVolume{}, wrap(fmt.Errorf("failed to fetch PV %s from API server: %w", pvName, err))
	}
	switch ref := pv.Spec.ClaimRef; {
	case ref == nil:
		return claimVolume{}, wrap(fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pvName))
	case ref.UID != claim.UID:
		return claimVolume{}, wrap(fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pvName, ref.UID, claim.UID))
	}
	if s := pv.Spec.PersistentVolumeSource; s.HostPath == nil && s.Local == nil && s.NFS == nil {
		return claimVolume{}, fmt.Errorf("failed to get Plugin from volumeSpec for volume %q err=no volume plugin matched", pvName)
	}
	return claimVolume{volume: v, claim: claim, pv: pv}, nil
}

// attachClaim refuses a volume that allows one node at a time while a pod
// on another node uses its claim, recording the Multi-Attach event once
// per pod.
func (m *Manager) attachClaim(ctx context.Context, pod *corev1.Pod, cv claimVolume) error {
	if multiAttachAllowed(cv.pv) {
		return nil
	}
	list := &corev1.PodList{}
	opts := client.ListOptions{FieldSelector: "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)}
	if err := m.opts.Client.List(ctx, client.Pods, pod.Namespace, opts, list); apierrors.IsForbidden(err) {
		// A kubelet as its own node (the secure port) may list only the
		// pods bound to it (the Node authorizer): in Kubernetes this
		// check is the attach/detach controller's, not the kubelet's.
		return nil
	} else if err != nil {
		return fmt.Errorf("list the pods using claim %s: %w", cv.claim.Name, err)
	}
	var users []string
	for i := range list.Items {
		p := &list.Items[i]
		if p.UID != pod.UID && p.Spec.NodeName != "" && p.Spec.NodeName != m.opts.NodeName && usesClaim(p, cv.claim.Name) {
			users = append(users, p.Name)
		}
	}
	if len(users) == 0 {
		return nil
	}
	slices.Sort(users)
	err := &attachError{volume: cv.pv.Name, pods: users}
	if m.state.ReportMultiAttach(pod.UID) {
		m.opts.Recorder.WithComponent(attachDetachController).WithHost("").Event(pod, corev1.EventTypeWarning, err.reason(), "%v", err)
	}
	return err
}

// multiAttachAllowed is Kubernetes' IsMultiAttachAllowed for a volume:
// one without access modes, or with ReadWriteMany or ReadOnlyMany, may be
// attached to many nodes at once.
func multiAttachAllowed(pv *corev1.PersistentVolume) bool {
	modes := pv.Spec.AccessModes
	return len(modes) == 0 || slices.Contains(modes, corev1.ReadWriteMany) || slices.Contains(modes, corev1.ReadOnlyMany)
}

// usesClaim: the pod has a volume of the claim.
func usesClaim(pod *corev1.Pod, claim string) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim
	})
}

// claimData is the real directory of pv's data on this node (see above),
// ready to be linked.
func (m *Manager) claimData(pv *corev1.PersistentVolume) (string, error) {
	switch s := pv.Spec.PersistentVolumeSource; {
	case s.HostPath != nil:
		dir := m.OnDisk(path.Clean("/" + s.HostPath.Path))
		if err := setUpHostPath(dir, s.HostPath); err != nil {
			return "", &mountError{volume: pv.Name, err: err}
		}
		return dir, nil
	case s.Local != nil:
		dir := m.OnDisk(path.Clean("/" + s.Local.Path))
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", &mountError{volume: pv.Name, op: "NewMounter initialization", err: fmt.Errorf("path %q does not exist", s.Local.Path)}
		}
		return dir, nil
	default: // nfs: processClaim let no other source through
		export, err := m.nfsExport(s.NFS)
		if err != nil {
			return "", &mountError{volume: pv.Name, err: err}
		}
		return export, nil
	}
}

// nfsExport is the directory of an NFS export, made if missing: the
// server's directory of NFSRoot, then the path.
func (m *Manager) nfsExport(n *corev1.NFSVolumeSource) (string, error) {
	if m.opts.NFSRoot == "" {
		return "", errors.New("mount failed: this kubelet has no --nfs-root to reach NFS servers")
	}
	if n.Server == "" || n.Server == "." || n.Server == ".." || strings.ContainsAny(n.Server, `/\`) {
		return "", fmt.Errorf("mount failed: %q is not an NFS server name", n.Server)
	}
	export := filepath.Join(m.opts.NFSRoot, n.Server, filepath.Clean("/"+n.Path))
	return export, os.MkdirAll(export, 0o777)
}

// linkVolume makes dir, a pod's volume directory, a link to target, where
// the data is; a link already there is kept.
func linkVolume(dir, target string) error {
	if t, err := os.Readlink(dir); err == nil && t == target {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	os.RemoveAll(dir)
	return os.Symlink(target, dir)
}
