// Package clusterroleaggregation is Kubernetes' clusterrole-aggregation
// controller: a ClusterRole with an aggregationRule gets, as its rules,
// the rules of every other ClusterRole its selectors match. That is how
// the default admin, edit and view are made (bootstrappolicy) and how a
// ClusterRole of one's own, labelled
// rbac.authorization.k8s.io/aggregate-to-edit: "true", extends edit:
//
//	view  = rules of the roles labelled aggregate-to-view
//	edit  = rules of the roles labelled aggregate-to-edit (view among them)
//	admin = rules of the roles labelled aggregate-to-admin (edit among them)
//
// The set of ClusterRoles is small and which feed which is not known
// until each is read, so any change of any ClusterRole queues every
// aggregated one, as Kubernetes does; a role whose rules already match
// is not written, so the queue settles.
//
// It all lives in controller.go: New registers the informer handlers, Run
// runs the workers until ctx ends, sync does one item.
package clusterroleaggregation

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/client/workqueue"
	"github.com/mkube/mkube/controllermanager/controller"
)

// ControllerName is the name the controller manager runs this controller
// by, and the key of its service account
// (bootstrappolicy.ControllerServiceAccounts).
const ControllerName = "clusterrole-aggregation"

// DefaultWorkers: kube-controller-manager runs this controller with five.
const DefaultWorkers = 5

// Options tune the controller: Workers, 0 meaning DefaultWorkers.
type Options = controller.Options

// ClusterRoles is the resource the controller watches and writes.
var ClusterRoles = client.Resource{GroupVersion: rbacv1.SchemeGroupVersion, Name: "clusterroles", Kind: "ClusterRole",
	New: func() runtime.Object { return &rbacv1.ClusterRole{} }, NewList: func() runtime.Object { return &rbacv1.ClusterRoleList{} }}

// Controller fills aggregated ClusterRoles.
type Controller struct {
	client  *client.Client
	roles   *client.Informer
	queue   *workqueue.Queue[string] // names of ClusterRoles with an aggregationRule
	workers int
	log     *slog.Logger
}

// New is the controller on d's shared ClusterRole informer; it registers
// its handler, so call it before the informers run.
func New(d controller.Deps, o Options) *Controller {
	ctrl := &Controller{client: d.Client, roles: d.Informers.For(ClusterRoles), queue: workqueue.NewNamed[string](d.Clock, ControllerName, d.QueueMetrics),
		workers: o.WorkersOr(DefaultWorkers), log: d.Log.With("controller", ControllerName)}
	enqueueAll := func(runtime.Object) { ctrl.enqueueAggregated() }
	ctrl.roles.AddHandler(client.Handler{OnAdd: enqueueAll, OnUpdate: func(_, obj runtime.Object) { enqueueAll(obj) }, OnDelete: enqueueAll})
	return ctrl
}

// Run starts the workers and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	client.RunWorkers(ctx, c.queue, c.workers, c.sync, c.log, "clusterrole", c.roles)
}

// enqueueAggregated queues every ClusterRole that has an aggregationRule.
func (c *Controller) enqueueAggregated() {
	for _, obj := range c.roles.Cache().List() {
		if r := obj.(*rbacv1.ClusterRole); r.AggregationRule != nil {
			c.queue.Add(r.Name)
		}
	}
}

// sync sets the aggregated role name's rules to those of the roles its
// selectors match.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, ok := c.roles.Cache().Get(name)
	if !ok {
		return nil // deleted: nothing to fill
	}
	role := obj.(*rbacv1.ClusterRole)
	if role.AggregationRule == nil {
		return nil // no longer aggregated: its rules are its own again
	}
	rules, err := aggregate(role, c.roles.Cache().List())
	if err != nil {
		c.log.Warn("cannot aggregate: a selector is invalid", "clusterrole", name, "err", err)
		return nil // absorbed: retrying cannot mend the selector; an edit of the role queues it again
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	next := role.DeepCopy()
	next.Rules = rules
	if err := c.client.Update(ctx, ClusterRoles, "", name, next, nil); err != nil {
		return err // retried with backoff: a conflict means the cache will bring the newer role
	}
	c.log.Info("aggregated clusterrole", "clusterrole", name, "rules", len(rules), "from", strings.Join(sources(role, c.roles.Cache().List()), ","))
	return nil
}

// aggregate is Kubernetes' union: for each selector in order, the roles it
// matches sorted by name (role itself excepted), each rule once, in the
// order met.
func aggregate(role *rbacv1.ClusterRole, all []runtime.Object) ([]rbacv1.PolicyRule, error) {
	rules := []rbacv1.PolicyRule{}
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, err
		}
		for _, other := range matching(sel, role.Name, all) {
			for _, r := range other.Rules {
				if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules, nil
}

// matching are the ClusterRoles but self that sel selects, by name.
func matching(sel labels.Selector, self string, all []runtime.Object) []*rbacv1.ClusterRole {
	var out []*rbacv1.ClusterRole
	for _, obj := range all {
		if r := obj.(*rbacv1.ClusterRole); r.Name != self && sel.Matches(labels.Set(r.Labels)) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// sources names the roles role aggregates, for the log.
func sources(role *rbacv1.ClusterRole, all []runtime.Object) []string {
	var names []string
	for i := range role.AggregationRule.ClusterRoleSelectors {
		sel, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			continue
		}
		for _, r := range matching(sel, role.Name, all) {
			names = append(names, r.Name)
		}
	}
	return names
}
