package sampleapiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The sample-apiserver's wardle.example.com API: its two kinds as JSON
// carries them in each version, the store that keeps them, and the REST
// handlers k8s.io/apiserver's generic registry gives each resource, with
// the real one's checks in the real one's order:
//
//	create  decode; the URL's namespace; admission (NamespaceLifecycle, BanFlunder);
//	        name (generateName), uid, creationTimestamp; validation; 409 AlreadyExists
//	update  decode; the URL's name and namespace; 404; resourceVersion given (422) and
//	        current (409); uid, creationTimestamp and deletion kept; validation
//	patch   the stored object in the URL's version, patched, then as update
//	delete  404; preconditions (409); with finalizers only marked, else removed: a
//	        Success Status, as the registry answers when it does not return the object
//
// Flunders are stored in wardle's internal form (spec as v1beta1 has
// it) and converted to and from v1alpha1 as the scheme's conversion and
// defaulting functions do; the real one stores v1alpha1 in etcd, which
// round-trips the same.

// wardleResource is one of the group's resources as the server installs it.
type wardleResource struct {
	name, singular, kind string
	namespaced           bool
	versions             []string
}

var wardleResources = []*wardleResource{
	{name: "fischers", singular: "fischer", kind: "Fischer", versions: []string{"v1alpha1"}},
	{name: "flunders", singular: "flunder", kind: "Flunder", namespaced: true, versions: []string{"v1alpha1", "v1beta1"}},
}

func (res *wardleResource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: wardleGroup, Resource: res.name}
}

func (res *wardleResource) groupKind() schema.GroupKind {
	return schema.GroupKind{Group: wardleGroup, Kind: res.kind}
}

// wardleObject is a Flunder or a Fischer as the server keeps it.
type wardleObject struct {
	meta               metav1.ObjectMeta
	spec               flunderSpec // a Flunder's
	disallowedFlunders []string    // a Fischer's: the names BanFlunder refuses
}

// flunderSpec is a Flunder's spec, internal and in v1beta1: what the
// Flunder refers to, another Flunder or a Fischer.
type flunderSpec struct {
	FlunderReference string `json:"flunderReference,omitempty"`
	FischerReference string `json:"fischerReference,omitempty"`
	ReferenceType    string `json:"referenceType,omitempty"`
}

// flunderSpecV1alpha1 is v1alpha1's: one reference, and what it names.
type flunderSpecV1alpha1 struct {
	Reference     string  `json:"reference,omitempty"`
	ReferenceType *string `json:"referenceType,omitempty"`
}

// wardleJSON is either kind in any version, as JSON carries it: a
// Flunder has that version's spec and an empty status, a Fischer its
// disallowedFlunders.
type wardleJSON struct {
	metav1.TypeMeta    `json:",inline"`
	metav1.ObjectMeta  `json:"metadata,omitempty"`
	Spec               json.RawMessage `json:"spec,omitempty"`
	Status             json.RawMessage `json:"status,omitempty"`
	DisallowedFlunders []string        `json:"disallowedFlunders,omitempty"`
}

// wardleListJSON is a FlunderList or a FischerList.
type wardleListJSON struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata"`
	Items           []wardleJSON `json:"items"`
}

// versioned is o as version shows it; typed gives it its kind and
// apiVersion, which a single object has and a list's items do not.
func (o *wardleObject) versioned(res *wardleResource, version string, typed bool) wardleJSON {
	out := wardleJSON{ObjectMeta: *o.meta.DeepCopy()}
	if typed {
		out.TypeMeta = metav1.TypeMeta{Kind: res.kind, APIVersion: wardleGroup + "/" + version}
	}
	if res.name == "fischers" {
		out.DisallowedFlunders = slices.Clone(o.disallowedFlunders)
		return out
	}
	var spec any = o.spec
	if version == "v1alpha1" {
		spec = o.spec.v1alpha1()
	}
	out.Spec, _ = json.Marshal(spec)
	out.Status = json.RawMessage("{}")
	return out
}

