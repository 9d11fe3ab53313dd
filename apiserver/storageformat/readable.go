package storageformat

import (
	"encoding/json"
	"fmt"
)

// Readable is a stored value as JSON, whatever its format, and the format
// it was in: a protobuf value is decoded into the Go type its envelope
// names (which the codec's scheme must know) and written as JSON, as
// `kubectl get -o json` would show the object, but without the
// resourceVersion, which is not stored (it is the key's etcd revision).
func (c Codec) Readable(value []byte) ([]byte, MediaType, error) {
	if !IsProtobuf(value) {
		if !json.Valid(value) {
			return nil, "", fmt.Errorf("the value is neither protobuf nor JSON")
		}
		return value, JSON, nil
	}
	obj, gvk, err := c.protobuf.Decode(value, nil, nil)
	if err != nil {
		return nil, Protobuf, fmt.Errorf("decode protobuf value (%v): %w", gvk, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	data, err := json.Marshal(obj)
	return data, Protobuf, err
}
