package apiserver

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// maxBodyBytes is kube-apiserver's limit on a request body (3 MiB): etcd
// refuses values much above 1.5 MiB anyway, and a cap keeps one client from
// exhausting the server's memory.
const maxBodyBytes = 3 << 20

// readBody reads a request body within the limit; too large is 413.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, apierrors.NewRequestEntityTooLargeError("limit is 3145728")
	}
	if err != nil {
		return nil, badRequest("read request body: %v", err)
	}
	return data, nil
}

// decodeInto decodes a JSON, YAML or protobuf body and checks that it is the
// kind the URL names. A body without apiVersion/kind is taken to be that
// kind, as kube-apiserver does.
func decodeInto(data []byte, want schema.GroupVersionKind, into runtime.Object) (runtime.Object, error) {
	obj, gvk, err := codecs.UniversalDeserializer().Decode(data, &want, into)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	if gvk.GroupVersion() != want.GroupVersion() {
		return nil, badRequest("the API version in the data (%s) does not match the expected API version (%s)", gvk.GroupVersion(), want.GroupVersion())
	}
	if gvk.Kind != want.Kind || obj != into {
		return nil, badRequest("the kind in the data (%s) does not match the expected kind (%s)", gvk.Kind, want.Kind)
	}
	return obj, nil
}

// decode reads a body as an object of the resource's kind, and lists the
// fields field validation finds wrong with it.
func (r *Resource) decode(data []byte) (runtime.Object, []string, error) {
	if r.Decode != nil {
		return r.Decode(data)
	}
	obj, err := decodeInto(data, r.GVK(), r.New())
	if err != nil {
		return nil, nil, err
	}
	return obj, unknownFields(data, r.GVK(), r.New()), nil
}

func jsonEncode(obj any) ([]byte, error) { return json.Marshal(obj) }

// writeJSON answers with a JSON body.
func writeJSON(w http.ResponseWriter, code int, obj any) {
	data, err := jsonEncode(obj)
	if err != nil {
		code = http.StatusInternalServerError
		data = []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"encode response","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(data, '\n'))
}

// writeYAML answers with the YAML form of the JSON answer.
func writeYAML(w http.ResponseWriter, code int, obj any) {
	data, err := jsonEncode(obj)
	if err == nil {
		data, err = yaml.JSONToYAML(data)
	}
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.WriteHeader(code)
	w.Write(data)
}
