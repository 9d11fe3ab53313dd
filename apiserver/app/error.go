package app

// Error is a failed start, naming its step as the log says it: "listen",
// "etcd", "start RBAC"... cmd/apiserver logs Step with Err as "err".
type Error struct {
	Step string
	Err  error // nil if Step says it all
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Step
	}
	return e.Step + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }
