package app

import (
	"context"

	"github.com/mkube/mkube/apiserver"
	admissionpolicy "github.com/mkube/mkube/apiserver/admission/policy"
	"github.com/mkube/mkube/apiserver/admission/webhook"
	"github.com/mkube/mkube/apiserver/customresource"
	"github.com/mkube/mkube/apiserver/registry"
	"github.com/mkube/mkube/apiserver/registry/admissionregistration"
	"github.com/mkube/mkube/apiserver/registry/apiregistration"
	"github.com/mkube/mkube/apiserver/registry/core"
	"github.com/mkube/mkube/apiserver/registry/discovery"
	"github.com/mkube/mkube/apiserver/registry/rbac"
)

// A PostStartHook is one step the server takes once its storage runs
// (apiserver.Server.Start) and before it serves, as kube-apiserver's
// post-start hooks: Start returns once the step is done, leaving what it
// started (a controller's worker) to run in goroutines until ctx ends.
type PostStartHook struct {
	Name string
	// failure is what the error log says when Start fails.
	failure string
	Start   func(ctx context.Context) error
}

// The hooks' names, kube-apiserver's where it has the same step.
const (
	AdmissionFollowersHook = "start-admission-webhooks-and-policies"
	RBACBootstrapHook      = "rbac/bootstrap-roles"
	NodeAuthorizerHook     = "start-node-authorizer-graph"
	CustomResourcesHook    = "start-apiextensions-controllers"
	AggregatorHook         = "start-kube-aggregator-informers"
	APIServicesHook        = "apiservice-registration-controller"
	AuthenticationInfoHook = "start-cluster-authentication-info-controller"
	CompactorHook          = "start-etcd-compactor"
	KubernetesServiceHook  = "bootstrap-controller"
	ClusterDNSServiceHook  = "create-cluster-dns-service"
)

// postStartHooks are the server's hooks, in the order they run: the
// authorizers' and admission's policies first, so the first request is
// judged by them; the custom resources before the APIService controller,
// which registers their group-versions; the Services last, once
// everything that admits them is in place. The kubernetes Service is kept
// only with a secure port, the port it leads to; its controller takes this
// server out of the endpoints before the server stops (preShutdown), as
// kube-apiserver's pre-shutdown hook calls RemoveEndpoints.
func (s *Server) postStartHooks() []PostStartHook {
	c, srv, log := s.cfg, s.API, s.cfg.log
	hooks := []PostStartHook{
		{AdmissionFollowersHook, "start admission webhooks and policies", func(ctx context.Context) error {
			return followAdmission(ctx, srv, c.webhooks, c.policies, c.mutating)
		}},
		{RBACBootstrapHook, "start RBAC", func(ctx context.Context) error {
			return rbac.Start(ctx, srv, c.rbac, log)
		}},
		{NodeAuthorizerHook, "start the Node authorizer", func(ctx context.Context) error {
			return followNodeGraph(ctx, srv, c.graph)
		}},
		{CustomResourcesHook, "start serving custom resources", func(ctx context.Context) error {
			return customresource.NewController(srv, c.clock, log).Start(ctx)
		}},
		{AggregatorHook, "start the aggregator", func(ctx context.Context) error {
			return c.aggregator.Start(ctx, srv)
		}},
		{APIServicesHook, "start the APIService controllers", func(ctx context.Context) error {
			return apiregistration.NewController(srv, registry.Resources, c.aggregator, c.clock, log).Start(ctx)
		}},
		{AuthenticationInfoHook, "start", func(ctx context.Context) error {
			return publishAuthentication(ctx, srv, c.clientCA, c.frontProxy)
		}},
		{CompactorHook, "start the etcd compactor", func(ctx context.Context) error {
			go c.store.RunCompactor(ctx, c.opts.CompactionInterval, log, srv.Compacted) // returns when ctx ends
			return nil
		}},
	}
	if c.secure != nil {
		hooks = append(hooks, PostStartHook{KubernetesServiceHook, "start the kubernetes Service", func(ctx context.Context) error {
			k := &core.KubernetesService{Services: srv.StorageFor(core.Services.GroupVersionResource()),
				Endpoints:      srv.StorageFor(core.Endpoints.GroupVersionResource()),
				EndpointSlices: srv.StorageFor(discovery.EndpointSlices.GroupVersionResource()), IP: c.advertise,
				Port: int32(c.SecurePort()), Clock: c.clock, Log: log}
			if c.opts.EndpointReconcilerType != EndpointReconcilerNone {
				k.Leases = &core.MasterLeases{Store: c.store, TTL: core.MasterLeaseTTL}
			}
			// Run returns when ctx ends, once it has taken this server
			// out of the endpoints; done says so to the shutdown.
			done := make(chan struct{})
			go func() { defer close(done); k.Run(ctx) }()
			s.preShutdown = append(s.preShutdown, func() { <-done })
			return nil
		}})
	}
	return append(hooks, PostStartHook{ClusterDNSServiceHook, "create the cluster DNS Service", func(ctx context.Context) error {
		return core.CreateClusterDNSService(ctx, srv.StorageFor(core.Services.GroupVersionResource()), log)
	}})
}

// followAdmission feeds the webhook dispatcher the webhook configurations
// and the policy evaluators the policies and their bindings, from the
// server's watch cache, as kube-apiserver's plugins follow them with
// informers: a configuration is in effect a moment after it is stored.
func followAdmission(ctx context.Context, srv *apiserver.Server, hooks *webhook.Dispatcher, policies *admissionpolicy.Evaluator,
	mutating *admissionpolicy.Mutator) error {
	for _, f := range []struct {
		res *apiserver.Resource
		to  apiserver.Follower
	}{
		{admissionregistration.MutatingWebhookConfigurations, hooks.Mutating()},
		{admissionregistration.ValidatingWebhookConfigurations, hooks.Validating()},
		{admissionregistration.ValidatingAdmissionPolicies, policies.Policies()},
		{admissionregistration.ValidatingAdmissionPolicyBindings, policies.Bindings()},
		{admissionregistration.MutatingAdmissionPolicies, mutating.Policies()},
		{admissionregistration.MutatingAdmissionPolicyBindings, mutating.Bindings()},
	} {
		if err := srv.Follow(ctx, f.res.GroupVersionResource(), f.to); err != nil {
			return err
		}
	}
	return nil
}
