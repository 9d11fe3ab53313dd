package customresource

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/apiserver/registry/apiextensions"
	"github.com/mkube/mkube/apiserver/webhookclient"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/store"
)

// Controller serves what the CustomResourceDefinitions define. It runs
// inside the API server, following the definitions from its storage
// (apiserver.Server.Follow), and does for each what kube-apiserver's
// apiextensions controllers do:
//
//   - naming: a definition whose plural or kind another definition of
//     the group already has is not served (NamesAccepted False,
//     "NameConflict"); otherwise its names are accepted;
//   - establishing: its served versions become resources (the server's
//     catalog), and only then is it Established, so a client that waits
//     for the condition can use the kind at once;
//   - finalizing: a deleted definition (Terminating) first has every
//     object of its kind deleted, then its cleanup finalizer removed; once
//     it is gone its resources are no longer served.
type Controller struct {
	srv   *apiserver.Server
	crds  *apiserver.Storage
	queue *workqueue.Queue[string]
	clock clock.Clock
	log   *slog.Logger

	// served is what each definition's resources are now, and the
	// generation and resourceVersion they were built from; only the
	// worker touches it.
	served map[string]servedDefinition
	// webhooks call the definitions' conversion webhooks.
	webhooks *Webhooks
}

type servedDefinition struct {
	resources  []*apiserver.Resource
	generation int64
}

// NewController is the controller for srv, which must serve
// CustomResourceDefinitions.
func NewController(srv *apiserver.Server, clk clock.WithDelayedExecution, log *slog.Logger) *Controller {
	log = log.With("controller", "customresourcedefinitions")
	return &Controller{srv: srv, crds: srv.StorageFor(apiextensions.CustomResourceDefinitions.GroupVersionResource()),
		queue: workqueue.New[string](clk), clock: clk, log: log,
		served:   map[string]servedDefinition{},
		webhooks: &Webhooks{Clients: &webhookclient.Clients{}, Objects: srv.Objects(), Log: log}}
}

// Start follows the definitions and returns once the definitions there
// are at start are served (so a restarted API server answers for its
// custom kinds before it is ready); its worker goes on serving them, in a
// goroutine, until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	if err := c.srv.Follow(ctx, apiextensions.CustomResourceDefinitions.GroupVersionResource(), c); err != nil {
		return err
	}
	for c.queue.Len() > 0 && c.queue.ProcessNext(ctx, c.sync, c.log, "customresourcedefinition") {
	}
	go func() { // owner: the API server; ends with ctx
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	go c.queue.Work(ctx, c.sync, c.log, "customresourcedefinition")
	return nil
}

// Replace and Update (apiserver.Follower) queue the definitions that
// changed, by name.
func (c *Controller) Replace(objs []runtime.Object) {
	for _, obj := range objs {
		c.queue.Add(obj.(*apiextensionsv1.CustomResourceDefinition).Name)
	}
	for name := range c.served {
		c.queue.Add(name) // a definition deleted while nobody watched
	}
}

func (c *Controller) Update(obj, prev runtime.Object) {
	if obj == nil {
		obj = prev
	}
	c.queue.Add(obj.(*apiextensionsv1.CustomResourceDefinition).Name)
}