// v1alpha1 is Convert_wardle_FlunderSpec_To_v1alpha1_FlunderSpec: the
// reference its type names; no type, no reference.
func (s flunderSpec) v1alpha1() flunderSpecV1alpha1 {
	t := s.ReferenceType
	switch t {
	case "Flunder":
		return flunderSpecV1alpha1{Reference: s.FlunderReference, ReferenceType: &t}
	case "Fischer":
		return flunderSpecV1alpha1{Reference: s.FischerReference, ReferenceType: &t}
	}
	return flunderSpecV1alpha1{}
}

// decodeFlunderSpec reads version's spec into the internal one. A
// v1alpha1 reference without a type is a Flunder's (SetDefaults_FlunderSpec);
// one of any type but Flunder and Fischer converts to nothing.
func decodeFlunderSpec(version string, raw json.RawMessage) (flunderSpec, error) {
	var spec flunderSpec
	if version != "v1alpha1" {
		err := json.Unmarshal(raw, &spec)
		return spec, err
	}
	var in flunderSpecV1alpha1
	if err := json.Unmarshal(raw, &in); err != nil {
		return spec, err
	}
	if (in.ReferenceType == nil || *in.ReferenceType == "") && in.Reference != "" {
		flunder := "Flunder"
		in.ReferenceType = &flunder
	}
	if in.ReferenceType != nil {
		switch *in.ReferenceType {
		case "Flunder":
			spec = flunderSpec{ReferenceType: "Flunder", FlunderReference: in.Reference}
		case "Fischer":
			spec = flunderSpec{ReferenceType: "Fischer", FischerReference: in.Reference}
		}
	}
	return spec, nil
}

// decodeWardle reads a request's body as res's kind, in the version its
// apiVersion names (either of the group's: the scheme converts) or else
// the URL's. Fields the kind does not have are dropped.
func decodeWardle(res *wardleResource, urlVersion string, body []byte) (*wardleObject, error) {
	cannot := func(version string, err error) error {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", res.kind, version, res.kind, err))
	}
	var in wardleJSON
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, cannot(urlVersion, err)
	}
	version := urlVersion
	if in.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(in.APIVersion)
		if err != nil || gv.Group != wardleGroup || !slices.Contains(res.versions, gv.Version) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s/%s)",
				in.APIVersion, wardleGroup, urlVersion))
		}
		version = gv.Version
	}
	if in.Kind != "" && in.Kind != res.kind {
		return nil, cannot(version, fmt.Errorf("the kind in the data is %s", in.Kind))
	}
	o := &wardleObject{meta: in.ObjectMeta}
	if res.name == "fischers" {
		o.disallowedFlunders = in.DisallowedFlunders
		return o, nil
	}
	if len(in.Spec) > 0 && string(in.Spec) != "null" {
		spec, err := decodeFlunderSpec(version, in.Spec)
		if err != nil {
			return nil, cannot(version, err)
		}
		o.spec = spec
	}
	return o, nil
}

// validateFlunderSpec is ValidateFlunderSpec: one reference, of the type
// that names it.
func validateFlunderSpec(s flunderSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	switch {
	case s.FlunderReference != "" && s.FischerReference != "":
		errs = append(errs, field.Invalid(p.Child("fischerReference"), s.FischerReference, "cannot be set with flunderReference at the same time"))
	case s.FlunderReference != "" && s.ReferenceType != "Flunder":
		errs = append(errs, field.Invalid(p.Child("flunderReference"), s.FlunderReference, "cannot be set if referenceType is not Flunder"))
	case s.FischerReference != "" && s.ReferenceType != "Fischer":
		errs = append(errs, field.Invalid(p.Child("fischerReference"), s.FischerReference, "cannot be set if referenceType is not Fischer"))
	case s.FischerReference == "" && s.ReferenceType == "Fischer":
		errs = append(errs, field.Invalid(p.Child("fischerReference"), s.FischerReference, "cannot be empty if referenceType is Fischer"))
	case s.FlunderReference == "" && s.ReferenceType == "Flunder":
		errs = append(errs, field.Invalid(p.Child("flunderReference"), s.FlunderReference, "cannot be empty if referenceType is Flunder"))
	}
	if s.ReferenceType != "" && s.ReferenceType != "Flunder" && s.ReferenceType != "Fischer" {
		errs = append(errs, field.Invalid(p.Child("referenceType"), s.ReferenceType, "must be Flunder or Fischer"))
	}
	return errs
}

