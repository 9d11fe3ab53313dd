package resource_test

import (
	"net/http"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/mkube/mkube/internal/testserver"
)

const (
	group          = "/apis/resource.k8s.io/v1"
	classes        = group + "/deviceclasses"
	claims         = group + "/namespaces/default/resourceclaims"
	templates      = group + "/namespaces/default/resourceclaimtemplates"
	slices         = group + "/resourceslices"
	taintRules     = group + "/devicetaintrules"
	gpuRequest     = `{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}`
	claimOfOneGPU  = `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"one-gpu"},"spec":{"devices":{"requests":[` + gpuRequest + `]}}}`
	nodeSliceSpec  = `"driver":"gpu.example.com","pool":{"name":"node01","generation":1,"resourceSliceCount":1},"nodeName":"node01"`
	aTaintRuleSpec = `"taint":{"key":"example.com/broken","effect":"NoSchedule"}`
)

func object(kind, name, fields string) string {
	return `{"apiVersion":"resource.k8s.io/v1","kind":"` + kind + `","metadata":{"name":"` + name + `"},` + fields + `}`
}

func claim(name, requests string) string {
	return object("ResourceClaim", name, `"spec":{"devices":{"requests":[`+requests+`]}}`)
}

func TestAClaimGetsKubernetesDefaultsItsSpecIsFixedAndItsStatusSaysWhatIsAllocated(t *testing.T) {
	s := testserver.StartServer(t)
	var c resourcev1.ResourceClaim
	if code := s.Do(http.MethodPost, claims, "application/json", claimOfOneGPU, &c); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if e := c.Spec.Devices.Requests[0].Exactly; e.AllocationMode != resourcev1.DeviceAllocationModeExactCount || e.Count != 1 {
		t.Fatalf("a request for a device is for exactly one: %+v", e)
	}
	if _, rows := testserver.TableOf(t, s, claims); len(rows) != 1 || rows[0][1] != "pending" {
		t.Fatalf("rows %v, want one pending claim", rows)
	}

	one := claims + "/one-gpu"
	status := one + "/status"
	allocated := `{"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node01","device":"gpu-0"}]}}}}`
	if code := s.Do(http.MethodPatch, status, "application/merge-patch+json", allocated, nil); code != http.StatusOK {
		t.Fatalf("allocating: %d", code)
	}
	reserved := `{"status":{"reservedFor":[{"resource":"pods","name":"trainer","uid":"6f1c0e0e-8c53-4c59-a7b2-0c3c6b1e8f11"}]}}`
	if code := s.Do(http.MethodPatch, status, "application/merge-patch+json", reserved, nil); code != http.StatusOK {
		t.Fatalf("reserving: %d", code)
	}
	columns, rows := testserver.TableOf(t, s, claims)
	if columns != "Name State Age" || rows[0][1] != "allocated,reserved" {
		t.Fatalf("columns %s, rows %v", columns, rows)
	}

	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.MergePatch("the spec is fixed", one, `{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"tpu.example.com"}}]}}}`,
			"spec", "field is immutable"),
		testserver.MergePatch("so is an allocation", status, `{"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node01","device":"gpu-1"}]}}}}`,
			"status.allocation", "field is immutable"),
	})

	// Deallocating drops the consumers first: reservedFor needs an allocation.
	var other resourcev1.ResourceClaim
	if code := s.Do(http.MethodPost, claims, "application/json", claim("other", gpuRequest), &other); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.MergePatch("consumers need an allocation", claims+"/other/status", reserved, "status.reservedFor", "may not be specified when `allocated` is not set"),
		testserver.MergePatch("a result is for one of the claim's requests", claims+"/other/status",
			`{"status":{"allocation":{"devices":{"results":[{"request":"tpu","driver":"gpu.example.com","pool":"node01","device":"gpu-0"}]}}}}`,
			"status.allocation.devices.results[0].request", "must be the name of a request in the claim"),
	})
}

