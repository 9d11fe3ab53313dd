package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/mkube/mkube/client"
)

// serveResource answers every /api and /apis resource path: the object
// or collection itself here, a subresource by the handler its Resource
// declares.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request) {
	if proxy := s.aggregated(r); proxy != nil {
		proxy.ServeHTTP(w, r)
		return
	}
	info, ok := parseRequestInfo(r)
	if !ok {
		writeError(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
		return
	}
	served := s.served.Load()
	res, ok := served.lookup(info.GroupVersion, info.Resource)
	if !ok || (info.Namespace != "" && !res.Namespaced) {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	switch dry := r.URL.Query()["dryRun"]; {
	case len(dry) == 0:
	case len(dry) == 1 && dry[0] == metav1.DryRunAll:
		r = r.WithContext(withDryRun(r.Context()))
	default:
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("dryRun: Unsupported value: %q: supported values: \"All\"", dry)))
		return
	}
	r = withWarnings(r, w) // what admission webhooks warn the client of
	q := &Request{W: w, R: r, Info: info, Storage: served.storages[res], srv: s}
	if info.Subresource == "" {
		s.serveMain(q)
		return
	}
	sub, ok := res.subresource(info.Subresource)
	switch {
	case !ok:
		writeError(w, apierrors.NewNotFound(res.GroupResource(), info.Name+"/"+info.Subresource))
	case !slices.Contains(sub.Verbs, info.Verb) && !(sub.AnyMethod && info.Verb == ""):
		writeError(w, apierrors.NewMethodNotSupported(res.GroupResource(), info.Verb))
	default:
		sub.Serve(q)
	}
}

func (s *Server) serveMain(q *Request) {
	if q.Storage.res.Virtual != nil {
		s.serveVirtual(q)
		return
	}
	switch q.Info.Verb {
	case "get":
		obj, err := q.Storage.Get(q.R.Context(), q.Info.Namespace, q.Info.Name)
		if err != nil {
			writeError(q.W, err)
			return
		}
		s.writeObjects(q, []runtime.Object{obj}, nil)
	case "list":
		s.list(q)
	case "watch":
		s.watch(q)
	case "create":
		s.create(q)
	case "update":
		s.update(q, "")
	case "patch":
		s.patch(q, "")
	case "delete":
		s.delete(q)
	case "deletecollection":
		s.deleteCollection(q)
	default:
		writeError(q.W, apierrors.NewMethodNotSupported(q.Storage.res.GroupResource(), q.R.Method))
	}
}

// serveVirtual answers a create of a computed resource; nothing is stored.
func (s *Server) serveVirtual(q *Request) {
	if q.Info.Verb != "create" {
		writeError(q.W, apierrors.NewMethodNotSupported(q.Storage.res.GroupResource(), q.Info.Verb))
		return
	}
	// A review has no rows to print: a client that takes only a Table
	// gets 406, as from kube-apiserver, whose reviews have no table
	// convertor. Nothing is computed.
	if wantsTable(q.R) && !acceptsPlain(q.R) {
		writeError(q.W, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
			Reason: metav1.StatusReasonNotAcceptable, Message: "only the following media types are accepted: application/json, application/yaml"}})
		return
	}
	obj, err := s.decodeBody(q)
	if err == nil {
		obj, err = q.Storage.res.Virtual(q.R.Context(), obj)
	}
	respond(q.W, http.StatusCreated, obj, err)
}

// respond writes obj, or the error as a Status.
func respond(w http.ResponseWriter, code int, obj any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, code, obj)
}

func (s *Server) filter(q *Request) (*filter, error) {
	query := q.R.URL.Query()
	return newFilter(q.Storage.res, q.Info.Namespace, query.Get("labelSelector"), query.Get("fieldSelector"))
}

func (s *Server) list(q *Request) {
	f, err := s.filter(q)
	if err != nil {
		writeError(q.W, err)
		return
	}
	query := q.R.URL.Query()
	limit, _ := strconv.ParseInt(query.Get("limit"), 10, 64)
	page, err := listPage(q.R.Context(), q.Storage, f, limit, query.Get("continue"))
	if err != nil {
		writeError(q.W, err)
		return
	}
	s.log.Debug("list", "resource", q.Storage.res.Name, "namespace", q.Info.Namespace, "items", len(page.items), "rv", page.rev)
	s.writeObjects(q, page.items, &metav1.ListMeta{ResourceVersion: strconv.FormatInt(page.rev, 10), Continue: page.next,
		RemainingItemCount: page.remaining})
}

