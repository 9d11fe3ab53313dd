// Package volumemanager is the kubelet's volume manager (seed 000 step
// 12, seed 003 §四–七), after upstream's pkg/kubelet/volumemanager (its
// reconciler and the operation executor that mounts volumes,
// pkg/volume/util/operationexecutor), its emptyDir plugin
// (pkg/volume/emptydir) and its AtomicWriter
// (pkg/volume/util/atomic_writer.go): before a pod's containers start,
// the Manager sets each of its volumes up on the node's disk (emptyDir,
// hostPath, nfs, persistentVolumeClaim with its attach check, the
// payloads of configMap, secret, downwardAPI and projected volumes),
// makes the directories of the containers' subPaths, has image volumes
// pulled, and tears it all down when the pod is gone. It remembers the
// node's pods (which pods' volumes were set up once, which pods'
// Multi-Attach error was reported) under a lock of its own rather than
// the Kubelet's.
//
// What is the Kubelet's comes in through Options: the API client and
// event recorder, the Sources of payloads (ConfigMaps and Secrets from
// its informers, tokens, trust anchors, pod certificates, the downward
// API's values), its $(VAR) expansion of subPathExpr, its image pulls,
// its work queue and its pod status writer. Package kubelet builds the
// Manager (its volumes.go) and turns volumeMounts into CRI mounts of the
// directories named here.
//
// # Where things live
//
//	file             what it holds
//	manager.go       Options, Manager: MountVolumes (runPod's volume step), TearDownVolumes, OnDisk
//	setup.go         setting a pod's volumes up, volume by volume: hostPath, nfs, FailedMount errors
//	claims.go        persistentVolumeClaim volumes: process, attach (Multi-Attach), mount
//	payload.go       Sources, and what configMap, secret, downwardAPI and projected volumes hold
//	subpath.go       PrepareSubPaths: the directories of volume subPaths
//	imagevolumes.go  EnsureVolumeImages: image volumes pulled before their container
//	paths.go         PodDir, Dir, Plugin, VolumeNamed, OnDisk: a pod's and a volume's directories on the node
//	emptydir.go      emptyDir volumes: drwxrwxrwx on disk, or a tmpfs of the pod's memory
//	atomicwriter.go  WriteAtomically: a ConfigMap, Secret, downward API or projected volume's files, swapped in at once
//	state.go         State: pods whose volumes were set up, Multi-Attach errors reported
//	doc.go           this map
package volumemanager
