// Package history is the controller history that DaemonSets and
// StatefulSets keep, as Kubernetes' pkg/controller/history: one
// ControllerRevision per pod template the controller has run. A revision
// holds a snapshot of the template (Data, a patch that restores it), a
// number (Revision, increasing: the order `kubectl rollout history` shows),
// and a controller ownerReference to its DaemonSet or StatefulSet, so the
// garbage collector deletes the history with its owner.
//
// The controllers use it in this order each sync:
//
//	revs, _ := h.Claim(ctx, parent, kind, selector, canAdopt) // owned revisions; orphans adopted, strays released
//	cur := FindEqual(revs, wanted)                            // is the current template already recorded?
//	cur, _ = h.Create(ctx, parent, wanted, &collisionCount)   // if not: name <parent>-<hash>, renamed on collision
//	h.UpdateRevision(ctx, cur, max+1)                         // an old template current again: renumber it
//	h.Delete(ctx, oldest)                                     // beyond spec.revisionHistoryLimit
//
// Where things live:
//
//	file         what it holds
//	history.go   History: Claim, Create (renamed on collision), UpdateRevision, Delete
//	revision.go  a revision's Name, Hash and New, and Equal and FindEqual to find the current template
package history
