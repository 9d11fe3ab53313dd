package apiserver

import (
	"bytes"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
)

// An answer's media type is chosen from the Accept header exactly as
// kube-apiserver chooses it, with its own negotiation package: the first
// clause of the header (in the client's order of preference) that names
// a serializer this resource can use wins; none is 406 Not Acceptable.
// client-go's generated clients send
// "application/vnd.kubernetes.protobuf,application/json": protobuf for a
// built-in kind, JSON for a custom resource (which has no Go type, hence
// no protobuf encoding), and kubectl, which asks for JSON (or a Table in
// JSON), gets what it always got.

// mediaType is the outcome of negotiation: the serializer the answer is
// written with, and whether the client asked for a Table instead of the
// objects themselves (`kubectl get`'s as=Table;g=meta.k8s.io;v=v1).
type mediaType struct {
	info  runtime.SerializerInfo
	table bool
}

func (m mediaType) protobuf() bool { return m.info.MediaType == runtime.ContentTypeProtobuf }
func (m mediaType) yaml() bool     { return m.info.MediaType == runtime.ContentTypeYAML }

// negotiateOutput picks the media type of a GET's or a LIST's answer.
// The error is a 406 whose Status lists every media type the server
// knows, in kube-apiserver's words ("only the following media types are
// accepted: application/json, application/yaml,
// application/vnd.kubernetes.protobuf"): kube-apiserver lists its
// serializers, not those this resource can use.
func negotiateOutput(r *http.Request, res *Resource) (mediaType, error) {
	opts, info, err := negotiation.NegotiateOutputMediaType(r, codecs, restrictionsFor(res))
	if err != nil {
		return mediaType{}, err
	}
	return mediaType{info: info, table: isTable(opts.Convert)}, nil
}

// negotiateStream picks the media type of a watch: only JSON and protobuf
// can be streamed, so a watch that accepts only YAML is a 406 listing
// "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch".
// The stream's media type is the serializer's with ;stream=watch, except
// JSON's, which is plain application/json, as kube-apiserver writes it.
func negotiateStream(r *http.Request, res *Resource) (mediaType, error) {
	opts, ok := negotiation.NegotiateMediaTypeOptions(r.Header.Get("Accept"), codecs.SupportedMediaTypes(), restrictionsFor(res))
	if !ok || opts.Accepted.StreamSerializer == nil {
		_, streaming := negotiation.MediaTypesForSerializer(codecs)
		return mediaType{}, negotiation.NewNotAcceptableError(streaming)
	}
	return mediaType{info: opts.Accepted, table: isTable(opts.Convert)}, nil
}

// streamContentType is the Content-Type of a watch in the media type m.
func (m mediaType) streamContentType() string {
	if m.info.MediaType == runtime.ContentTypeJSON {
		return runtime.ContentTypeJSON
	}
	return m.info.MediaType + ";stream=watch"
}

func isTable(convert *schema.GroupVersionKind) bool {
	return convert != nil && convert.Kind == "Table"
}

// restrictions says which of the server's serializers, and which
// conversions (as=...), one resource allows, as kube-apiserver's
// RequestScope does: protobuf only for kinds with a protobuf encoding
// (kube-apiserver's StandardSerializers leave it out for custom
// resources); Tables in JSON or YAML only; no other conversion.
// PartialObjectMetadata (as=PartialObjectMetadata, the metadata client's)
// is not served here, so a clause asking for it is passed over and the
// client's next choice (the object itself) is taken.
type restrictions struct{ protobuf bool }

func restrictionsFor(res *Resource) restrictions {
	return restrictions{protobuf: res.servesProtobuf()}
}

func (e restrictions) AllowsMediaTypeTransform(mimeType, mimeSubType string, target *schema.GroupVersionKind) bool {
	if target == nil {
		return e.protobuf || mimeType+"/"+mimeSubType != runtime.ContentTypeProtobuf
	}
	if target.GroupVersion() != metav1.SchemeGroupVersion && target.GroupVersion() != metav1beta1.SchemeGroupVersion {
		return false
	}
	return target.Kind == "Table" && mimeType == "application" && (mimeSubType == "json" || mimeSubType == "yaml")
}

// AllowsServerVersion: no ;sv= parameter is honoured, as in kube-apiserver
// (whose version-less scopes answer false too).
func (restrictions) AllowsServerVersion(string) bool { return false }

// AllowsStreamSchema: ;stream=watch is the only stream there is.
func (restrictions) AllowsStreamSchema(s string) bool { return s == "watch" }

// servesProtobuf: the kind's Go type has a protobuf encoding (every type
// of k8s.io/api has one; a custom resource's unstructured objects have
// none), and so do its lists.
func (r *Resource) servesProtobuf() bool {
	_, obj := r.New().(runtime.ProtobufMarshaller)
	_, list := r.NewList().(runtime.ProtobufMarshaller)
	return obj && list
}

// encode writes obj in the media type's serializer (the protobuf one
// writes the "k8s\x00" magic and a runtime.Unknown envelope naming
// apiVersion and kind, around the object's own message). obj must carry
// its apiVersion and kind, as every object the server answers with does.
func (m mediaType) encode(obj runtime.Object) ([]byte, error) {
	var buf bytes.Buffer
	if err := m.info.Serializer.Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encode %s as %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, m.info.MediaType, err)
	}
	return buf.Bytes(), nil
}

// writeProtobuf answers with obj encoded as protobuf.
func writeProtobuf(w http.ResponseWriter, code int, m mediaType, obj runtime.Object) {
	data, err := m.encode(obj)
	if err != nil {
		writeError(w, apierrors.NewInternalError(err))
		return
	}
	w.Header().Set("Content-Type", m.info.MediaType)
	w.WriteHeader(code)
	w.Write(data)
}