// sync brings one definition's serving in line with what is stored.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, err := c.crds.Get(ctx, "", name)
	if apierrors.IsNotFound(err) {
		return c.unserve(name)
	}
	if err != nil {
		return err
	}
	crd := obj.(*apiextensionsv1.CustomResourceDefinition)
	if crd.DeletionTimestamp != nil {
		return c.finalize(ctx, crd)
	}
	if conflict := c.nameConflict(ctx, crd); conflict != "" {
		return c.setConditions(ctx, name, nil,
			condition(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionFalse, "NameConflict", conflict),
			condition(apiextensionsv1.Established, apiextensionsv1.ConditionFalse, "NotAccepted", "not all names are accepted"))
	}
	if cur, ok := c.served[name]; !ok || cur.generation != crd.Generation {
		resources, err := Resources(crd, c.webhooks)
		if err != nil {
			c.log.Warn("cannot serve the definition", "crd", name, "err", err)
			return nil // stays not Established; a new generation is tried again
		}
		if err := c.srv.Replace(cur.resources, resources); err != nil {
			return err
		}
		c.served[name] = servedDefinition{resources: resources, generation: crd.Generation}
		c.log.Info("serving custom resources", "crd", name, "versions", versions(resources), "generation", crd.Generation)
	}
	names := crd.Spec.Names
	return c.setConditions(ctx, name, &names,
		condition(apiextensionsv1.NamesAccepted, apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"),
		condition(apiextensionsv1.Established, apiextensionsv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted"))
}

// nameConflict names the other definition of the group that already has
// this one's plural or kind (Kubernetes' naming controller), "" if none.
func (c *Controller) nameConflict(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) string {
	all, _, err := c.crds.List(ctx, "", store.ListOptions{})
	if err != nil {
		return ""
	}
	names := crd.Spec.Names
	for _, obj := range all {
		other := obj.(*apiextensionsv1.CustomResourceDefinition)
		if other.Name == crd.Name || other.Spec.Group != crd.Spec.Group {
			continue
		}
		accepted := other.Status.AcceptedNames
		switch {
		case accepted.Plural == names.Plural || slices.Contains(accepted.ShortNames, names.Plural):
			return fmt.Sprintf("%q is already in use", names.Plural)
		case accepted.Kind == names.Kind:
			return fmt.Sprintf("%q is already in use", names.Kind)
		}
	}
	return ""
}

// finalize deletes every object of a deleted definition's kind, then
// lets the definition go.
func (c *Controller) finalize(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	if !slices.Contains(crd.Finalizers, apiextensions.CustomResourceCleanupFinalizer) {
		return nil
	}
	if err := c.deleteObjects(ctx, crd); err != nil {
		c.setConditions(ctx, crd.Name, nil, condition(apiextensionsv1.Terminating, apiextensionsv1.ConditionTrue, "InstanceDeletionFailed", err.Error()))
		return err
	}
	_, err := c.crds.Update(ctx, "", crd.Name, func(cur runtime.Object) (runtime.Object, error) {
		next := cur.(*apiextensionsv1.CustomResourceDefinition)
		next.Finalizers = slices.DeleteFunc(next.Finalizers, func(f string) bool { return f == apiextensions.CustomResourceCleanupFinalizer })
		apiextensions.SetCondition(next, condition(apiextensionsv1.Terminating, apiextensionsv1.ConditionTrue, "InstanceDeletionCompleted",
			"removed all instances"))
		return next, nil
	})
	if err == nil {
		c.log.Info("deleted every custom resource of the definition", "crd", crd.Name)
	}
	return err
}

// deleteObjects deletes the kind's objects through its storage, as a
// client would (finalizers and all): an object that waits for a finalizer
// is an error, so the definition is tried again later.
func (c *Controller) deleteObjects(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) error {
	served, ok := c.served[crd.Name]
	if !ok || len(served.resources) == 0 {
		return nil
	}
	// At the storage version, objects stored there need no conversion.
	res := served.resources[0]
	for _, r := range served.resources {
		if r.GroupVersion == r.StoredAs.GVK.GroupVersion() {
			res = r
		}
	}
	st := c.srv.StorageFor(res.GroupVersionResource())
	objs, _, err := st.List(ctx, "", store.ListOptions{})
	if err != nil {
		return err
	}
	left := 0
	for _, obj := range objs {
		m, _ := meta.Accessor(obj)
		_, deleted, err := st.Delete(ctx, m.GetNamespace(), m.GetName(), &metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && !deleted {
			left++
		}
	}
	if left > 0 {
		return fmt.Errorf("%d objects are still being deleted", left)
	}
	return nil
}

// unserve stops serving a definition that is gone.
func (c *Controller) unserve(name string) error {
	cur, ok := c.served[name]
	if !ok {
		return nil
	}
	if err := c.srv.Replace(cur.resources, nil); err != nil {
		return err
	}
	delete(c.served, name)
	c.log.Info("no longer serving custom resources", "crd", name)
	return nil
}

// setConditions writes conditions (and accepted names, if given) into a
// definition's status, if they change anything.
func (c *Controller) setConditions(ctx context.Context, name string, accepted *apiextensionsv1.CustomResourceDefinitionNames,
	conds ...apiextensionsv1.CustomResourceDefinitionCondition) error {
	now := metav1.NewTime(c.clock.Now())
	_, err := c.crds.Update(ctx, "", name, func(cur runtime.Object) (runtime.Object, error) {
		next := cur.(*apiextensionsv1.CustomResourceDefinition)
		if accepted != nil {
			next.Status.AcceptedNames = *accepted
		}
		for _, cond := range conds {
			cond.LastTransitionTime = now
			apiextensions.SetCondition(next, cond)
		}
		return next, nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func condition(t apiextensionsv1.CustomResourceDefinitionConditionType, s apiextensionsv1.ConditionStatus, reason, message string) apiextensionsv1.CustomResourceDefinitionCondition {
	return apiextensionsv1.CustomResourceDefinitionCondition{Type: t, Status: s, Reason: reason, Message: message}
}

func versions(resources []*apiserver.Resource) []string {
	out := make([]string, len(resources))
	for i, r := range resources {
		out[i] = r.GroupVersion.String()
	}
	return out
}
