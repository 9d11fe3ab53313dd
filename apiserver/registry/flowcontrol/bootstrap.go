package flowcontrol

import (
	"strconv"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The mandatory objects every Kubernetes API server keeps (k8s.io/apiserver's
// flowcontrol bootstrap): system:masters' requests are exempt from any
// limit; everything else that matches no other schema falls into
// catch-all, a small level that rejects what it cannot serve. Kubernetes'
// "suggested" schemas (system-leader-election, workload-high, ...) are
// left out: with no queuing, they would only be names.
var (
	autoUpdate = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: "true"}

	exemptPriorityLevel = &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt, Annotations: autoUpdate},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt,
			Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0)}},
	}
	catchAllPriorityLevel = &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.PriorityLevelConfigurationNameCatchAll, Annotations: autoUpdate},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](5), LendablePercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject}}},
	}

	everything = []flowcontrolv1.PolicyRulesWithSubjects{}

	exemptFlowSchema = &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.FlowSchemaNameExempt, Annotations: autoUpdate},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowcontrolv1.PriorityLevelConfigurationNameExempt},
			MatchingPrecedence: 1, Rules: allRequestsOf("system:masters")},
	}
	catchAllFlowSchema = &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: flowcontrolv1.FlowSchemaNameCatchAll, Annotations: autoUpdate},
		Spec: flowcontrolv1.FlowSchemaSpec{PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: flowcontrolv1.PriorityLevelConfigurationNameCatchAll},
			MatchingPrecedence: maxMatchingPrecedence, DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: allRequestsOf("system:unauthenticated", "system:authenticated")},
	}
)

// allRequestsOf matches every request, resource or not, of the groups.
func allRequestsOf(groups ...string) []flowcontrolv1.PolicyRulesWithSubjects {
	r := flowcontrolv1.PolicyRulesWithSubjects{
		ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"},
			ClusterScope: true, Namespaces: []string{"*"}}},
		NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
	}
	for _, g := range groups {
		r.Subjects = append(r.Subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: g}})
	}
	return append(everything, r)
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
