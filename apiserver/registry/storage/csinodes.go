package storage

import (
	"fmt"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/apiserver"
)

// CSINodes are what each node's kubelet says about the CSI drivers on
// it, one object per node and named after it: for each driver, the ID
// the driver knows the node by, the topology keys it labels the node
// with, and how many of its volumes the node can have attached
// (allocatable.count), which the scheduler's NodeVolumeLimits counts
// against. mkube's kubelet writes one with the driver its provisioner
// mkube.io/hostpath stands for, hostpath.csi.mkube.io (a driver's name
// may have no "/": package internal/csitranslation; kubelet/nodestatus/csinode.go).
var CSINodes = &apiserver.Resource{
	GroupVersion: storagev1.SchemeGroupVersion, Name: "csinodes", Kind: "CSINode",
	// Kubernetes serves csinodes/status (storageHealth, behind the alpha
	// gate CSIVolumeHealth): the main PUT keeps the stored status.
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &storagev1.CSINode{} },
	NewList:      func() runtime.Object { return &storagev1.CSINodeList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*storagev1.CSINode).Status = storagev1.CSINodeStatus{}
	},
	Default: func(obj runtime.Object) {
		// dropDisabledCSINodeFields: CSIVolumeHealth is off by default,
		// so a client's storageHealth is not kept.
		obj.(*storagev1.CSINode).Status.StorageHealth = nil
	},
	Validate: func(obj, old runtime.Object) field.ErrorList {
		if old == nil {
			return validateCSINode(obj.(*storagev1.CSINode))
		}
		return validateCSINodeUpdate(obj.(*storagev1.CSINode), old.(*storagev1.CSINode))
	},
	// kube-apiserver's CSINode printer: the number of drivers.
	Columns: []apiserver.Column{{Name: "Drivers", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		n := obj.(*storagev1.CSINode)
		return []any{int64(len(n.Spec.Drivers)), apiserver.Age(n.CreationTimestamp, now)}
	},
}

// Kubernetes' limits: a driver's name is a DNS subdomain of at most 63
// characters (it is a label value in the CSI plugin registration too),
// and a node ID at most 256.
const (
	csiDriverNameMaxLength = 63
	csiNodeIDMaxLength     = 256
)

// validateCSINode is Kubernetes' ValidateCSINode (the name, a node's,
// is checked with the other metadata): each driver has a valid name, a
// node ID, a non-negative allocatable count and qualified topology keys,
// and no driver is listed twice.
func validateCSINode(n *storagev1.CSINode) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "drivers")
	seen := sets.New[string]()
	for i, d := range n.Spec.Drivers {
		errs = append(errs, validateCSINodeDriver(d, seen, path.Index(i))...)
	}
	return errs
}

func validateCSINodeDriver(d storagev1.CSINodeDriver, seen sets.Set[string], path *field.Path) field.ErrorList {
	errs := ValidateCSIDriverName(d.Name, path.Child("name"))
	nodeID := path.Child("nodeID")
	if d.NodeID == "" {
		errs = append(errs, field.Required(nodeID, ""))
	}
	if len(d.NodeID) > csiNodeIDMaxLength {
		errs = append(errs, field.Invalid(nodeID, d.NodeID, fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)))
	}
	if a := d.Allocatable; a != nil && a.Count != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*a.Count), path.Child("allocatable", "count"))...)
	}
	if seen.Has(d.Name) {
		errs = append(errs, field.Duplicate(path.Child("name"), d.Name))
	}
	seen.Insert(d.Name)
	// Kubernetes reports a topology key's errors at the driver's path,
	// not at topologyKeys[i].
	keys := sets.New[string]()
	for _, key := range d.TopologyKeys {
		if key == "" {
			errs = append(errs, field.Required(path, ""))
		}
		if keys.Has(key) {
			errs = append(errs, field.Duplicate(path, key))
		}
		keys.Insert(key)
		for _, msg := range validation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(path, key, msg))
		}
	}
	return errs
}

// ValidateCSIDriverName is Kubernetes' ValidateCSIDriverName: required,
// at most 63 characters, and a DNS subdomain once lower-cased
// ("Hostpath.CSI.k8s.io" is accepted). DRA drivers' names follow the
// same rule.
func ValidateCSIDriverName(name string, path *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if len(name) > csiDriverNameMaxLength {
		errs = append(errs, field.TooLong(path, "", csiDriverNameMaxLength))
	}
	for _, msg := range validation.IsDNS1123Subdomain(strings.ToLower(name)) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

// validateCSINodeUpdate is Kubernetes' ValidateCSINodeUpdate: a driver
// that stays keeps its node ID and topology keys; only its allocatable
// count may change (MutableCSINodeAllocatableCount, GA and locked on
// since v1.36), as a driver learns how many volumes the node has room
// for. Drivers may come and go.
func validateCSINodeUpdate(n, old *storagev1.CSINode) field.ErrorList {
	errs := validateCSINode(n)
	for _, before := range old.Spec.Drivers {
		for _, after := range n.Spec.Drivers {
			if before.Name != after.Name {
				continue
			}
			b, a := before.DeepCopy(), after.DeepCopy()
			b.Allocatable, a.Allocatable = nil, nil
			errs = append(errs, apivalidation.ValidateImmutableField(a, b, field.NewPath("spec", "drivers"))...)
		}
	}
	return errs
}