// writeObjects answers a get (listMeta nil: one object) or a list, in
// the media type negotiated from Accept (negotiate.go): a Table for
// kubectl's human output, or the objects as protobuf, YAML or JSON.
func (s *Server) writeObjects(q *Request, objs []runtime.Object, listMeta *metav1.ListMeta) {
	mt, err := negotiateOutput(q.R, q.Storage.res)
	if err != nil {
		writeError(q.W, err)
		return
	}
	var out runtime.Object
	switch {
	case mt.table:
		t := newTable(q.Storage.res, objs, q.R.URL.Query().Get("includeObject"), s.clock.Now(), true)
		if listMeta != nil {
			t.ListMeta = *listMeta
		} else {
			t.ResourceVersion = rvOf(objs[0])
		}
		out = t
	case listMeta == nil:
		out = objs[0]
	default:
		list := q.Storage.res.NewList()
		if err := meta.SetList(list, objs); err != nil {
			writeError(q.W, apierrors.NewInternalError(err))
			return
		}
		lm, _ := meta.ListAccessor(list)
		lm.SetResourceVersion(listMeta.ResourceVersion)
		lm.SetContinue(listMeta.Continue)
		lm.SetRemainingItemCount(listMeta.RemainingItemCount)
		list.GetObjectKind().SetGroupVersionKind(q.Storage.res.GroupVersion.WithKind(q.Storage.res.Kind + "List"))
		out = list
	}
	switch {
	case mt.protobuf():
		writeProtobuf(q.W, http.StatusOK, mt, out)
	case mt.yaml():
		writeYAML(q.W, http.StatusOK, out)
	default:
		writeJSON(q.W, http.StatusOK, out)
	}
}

func (s *Server) watch(q *Request) {
	f, err := s.filter(q)
	if err != nil {
		writeError(q.W, err)
		return
	}
	query := q.R.URL.Query()
	req := watchRequest{
		filter:            f,
		resourceVersion:   query.Get("resourceVersion"),
		allowBookmarks:    query.Get("allowWatchBookmarks") == "true",
		sendInitialEvents: query.Get("sendInitialEvents") == "true",
		timeout:           watchTimeout(query.Get("timeoutSeconds")),
	}
	if req.sendInitialEvents && req.resourceVersion != "" && req.resourceVersion != "0" {
		writeError(q.W, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("ListOptions").GroupKind(), "",
			fieldErr("sendInitialEvents", "sendInitialEvents is forbidden for resourceVersion other than \"\" or \"0\"")))
		return
	}
	s.log.Debug("watch started", "resource", q.Storage.res.Name, "namespace", q.Info.Namespace, "rv", req.resourceVersion)
	s.serveWatch(q.W, q.R, q.Storage, req)
}

func (s *Server) create(q *Request) {
	obj, err := s.decodeBody(q)
	if err != nil {
		writeError(q.W, err)
		return
	}
	m, _ := meta.Accessor(obj)
	if q.Storage.res.Namespaced {
		if m.GetNamespace() != "" && m.GetNamespace() != q.Info.Namespace {
			writeError(q.W, badRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return
		}
		m.SetNamespace(q.Info.Namespace)
	}
	if obj, err = s.trackUpdate(q.R, q.Storage.res, nil, obj); err != nil {
		writeError(q.W, err)
		return
	}
	created, err := q.Storage.Create(q.R.Context(), obj)
	if err == nil {
		s.logWrite(q, created)
	}
	respond(q.W, http.StatusCreated, created, err)
}

// decodeBody reads the request body as an object of the URL's kind.
func (s *Server) decodeBody(q *Request) (runtime.Object, error) {
	data, err := readBody(q.R)
	if err != nil {
		return nil, err
	}
	mode, err := fieldValidation(q.R)
	if err != nil {
		return nil, err
	}
	obj, unknown, err := q.Storage.res.decode(data)
	if err != nil {
		return nil, err
	}
	return obj, checkFields(q.W, mode, unknown)
}

// update is PUT: the body replaces the object. A body carrying
// metadata.resourceVersion is a precondition: stale means 409 Conflict.
func (s *Server) update(q *Request, subresource string) {
	obj, err := s.decodeBody(q)
	if err != nil {
		writeError(q.W, err)
		return
	}
	updated, err := q.Storage.Update(q.R.Context(), q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
		next, err := q.Storage.prepareUpdate(q.R.Context(), cur, obj.DeepCopyObject(), subresource)
		if err != nil {
			return nil, err
		}
		return s.trackUpdate(q.R, q.Storage.res, cur, next)
	})
	if err == nil {
		s.logWrite(q, updated)
	}
	respond(q.W, http.StatusOK, updated, err)
}

