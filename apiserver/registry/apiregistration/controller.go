package apiregistration

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/clock"

	"github.com/mkube/mkube/apiserver"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/store"
)

var (
	crdsGVR     = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	servicesGVR = corev1.SchemeGroupVersion.WithResource("services")
)

// Controller keeps the APIServices, inside the API server, as
// kube-apiserver's autoregister, crdregistration and availability
// controllers do (see the package doc). It follows the server's own
// storage (apiserver.Server.Follow): the CustomResourceDefinitions, for
// the group-versions they serve; the APIServices, to put them right; and
// the Services, which Service-backed APIServices depend on. Every change
// queues APIService names; sync handles one name.
type Controller struct {
	apiServices, services *apiserver.Storage
	srv                   *apiserver.Server
	// builtin are the Local APIServices of the built-in group-versions,
	// put right once, at Start.
	builtin map[string]*apiregistrationv1.APIService
	checker Checker // the discovery checks of Service-backed APIServices
	queue   *workqueue.Queue[string]
	clock   clock.WithDelayedExecution
	log     *slog.Logger

	// mu guards what the followers (one goroutine each) record.
	mu sync.Mutex
	// crdVersions is, for each definition, the group-versions it serves.
	crdVersions map[string][]schema.GroupVersion
	// byService is, for each "namespace/name" Service, the APIServices
	// backed by it.
	byService map[string][]string
	// rechecks are the Service-backed APIServices' next discovery checks,
	// one each: however many events sync one, it has one chain of checks.
	rechecks map[string]clock.Timer
}

// NewController is the controller for srv, which serves resources (the
// built-in kinds), APIServices, Services and CustomResourceDefinitions;
// checker sends the discovery checks.
func NewController(srv *apiserver.Server, resources []*apiserver.Resource, checker Checker, clk clock.WithDelayedExecution, log *slog.Logger) *Controller {
	log = log.With("controller", "apiservices")
	return &Controller{srv: srv, apiServices: srv.StorageFor(APIServices.GroupVersionResource()), services: srv.StorageFor(servicesGVR),
		builtin: BuiltinAPIServices(resources, log), checker: checker, queue: workqueue.New[string](clk), clock: clk, log: log,
		crdVersions: map[string][]schema.GroupVersion{}, byService: map[string][]string{}, rechecks: map[string]clock.Timer{}}
}

// Start registers the built-in group-versions and follows what the
// APIServices depend on. It returns once every APIService there is at
// start has been synced, so a client that lists them after the server is
// ready sees them all, available; its worker goes on keeping them, in a
// goroutine, until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	// The definitions first, as kube-apiserver waits for crdregistration's
	// first sync: otherwise a custom resource's APIService would look
	// like one nobody wants, and be deleted.
	if err := c.srv.Follow(ctx, crdsGVR, crdFollower{c}); err != nil {
		return err
	}
	if err := c.registerBuiltin(ctx); err != nil {
		return err
	}
	if err := c.srv.Follow(ctx, APIServices.GroupVersionResource(), apiServiceFollower{c}); err != nil {
		return err
	}
	if err := c.srv.Follow(ctx, servicesGVR, serviceFollower{c}); err != nil {
		return err
	}
	for c.queue.Len() > 0 && c.queue.ProcessNext(ctx, c.sync, c.log, "apiservice") {
	}
	go func() { // owner: the API server; ends with ctx
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	go c.queue.Work(ctx, c.sync, c.log, "apiservice")
	return nil
}

