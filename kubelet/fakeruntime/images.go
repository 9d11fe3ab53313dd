package fakeruntime

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
)

// Image is an image on the node.
type Image struct {
	Ref  string // as the pod spec names it, e.g. "nginx:1.25"
	ID   string // "fake://sha256:<hex>", the container status' imageID
	Size int64  // bytes, what node.status.images reports
}

// Fake images weigh between 10 and 250 MiB, the range of common base and
// application images, so the scheduler's ImageLocality score has something
// to compare.
const (
	minImageSize = 10 << 20
	maxImageSize = 250 << 20
)

// NewImage describes the image ref. Its digest and size are derived from
// the name alone, so every node (and every restart) agrees on them.
func NewImage(ref string) Image {
	sum := sha256.Sum256([]byte(ref))
	size := minImageSize + int64(binary.BigEndian.Uint64(sum[:8])%(maxImageSize-minImageSize))
	return Image{Ref: ref, ID: "fake://sha256:" + hex.EncodeToString(sum[:]), Size: size}
}

// ImageStatus reports whether ref is on the node (CRI ImageStatus).
func (r *Runtime) ImageStatus(ref string) (Image, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	img, ok := r.images[ref]
	return img, ok
}

// PullImage "downloads" ref: it waits the pull delay on the runtime's
// clock, then remembers the image (CRI PullImage). It fails only if ctx
// ends first.
func (r *Runtime) PullImage(ctx context.Context, ref string) (Image, error) {
	if r.pullDelay > 0 {
		select {
		case <-ctx.Done():
			return Image{}, ctx.Err()
		case <-r.clock.After(r.pullDelay):
		}
	}
	img := NewImage(ref)
	r.AddImage(img)
	return img, nil
}

// AddImage puts img on the node without pulling it: how a restarted kubelet
// remembers the images its node already reported.
func (r *Runtime) AddImage(img Image) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images[img.Ref] = img
}

// ListImages returns the node's images, largest first, then by name: the
// order in which the kubelet reports them in node.status.images.
func (r *Runtime) ListImages() []Image {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Image, 0, len(r.images))
	for _, img := range r.images {
		out = append(out, img)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Size != out[j].Size {
			return out[i].Size > out[j].Size
		}
		return out[i].Ref < out[j].Ref
	})
	return out
}
