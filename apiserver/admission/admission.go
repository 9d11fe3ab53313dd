// Package admission is mkube's admission chain, after kube-apiserver's:
// named plugins that see every write after decoding and defaulting and
// before validation, may change the object, and may refuse the write;
// and validating plugins (ResourceQuota), which see it after validation
// and may only refuse it.
//
// The plugins mkube has, one file each, run in the order of Plugins below,
// which is kube-apiserver's recommended order. --enable-admission-plugins
// and --disable-admission-plugins choose among them, as in kube-apiserver.
//
// Where things live:
//
//	file                                what it holds
//	admission.go                        Attributes, Objects (what a plugin may read), Plugin, Plugins in order, and the Chain the flags enable
//	namespacelifecycle.go               NamespaceLifecycle: no new object in a namespace that is Terminating or does not exist
//	limitranger.go                      LimitRanger: a LimitRange's default requests and limits filled in, its min, max and ratios enforced
//	serviceaccount.go                   ServiceAccount: a pod's service account and its token volume
//	noderestriction.go                  NodeRestriction: a kubelet may write only its own Node, its pods' status, mirror pods, tokens for its pods
//	noderestriction_podcertificates.go  NodeRestriction for PodCertificateRequests: only for its own pods and the signers they mount
//	priority.go                         Priority: a pod's priorityClassName resolved into spec.priority
//	defaulttolerationseconds.go         DefaultTolerationSeconds: 300s tolerations of not-ready and unreachable
//	defaultstorageclass.go              DefaultStorageClass: a claim with no class gets the default one
//	storageobjectinuseprotection.go     StorageObjectInUseProtection: claims and volumes get their protection finalizer
//	persistentvolumeclaimresize.go      PersistentVolumeClaimResize: a claim may grow only if its class allows expansion
//	runtimeclass.go                     RuntimeClass: a pod's overhead and scheduling from its RuntimeClass
//	defaultingressclass.go              DefaultIngressClass: an Ingress with no class gets the default one
//	webhooks.go                         the admission policies and webhooks' four plugins, reached through Objects
//	resourcequota.go                    ResourceQuota: the quotas of the namespace charged, one write at a time per namespace
//	resourcequota_check.go              the check of one write against the quotas, and the 403 in Kubernetes' words
//	writer.go                           StatusWriter, the one write admission makes besides the object: a quota's status.used
package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Operation is the kind of write admission is asked about.
type Operation string

const (
	Create Operation = "CREATE"
	Update Operation = "UPDATE"
	Delete Operation = "DELETE"
	// Connect is a stream opened to an object: pods/attach, exec,
	// portforward. Object is its options (PodAttachOptions...).
	Connect Operation = "CONNECT"
)

// Attributes describe one write.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string // "" for the object itself, "status" for its status...
	Namespace   string
	Object      runtime.Object // the object about to be stored; a plugin may change it; nil on delete
	OldObject   runtime.Object // the stored object; nil on create
	// Now is the write's time, on the server's clock: what a plugin
	// that reckons with time (ResourceQuota: a pod past its deletion
	// grace no longer counts) takes for now.
	Now time.Time

	// What admission webhooks are also told (webhooks.go): the object's
	// name and kind (pods/attach is a PodAttachOptions), whether this is
	// a dry run, the request's options (CreateOptions...), and how a
	// changed object is read back as the kind's own.
	Name    string
	Kind    schema.GroupVersionKind
	DryRun  bool
	Options runtime.Object
	// Reread decodes a JSON object (a mutating webhook's patched one) as
	// the request's body is: into the kind's type, pruned and defaulted.
	// Nil where there is nothing to patch (deletes, connects).
	Reread func(data []byte) (runtime.Object, error)
}

