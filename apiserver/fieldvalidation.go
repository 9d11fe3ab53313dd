package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// Server-side field validation (?fieldValidation=), as Kubernetes does it:
// a body with fields the kind does not have, or a field given twice, is
//   - Strict: refused with 400 BadRequest, naming the fields;
//   - Warn (the default): accepted, with one "Warning: 299" header each,
//     which kubectl prints as "Warning: unknown field ...";
//   - Ignore: accepted silently.
// Without this, a typo such as "replica: 3" would be dropped unnoticed.

var (
	strictJSON = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Strict: true})
	strictYAML = json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
)

// fieldValidation reads the mode of a request; a wrong value is 400.
func fieldValidation(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("fieldValidation"); v {
	case "":
		return "Warn", nil
	case "Strict", "Warn", "Ignore":
		return v, nil
	default:
		return "", badRequest("fieldValidation must be one of Ignore, Warn or Strict, not %q", v)
	}
}

// unknownFields decodes data strictly and lists what a lax decode would
// silently drop. Protobuf bodies cannot carry unknown fields.
func unknownFields(data []byte, want schema.GroupVersionKind, into runtime.Object) []string {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("k8s\x00")) {
		return nil
	}
	dec := strictYAML
	if bytes.HasPrefix(trimmed, []byte("{")) {
		dec = strictJSON
	}
	_, _, err := dec.Decode(data, &want, into)
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range strict.Errors() {
		out = append(out, e.Error())
	}
	return out
}

// checkFields applies the request's mode to the problems found: an error
// for Strict, Warning headers for Warn.
func checkFields(w http.ResponseWriter, mode string, problems []string) error {
	if len(problems) == 0 || mode == "Ignore" {
		return nil
	}
	if mode == "Strict" {
		return apierrors.NewBadRequest("strict decoding error: " + strings.Join(problems, ", "))
	}
	for _, p := range problems {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", p))
	}
	return nil
}
