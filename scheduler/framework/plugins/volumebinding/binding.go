package volumebinding

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	storagehelpers "k8s.io/component-helpers/storage/volume"

	"github.com/mkube/mkube/scheduler/framework"
)

// The binding cycle of the pod's claims, Kubernetes' AssumePodVolumes
// (Reserve) and BindPodVolumes (PreBind):
//
//	Reserve    on the chosen node, find the claims' volumes again and assume them: each chosen
//	           volume with spec.claimRef set to its claim (and pv.kubernetes.io/bound-by-controller),
//	           each claim to provision with volume.kubernetes.io/selected-node: <node>
//	PreBind    write those to the API server; the PV controller then binds each volume to its
//	           claim, or provisions a volume for the node and binds it; wait until every claim is
//	           bound (bind-completed), checking every second, for at most 10 minutes
//	Unreserve  forget the assumptions; what PreBind wrote stays, and the PV controller undoes it
//	           (a provisioner that failed removes selected-node; a volume whose claim got another is freed)

const reservedKey framework.StateKey = "Reserve" + Name

// reserved is what Reserve assumed for the pod.
type reserved struct {
	node       string
	nodeLabels labels.Set
	static     []binding
	provision  []*corev1.PersistentVolumeClaim
}

// Reserve assumes the volumes the pod's delayed claims get on node, and
// tells the explanation which volume each claim has.
func (pl *VolumeBinding) Reserve(state *framework.CycleState, pod *framework.PodInfo, node *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*stateData](state, stateKey)
	if err != nil {
		return nil // PreFilter skipped: the pod has no claims
	}
	for _, claim := range s.bound {
		state.AddNote(Name, fmt.Sprintf("claim %s: bound to volume %s", claimKey(claim), claim.Spec.VolumeName))
	}
	if len(s.delayed) == 0 {
		return nil
	}
	found, err := pl.findPodVolumes(s, node.Node())
	if err != nil {
		return framework.AsStatus(err)
	}
	if found.conflicts != 0 {
		// The informers changed since Filter (another pod took the volume).
		return framework.NewStatus(framework.Unschedulable, conflictStatus[found.conflicts].Reasons()...)
	}
	r := &reserved{node: node.Node().Name, nodeLabels: node.Node().Labels}
	for _, b := range found.static {
		pv, dirty, err := storagehelpers.GetBindVolumeToClaim(b.pv, b.claim)
		if err != nil {
			return framework.AsStatus(err)
		}
		if dirty {
			pl.assumed.assumeVolume(pv)
		}
		r.static = append(r.static, binding{pv, b.claim})
		state.AddNote(Name, fmt.Sprintf("claim %s: volume %s, Available, which fits the claim and this node; the scheduler binds it",
			claimKey(b.claim), pv.Name))
	}
	for _, c := range found.provision {
		claim := c.DeepCopy() // c is the informer's
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, storagehelpers.AnnSelectedNode, r.node)
		pl.assumed.assumeClaim(claim)
		r.provision = append(r.provision, claim)
		state.AddNote(Name, fmt.Sprintf("claim %s: a new volume of class %s, provisioned for this node (%s)",
			claimKey(claim), storagehelpers.GetPersistentVolumeClaimClass(claim), storagehelpers.AnnSelectedNode))
	}
	state.Write(reservedKey, r)
	return nil
}

// Unreserve forgets what Reserve assumed.
func (pl *VolumeBinding) Unreserve(state *framework.CycleState, _ *framework.PodInfo, _ string) {
	if r, err := framework.ReadAs[*reserved](state, reservedKey); err == nil {
		pl.assumed.forget(r)
	}
}

