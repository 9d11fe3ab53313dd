package apiserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"reflect"
	"strings"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mkube/mkube/internal/version"
)

// kubectl apply validates by default. Since Kubernetes 1.27 it lets the
// server do it (fieldValidation=Strict) once the OpenAPI v3 document of the
// kind's group-version shows a PATCH operation taking that parameter; it
// falls back to client-side validation only if it does not. mkube
// publishes one PATCH operation per kind, and the kinds' schemas (see
// openapischema.go) for `kubectl explain`.

// openAPISchemaVersion is part of every document's hash: bump it when the
// generator changes, so that kubectl's cache does not keep the old one.
const openAPISchemaVersion = "schemas-1"

// serveOpenAPIIndex answers /openapi/v3: one document per group-version.
func (s *Server) serveOpenAPIIndex(w http.ResponseWriter, r *http.Request) {
	paths := map[string]any{}
	for _, gv := range s.groupVersions() {
		p := openAPIPath(gv)
		paths[p] = map[string]string{"serverRelativeURL": fmt.Sprintf("/openapi/v3/%s?hash=%s", p, s.openAPIHash(gv))}
	}
	writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
}

// serveOpenAPIDocument answers /openapi/v3/api/v1 and /openapi/v3/apis/<g>/<v>.
func (s *Server) serveOpenAPIDocument(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/openapi/v3/")
	for _, gv := range s.groupVersions() {
		if openAPIPath(gv) == rest {
			w.Header().Set("Content-Type", "application/json")
			w.Write(s.openAPIDocumentJSON(gv))
			return
		}
	}
	writeError(w, notFoundPath(r.URL.Path))
}

func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

// openAPIHash changes whenever the document would, so clients re-fetch.
func (s *Server) openAPIHash(gv schema.GroupVersion) string {
	h := fnv.New64a()
	h.Write([]byte(openAPISchemaVersion))
	for _, res := range s.resources() {
		if res.GroupVersion == gv {
			h.Write([]byte(res.Name + "/" + res.Kind + ";"))
			if res.Schema != nil {
				h.Write([]byte(res.Schema.Revision + ";"))
			}
		}
	}
	return fmt.Sprintf("%X", h.Sum64())
}

// openAPIDocumentJSON encodes a group-version's document once: it only
// changes with the code, or when custom resources come and go
// (openAPIChanged).
func (s *Server) openAPIDocumentJSON(gv schema.GroupVersion) []byte {
	s.openAPIMu.Lock()
	defer s.openAPIMu.Unlock()
	if doc, ok := s.openAPIDocs[gv]; ok {
		return doc
	}
	doc, err := json.Marshal(s.openAPIDocument(gv))
	if err != nil {
		panic(fmt.Sprintf("encode the OpenAPI document of %s: %v", gv, err)) // maps of strings: cannot fail
	}
	if s.openAPIDocs == nil {
		s.openAPIDocs = map[schema.GroupVersion][]byte{}
	}
	s.openAPIDocs[gv] = doc
	return doc
}

func (s *Server) openAPIDocument(gv schema.GroupVersion) map[string]any {
	paths := map[string]any{}
	schemas := schemaSet{}
	for _, res := range s.resources() {
		if res.GroupVersion != gv {
			continue
		}
		if res.Schema != nil {
			schemas[res.Schema.Name] = res.Schema.Schema
			schemas.add(reflect.TypeFor[metav1.ObjectMeta]()) // which it refers to
		} else {
			schemas.addKind(res.New(), res.GVK())
		}
		path := "/" + openAPIPath(gv) + "/" + res.Name + "/{name}"
		if res.Namespaced {
			path = "/" + openAPIPath(gv) + "/namespaces/{namespace}/" + res.Name + "/{name}"
		}
		paths[path] = map[string]any{"patch": map[string]any{
			"operationId":                     "patch" + res.Kind,
			"x-kubernetes-group-version-kind": map[string]string{"group": gv.Group, "version": gv.Version, "kind": res.Kind},
			"parameters": []map[string]any{
				{"name": "fieldValidation", "in": "query", "schema": map[string]any{"type": "string", "uniqueItems": true},
					"description": "Ignore, Warn or Strict: what to do with unknown or duplicate fields"},
				{"name": "fieldManager", "in": "query", "schema": map[string]any{"type": "string", "uniqueItems": true}},
			},
			"responses": map[string]any{"200": map[string]any{"description": "OK"}},
		}}
	}
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]string{"title": "Kubernetes", "version": version.GitVersion},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

// openAPIChanged forgets the encoded documents: the resources changed.
func (s *Server) openAPIChanged() {
	s.openAPIMu.Lock()
	defer s.openAPIMu.Unlock()
	s.openAPIDocs, s.openAPIV2, s.openAPIV2Protobuf = nil, nil, nil
}

// serveOpenAPIV2 answers /openapi/v2, the older single document that some
// clients (and the conformance suite, to see a CustomResourceDefinition's
// schema published) still read: every group-version's schemas as
// Swagger 2.0 definitions, without paths.
func (s *Server) serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	s.openAPIMu.Lock()
	doc := s.openAPIV2
	s.openAPIMu.Unlock()
	if doc == nil {
		definitions := map[string]any{}
		for _, gv := range s.groupVersions() {
			for name, schema := range s.openAPIDocument(gv)["components"].(map[string]any)["schemas"].(schemaSet) {
				if v2, ok := leafSchemasV2[name]; ok {
					schema = v2
				}
				definitions[name] = schema
			}
		}
		for _, res := range s.resources() {
			if res.Schema != nil {
				definitions[res.Schema.Name] = res.Schema.V2 // v2's own words, not v3's
			}
		}
		data, err := json.Marshal(map[string]any{"swagger": "2.0",
			"info": map[string]string{"title": "Kubernetes", "version": version.GitVersion}, "paths": map[string]any{}, "definitions": definitions})
		if err != nil {
			writeError(w, apierrors.NewInternalError(err))
			return
		}
		doc = bytes.ReplaceAll(data, []byte(`"`+schemaRef), []byte(`"#/definitions/`))
		s.openAPIMu.Lock()
		s.openAPIV2 = doc
		s.openAPIMu.Unlock()
	}
	if accept := r.Header.Get("Accept"); strings.Contains(accept, openAPIV2Protobuf) || strings.Contains(accept, openAPIV2ProtobufAsked) {
		s.serveOpenAPIV2Protobuf(w, doc)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

// openAPIV2Protobuf is the media type of /openapi/v2 as gnostic's
// protobuf Document, which client-go's OpenAPISchema asks for (by its
// older name, with an "@" a media type may not hold), and kubectl's
// validation reads when a kind is not in /openapi/v3.
const (
	openAPIV2Protobuf      = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	openAPIV2ProtobufAsked = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// serveOpenAPIV2Protobuf answers the JSON document doc re-encoded as
// protobuf, encoded once until the resources change.
func (s *Server) serveOpenAPIV2Protobuf(w http.ResponseWriter, doc []byte) {
	s.openAPIMu.Lock()
	pb := s.openAPIV2Protobuf
	s.openAPIMu.Unlock()
	if pb == nil {
		parsed, err := openapi_v2.ParseDocument(doc)
		if err == nil {
			pb, err = proto.Marshal(parsed)
		}
		if err != nil {
			writeError(w, apierrors.NewInternalError(fmt.Errorf("encode /openapi/v2 as protobuf: %w", err)))
			return
		}
		s.openAPIMu.Lock()
		s.openAPIV2Protobuf = pb
		s.openAPIMu.Unlock()
	}
	w.Header().Set("Content-Type", openAPIV2Protobuf)
	w.Write(pb)
}