// validateMeta is the metadata validation every object gets: names that
// are path segments, labels, annotations..., and on update (old not
// nil) what may not change.
func validateMeta(res *wardleResource, o, old *wardleObject) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaAccessor(&o.meta, res.namespaced, path.ValidatePathSegmentName, field.NewPath("metadata"))
	if old != nil {
		errs = append(errs, apivalidation.ValidateObjectMetaAccessorUpdate(&o.meta, &old.meta, field.NewPath("metadata"))...)
	}
	return errs
}

// wardleStore keeps a server's objects where the real one has etcd: by
// resource, namespace and name, each with the resourceVersion of the
// write that made it, rv, the count of writes so far. A stored object
// is never changed: a write stores a new one.
type wardleStore struct {
	mu      sync.Mutex
	rv      uint64
	objects map[wardleKey]*wardleObject
}

type wardleKey struct{ resource, namespace, name string }

func keyOf(res *wardleResource, meta *metav1.ObjectMeta) wardleKey {
	return wardleKey{res.name, meta.Namespace, meta.Name}
}

// etcdKey is where the real one stores an object (its storage error
// messages name it).
func (k wardleKey) etcdKey() string {
	if k.namespace == "" {
		return "/registry/" + wardleGroup + "/" + k.resource + "/" + k.name
	}
	return "/registry/" + wardleGroup + "/" + k.resource + "/" + k.namespace + "/" + k.name
}

// write stores o under its key with the next resourceVersion; the store
// is locked.
func (st *wardleStore) write(res *wardleResource, o *wardleObject) {
	st.rv++
	o.meta.ResourceVersion = strconv.FormatUint(st.rv, 10)
	st.objects[keyOf(res, &o.meta)] = o
}

// selected are res's objects in namespace ("" is all) that sel and
// fieldSel match, in etcd's key order; the store is locked.
func (st *wardleStore) selected(res *wardleResource, namespace string, sel labels.Selector, fieldSel fields.Selector) []*wardleObject {
	var out []*wardleObject
	for k, o := range st.objects {
		if k.resource != res.name || (namespace != "" && k.namespace != namespace) {
			continue
		}
		if sel.Matches(labels.Set(o.meta.Labels)) && fieldSel.Matches(fields.Set{"metadata.name": k.name, "metadata.namespace": k.namespace}) {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyOf(res, &out[i].meta).etcdKey() < keyOf(res, &out[j].meta).etcdKey() })
	return out
}

// serveResource answers a request for one of the group's resources by
// the routes the installer gives it: a collection (in a namespace, or
// across them for a list) and its items; no subresources.
func (s *wardleServer) serveResource(w http.ResponseWriter, r *http.Request, info requestInfo) {
	var res *wardleResource
	for _, candidate := range wardleResources {
		if candidate.name == info.resource && slices.Contains(candidate.versions, info.version) {
			res = candidate
		}
	}
	collection := info.name == "" || info.verb == "list" || info.verb == "watch" // a list may name one by fieldSelector
	switch {
	case res == nil || info.subresource != "" || (!res.namespaced && info.namespace != "") ||
		(res.namespaced && info.namespace == "" && !collection):
		writeAPIError(w, pageNotFound())
	case info.verb == "watch":
		writeAPIError(w, statusError(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "mkube's simulated sample-apiserver does not serve watch"))
	case res.namespaced && info.namespace == "" && r.Method != http.MethodGet:
		writeAPIError(w, methodNotAllowed())
	case collection && r.Method == http.MethodGet:
		s.list(w, r, res, info)
	case collection && r.Method == http.MethodPost:
		s.create(w, r, res, info)
	case collection && r.Method == http.MethodDelete:
		s.deleteCollection(w, r, res, info)
	case !collection && r.Method == http.MethodGet:
		s.get(w, res, info)
	case !collection && r.Method == http.MethodPut:
		s.update(w, r, res, info)
	case !collection && r.Method == http.MethodPatch:
		s.patch(w, r, res, info)
	case !collection && r.Method == http.MethodDelete:
		s.delete(w, r, res, info)
	default:
		writeAPIError(w, methodNotAllowed())
	}
}

