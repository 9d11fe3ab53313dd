// Package storageformat is how the API server writes an object into etcd
// and reads it back: kube-apiserver's --storage-media-type.
//
//   - application/json (mkube's default): the object as JSON, with
//     apiVersion and kind, which `etcdctl get` shows as it is.
//   - application/vnd.kubernetes.protobuf (Kubernetes' default): the
//     bytes "k8s\x00", then a runtime.Unknown message naming apiVersion
//     and kind around the object's own protobuf message, written by
//     apimachinery's protobuf serializer, exactly as kube-apiserver stores
//     it. Smaller, and cheaper to encode and decode, but binary: `etcdctl
//     get` shows a few readable strings among control bytes. Only kinds
//     with a protobuf encoding are written so; a custom resource (an
//     unstructured object, with no Go type) stays JSON, as in Kubernetes.
//
// Reading never depends on the setting: a value is protobuf if it starts
// with the magic bytes, else JSON, so a data directory written under one
// setting is read under the other, and a server switched from one to the
// other rewrites each object in the new format at its next write (what
// Kubernetes' storage migration relies on too).
//
// Readable turns a stored value of either format into JSON, for people:
// `mkube etcd get KEY`, what auger does for Kubernetes' etcd.
//
//	file           what it holds
//	format.go      MediaType and Parse; Codec: Encode in the chosen format, Decode from either
//	readable.go    Readable: any stored value as JSON, and the format it was stored in
package storageformat