// patch applies a JSON merge patch, a JSON patch or a strategic merge patch
// to the current object, then proceeds as an update.
func (s *Server) patch(q *Request, subresource string) {
	data, err := readBody(q.R)
	if err != nil {
		writeError(q.W, err)
		return
	}
	mode, err := fieldValidation(q.R)
	if err != nil {
		writeError(q.W, err)
		return
	}
	patchType := types.PatchType(q.R.Header.Get("Content-Type"))
	if patchType == types.ApplyPatchType {
		s.serverSideApply(q, data, subresource, mode)
		return
	}
	var problems []string
	updated, err := q.Storage.Update(q.R.Context(), q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
		next, patched, err := applyPatch(cur, patchType, data, q.Storage.res)
		if err != nil {
			return nil, err
		}
		if q.Storage.res.Decode != nil {
			next, problems, err = q.Storage.res.decode(patched)
			if err != nil {
				return nil, err
			}
		} else {
			problems = unknownFields(patched, q.Storage.res.GVK(), q.Storage.res.New())
		}
		if mode == "Strict" && len(problems) > 0 {
			return nil, checkFields(q.W, mode, problems)
		}
		if next, err = q.Storage.prepareUpdate(q.R.Context(), cur, next, subresource); err != nil {
			return nil, err
		}
		return s.trackUpdate(q.R, q.Storage.res, cur, next)
	})
	if err == nil {
		checkFields(q.W, mode, problems) // Warn: the headers go out with the answer
		s.logWrite(q, updated)
	}
	respond(q.W, http.StatusOK, updated, err)
}

// serverSideApply merges an apply patch into the object, or creates it.
func (s *Server) serverSideApply(q *Request, data []byte, subresource, mode string) {
	applied, err := decodeApplied(data, q.Storage.res, mode)
	if err != nil {
		writeError(q.W, err)
		return
	}
	if applied.GetName() != q.Info.Name {
		writeError(q.W, badRequest("the name of the object (%s) does not match the name on the URL (%s)", applied.GetName(), q.Info.Name))
		return
	}
	ctx := q.R.Context()
	updated, err := q.Storage.Update(ctx, q.Info.Namespace, q.Info.Name, func(cur runtime.Object) (runtime.Object, error) {
		next, err := s.apply(q.R, q.Storage.res, cur, applied)
		if err != nil {
			return nil, err
		}
		return q.Storage.prepareUpdate(ctx, cur, next, subresource)
	})
	if apierrors.IsNotFound(err) && subresource == "" {
		applied.SetNamespace(q.Info.Namespace)
		var obj runtime.Object
		if obj, err = s.apply(q.R, q.Storage.res, emptyLike(q.Storage.res, applied), applied); err == nil {
			if obj, err = q.Storage.Create(ctx, obj); err == nil {
				s.logWrite(q, obj)
			}
		}
		respond(q.W, http.StatusCreated, obj, err)
		return
	}
	if err == nil {
		s.logWrite(q, updated)
	}
	respond(q.W, http.StatusOK, updated, err)
}

// applyPatch returns a new object: cur with the patch applied, and the
// patched JSON (for field validation).
func applyPatch(cur runtime.Object, patchType types.PatchType, patch []byte, res *Resource) (runtime.Object, []byte, error) {
	original, err := json.Marshal(cur)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	var patched []byte
	switch patchType {
	case types.MergePatchType:
		patched, err = jsonpatch.MergePatch(original, patch)
	case types.JSONPatchType:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(patch); err == nil {
			patched, err = p.Apply(original)
		}
	case types.StrategicMergePatchType:
		if _, typed := res.New().(*unstructured.Unstructured); typed {
			// No Go type says how a custom resource's lists merge.
			return nil, nil, unsupportedPatchType(types.JSONPatchType, types.MergePatchType, types.ApplyPatchType)
		}
		patched, err = strategicpatch.StrategicMergePatch(original, patch, res.New())
	default:
		return nil, nil, unsupportedPatchType(types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType)
	}
	if err != nil {
		return nil, nil, badRequest("the patch could not be applied: %v", err)
	}
	next := res.New()
	if err := json.Unmarshal(patched, next); err != nil {
		return nil, nil, badRequest("the patched object is not a valid %s: %v", res.Kind, err)
	}
	if gvk := next.GetObjectKind().GroupVersionKind(); gvk != res.GVK() {
		return nil, nil, badRequest("a patch may not change apiVersion or kind")
	}
	return next, patched, nil
}