// dryRun is ?dryRun=All: everything but the write.
func dryRun(r *http.Request) bool { return slices.Contains(r.URL.Query()["dryRun"], metav1.DryRunAll) }

func (s *wardleServer) get(w http.ResponseWriter, res *wardleResource, info requestInfo) {
	s.store.mu.Lock()
	o := s.store.objects[wardleKey{res.name, info.namespace, info.name}]
	s.store.mu.Unlock()
	if o == nil {
		writeAPIError(w, apierrors.NewNotFound(res.groupResource(), info.name))
		return
	}
	writeJSON(w, http.StatusOK, o.versioned(res, info.version, true))
}

// selectors are a list's labelSelector and fieldSelector. A kind
// without field label conversions, as both are, selects on
// metadata.name and metadata.namespace only.
func selectors(q url.Values) (labels.Selector, fields.Selector, error) {
	sel, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	fieldSel, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	for _, req := range fieldSel.Requirements() {
		if req.Field != "metadata.name" && req.Field != "metadata.namespace" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q, %q", req.Field, "metadata.name", "metadata.namespace"))
		}
	}
	return sel, fieldSel, nil
}

// list answers a FlunderList or FischerList at the store's current
// resourceVersion, all items in one page (limit and continue are not
// simulated).
func (s *wardleServer) list(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo) {
	sel, fieldSel, err := selectors(r.URL.Query())
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.store.mu.Lock()
	items, rv := s.store.selected(res, info.namespace, sel, fieldSel), s.store.rv
	s.store.mu.Unlock()
	writeJSON(w, http.StatusOK, wardleList(res, info.version, items, rv))
}

func wardleList(res *wardleResource, version string, items []*wardleObject, rv uint64) wardleListJSON {
	list := wardleListJSON{TypeMeta: metav1.TypeMeta{Kind: res.kind + "List", APIVersion: wardleGroup + "/" + version},
		ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(rv, 10)}, Items: []wardleJSON{}}
	for _, o := range items {
		list.Items = append(list.Items, o.versioned(res, version, false))
	}
	return list
}

// decodeRequest is the object in r's body, read as version.
func decodeRequest(r *http.Request, res *wardleResource, version string) (*wardleObject, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return decodeWardle(res, version, body)
}

