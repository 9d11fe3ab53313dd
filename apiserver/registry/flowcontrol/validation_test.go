package flowcontrol

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func TestValidateFlowControl(t *testing.T) {
	limited := func(q *flowcontrolv1.QueuingConfiguration) *flowcontrolv1.PriorityLevelConfiguration {
		pl := &flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: q}}}}
		defaultPriorityLevel(pl)
		return pl
	}
	tests := []struct {
		name string
		errs []string
		want string
	}{
		{"the bootstrap flow schemas are valid", errorsOf(append(validateFlowSchema(exemptFlowSchema), validateFlowSchema(catchAllFlowSchema)...)), ""},
		{"the bootstrap priority levels are valid", errorsOf(append(validatePriorityLevel(exemptPriorityLevel), validatePriorityLevel(catchAllPriorityLevel)...)), ""},
		{"a flow schema's precedence is at most 10000", errorsOf(validateFlowSchema(&flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "x"}, MatchingPrecedence: 10001}})),
			"spec.matchingPrecedence: Invalid value: 10001: must be between 1 and 10000 inclusively"},
		{"a flow schema names a priority level", errorsOf(validateFlowSchema(&flowcontrolv1.FlowSchema{Spec: flowcontrolv1.FlowSchemaSpec{MatchingPrecedence: 1}})),
			"spec.priorityLevelConfiguration.name: Required value: must reference a priority level"},
		{"a queuing level gets Kubernetes' defaults and is valid", errorsOf(validatePriorityLevel(limited(&flowcontrolv1.QueuingConfiguration{}))), ""},
		{"a hand is no bigger than the queues", errorsOf(validatePriorityLevel(limited(&flowcontrolv1.QueuingConfiguration{Queues: 2, HandSize: 3}))),
			"spec.limited.limitResponse.queuing.handSize: Invalid value: 3: should not be greater than queues (2)"},
		{"an exempt level has no limited part", errorsOf(validatePriorityLevel(&flowcontrolv1.PriorityLevelConfiguration{Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementExempt, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1)}}})),
			"spec.limited: Forbidden: must be nil if the type is not Limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if len(tt.errs) > 0 {
				got = tt.errs[0]
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func errorsOf(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
