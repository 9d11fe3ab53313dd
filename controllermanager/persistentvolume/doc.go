// Package persistentvolume is the PersistentVolume controller, the
// "binder" of kube-controller-manager (pkg/controller/volume/
// persistentvolume): it carries seed 003 §五's storage lifecycle.
//
//   - Provisioning. An administrator creates volumes (static), or, when no
//     volume fits a claim that names a StorageClass, the class's
//     provisioner makes one for it (dynamic): mkube.io/hostpath, run here
//     as Kubernetes runs its in-tree provisioners (volumeplugin).
//   - Binding. A claim waits, Pending, until a volume with at least its
//     size, all its access modes, its volume mode and class, and the labels
//     of its selector is Available; it gets the smallest such volume (of
//     those with the fewest access modes: index.go). The binding is two
//     pointers written in four steps, volume first: pv.spec.claimRef, the
//     volume's phase Bound, pvc.spec.volumeName, the claim's phase Bound
//     with the volume's capacity and access modes. Each step is retried
//     until both sides agree, so a crash between two leaves nothing the
//     next sync cannot finish. A user may pre-bind either side
//     (pv.spec.claimRef or pvc.spec.volumeName); the controller's own
//     bindings carry pv.kubernetes.io/bound-by-controller, and a claim
//     whose binding is done pv.kubernetes.io/bind-completed.
//   - Using. Pods name the claim; the protection controllers keep a claim
//     in use, and its volume, from going away under them.
//   - Releasing. When its claim is deleted, a volume is Released, its data
//     still there.
//   - Reclaiming, by the volume's persistentVolumeReclaimPolicy: Retain
//     leaves it Released for an administrator; Delete deletes the storage
//     and the volume; Recycle scrubs the data and makes it Available
//     again. A volume that cannot be reclaimed is Failed, with the reason
//     in its status message and an event.
//
// Volume phases: Pending (new) → Available → Bound → Released →
// (Available | deleted | Failed). Claim phases: Pending → Bound → Lost
// (its volume vanished).
//
// The controller works through one queue of claims and volumes with one
// worker, as Kubernetes runs one worker per queue: binding is not
// reentrant (two syncs at once could give one volume to two claims). It
// reads its own stores of claims and volumes, which hold what the
// informers delivered and, at once, what the controller itself wrote, so
// that the next claim never sees a volume it just bound as Available.
// Every claim and volume is synced again every SyncPeriod: that is when a
// waiting claim finds a volume created since, and a failed reclaim is
// retried.
//
// Where things live:
//
//	file           what it holds
//	controller.go  the Controller: Options, the informers feeding the stores, the queue, the periodic resync, Run
//	binder.go      the binder, the controller's logic on its stores: sync of one claim or volume; its event reasons
//	claims.go      syncClaim: an unbound claim (Binding), a pre-bound one, a bound one (Lost)
//	volumes.go     syncVolume: a volume's phase from its claim (Available, Bound, Released)
//	binding.go     bind and unbind, in Kubernetes' order, volume first
//	index.go       findBestMatch: the smallest fitting volume, of those with the fewest access modes
//	provision.go   Provisioning: a claim no volume fits gets one from its class's provisioner
//	reclaim.go     Reclaiming: Retain, Delete or Recycle a released volume
//	pods.go        the pods that use a claim, by an index of pods by claim
//	store.go       the stores of claims and volumes: what the informers delivered and what the controller wrote
//	api.go         api, lister and recorder: what the controller writes and reads, behind interfaces its tests fake
package persistentvolume
