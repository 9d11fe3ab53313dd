// Package quota holds the rules of ResourceQuota that both halves of
// Kubernetes' quota system apply, so that they always agree on what an
// object costs:
//
//   - the ResourceQuota admission plugin (apiserver/admission) charges a
//     new object to every quota of its namespace that counts it, and
//     refuses it, 403, if a quota would go over its hard limit;
//   - the resource quota controller (controllermanager/resourcequota)
//     copies each quota's spec.hard into status.hard and recounts
//     status.used from the objects that exist, which gives back what
//     deleted and finished objects held.
//
// A quota counts a resource (pods, services, persistentvolumeclaims, or
// any kind by count/<resource>.<group>) through that resource's Evaluator:
// which of the quota's names it counts towards (Matching), which scopes
// an object falls in (MatchesScope), and what one object costs (Usage).
// Worked example: a quota with hard {pods: 2, requests.cpu: 1} and a pod
// asking for 500m of cpu: the pod evaluator matches both names, and the
// pod costs {pods: 1, requests.cpu: 500m, count/pods: 1, ...}, of which
// the quota keeps the names it has, {pods: 1, requests.cpu: 500m}.
//
// It is Kubernetes' k8s.io/apiserver/pkg/quota/v1 (the ResourceList
// arithmetic, resources.go here) and k8s.io/kubernetes/pkg/quota/v1/
// evaluator/core (pods.go, services.go, claims.go, objectcount.go here).
package quota
