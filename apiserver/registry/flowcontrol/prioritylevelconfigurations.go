package flowcontrol

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/mkube/mkube/apiserver"
)

// PriorityLevelConfigurations are cluster-scoped, with a status subresource.
var PriorityLevelConfigurations = &apiserver.Resource{
	GroupVersion: flowcontrolv1.SchemeGroupVersion, Name: "prioritylevelconfigurations", Kind: "PriorityLevelConfiguration",
	Subresources: []apiserver.Subresource{apiserver.StatusSubresource},
	New:          func() runtime.Object { return &flowcontrolv1.PriorityLevelConfiguration{} },
	NewList:      func() runtime.Object { return &flowcontrolv1.PriorityLevelConfigurationList{} },
	PrepareForCreate: func(obj runtime.Object) {
		obj.(*flowcontrolv1.PriorityLevelConfiguration).Status = flowcontrolv1.PriorityLevelConfigurationStatus{}
	},
	Default: func(obj runtime.Object) { defaultPriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration)) },
	Validate: func(obj, _ runtime.Object) field.ErrorList {
		return validatePriorityLevel(obj.(*flowcontrolv1.PriorityLevelConfiguration))
	},
	Columns: []apiserver.Column{{Name: "Type", Type: "string"}, {Name: "NominalConcurrencyShares", Type: "string"}, {Name: "Queues", Type: "string"},
		{Name: "HandSize", Type: "string"}, {Name: "QueueLengthLimit", Type: "string"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		pl := obj.(*flowcontrolv1.PriorityLevelConfiguration)
		var shares, queues, hand, limit any = "<none>", "<none>", "<none>", "<none>"
		if l := pl.Spec.Limited; l != nil {
			shares = int64(ptr.Deref(l.NominalConcurrencyShares, 0))
			if q := l.LimitResponse.Queuing; q != nil {
				queues, hand, limit = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
			}
		}
		return []any{string(pl.Spec.Type), shares, queues, hand, limit, apiserver.Age(pl.CreationTimestamp, now)}
	},
	Bootstrap: []runtime.Object{exemptPriorityLevel, catchAllPriorityLevel},
}

// Kubernetes' defaults (pkg/apis/flowcontrol/v1/defaults.go).
const (
	defaultShares           = 30
	defaultQueues           = 64
	defaultHandSize         = 8
	defaultQueueLengthLimit = 50
)

func defaultPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) {
	if e := pl.Spec.Exempt; e != nil {
		e.NominalConcurrencyShares = ptr.To(ptr.Deref(e.NominalConcurrencyShares, 0))
		e.LendablePercent = ptr.To(ptr.Deref(e.LendablePercent, 0))
	}
	l := pl.Spec.Limited
	if l == nil {
		return
	}
	if l.NominalConcurrencyShares == nil {
		l.NominalConcurrencyShares = ptr.To[int32](defaultShares)
	}
	if l.LendablePercent == nil {
		l.LendablePercent = ptr.To[int32](0)
	}
	if q := l.LimitResponse.Queuing; q != nil {
		if q.Queues == 0 {
			q.Queues = defaultQueues
		}
		if q.HandSize == 0 {
			q.HandSize = defaultHandSize
		}
		if q.QueueLengthLimit == 0 {
			q.QueueLengthLimit = defaultQueueLengthLimit
		}
	}
}

var (
	priorityLevelTypes = sets.New(flowcontrolv1.PriorityLevelEnablementExempt, flowcontrolv1.PriorityLevelEnablementLimited)
	limitResponseTypes = sets.New(flowcontrolv1.LimitResponseTypeQueue, flowcontrolv1.LimitResponseTypeReject)
)

// validatePriorityLevel follows Kubernetes' ValidatePriorityLevelConfigurationSpec:
// Exempt levels have no limited part, Limited ones must; shares and
// percentages in range; queuing only with Queue, and a hand no bigger
// than the queues.
func validatePriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	switch pl.Spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if pl.Spec.Limited != nil {
			errs = append(errs, field.Forbidden(spec.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := pl.Spec.Exempt; e != nil {
			if ptr.Deref(e.NominalConcurrencyShares, 0) < 0 {
				errs = append(errs, field.Invalid(spec.Child("exempt", "nominalConcurrencyShares"), *e.NominalConcurrencyShares, "must be a non-negative integer"))
			}
			errs = append(errs, validatePercent(spec.Child("exempt", "lendablePercent"), e.LendablePercent)...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if pl.Spec.Exempt != nil {
			errs = append(errs, field.Forbidden(spec.Child("exempt"), "must be nil if the type is Limited"))
		}
		if pl.Spec.Limited == nil {
			errs = append(errs, field.Required(spec.Child("limited"), "must not be empty when type is Limited"))
		} else {
			errs = append(errs, validateLimited(spec.Child("limited"), pl.Spec.Limited)...)
		}
	default:
		errs = append(errs, field.NotSupported(spec.Child("type"), pl.Spec.Type, sets.List(priorityLevelTypes)))
	}
	return errs
}

func validateLimited(p *field.Path, l *flowcontrolv1.LimitedPriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	if s := ptr.Deref(l.NominalConcurrencyShares, 0); s < 0 {
		errs = append(errs, field.Invalid(p.Child("nominalConcurrencyShares"), s, "must be a non-negative integer"))
	}
	errs = append(errs, validatePercent(p.Child("lendablePercent"), l.LendablePercent)...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(p.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	r, rp := l.LimitResponse, p.Child("limitResponse")
	switch r.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if r.Queuing != nil {
			errs = append(errs, field.Forbidden(rp.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited"))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		q, qp := r.Queuing, rp.Child("queuing")
		if q == nil {
			errs = append(errs, field.Required(qp, "must not be empty if limited.limitResponse.type is Limited"))
			break
		}
		if q.QueueLengthLimit <= 0 {
			errs = append(errs, field.Invalid(qp.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
		}
		if q.Queues <= 0 {
			errs = append(errs, field.Invalid(qp.Child("queues"), q.Queues, "must be positive"))
		}
		if q.HandSize > q.Queues {
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, "should not be greater than queues ("+itoa(q.Queues)+")"))
		} else if q.HandSize <= 0 {
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, "must be positive"))
		}
	default:
		errs = append(errs, field.NotSupported(rp.Child("type"), r.Type, sets.List(limitResponseTypes)))
	}
	return errs
}

func validatePercent(p *field.Path, v *int32) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(p, *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}
