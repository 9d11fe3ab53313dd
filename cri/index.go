package cri

import "net/netip"

// The runtime's records are indexed the way the kubelet asks for them:
// sandboxes by their pod's UID and by its namespace/name (the labels the
// kubelet selects on), containers by their sandbox. Without the indexes
// every such call scans every record, and one kubelet holding 150,000
// pods spends its time there. Callers of every function here hold s.mu.

const (
	labelNodeName     = "mkube.io/node-name" // a fleet's kubelet labels each sandbox with its node
	labelPodUID       = "io.kubernetes.pod.uid"
	labelPodName      = "io.kubernetes.pod.name"
	labelPodNamespace = "io.kubernetes.pod.namespace"
)

// records are a Server's sandboxes and containers with their indexes.
type records struct {
	sandboxes  map[string]*sandbox   // by sandbox ID
	containers map[string]*container // by container ID

	sandboxesByUID      map[string]map[string]*sandbox   // pod UID → sandbox ID → sandbox
	sandboxesByPod      map[string]map[string]*sandbox   // "namespace/name" → sandbox ID → sandbox
	sandboxesByNode     map[string]map[string]*sandbox   // mkube.io/node-name → sandbox ID → sandbox
	containersBySandbox map[string]map[string]*container // sandbox ID → container ID → container
	sandboxesByIP       map[netip.Addr]*sandbox          // pod IP → its sandbox while it has it: the pod network's route (network.go's podSandboxes)
}

func newRecords() records {
	return records{sandboxes: map[string]*sandbox{}, containers: map[string]*container{},
		sandboxesByUID: map[string]map[string]*sandbox{}, sandboxesByPod: map[string]map[string]*sandbox{},
		sandboxesByNode:     map[string]map[string]*sandbox{},
		containersBySandbox: map[string]map[string]*container{}, sandboxesByIP: map[netip.Addr]*sandbox{}}
}

func podKeyOf(sb *sandbox) string {
	md := sb.config.GetMetadata()
	return md.GetNamespace() + "/" + md.GetName()
}

func addTo[T any](index map[string]map[string]*T, key, id string, obj *T) {
	if index[key] == nil {
		index[key] = map[string]*T{}
	}
	index[key][id] = obj
}

func removeFrom[T any](index map[string]map[string]*T, key, id string) {
	delete(index[key], id)
	if len(index[key]) == 0 {
		delete(index, key)
	}
}

func (r *records) addSandbox(sb *sandbox) {
	r.sandboxes[sb.id] = sb
	addTo(r.sandboxesByUID, sb.config.GetMetadata().GetUid(), sb.id, sb)
	addTo(r.sandboxesByPod, podKeyOf(sb), sb.id, sb)
	addTo(r.sandboxesByNode, sb.config.GetLabels()[labelNodeName], sb.id, sb)
	if sb.ip.IsValid() {
		r.sandboxesByIP[sb.ip] = sb
	}
}

func (r *records) removeSandbox(sb *sandbox) {
	delete(r.sandboxes, sb.id)
	removeFrom(r.sandboxesByUID, sb.config.GetMetadata().GetUid(), sb.id)
	removeFrom(r.sandboxesByPod, podKeyOf(sb), sb.id)
	removeFrom(r.sandboxesByNode, sb.config.GetLabels()[labelNodeName], sb.id)
	if r.sandboxesByIP[sb.ip] == sb {
		delete(r.sandboxesByIP, sb.ip)
	}
}

func (r *records) addContainer(c *container) {
	r.containers[c.id] = c
	addTo(r.containersBySandbox, c.sandboxID, c.id, c)
}

func (r *records) removeContainer(c *container) {
	delete(r.containers, c.id)
	removeFrom(r.containersBySandbox, c.sandboxID, c.id)
}

// sandboxCandidates are the sandboxes a ListPodSandbox filter can match:
// an index's entry when the filter selects on the pod's UID or name,
// else all of them. The filter is still applied to each.
func (r *records) sandboxCandidates(selector map[string]string) map[string]*sandbox {
	if uid, ok := selector[labelPodUID]; ok {
		return r.sandboxesByUID[uid]
	}
	ns, okNS := selector[labelPodNamespace]
	name, okName := selector[labelPodName]
	if okNS && okName {
		return r.sandboxesByPod[ns+"/"+name]
	}
	return r.sandboxes
}

// containerCandidates are the containers a ListContainers filter can
// match: those of its sandbox, if it names one, else all of them.
func (r *records) containerCandidates(sandboxID string) map[string]*container {
	if sandboxID != "" {
		return r.containersBySandbox[sandboxID]
	}
	return r.containers
}