// PreBind writes what Reserve assumed and waits until the claims are
// bound. Its errors are Kubernetes': `binding volumes: provisioning
// failed for PVC "data"`. While it waits it holds one of the scheduler's
// API slots (maxConcurrentAPICalls): provisioning takes a sync of the PV
// controller, so a slot is seldom held for more than a second or two.
func (pl *VolumeBinding) PreBind(ctx context.Context, state *framework.CycleState, _ *framework.PodInfo, _ string) *framework.Status {
	r, err := framework.ReadAs[*reserved](state, reservedKey)
	if err != nil || len(r.static)+len(r.provision) == 0 {
		return nil // every claim was bound already
	}
	if pl.writer == nil {
		return framework.AsStatus(errors.New("no API client to bind volumes with"))
	}
	for i, b := range r.static {
		saved, err := pl.writer.UpdateVolume(ctx, b.pv)
		if err != nil {
			return framework.AsStatus(err)
		}
		r.static[i].pv = saved
		pl.assumed.assumeVolume(saved)
	}
	for i, c := range r.provision {
		saved, err := pl.writer.UpdateClaim(ctx, c)
		if err != nil {
			return framework.AsStatus(err)
		}
		r.provision[i] = saved
		pl.assumed.assumeClaim(saved)
	}
	ticker := pl.clock.NewTicker(pollInterval)
	defer ticker.Stop()
	deadline := pl.clock.Now().Add(bindTimeout)
	for {
		done, err := pl.checkBindings(r)
		switch {
		case err != nil:
			return framework.AsStatus(fmt.Errorf("binding volumes: %w", err))
		case done:
			pl.assumed.forget(r) // the informers show the bindings now
			return nil
		case !pl.clock.Now().Before(deadline):
			return framework.AsStatus(fmt.Errorf("binding volumes: %w", context.DeadlineExceeded))
		}
		select {
		case <-ctx.Done():
			return framework.AsStatus(fmt.Errorf("binding volumes: %w", ctx.Err()))
		case <-ticker.C():
		}
	}
}

// checkBindings is Kubernetes' checkBindings, on the informers' objects:
// done when every claim is fully bound; an error when the PV controller
// undid what PreBind wrote (a claimRef reset, selected-node removed after
// a failed provisioning), which retries the pod.
func (pl *VolumeBinding) checkBindings(r *reserved) (bool, error) {
	for _, b := range r.static {
		pv, ok := pl.storage.Volume(b.pv.Name)
		if !ok {
			return false, fmt.Errorf("failed to check binding: %w", apierrors.NewNotFound(corev1.Resource("persistentvolume"), b.pv.Name))
		}
		claim, ok := pl.storage.Claim(b.claim.Namespace, b.claim.Name)
		if !ok {
			return false, fmt.Errorf("failed to check binding: %w", claimNotFound(b.claim.Name))
		}
		switch ref := pv.Spec.ClaimRef; {
		case newer(b.pv, pv):
			return false, nil // the informer has not seen our update yet
		case ref == nil || ref.UID == "":
			return false, fmt.Errorf("pv %q claimRef is reset", pv.Name)
		case ref.Namespace != b.claim.Namespace || ref.Name != b.claim.Name:
			return false, fmt.Errorf("binding PV: claim ref of %q is changed", pv.Name)
		case !isFullyBound(claim):
			return false, nil
		}
	}
	for _, c := range r.provision {
		claim, ok := pl.storage.Claim(c.Namespace, c.Name)
		if !ok {
			return false, fmt.Errorf("failed to check provisioning pvc: %w", claimNotFound(c.Name))
		}
		if newer(c, claim) {
			return false, nil
		}
		if claim.Annotations[storagehelpers.AnnSelectedNode] != r.node {
			// The provisioner failed and handed the claim back.
			return false, fmt.Errorf("provisioning failed for PVC %q", claim.Name)
		}
		if claim.Spec.VolumeName != "" {
			pv, ok := pl.storage.Volume(claim.Spec.VolumeName)
			if !ok {
				return false, nil // not in the informer yet
			}
			if err := storagehelpers.CheckNodeAffinity(pv, r.nodeLabels); err != nil {
				return false, fmt.Errorf("pv %q node affinity doesn't match node %q: %w", pv.Name, r.node, err)
			}
		}
		if !isFullyBound(claim) {
			return false, nil
		}
	}
	return true, nil
}