func (s *Server) delete(q *Request) {
	opts, err := deleteOptions(q.R)
	if err != nil {
		writeError(q.W, err)
		return
	}
	ctx := q.R.Context()
	if len(opts.DryRun) > 0 { // kubectl sends it in the body of a DELETE
		ctx = withDryRun(ctx)
	}
	obj, deleted, err := q.Storage.Delete(ctx, q.Info.Namespace, q.Info.Name, opts)
	if err == nil && !isDryRun(ctx) {
		s.log.Info("deleted", "resource", q.Storage.res.Name, "object", client.KeyOf(obj), "gone", deleted, "rv", rvOf(obj))
	}
	respond(q.W, http.StatusOK, obj, err)
}

// deleteCollection deletes every object the selectors match, one by one,
// each with the same options.
func (s *Server) deleteCollection(q *Request) {
	opts, err := deleteOptions(q.R)
	if err != nil {
		writeError(q.W, err)
		return
	}
	f, err := s.filter(q)
	if err != nil {
		writeError(q.W, err)
		return
	}
	page, err := listPage(q.R.Context(), q.Storage, f, 0, "")
	if err != nil {
		writeError(q.W, err)
		return
	}
	ctx := q.R.Context()
	if len(opts.DryRun) > 0 {
		ctx = withDryRun(ctx)
	}
	var gone []runtime.Object
	for _, obj := range page.items {
		m, _ := meta.Accessor(obj)
		if _, _, err := q.Storage.Delete(ctx, m.GetNamespace(), m.GetName(), opts); err != nil && !apierrors.IsNotFound(err) {
			writeError(q.W, err)
			return
		}
		gone = append(gone, obj)
	}
	list := q.Storage.res.NewList()
	meta.SetList(list, gone)
	list.GetObjectKind().SetGroupVersionKind(q.Storage.res.GroupVersion.WithKind(q.Storage.res.Kind + "List"))
	writeJSON(q.W, http.StatusOK, list)
}

// protobufMagic starts every Kubernetes protobuf body.
var protobufMagic = []byte("k8s\x00")

// deleteOptions merges the DeleteOptions body (if any) with the query
// parameters gracePeriodSeconds and propagationPolicy.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	data, err := readBody(r)
	if err != nil {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(data, protobufMagic):
		// client-go's typed clients send DeleteOptions as protobuf: the
		// magic, then a runtime.Unknown envelope around the message.
		var envelope runtime.Unknown
		if err := envelope.Unmarshal(data[len(protobufMagic):]); err != nil {
			return nil, badRequest("invalid DeleteOptions: %v", err)
		}
		if err := opts.Unmarshal(envelope.Raw); err != nil {
			return nil, badRequest("invalid DeleteOptions: %v", err)
		}
	case len(data) > 0:
		if err := json.Unmarshal(data, opts); err != nil {
			return nil, badRequest("invalid DeleteOptions: %v", err)
		}
	}
	query := r.URL.Query()
	if v := query.Get("gracePeriodSeconds"); v != "" {
		g, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, badRequest("invalid gracePeriodSeconds %q", v)
		}
		opts.GracePeriodSeconds = &g
	}
	if v := query.Get("propagationPolicy"); v != "" {
		p := metav1.DeletionPropagation(v)
		opts.PropagationPolicy = &p
	}
	if p := opts.PropagationPolicy; p != nil {
		switch *p {
		case metav1.DeletePropagationBackground, metav1.DeletePropagationForeground, metav1.DeletePropagationOrphan:
		default:
			return nil, apierrors.NewInvalid(metav1.SchemeGroupVersion.WithKind("DeleteOptions").GroupKind(), "",
				fieldErr("propagationPolicy", "propagationPolicy must be Background, Foreground or Orphan"))
		}
	}
	return opts, nil
}

func rvOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