func TestAClaimIsValidatedAsKubernetesValidatesIt(t *testing.T) {
	s := testserver.StartServer(t)
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a request names a class", claims, claim("x", `{"name":"gpu","exactly":{}}`),
			"spec.devices.requests[0].exactly.deviceClassName", "Required value"),
		testserver.Post("a request is exactly one kind", claims, claim("x", `{"name":"gpu"}`),
			"spec.devices.requests[0]", "exactly one of `exactly` or `firstAvailable` is required"),
		testserver.Post("or the first of alternatives, not both", claims,
			claim("x", `{"name":"gpu","exactly":{"deviceClassName":"a"},"firstAvailable":[{"name":"b","deviceClassName":"b"}]}`),
			"spec.devices.requests[0]", "but multiple fields are set"),
		testserver.Post("request names are unique", claims, claim("x", gpuRequest+","+gpuRequest),
			"spec.devices.requests[1]", "Duplicate value"),
		testserver.Post("All means no count", claims, claim("x", `{"name":"gpu","exactly":{"deviceClassName":"a","allocationMode":"All","count":2}}`),
			"spec.devices.requests[0].exactly.count", "must not be specified when allocationMode is 'All'"),
		testserver.Post("selectors are CEL that compiles", claims,
			claim("x", `{"name":"gpu","exactly":{"deviceClassName":"a","selectors":[{"cel":{"expression":"device.driver =="}}]}}`),
			"spec.devices.requests[0].exactly.selectors[0].cel.expression", "compilation failed"),
		testserver.Post("and says true or false", claims,
			claim("x", `{"name":"gpu","exactly":{"deviceClassName":"a","selectors":[{"cel":{"expression":"device.driver"}}]}}`),
			"spec.devices.requests[0].exactly.selectors[0].cel.expression", "must evaluate to bool"),
		testserver.Post("tolerations compare or test existence", claims,
			claim("x", `{"name":"gpu","exactly":{"deviceClassName":"a","tolerations":[{"key":"k","operator":"Exists","value":"v"}]}}`),
			"spec.devices.requests[0].exactly.tolerations[0].value", "must be empty for operator `Exists`"),
		testserver.Post("constraints are on the claim's requests", claims,
			object("ResourceClaim", "x", `"spec":{"devices":{"requests":[`+gpuRequest+`],"constraints":[{"requests":["nic"],"matchAttribute":"example.com/numa"}]}}`),
			"spec.devices.constraints[0].requests[0]", "must be the name of a request in the claim"),
		testserver.Post("configuration is a JSON object", claims,
			object("ResourceClaim", "x", `"spec":{"devices":{"requests":[`+gpuRequest+`],"config":[{"opaque":{"driver":"gpu.example.com","parameters":[1]}}]}}`),
			"spec.devices.config[0].opaque.parameters", "must be a valid JSON object"),
	})
}

func TestATemplateIsAClaimsSpecFixedOnceCreated(t *testing.T) {
	s := testserver.StartServer(t)
	body := object("ResourceClaimTemplate", "gpu", `"spec":{"metadata":{"labels":{"app":"trainer"}},"spec":{"devices":{"requests":[`+gpuRequest+`]}}}`)
	var tmpl resourcev1.ResourceClaimTemplate
	if code := s.Do(http.MethodPost, templates, "application/json", body, &tmpl); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if tmpl.Spec.Spec.Devices.Requests[0].Exactly.Count != 1 {
		t.Fatalf("the template's requests are defaulted as a claim's: %+v", tmpl.Spec.Spec.Devices.Requests[0])
	}
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.MergePatch("the spec is fixed", templates+"/gpu", `{"spec":{"metadata":{"labels":{"app":"other"}}}}`, "spec", "field is immutable"),
		testserver.Post("its claims' labels are labels", templates,
			object("ResourceClaimTemplate", "x", `"spec":{"metadata":{"labels":{"-bad":"x"}},"spec":{"devices":{"requests":[`+gpuRequest+`]}}}`),
			"spec.metadata.labels", "name part must consist of"),
		testserver.Post("and its spec a claim's", templates,
			object("ResourceClaimTemplate", "x", `"spec":{"spec":{"devices":{"requests":[{"name":"gpu","exactly":{}}]}}}`),
			"spec.spec.devices.requests[0].exactly.deviceClassName", "Required value"),
	})
}

func TestADeviceClassSelectsDevicesWithCEL(t *testing.T) {
	s := testserver.StartServer(t)
	body := object("DeviceClass", "gpu.example.com", `"spec":{"selectors":[{"cel":{"expression":"device.driver == \"gpu.example.com\""}}],"extendedResourceName":"example.com/gpu"}`)
	if code := s.Do(http.MethodPost, classes, "application/json", body, nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if columns, rows := testserver.TableOf(t, s, classes); columns != "Name Age" || len(rows) != 1 {
		t.Fatalf("columns %s, rows %v", columns, rows)
	}
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a selector has its expression", classes, object("DeviceClass", "x", `"spec":{"selectors":[{}]}`),
			"spec.selectors[0].cel", "Required value"),
		testserver.Post("over what a device has", classes, object("DeviceClass", "x", `"spec":{"selectors":[{"cel":{"expression":"device.color == \"red\""}}]}`),
			"spec.selectors[0].cel.expression", "undefined field 'color'"),
		testserver.Post("an extended resource is a qualified name outside kubernetes.io", classes,
			object("DeviceClass", "x", `"spec":{"extendedResourceName":"gpu"}`), "spec.extendedResourceName", "must be a valid extended resource name"),
		testserver.Post("configuration names its driver", classes,
			object("DeviceClass", "x", `"spec":{"config":[{"opaque":{"parameters":{}}}]}`), "spec.config[0].opaque.driver", "Required value"),
	})
}

