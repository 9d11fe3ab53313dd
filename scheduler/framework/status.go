package framework

import (
	"errors"
	"strings"
)

// Code is the outcome of a plugin, as in kube-scheduler.
type Code int

const (
	// Success: the pod fits the node (a nil *Status means Success too).
	Success Code = iota
	// Error: the plugin could not decide (a bug, a missing object). The
	// attempt is abandoned and the pod retried after its backoff.
	Error
	// Unschedulable: the pod does not fit now, but could if other pods
	// left the node: preemption tries only the nodes rejected with it.
	Unschedulable
	// UnschedulableAndUnresolvable: the pod does not fit, and removing pods
	// would not help (a label, a taint, a cordon): preemption skips the node.
	UnschedulableAndUnresolvable
	// Skip: returned by a PreFilter or PreScore plugin that has nothing to
	// do for this pod (no host ports asked for, no preferred terms...). Its
	// Filter or Score is then not called at all in this cycle, which is
	// how a 5000-node cycle stays cheap for plain pods.
	Skip
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Skip"}

func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is a plugin's verdict: a Code and the human reasons behind it,
// such as "Insufficient cpu". A nil *Status is Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an unexpected error as an Error status.
func AsStatus(err error) *Status {
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code is the status' code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// IsSuccess reports whether the pod fits.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsRejected reports whether a plugin ruled the node out (Unschedulable or
// UnschedulableAndUnresolvable), as opposed to failing with an Error.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable
}

// Reasons are the human reasons; one node can have several ("Insufficient
// cpu", "Insufficient memory").
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	return s.reasons
}

// Message joins the reasons.
func (s *Status) Message() string { return strings.Join(s.Reasons(), ", ") }

// Plugin names the plugin that returned the status.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records which plugin returned s, and returns s.
//
// A plugin whose rejection always reads the same may return one shared
// Status, built once with NewStatus(...).WithPlugin(its name): WithPlugin
// then never writes to it again, so it is safe to share between nodes and
// goroutines, and a rejection costs no allocation. With thousands of nodes
// rejected per cycle, that keeps the garbage collector quiet.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil && s.plugin != name {
		s.plugin = name
	}
	return s
}

// AsError is nil for Success, else an error with the message.
func (s *Status) AsError() error {
	if s.IsSuccess() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}