// create is the registry's Create behind the create handler.
func (s *wardleServer) create(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo) {
	o, err := decodeRequest(r, res, info.version)
	if err == nil {
		err = matchRequestNamespace(&o.meta, info.namespace)
	}
	if err == nil {
		err = s.admitCreate(r.Context(), res, o)
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	// BeforeCreate: the server's fields, then the strategy's validation
	// and, if that passed, the metadata's.
	o.meta.DeletionTimestamp, o.meta.DeletionGracePeriodSeconds = nil, nil
	if o.meta.Name == "" && o.meta.GenerateName != "" {
		o.meta.Name = generateName(o.meta.GenerateName)
	}
	o.meta.UID = uuid.NewUUID()
	o.meta.CreationTimestamp = metav1.NewTime(s.p.Clock.Now()).Rfc3339Copy()
	var errs field.ErrorList
	if res.name == "flunders" {
		errs = validateFlunderSpec(o.spec)
	}
	if len(errs) == 0 {
		errs = validateMeta(res, o, nil)
	}
	if len(errs) > 0 {
		writeAPIError(w, apierrors.NewInvalid(res.groupKind(), o.meta.Name, errs))
		return
	}
	if o.meta.ResourceVersion != "" {
		writeAPIError(w, errors.New("resourceVersion should not be set on objects to be created"))
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	if s.store.objects[keyOf(res, &o.meta)] != nil {
		writeAPIError(w, apierrors.NewAlreadyExists(res.groupResource(), o.meta.Name))
		return
	}
	if !dryRun(r) {
		s.store.write(res, o)
	}
	writeJSON(w, http.StatusCreated, o.versioned(res, info.version, true))
}

// matchRequestNamespace is EnsureObjectNamespaceMatchesRequestNamespace:
// an object without a namespace takes the URL's; a cluster-scoped one
// loses its own.
func matchRequestNamespace(meta *metav1.ObjectMeta, namespace string) error {
	if meta.Namespace != "" && namespace != "" && meta.Namespace != namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	meta.Namespace = namespace
	return nil
}

// generateName is the SimpleNameGenerator: the prefix, cut to leave
// room, and 5 random characters.
func generateName(prefix string) string {
	const maxPrefix = 63 - 5
	if len(prefix) > maxPrefix {
		prefix = prefix[:maxPrefix]
	}
	return prefix + utilrand.String(5)
}

// admitCreate runs the mutating admission plugins that take a create,
// in the real one's order (MutatingAdmissionWebhook, between them, calls
// no webhooks here):
//
//   - NamespaceLifecycle refuses an object in a namespace the cluster
//     does not have, or is terminating. It asks the API server each time,
//     where the real one looks in its informer's cache first and asks
//     only when the namespace is not there.
//   - BanFlunder refuses a Flunder whose name a Fischer's
//     disallowedFlunders lists (the real one reads Fischers from an
//     informer on itself).
func (s *wardleServer) admitCreate(ctx context.Context, res *wardleResource, o *wardleObject) error {
	// Admission errors name the object, its generateName if it has no
	// name yet, or "Unknown".
	name := o.meta.Name
	if name == "" {
		name = o.meta.GenerateName
	}
	if name == "" {
		name = "Unknown"
	}
	if res.namespaced {
		var ns corev1.Namespace
		err := kubeRequest(ctx, s.p, http.MethodGet, "/api/v1/namespaces/"+o.meta.Namespace, nil, &ns)
		switch {
		case apierrors.IsNotFound(err):
			return err // the API server's own: namespaces "x" not found
		case err != nil:
			return apierrors.NewInternalError(err)
		case ns.Status.Phase == corev1.NamespaceTerminating:
			forbidden := apierrors.NewForbidden(res.groupResource(), name,
				fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns.Name))
			forbidden.ErrStatus.Details.Causes = append(forbidden.ErrStatus.Details.Causes, metav1.StatusCause{
				Type: corev1.NamespaceTerminatingCause, Message: fmt.Sprintf("namespace %s is being terminated", ns.Name), Field: "metadata.namespace"})
			return forbidden
		}
	}
	if res.name != "flunders" {
		return nil
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	for k, fischer := range s.store.objects {
		if k.resource == "fischers" && slices.Contains(fischer.disallowedFlunders, o.meta.Name) {
			return apierrors.NewForbidden(res.groupResource(), o.meta.Name, errors.New("this name may not be used, please change the resource name"))
		}
	}
	return nil
}

// update is the registry's Update behind the update handler.
func (s *wardleServer) update(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo) {
	o, err := decodeRequest(r, res, info.version)
	if err == nil {
		err = checkName(o, info)
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	s.replace(w, r, res, info, o)
}

// checkName is the update and patch handlers' check that the object is
// the one the URL names; then it takes the URL's namespace.
func checkName(o *wardleObject, info requestInfo) error {
	if o.meta.Name != info.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", o.meta.Name, info.name))
	}
	if info.namespace != "" && o.meta.Namespace != "" && o.meta.Namespace != info.namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", o.meta.Namespace, info.namespace))
	}
	return matchRequestNamespace(&o.meta, info.namespace)
}

// replace writes o over the stored object as the registry's Update
// does, and answers: 404 without one (no create on update); o's
// resourceVersion must be the stored one's; the old uid (if o has none),
// creationTimestamp, generation and deletion fields are kept; the
// metadata is validated against the old (a Flunder's ValidateUpdate
// checks nothing else). An update that changes nothing writes nothing;
// one that leaves an object marked for deletion no finalizers deletes
// it. The store is locked.
func (s *wardleServer) replace(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo, o *wardleObject) {
	k := keyOf(res, &o.meta)
	old := s.store.objects[k]
	switch {
	case old == nil:
		writeAPIError(w, apierrors.NewNotFound(res.groupResource(), o.meta.Name))
		return
	case o.meta.ResourceVersion == "":
		writeAPIError(w, apierrors.NewInvalid(res.groupKind(), o.meta.Name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update")}))
		return
	case o.meta.ResourceVersion != old.meta.ResourceVersion:
		writeAPIError(w, apierrors.NewConflict(res.groupResource(), o.meta.Name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again")))
		return
	}
	if o.meta.UID == "" {
		o.meta.UID = old.meta.UID
	}
	o.meta.CreationTimestamp, o.meta.Generation = old.meta.CreationTimestamp, old.meta.Generation
	o.meta.DeletionTimestamp, o.meta.DeletionGracePeriodSeconds = old.meta.DeletionTimestamp, old.meta.DeletionGracePeriodSeconds
	if errs := validateMeta(res, o, old); len(errs) > 0 {
		writeAPIError(w, apierrors.NewInvalid(res.groupKind(), o.meta.Name, errs))
		return
	}
	newJSON, _ := json.Marshal(o.versioned(res, res.versions[0], false))
	oldJSON, _ := json.Marshal(old.versioned(res, res.versions[0], false))
	switch {
	case string(newJSON) == string(oldJSON):
		o = old
	case dryRun(r):
	case o.meta.DeletionTimestamp != nil && len(o.meta.Finalizers) == 0:
		s.store.write(res, o)
		delete(s.store.objects, k)
	default:
		s.store.write(res, o)
	}
	writeJSON(w, http.StatusOK, o.versioned(res, info.version, true))
}

// patch is the patch handler: the stored object as the URL's version
// shows it, patched by the body's kind of patch, then updated. A
// strategic merge patch is applied as a merge patch, which is what it
// comes to for these kinds (no list of theirs has a merge key), but for
// its $patch directives.
func (s *wardleServer) patch(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	old := s.store.objects[wardleKey{res.name, info.namespace, info.name}]
	if old == nil {
		writeAPIError(w, apierrors.NewNotFound(res.groupResource(), info.name))
		return
	}
	current, _ := json.Marshal(old.versioned(res, info.version, true))
	patched, err := applyPatch(r.Header.Get("Content-Type"), current, body)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	o, err := decodeWardle(res, info.version, patched)
	if err == nil {
		err = checkName(o, info)
	}
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.replace(w, r, res, info, o)
}

// applyPatch patches the JSON of an object as the patch handler does for
// each patch type, failing in its words.
func applyPatch(contentType string, current, patch []byte) ([]byte, error) {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch mediaType {
	case "application/merge-patch+json", "application/strategic-merge-patch+json":
		patched, err := jsonpatch.MergePatch(current, patch)
		if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		return patched, err
	case "application/json-patch+json":
		ops, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		patched, err := ops.Apply(current)
		if err != nil {
			return nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
		}
		return patched, nil
	case "application/apply-patch+yaml":
		return nil, statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
			"mkube's simulated sample-apiserver does not serve server-side apply")
	}
	return nil, statusError(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, "+
			"application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json")
}

// statusError is an API error of a code and reason the apierrors
// constructors do not word as needed.
func statusError(code int32, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}}
}

// deleteOptions are a DELETE's DeleteOptions, from its body if it has one.
func deleteOptions(r *http.Request) (metav1.DeleteOptions, error) {
	var opts metav1.DeleteOptions
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return opts, err
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &opts); err != nil {
			return opts, apierrors.NewBadRequest(err.Error())
		}
	}
	return opts, nil
}

