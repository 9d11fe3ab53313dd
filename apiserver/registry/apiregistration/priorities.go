package apiregistration

import (
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/mkube/mkube/apiserver"
)

// priority is where a group-version sorts in discovery: groups by
// Group, highest first (kubectl resolves "events" to the core group,
// 18000, before events.k8s.io, 17750), a group's versions by Version.
type priority struct{ Group, Version int32 }

// priorities is kube-apiserver's table of the built-in group-versions
// (pkg/controlplane/apiserver's DefaultGenericAPIServicePriorities merged
// with cmd/kube-apiserver's apiVersionPriorities), as Kubernetes v1.37
// has it. A served group-version missing from it gets no APIService, as
// in Kubernetes ("Skipping APIService creation"); apiregistration.k8s.io
// itself is not in it: the aggregator serves its own group first, at
// priority 20001, without an APIService.
var priorities = map[schema.GroupVersion]priority{
	{Group: "", Version: "v1"}:                                   {18000, 1},
	{Group: "events.k8s.io", Version: "v1"}:                      {17750, 15},
	{Group: "events.k8s.io", Version: "v1beta1"}:                 {17750, 5},
	{Group: "apps", Version: "v1"}:                               {17800, 15},
	{Group: "authentication.k8s.io", Version: "v1"}:              {17700, 15},
	{Group: "authentication.k8s.io", Version: "v1beta1"}:         {17700, 9},
	{Group: "authentication.k8s.io", Version: "v1alpha1"}:        {17700, 1},
	{Group: "authorization.k8s.io", Version: "v1"}:               {17600, 15},
	{Group: "autoscaling", Version: "v1"}:                        {17500, 15},
	{Group: "autoscaling", Version: "v2"}:                        {17500, 30},
	{Group: "autoscaling", Version: "v2beta1"}:                   {17500, 9},
	{Group: "autoscaling", Version: "v2beta2"}:                   {17500, 1},
	{Group: "batch", Version: "v1"}:                              {17400, 15},
	{Group: "batch", Version: "v1beta1"}:                         {17400, 9},
	{Group: "batch", Version: "v2alpha1"}:                        {17400, 9},
	{Group: "certificates.k8s.io", Version: "v1"}:                {17300, 15},
	{Group: "certificates.k8s.io", Version: "v1beta1"}:           {17300, 9},
	{Group: "certificates.k8s.io", Version: "v1alpha1"}:          {17300, 1},
	{Group: "networking.k8s.io", Version: "v1"}:                  {17200, 15},
	{Group: "networking.k8s.io", Version: "v1beta1"}:             {17200, 9},
	{Group: "policy", Version: "v1"}:                             {17100, 15},
	{Group: "policy", Version: "v1beta1"}:                        {17100, 9},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:          {17000, 15},
	{Group: "storage.k8s.io", Version: "v1"}:                     {16800, 15},
	{Group: "storage.k8s.io", Version: "v1beta1"}:                {16800, 9},
	{Group: "storage.k8s.io", Version: "v1alpha1"}:               {16800, 1},
	{Group: "apiextensions.k8s.io", Version: "v1"}:               {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}:       {16700, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1beta1"}:  {16700, 12},
	{Group: "admissionregistration.k8s.io", Version: "v1alpha1"}: {16700, 9},
	{Group: "scheduling.k8s.io", Version: "v1"}:                  {16600, 15},
	{Group: "scheduling.k8s.io", Version: "v1beta1"}:             {16600, 9},
	{Group: "scheduling.k8s.io", Version: "v1alpha3"}:            {16600, 3},
	{Group: "coordination.k8s.io", Version: "v1"}:                {16500, 15},
	{Group: "coordination.k8s.io", Version: "v1beta1"}:           {16500, 13},
	{Group: "coordination.k8s.io", Version: "v1alpha2"}:          {16500, 12},
	{Group: "node.k8s.io", Version: "v1"}:                        {16300, 15},
	{Group: "node.k8s.io", Version: "v1beta1"}:                   {16300, 9},
	{Group: "node.k8s.io", Version: "v1alpha1"}:                  {16300, 1},
	{Group: "discovery.k8s.io", Version: "v1"}:                   {16200, 15},
	{Group: "discovery.k8s.io", Version: "v1beta1"}:              {16200, 12},
	{Group: "resource.k8s.io", Version: "v1"}:                    {16200, 21},
	{Group: "resource.k8s.io", Version: "v1beta2"}:               {16200, 15},
	{Group: "resource.k8s.io", Version: "v1beta1"}:               {16200, 9},
	{Group: "resource.k8s.io", Version: "v1alpha3"}:              {16200, 1},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}:       {16100, 21},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3"}:  {16100, 18},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta2"}:  {16100, 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta1"}:  {16100, 12},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1alpha1"}: {16100, 9},
	{Group: "internal.apiserver.k8s.io", Version: "v1alpha1"}:    {16000, 9},
	{Group: "storagemigration.k8s.io", Version: "v1"}:            {15800, 15},
	{Group: "storagemigration.k8s.io", Version: "v1beta1"}:       {15800, 9},
	{Group: "lifecycle.k8s.io", Version: "v1alpha1"}:             {15700, 1},
}

// Custom resources sort after every built-in group (crdregistration's
// "relatively low priority"); their versions then sort by Kubernetes'
// version order, all having the same versionPriority.
var crdPriority = priority{Group: 1000, Version: 100}

// The automanaged label says who keeps an APIService and how
// (kube-aggregator's autoregister): "onstart" ones, the built-in
// group-versions, are put right once when the API server starts; "true"
// ones, the custom resources', all the time.
const (
	autoManagedLabel = "kube-aggregator.kubernetes.io/automanaged"
	manageOnStart    = "onstart"
	manageAlways     = "true"
)

// apiServiceName is <version>.<group>: "v1." for the core group.
func apiServiceName(gv schema.GroupVersion) string { return gv.Version + "." + gv.Group }

// localAPIService is the Local APIService of a group-version.
func localAPIService(gv schema.GroupVersion, p priority, managed string) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: apiServiceName(gv), Labels: map[string]string{autoManagedLabel: managed}},
		Spec: apiregistrationv1.APIServiceSpec{Group: gv.Group, Version: gv.Version,
			GroupPriorityMinimum: p.Group, VersionPriority: p.Version},
	}
}

// BuiltinAPIServices are the Local APIServices of the group-versions the
// resources are served at, by name: kube-apiserver's
// apiServicesToRegister, over the paths it serves.
func BuiltinAPIServices(resources []*apiserver.Resource, log *slog.Logger) map[string]*apiregistrationv1.APIService {
	out := map[string]*apiregistrationv1.APIService{}
	seen := map[schema.GroupVersion]bool{}
	for _, res := range resources {
		gv := res.GroupVersion
		if seen[gv] || gv == apiregistrationv1.SchemeGroupVersion {
			continue
		}
		seen[gv] = true
		p, ok := priorities[gv]
		if !ok {
			log.Info("autoregister: no priority for the group-version, so no APIService", "groupVersion", gv.String())
			continue
		}
		out[apiServiceName(gv)] = localAPIService(gv, p, manageOnStart)
	}
	return out
}
