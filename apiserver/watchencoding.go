package apiserver

import (
	"bytes"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
)

// streamEncoding is one of the two ways a watch stream is written, as
// kube-apiserver writes them:
//
//   - JSON (Content-Type application/json): one WatchEvent per line,
//     {"type":"ADDED","object":{...}}.
//   - protobuf (application/vnd.kubernetes.protobuf;stream=watch): frames
//     of a 4-byte big-endian length, then a metav1.WatchEvent message
//     (no magic, no envelope: the stream's "raw" serializer) whose object
//     is a runtime.RawExtension holding the object as a protobuf body of
//     its own: "k8s\x00", then a runtime.Unknown naming apiVersion and kind.
//
// The object inside is what the watch cache encodes once per event and
// encoding (watchEvent.objBytes); the envelope is written per watcher.
type streamEncoding int

const (
	streamJSON streamEncoding = iota
	streamProtobuf
	numStreamEncodings // the size of a watchEvent's per-encoding caches
)

// streamEncodingOf is the stream encoding of a negotiated media type
// (negotiateStream offers only the two).
func streamEncodingOf(m mediaType) streamEncoding {
	if m.protobuf() {
		return streamProtobuf
	}
	return streamJSON
}

// The protobuf serializers of a watch stream: the event's (raw: the
// message alone) and the object's (magic and envelope), the same
// apimachinery serializers that client-go decodes them with.
var (
	protobufObjects = protobuf.NewSerializer(scheme, scheme)
	protobufEvents  = protobuf.NewRawSerializer(scheme, scheme)
)

// encode encodes one object for the inside of an event.
func (enc streamEncoding) encode(obj runtime.Object) ([]byte, error) {
	if enc == streamProtobuf {
		var buf bytes.Buffer
		if err := protobufObjects.Encode(obj, &buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return jsonEncode(obj)
}

// eventEnvelope writes one event around an already-encoded object.
type eventEnvelope struct {
	enc streamEncoding
	w   io.Writer // for protobuf, a length-delimited frame writer around the response
	buf bytes.Buffer
}

func newEventEnvelope(enc streamEncoding, w io.Writer) *eventEnvelope {
	if enc == streamProtobuf {
		w = protobuf.LengthDelimitedFramer.NewFrameWriter(w)
	}
	return &eventEnvelope{enc: enc, w: w}
}

// write sends one event: for JSON, the line is put together by hand
// (the object's bytes are already JSON, so the envelope is two constant
// strings and the type, cheaper than a second json.Marshal that would
// re-validate the object); for protobuf the WatchEvent message is
// encoded by apimachinery's serializer, then framed.
func (e *eventEnvelope) write(typ string, obj []byte) error {
	e.buf.Reset()
	if e.enc == streamProtobuf {
		ev := metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: obj}}
		if err := protobufEvents.Encode(&ev, &e.buf); err != nil {
			return err
		}
	} else {
		e.buf.WriteString(`{"type":"`)
		e.buf.WriteString(typ) // ADDED, MODIFIED, ...: nothing to escape
		e.buf.WriteString(`","object":`)
		e.buf.Write(obj)
		e.buf.WriteString("}\n")
	}
	_, err := e.w.Write(e.buf.Bytes())
	return err
}