// delete is the registry's Delete: a Success Status with the deleted
// object's name, group, resource (as "kind") and uid, or the object
// itself if finalizers keep it, marked for deletion.
func (s *wardleServer) delete(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo) {
	opts, err := deleteOptions(r)
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	old := s.store.objects[wardleKey{res.name, info.namespace, info.name}]
	if old == nil {
		writeAPIError(w, apierrors.NewNotFound(res.groupResource(), info.name))
		return
	}
	if err := checkPreconditions(res, old, opts.Preconditions); err != nil {
		writeAPIError(w, err)
		return
	}
	if kept := s.remove(res, old, dryRun(r)); kept != nil {
		writeJSON(w, http.StatusOK, kept.versioned(res, info.version, true))
		return
	}
	writeJSON(w, http.StatusOK, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: old.meta.Name, Group: wardleGroup, Kind: res.name, UID: old.meta.UID}})
}

// checkPreconditions is storage's Preconditions.Check: a 409 whose
// message is the storage error's.
func checkPreconditions(res *wardleResource, o *wardleObject, pre *metav1.Preconditions) error {
	var failed string
	switch {
	case pre == nil:
		return nil
	case pre.UID != nil && *pre.UID != o.meta.UID:
		failed = fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *pre.UID, o.meta.UID)
	case pre.ResourceVersion != nil && *pre.ResourceVersion != o.meta.ResourceVersion:
		failed = fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *pre.ResourceVersion, o.meta.ResourceVersion)
	default:
		return nil
	}
	return apierrors.NewConflict(res.groupResource(), o.meta.Name, fmt.Errorf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s", keyOf(res, &o.meta).etcdKey(), failed))
}

