package storageformat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// MediaType is a storage format, named by its media type as
// kube-apiserver's --storage-media-type names it.
type MediaType string

const (
	JSON     = MediaType(runtime.ContentTypeJSON)     // "application/json"
	Protobuf = MediaType(runtime.ContentTypeProtobuf) // "application/vnd.kubernetes.protobuf"
)

// Parse reads a --storage-media-type value; "" is JSON, mkube's default.
// kube-apiserver also takes application/yaml, which no one uses: mkube
// refuses it rather than store YAML.
func Parse(s string) (MediaType, error) {
	switch MediaType(s) {
	case "", JSON:
		return JSON, nil
	case Protobuf:
		return Protobuf, nil
	}
	return "", fmt.Errorf("unsupported storage media type %q: use %s or %s", s, JSON, Protobuf)
}

// Codec writes objects in one format and reads both.
type Codec struct {
	mediaType MediaType
	protobuf  *protobuf.Serializer
}

// NewCodec is a codec writing mediaType ("" is JSON); scheme knows the Go
// types protobuf values are decoded into.
func NewCodec(mediaType MediaType, scheme *runtime.Scheme) Codec {
	if mediaType == "" {
		mediaType = JSON
	}
	return Codec{mediaType: mediaType, protobuf: protobuf.NewSerializer(scheme, scheme)}
}

// MediaType is the format Encode writes.
func (c Codec) MediaType() MediaType { return c.mediaType }

// Encode writes obj, which carries its apiVersion and kind, in the
// codec's format: protobuf only if obj has a protobuf encoding (every
// type of k8s.io/api does; an unstructured custom resource does not, and
// is JSON whatever the setting, as in Kubernetes).
func (c Codec) Encode(obj runtime.Object) ([]byte, error) {
	if c.mediaType == Protobuf && hasProtobuf(obj) {
		var buf bytes.Buffer
		if err := c.protobuf.Encode(obj, &buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return json.Marshal(obj)
}

// Decode reads a stored value of either format into into, an empty
// object of the kind stored under that key. The protobuf serializer
// leaves apiVersion and kind empty; the caller sets them.
func (c Codec) Decode(value []byte, into runtime.Object) error {
	if !IsProtobuf(value) {
		return json.Unmarshal(value, into)
	}
	out, gvk, err := c.protobuf.Decode(value, nil, into)
	if err != nil {
		return err
	}
	if out != into { // the serializer made an object of the kind stored
		return fmt.Errorf("stored %s is not a %s", gvk, reflect.TypeOf(into).Elem().Name())
	}
	return nil
}

// IsProtobuf reports whether a stored value is in the protobuf format: it
// begins with the magic bytes "k8s\x00", which no JSON value can.
func IsProtobuf(value []byte) bool {
	ok, _, _ := protobufRecognizer.RecognizesData(value)
	return ok
}

// protobufRecognizer only looks at the prefix, so it needs no scheme.
var protobufRecognizer = protobuf.NewSerializer(nil, nil)

func hasProtobuf(obj runtime.Object) bool {
	_, ok := obj.(runtime.ProtobufMarshaller)
	return ok
}
