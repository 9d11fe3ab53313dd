package nodestatus

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// imagesMaxAge is how long a fleet's nodes share one ListImages: they
// share one runtime, so its images are every node's, and 5,000 nodes
// need not ask for them 500 times a second.
const imagesMaxAge = time.Second

// ImageLister is the runtime's image service (CRI ListImages).
type ImageLister interface {
	ListImages(ctx context.Context, in *runtimeapi.ListImagesRequest, opts ...grpc.CallOption) (*runtimeapi.ListImagesResponse, error)
}

// Images are the runtime's images as a fleet's nodes share them, under
// their own lock.
type Images struct {
	runtime ImageLister
	clock   clock.PassiveClock

	mu       sync.Mutex
	cache    []corev1.ContainerImage
	at       time.Time
	fetching bool
}

// NewImages returns the images of runtime, not yet asked for.
func NewImages(runtime ImageLister, clk clock.PassiveClock) *Images {
	return &Images{runtime: runtime, clock: clk}
}

// List is the runtime's images as node.status.images lists them,
// asked for at most once per imagesMaxAge. While one node asks, the
// others take the images last seen rather than queue behind it.
func (c *Images) List(ctx context.Context) ([]corev1.ContainerImage, error) {
	c.mu.Lock()
	now := c.clock.Now()
	fresh := !c.at.IsZero() && now.Sub(c.at) < imagesMaxAge
	if fresh || (c.fetching && c.cache != nil) {
		defer c.mu.Unlock()
		return c.cache, nil
	}
	c.fetching = true
	c.mu.Unlock()
	resp, err := c.runtime.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetching = false
	if err != nil {
		return nil, err
	}
	imgs := make([]corev1.ContainerImage, 0, len(resp.GetImages()))
	for _, img := range resp.GetImages() {
		names := append(append([]string{}, img.GetRepoDigests()...), img.GetRepoTags()...)
		imgs = append(imgs, corev1.ContainerImage{Names: names, SizeBytes: int64(img.GetSize())})
	}
	sort.SliceStable(imgs, func(i, j int) bool {
		if imgs[i].SizeBytes != imgs[j].SizeBytes {
			return imgs[i].SizeBytes > imgs[j].SizeBytes
		}
		return strings.Join(imgs[i].Names, ",") < strings.Join(imgs[j].Names, ",")
	})
	c.cache, c.at = imgs, now
	return imgs, nil
}

// Changed makes the next List ask the runtime again: a node pulled
// one.
func (c *Images) Changed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = time.Time{}
}