// Objects reads what is stored, for a plugin that judges a write by other
// objects (the namespace it goes into, the PriorityClass it names). It is
// all of the API server a plugin gets.
type Objects interface {
	Get(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (runtime.Object, error)
	List(ctx context.Context, gvr schema.GroupVersionResource, namespace string) ([]runtime.Object, error)
}

// Plugin is one admission plugin.
type Plugin struct {
	Name  string
	Admit func(ctx context.Context, a *Attributes, objs Objects) error
	// Handles are the operations the plugin is asked about, as
	// Kubernetes' admission.Handler declares them; nil is Create and
	// Update, what most plugins judge.
	Handles []Operation
	// Validating plugins only judge, and run after the object has been
	// defaulted, mutated and validated (Chain.Validate), as
	// kube-apiserver runs its validating admission last: ResourceQuota
	// must not charge a quota for an object that is then refused.
	Validating bool
}

// handles: the plugin is asked about op.
func (p Plugin) handles(op Operation) bool {
	if p.Handles == nil {
		return op == Create || op == Update
	}
	return slices.Contains(p.Handles, op)
}

// Plugins is every plugin mkube has, in the order they run: the one place
// the order is stated. All are on by default, as in kube-apiserver.
var Plugins = []Plugin{
	NamespaceLifecycle,
	LimitRanger,
	ServiceAccount,
	NodeRestriction,
	Priority,
	DefaultTolerationSeconds,
	DefaultStorageClass,
	StorageObjectInUseProtection,
	PersistentVolumeClaimResize,
	RuntimeClass,
	DefaultIngressClass,
	MutatingAdmissionPolicy,    // webhooks.go: the cluster's own CEL mutations, after the built-in plugins
	MutatingAdmissionWebhook,   // then its mutating webhooks
	ValidatingAdmissionPolicy,  // its CEL validations, once the object is valid
	ValidatingAdmissionWebhook, // then its validating webhooks
	ResourceQuota,              // last, as in kube-apiserver: it charges what every other plugin let through
}

// Chain is the enabled plugins, in order.
type Chain struct{ plugins []Plugin }

// NewChain enables the default plugins plus enable, minus disable; a name
// mkube does not know is an error, so a typo in a flag stops the start.
func NewChain(enable, disable []string) (*Chain, error) {
	known := map[string]bool{}
	for _, p := range Plugins {
		known[p.Name] = true
	}
	for _, name := range slices.Concat(enable, disable) {
		if !known[name] {
			return nil, fmt.Errorf("admission plugin %q is unknown; mkube has %s", name, strings.Join(Names(Plugins), ", "))
		}
	}
	c := &Chain{}
	for _, p := range Plugins {
		if !slices.Contains(disable, p.Name) {
			c.plugins = append(c.plugins, p)
		}
	}
	return c, nil
}

// DefaultChain is every plugin.
func DefaultChain() *Chain { return &Chain{plugins: Plugins} }

// Enabled names the plugins that run, in order.
func (c *Chain) Enabled() []string { return Names(c.plugins) }

// Admit runs the mutating plugins in order; the first refusal ends the
// write.
func (c *Chain) Admit(ctx context.Context, a *Attributes, objs Objects) error {
	return c.run(ctx, a, objs, false)
}

// Validate runs the validating plugins in order, once the object is
// valid; the first refusal ends the write.
func (c *Chain) Validate(ctx context.Context, a *Attributes, objs Objects) error {
	return c.run(ctx, a, objs, true)
}

func (c *Chain) run(ctx context.Context, a *Attributes, objs Objects, validating bool) error {
	for _, p := range c.plugins {
		if p.Validating != validating || !p.handles(a.Operation) {
			continue
		}
		if err := p.Admit(ctx, a, objs); err != nil {
			return err
		}
	}
	return nil
}

// Names lists the plugins' names.
func Names(plugins []Plugin) []string {
	out := make([]string, len(plugins))
	for i, p := range plugins {
		out[i] = p.Name
	}
	return out
}

// ParseList reads a flag's comma-separated plugin names.
func ParseList(s string) []string {
	var out []string
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

var (
	pods            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespaces      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	priorityClasses = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}
)

// isPodWrite: the plugins about pods look at the pod itself, not at its
// status or binding.
func isPodWrite(a *Attributes) bool { return a.Resource == pods && a.Subresource == "" }