// remove deletes o, or, if it has finalizers, marks it (a
// deletionTimestamp, a grace period of 0) and returns what is kept; an
// object already marked stays as it is. The store is locked.
func (s *wardleServer) remove(res *wardleResource, o *wardleObject, dry bool) (kept *wardleObject) {
	switch {
	case o.meta.DeletionTimestamp != nil:
		return o
	case len(o.meta.Finalizers) > 0:
		marked := &wardleObject{meta: *o.meta.DeepCopy(), spec: o.spec, disallowedFlunders: o.disallowedFlunders}
		now, zero := metav1.NewTime(s.p.Clock.Now()).Rfc3339Copy(), int64(0)
		marked.meta.DeletionTimestamp, marked.meta.DeletionGracePeriodSeconds = &now, &zero
		if !dry {
			s.store.write(res, marked)
		}
		return marked
	case !dry:
		s.store.rv++ // a deletion is a write: it takes a revision
		delete(s.store.objects, keyOf(res, &o.meta))
	}
	return nil
}

// deleteCollection is the registry's DeleteCollection: the list of what
// the selectors match, each deleted as delete would; it answers that
// list, as it was before.
func (s *wardleServer) deleteCollection(w http.ResponseWriter, r *http.Request, res *wardleResource, info requestInfo) {
	if _, err := deleteOptions(r); err != nil {
		writeAPIError(w, err)
		return
	}
	sel, fieldSel, err := selectors(r.URL.Query())
	if err != nil {
		writeAPIError(w, err)
		return
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	items, rv := s.store.selected(res, info.namespace, sel, fieldSel), s.store.rv
	for _, o := range items {
		s.remove(res, o, dryRun(r))
	}
	writeJSON(w, http.StatusOK, wardleList(res, info.version, items, rv))
}
