// Package clustertrustbundle is the kubelet's ClusterTrustBundle manager
// (pkg/kubelet/clustertrustbundle, clustertrustbundle_manager.go there):
// the PEM trust anchors a pod's projected clusterTrustBundle sources
// hold, by bundle name or by signer and label selector, read from an
// informer of every ClusterTrustBundle. It serves the volume set-up of
// seed 000's step 12, before the containers start; a changed bundle
// reaches the pods' files at the next volume resync.
//
// Where things live:
//
//	file         what it holds
//	manager.go   the Manager: Anchors of a source, normalized; TakeChanged for the resync
//	doc.go       this map
package clustertrustbundle