// registerBuiltin is autoregister's sync-on-start: each built-in
// group-version's APIService is created if missing, or given back its
// spec if it is still marked "onstart"; one marked "onstart" that the
// server no longer serves (an upgrade removed its version) is deleted.
// An APIService someone took over (removed the label) is left alone.
func (c *Controller) registerBuiltin(ctx context.Context) error {
	objs, _, err := c.apiServices.List(ctx, "", store.ListOptions{})
	if err != nil {
		return err
	}
	existing := map[string]*apiregistrationv1.APIService{}
	for _, obj := range objs {
		svc := obj.(*apiregistrationv1.APIService)
		existing[svc.Name] = svc
		if svc.Labels[autoManagedLabel] == manageOnStart && c.builtin[svc.Name] == nil {
			c.log.Info("autoregister: deleting the APIService of a group-version no longer served", "apiservice", svc.Name)
			if _, _, err := c.apiServices.Delete(ctx, "", svc.Name, uidPrecondition(svc)); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	created := 0
	for name, want := range c.builtin {
		cur := existing[name]
		switch {
		case cur == nil:
			if _, err := c.apiServices.Create(ctx, want.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			created++
		case cur.Labels[autoManagedLabel] == manageOnStart && !equality.Semantic.DeepEqual(cur.Spec, want.Spec):
			if err := c.putSpec(ctx, name, want.Spec); err != nil {
				return err
			}
			c.log.Info("autoregister: restored the APIService's spec", "apiservice", name)
		}
	}
	c.log.Info("autoregister: registered the built-in group-versions", "apiservices", len(c.builtin), "created", created)
	return nil
}

// sync brings one APIService in line: crdregistration's (exists while a
// definition serves its group-version, with the custom resources'
// priorities) for one marked "true", then its Available condition.
// An error retries the name with backoff.
func (c *Controller) sync(ctx context.Context, name string) error {
	var cur *apiregistrationv1.APIService
	obj, err := c.apiServices.Get(ctx, "", name)
	switch {
	case err == nil:
		cur = obj.(*apiregistrationv1.APIService)
	case !apierrors.IsNotFound(err):
		return err
	}
	want := c.forCustomResources(name)
	switch {
	case cur == nil && want == nil:
		c.recheck(name, 0)
		return nil // gone, and nobody wants it
	case cur == nil:
		_, err := c.apiServices.Create(ctx, want)
		if err == nil {
			c.log.Info("crdregistration: created the APIService of custom resources", "apiservice", name)
		}
		if apierrors.IsAlreadyExists(err) {
			return nil // created meanwhile; its event queues it again
		}
		return err
	case cur.Labels[autoManagedLabel] == manageAlways && want == nil:
		_, _, err := c.apiServices.Delete(ctx, "", name, uidPrecondition(cur))
		if err == nil {
			c.log.Info("crdregistration: deleted the APIService no definition serves", "apiservice", name)
		}
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	case cur.Labels[autoManagedLabel] == manageAlways && !equality.Semantic.DeepEqual(cur.Spec, want.Spec):
		return c.putSpec(ctx, name, want.Spec) // its event brings it back for the condition
	}
	return c.setAvailable(ctx, cur)
}

// setAvailable writes the Available condition if it says something new.
// Its lastTransitionTime moves only when its status does
// (SetAPIServiceCondition). A Service-backed APIService is checked again
// later (recheckPassed, recheckFailed).
func (c *Controller) setAvailable(ctx context.Context, cur *apiregistrationv1.APIService) error {
	want := c.availability(ctx, cur)
	if cur.Spec.Service != nil {
		again := recheckFailed
		if want.Status == apiregistrationv1.ConditionTrue {
			again = recheckPassed
		}
		c.recheck(cur.Name, again)
	}
	if have := availableCondition(cur); have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
		return nil
	}
	_, err := c.apiServices.Update(ctx, "", cur.Name, func(obj runtime.Object) (runtime.Object, error) {
		next := obj.(*apiregistrationv1.APIService)
		have := availableCondition(next)
		if have == nil {
			want.LastTransitionTime = metav1.NewTime(c.clock.Now())
			next.Status.Conditions = append(next.Status.Conditions, want)
			return next, nil
		}
		if have.Status != want.Status {
			have.Status, have.LastTransitionTime = want.Status, metav1.NewTime(c.clock.Now())
		}
		have.Reason, have.Message = want.Reason, want.Message
		return next, nil
	})
	if err == nil {
		c.log.Info("availability: APIService condition changed", "apiservice", cur.Name, "available", want.Status, "reason", want.Reason)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// recheck queues name again after d, in place of the check it had
// scheduled; d 0 schedules none.
func (c *Controller) recheck(name string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.rechecks[name]; ok {
		t.Stop()
		delete(c.rechecks, name)
	}
	if d > 0 {
		c.rechecks[name] = c.clock.AfterFunc(d, func() { c.queue.Add(name) })
	}
}

// putSpec writes an automanaged APIService's spec back.
func (c *Controller) putSpec(ctx context.Context, name string, spec apiregistrationv1.APIServiceSpec) error {
	_, err := c.apiServices.Update(ctx, "", name, func(obj runtime.Object) (runtime.Object, error) {
		next := obj.(*apiregistrationv1.APIService)
		next.Spec = spec
		return next, nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// forCustomResources is the APIService a definition wants under name, nil
// if none serves that group-version.
func (c *Controller) forCustomResources(name string) *apiregistrationv1.APIService {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, gvs := range c.crdVersions {
		for _, gv := range gvs {
			if apiServiceName(gv) == name {
				return localAPIService(gv, crdPriority, manageAlways)
			}
		}
	}
	return nil
}

func uidPrecondition(svc *apiregistrationv1.APIService) *metav1.DeleteOptions {
	return &metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(svc.UID))}
}

// crdFollower records the group-versions each definition serves, and
// queues the APIServices of those that changed.
type crdFollower struct{ c *Controller }

func (f crdFollower) Replace(objs []runtime.Object) {
	f.c.mu.Lock()
	old := f.c.crdVersions
	f.c.crdVersions = map[string][]schema.GroupVersion{}
	for _, obj := range objs {
		crd := obj.(*apiextensionsv1.CustomResourceDefinition)
		f.c.crdVersions[crd.Name] = servedVersions(crd)
	}
	f.c.mu.Unlock()
	for _, gvs := range old {
		f.queue(gvs)
	}
	for _, obj := range objs {
		f.queue(servedVersions(obj.(*apiextensionsv1.CustomResourceDefinition)))
	}
}

func (f crdFollower) Update(obj, prev runtime.Object) {
	var name string
	var now []schema.GroupVersion
	if obj != nil {
		crd := obj.(*apiextensionsv1.CustomResourceDefinition)
		name, now = crd.Name, servedVersions(crd)
	} else {
		name = prev.(*apiextensionsv1.CustomResourceDefinition).Name
	}
	f.c.mu.Lock()
	before := f.c.crdVersions[name]
	if obj == nil {
		delete(f.c.crdVersions, name)
	} else {
		f.c.crdVersions[name] = now
	}
	f.c.mu.Unlock()
	f.queue(before)
	f.queue(now)
}

func (f crdFollower) queue(gvs []schema.GroupVersion) {
	for _, gv := range gvs {
		f.c.queue.Add(apiServiceName(gv))
	}
}

// servedVersions are the group-versions a definition serves, while it is
// not being deleted.
func servedVersions(crd *apiextensionsv1.CustomResourceDefinition) []schema.GroupVersion {
	var out []schema.GroupVersion
	for _, v := range crd.Spec.Versions {
		if v.Served && crd.DeletionTimestamp == nil {
			out = append(out, schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name})
		}
	}
	return out
}

// apiServiceFollower queues every APIService that changed, and records
// which Service backs each.
type apiServiceFollower struct{ c *Controller }

func (f apiServiceFollower) Replace(objs []runtime.Object) {
	byService := map[string][]string{}
	for _, obj := range objs {
		svc := obj.(*apiregistrationv1.APIService)
		if ref := svc.Spec.Service; ref != nil {
			key := ref.Namespace + "/" + ref.Name
			byService[key] = append(byService[key], svc.Name)
		}
		f.c.queue.Add(svc.Name)
	}
	f.c.mu.Lock()
	f.c.byService = byService
	f.c.mu.Unlock()
}

func (f apiServiceFollower) Update(obj, prev runtime.Object) {
	f.c.mu.Lock()
	for _, o := range []runtime.Object{prev, obj} {
		if o == nil {
			continue
		}
		svc := o.(*apiregistrationv1.APIService)
		if ref := svc.Spec.Service; ref != nil {
			key := ref.Namespace + "/" + ref.Name
			names := slices.DeleteFunc(f.c.byService[key], func(n string) bool { return n == svc.Name })
			if o == obj {
				names = append(names, svc.Name)
			}
			f.c.byService[key] = names
		}
	}
	f.c.mu.Unlock()
	if obj != nil {
		f.c.queue.Add(obj.(*apiregistrationv1.APIService).Name)
	} else {
		f.c.queue.Add(prev.(*apiregistrationv1.APIService).Name)
	}
}

// serviceFollower queues the APIServices backed by a Service that
// changed: its coming or going changes their condition.
type serviceFollower struct{ c *Controller }

func (f serviceFollower) Replace(objs []runtime.Object) {
	f.c.mu.Lock()
	var names []string
	for _, ns := range f.c.byService {
		names = append(names, ns...)
	}
	f.c.mu.Unlock()
	for _, n := range names {
		f.c.queue.Add(n)
	}
}

func (f serviceFollower) Update(obj, prev runtime.Object) {
	o := obj
	if o == nil {
		o = prev
	}
	s := o.(*corev1.Service)
	f.c.mu.Lock()
	names := slices.Clone(f.c.byService[s.Namespace+"/"+s.Name])
	f.c.mu.Unlock()
	for _, n := range names {
		f.c.queue.Add(n)
	}
}
