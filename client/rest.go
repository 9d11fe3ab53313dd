package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Client is a REST client for one API server.
type Client struct {
	base      string
	http      *http.Client
	userAgent string
	// user is who the client's certificate says it is (kubeconfig.go);
	// empty on the plain port.
	user Identity
	// impersonate are the Impersonate-* headers every request carries,
	// nil unless Impersonate made this client.
	impersonate http.Header
	// metrics records every request (metrics.go); nil records nothing.
	metrics *Metrics
}

// New returns a client for the server at base (e.g. http://127.0.0.1:8080),
// the learner's plain port: no credentials. userAgent names the component
// in the server's logs. FromKubeconfig is the secure port's.
func New(base, userAgent string) *Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// Controllers and the scheduler send bursts of writes; keeping enough
	// idle connections avoids a new TCP handshake per request.
	transport.MaxIdleConnsPerHost = 64
	return &Client{base: strings.TrimRight(base, "/"), http: &http.Client{Transport: transport}, userAgent: userAgent}
}

// Get reads one object into out.
func (c *Client) Get(ctx context.Context, r Resource, namespace, name string, out runtime.Object) error {
	return c.do(ctx, http.MethodGet, r.Path(namespace, name), nil, "", nil, out)
}

// ListOptions narrow a list or watch.
type ListOptions struct {
	LabelSelector   string
	FieldSelector   string
	ResourceVersion string
	Limit           int64
	Continue        string
	TimeoutSeconds  int64
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("labelSelector", o.LabelSelector)
	set("fieldSelector", o.FieldSelector)
	set("resourceVersion", o.ResourceVersion)
	set("continue", o.Continue)
	if o.Limit > 0 {
		q.Set("limit", fmt.Sprint(o.Limit))
	}
	if o.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", fmt.Sprint(o.TimeoutSeconds))
	}
	return q
}

// List reads a collection into out (a *PodList, *NodeList, ...).
func (c *Client) List(ctx context.Context, r Resource, namespace string, opts ListOptions, out runtime.Object) error {
	return c.do(ctx, http.MethodGet, r.Path(namespace, ""), opts.query(), "", nil, out)
}

// Create posts obj; out (may be obj) receives what the server stored.
func (c *Client) Create(ctx context.Context, r Resource, namespace string, obj, out runtime.Object) error {
	return c.do(ctx, http.MethodPost, r.Path(namespace, ""), nil, "application/json", obj, out)
}

// Update replaces the object (PUT); a resourceVersion in obj makes it fail
// with a Conflict if somebody wrote first.
func (c *Client) Update(ctx context.Context, r Resource, namespace, name string, obj, out runtime.Object) error {
	return c.do(ctx, http.MethodPut, r.Path(namespace, name), nil, "application/json", obj, out)
}

// UpdateStatus writes only the status (PUT .../status).
func (c *Client) UpdateStatus(ctx context.Context, r Resource, namespace, name string, obj, out runtime.Object) error {
	return c.do(ctx, http.MethodPut, r.Path(namespace, name, "status"), nil, "application/json", obj, out)
}

// Patch sends a patch of the given type to the object or, with
// subresource, to that subresource.
func (c *Client) Patch(ctx context.Context, r Resource, namespace, name string, pt types.PatchType, patch []byte, out runtime.Object, subresource ...string) error {
	return c.do(ctx, http.MethodPatch, r.Path(namespace, name, subresource...), nil, string(pt), json.RawMessage(patch), out)
}

// Delete deletes the object; opts may be nil.
func (c *Client) Delete(ctx context.Context, r Resource, namespace, name string, opts *metav1.DeleteOptions) error {
	var body any
	if opts != nil {
		body = opts
	}
	return c.do(ctx, http.MethodDelete, r.Path(namespace, name), nil, "application/json", body, nil)
}

// Post sends body to a subresource, such as pods/NAME/binding.
func (c *Client) Post(ctx context.Context, r Resource, namespace, name, subresource string, body any) error {
	return c.do(ctx, http.MethodPost, r.Path(namespace, name, subresource), nil, "application/json", body, nil)
}

func (c *Client) do(ctx context.Context, method, path string, query url.Values, contentType string, body any, out any) error {
	resp, err := c.send(ctx, method, path, query, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return statusError(resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode response: %w", method, path, err)
		}
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, contentType string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	for k, v := range c.impersonate {
		req.Header[k] = v // shared, read-only: the transport never writes a request's headers
	}
	began := time.Now() // a real duration for the metric, whatever clock the caller runs on
	resp, err := c.http.Do(req)
	c.metrics.observe(method, c.base, resp, time.Since(began))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return resp, nil
}

// statusError turns an error response into the *apierrors.StatusError the
// server meant, so callers can ask apierrors.IsNotFound(err) and friends.
func statusError(code int, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" {
		return &apierrors.StatusError{ErrStatus: st}
	}
	return apierrors.NewGenericServerResponse(code, "", schemaGroupResource, "", strings.TrimSpace(string(body)), 0, true)
}

// WaitForServer polls /readyz until the server answers, ctx ends, or
// timeout passes: components may start before the API server does.
func (c *Client) WaitForServer(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		resp, err := c.send(ctx, http.MethodGet, "/readyz", nil, "", nil)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("api server %s not ready: %w", c.base, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Do sends a request to any path of the API server, for what has no typed
// method: discovery (/api, /apis/apps/v1), or the collections of kinds
// learned from discovery. body and out may be nil.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	contentType := ""
	if body != nil {
		contentType = "application/json"
	}
	return c.do(ctx, method, path, nil, contentType, body, out)
}
