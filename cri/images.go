package cri

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/mkube/mkube/images"
)

// image is an image on the node. Nothing is downloaded: its ID and size
// are made up from its name, so every node (and every restart) agrees.
type image struct {
	ref  string // normalized: "docker.io/library/nginx:1.25"
	id   string // "sha256:<hex>", what PullImage returns as image_ref
	size uint64
}

// An image the catalog knows weighs what it does on a real node; any
// other weighs between 10 and 250 MiB, the range of common base and
// application images, so the scheduler's ImageLocality score has
// something to compare. That size is derived from a hash of the
// normalized name, so every node agrees on it, and "nginx" and
// "docker.io/library/nginx:latest" are one image.
const (
	minImageSize = 10 << 20
	maxImageSize = 250 << 20
)

func newImage(ref string) *image {
	sum := sha256.Sum256([]byte(ref))
	size := images.Size(ref) // a known image weighs what it does on a real node
	if size == 0 {
		size = minImageSize + binary.BigEndian.Uint64(sum[:8])%(maxImageSize-minImageSize)
	}
	return &image{ref: ref, id: "sha256:" + hex.EncodeToString(sum[:]), size: size}
}

// findImage resolves what a client calls an image: its ID ("sha256:..."
// or the bare hex), or any spelling of its name ("nginx:1.25"). Callers
// hold s.mu.
func (s *Server) findImage(name string) (*image, error) {
	if img, ok := s.images[name]; ok {
		return img, nil
	}
	if img, ok := s.images["sha256:"+name]; ok {
		return img, nil
	}
	ref, err := normalizeRef(name)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if img, ok := s.images[newImage(ref).id]; ok {
		return img, nil
	}
	return nil, status.Errorf(codes.NotFound, "image %q not found", name)
}

// ListImages returns the node's images, by name; with a filter, only the
// image it names.
func (s *Server) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if name := req.GetFilter().GetImage().GetImage(); name != "" {
		img, err := s.findImage(name)
		if err != nil {
			return &runtimeapi.ListImagesResponse{}, nil
		}
		return &runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{img.toCRI()}}, nil
	}
	imgs := make([]*image, 0, len(s.images))
	for _, img := range s.images {
		imgs = append(imgs, img)
	}
	sort.Slice(imgs, func(i, j int) bool { return imgs[i].ref < imgs[j].ref })
	out := make([]*runtimeapi.Image, len(imgs))
	for i, img := range imgs {
		out[i] = img.toCRI()
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// ImageStatus reports the image, or — as CRI says — a nil image, not an
// error, when it is not on the node: that is how the kubelet decides to
// pull it.
func (s *Server) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img, err := s.imageNamed(req.GetImage())
	if err != nil {
		return nil, err
	}
	if img == nil {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: img.toCRI()}, nil
}

// imageNamed is the image a request names, nil if it is not on the node.
// Callers hold s.mu.
func (s *Server) imageNamed(spec *runtimeapi.ImageSpec) (*image, error) {
	if spec.GetImage() == "" {
		return nil, status.Error(codes.InvalidArgument, "image is required")
	}
	img, err := s.findImage(spec.GetImage())
	if status.Code(err) == codes.NotFound {
		return nil, nil
	}
	return img, err
}

// PullImage "downloads" the image: it waits the pull delay on the
// runtime's clock, then keeps the image. It returns the image ID, which
// the kubelet then passes to CreateContainer.
func (s *Server) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	ref, err := normalizeRef(name)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "pull image %q: %v", name, err)
	}
	if d := s.opts.ImagePullDelay; d > 0 {
		select {
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-s.clock.After(d):
		}
	}
	// Some images cannot be had (images.PullError): a tag that does not
	// exist is NotFound, as containerd reports it; a registry that does
	// not resolve is Unknown.
	if err := images.PullError(ref); err != nil {
		code := codes.Unknown
		if errors.Is(err, images.ErrNotFound) {
			code = codes.NotFound
		}
		s.log.Info("image pull failed", "image", name, "ref", ref, "err", err)
		return nil, status.Error(code, err.Error())
	}
	img := newImage(ref)
	s.mu.Lock()
	s.images[img.id] = img
	s.mu.Unlock()
	s.log.Info("pulled image", "image", name, "ref", ref, "id", img.id, "size", img.size)
	return &runtimeapi.PullImageResponse{ImageRef: img.id}, nil
}

// RemoveImage forgets the image. Removing an image that is not there is
// fine: CRI makes this call idempotent. As in containerd, containers made
// from it are not checked; keeping images in use is the kubelet's image
// garbage collector's job.
func (s *Server) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img, err := s.imageNamed(req.GetImage())
	if err != nil {
		return nil, err
	}
	if img == nil {
		return &runtimeapi.RemoveImageResponse{}, nil
	}
	delete(s.images, img.id)
	s.log.Info("removed image", "image", req.GetImage().GetImage(), "id", img.id)
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports one filesystem holding the images, and the
// containers' writable layers beside them, as containerd's overlayfs
// snapshotter does by default. Its use is the images' sizes.
func (s *Server) ImageFsInfo(ctx context.Context, req *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var used uint64
	for _, img := range s.images {
		used += img.size
	}
	fs := &runtimeapi.FilesystemUsage{
		Timestamp:  s.clock.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: "/var/lib/mkube/images"},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: uint64(len(s.images))},
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{fs},
		ContainerFilesystems: []*runtimeapi.FilesystemUsage{fs}}, nil
}

// toCRI describes img. Each name is its own image here, so an image has
// one name: a repo tag, or a repo digest if it was pulled by digest.
func (img *image) toCRI() *runtimeapi.Image {
	out := &runtimeapi.Image{Id: img.id, Size: img.size, Spec: &runtimeapi.ImageSpec{Image: img.id}}
	if strings.Contains(img.ref, "@") {
		out.RepoDigests = []string{img.ref}
	} else {
		out.RepoTags = []string{img.ref}
	}
	return out
}
