package apiserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mkube/mkube/store"
)

// storeError turns a store sentinel into the Kubernetes error a client
// expects, worded as apimachinery's api/errors words it.
func storeError(err error, gr schema.GroupResource, name string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, store.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, store.ErrConflict):
		return apierrors.NewConflict(gr, name, errors.New(conflictMessage))
	}
	var ce *store.CompactedError
	if errors.As(err, &ce) {
		return apierrors.NewResourceExpired(ce.Error())
	}
	return apierrors.NewInternalError(err)
}

const conflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// asStatus returns the metav1.Status an error is answered with.
func asStatus(err error) *metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		st.Kind, st.APIVersion = "Status", "v1"
		return &st
	}
	st := apierrors.NewInternalError(err).Status()
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}

// writeError answers with a Status body and its HTTP code.
func writeError(w http.ResponseWriter, err error) {
	st := asStatus(err)
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	writeJSON(w, code, st)
}

func badRequest(format string, args ...any) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}

func fieldErr(path, msg string) field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath(path), nil, msg)}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// unsupportedPatchType is the 415 for a patch in another format than
// those accepted.
func unsupportedPatchType(accepted ...types.PatchType) error {
	names := make([]string, len(accepted))
	for i, t := range accepted {
		names[i] = string(t)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
		Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + strings.Join(names, ", ")}}
}