func TestASliceIsADriversPoolOnItsNodes(t *testing.T) {
	s := testserver.StartServer(t)
	devices := `"devices":[{"name":"gpu-0","attributes":{"model":{"string":"A100"},"driverVersion":{"version":"1.2.3"}},"capacity":{"memory":{"value":"40Gi"}}}]`
	if code := s.Do(http.MethodPost, slices, "application/json", object("ResourceSlice", "node01-gpus", `"spec":{`+nodeSliceSpec+`,`+devices+`}`), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	all := `"spec":{"driver":"gpu.example.com","pool":{"name":"shared","generation":0,"resourceSliceCount":1},"allNodes":true}`
	if code := s.Do(http.MethodPost, slices, "application/json", object("ResourceSlice", "shared", all), nil); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	columns, rows := testserver.TableOf(t, s, slices+"?fieldSelector=spec.nodeName%3Dnode01")
	if columns != "Name Node Driver Pool Age" || len(rows) != 1 || rows[0][0] != "node01-gpus" || rows[0][1] != "node01" || rows[0][3] != "node01" {
		t.Fatalf("a kubelet lists its node's slices: columns %s, rows %v", columns, rows)
	}

	slice := func(spec string) string { return object("ResourceSlice", "x", `"spec":{`+spec+`}`) }
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a slice says where its devices are", slices, slice(`"driver":"gpu.example.com","pool":{"name":"p","resourceSliceCount":1}`),
			"spec", "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"),
		testserver.Post("in one way", slices, slice(nodeSliceSpec+`,"allNodes":true`), "spec", "but multiple fields are set"),
		testserver.Post("a pool has slices", slices, slice(`"driver":"gpu.example.com","pool":{"name":"p","resourceSliceCount":0},"allNodes":true`),
			"spec.pool.resourceSliceCount", "must be greater than zero"),
		testserver.Post("devices have unique names", slices, slice(nodeSliceSpec+`,"devices":[{"name":"a"},{"name":"a"}]`),
			"spec.devices[1]", "Duplicate value"),
		testserver.Post("an attribute has one value", slices, slice(nodeSliceSpec+`,"devices":[{"name":"a","attributes":{"x":{"int":1,"bool":true}}}]`),
			"spec.devices[0].attributes[x]", "exactly one value must be specified"),
		testserver.Post("a version is semver", slices, slice(nodeSliceSpec+`,"devices":[{"name":"a","attributes":{"v":{"version":"1.2"}}}]`),
			"spec.devices[0].attributes[v].version", "must be a string compatible with semver.org spec 2.0.0"),
		testserver.Post("a device's own node only with perDeviceNodeSelection", slices, slice(nodeSliceSpec+`,"devices":[{"name":"a","allNodes":true}]`),
			"spec.devices[0]", "can only be set if `perDeviceNodeSelection` is set to true"),
		testserver.MergePatch("the node is fixed", slices+"/node01-gpus", `{"spec":{"nodeName":"node02"}}`, "spec.nodeName", "field is immutable"),
		testserver.MergePatch("so is the driver", slices+"/node01-gpus", `{"spec":{"driver":"nic.example.com"}}`, "spec.driver", "field is immutable"),
	})
}

func TestATaintRuleIsStampedWithWhenItWasAdded(t *testing.T) {
	s := testserver.StartServer(t)
	var r resourcev1.DeviceTaintRule
	body := object("DeviceTaintRule", "broken", `"spec":{"deviceSelector":{"driver":"gpu.example.com","device":"gpu-0"},`+aTaintRuleSpec+`}`)
	if code := s.Do(http.MethodPost, taintRules, "application/json", body, &r); code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if r.Spec.Taint.TimeAdded == nil {
		t.Fatal("the taint has no timeAdded")
	}
	columns, rows := testserver.TableOf(t, s, taintRules)
	if columns != "Name Key Value Effect TimeAdded Age" || rows[0][1] != "example.com/broken" || rows[0][3] != "NoSchedule" {
		t.Fatalf("columns %s, rows %v", columns, rows)
	}
	condition := `{"status":{"conditions":[{"type":"EvictionInProgress","status":"False","reason":"NoEffect","message":"","lastTransitionTime":"2026-12-02T10:00:00Z"}]}}`
	if code := s.Do(http.MethodPatch, taintRules+"/broken/status", "application/merge-patch+json", condition, nil); code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	testserver.ExpectRejections(t, s, []testserver.Rejection{
		testserver.Post("a taint has an effect", taintRules, object("DeviceTaintRule", "x", `"spec":{"taint":{"key":"k"}}`), "spec.taint.effect", "Required value"),
		testserver.Post("one devices know", taintRules, object("DeviceTaintRule", "x", `"spec":{"taint":{"key":"k","effect":"PreferNoSchedule"}}`),
			"spec.taint.effect", "Unsupported value"),
		testserver.Post("and a label-like key", taintRules, object("DeviceTaintRule", "x", `"spec":{"taint":{"key":"not a key","effect":"None"}}`),
			"spec.taint.key", "name part must consist of"),
		testserver.MergePatch("conditions are metav1 conditions", taintRules+"/broken/status", `{"status":{"conditions":[{"type":"X","status":"Maybe"}]}}`,
			"status.conditions[0].status", "Unsupported value"),
	})
}
