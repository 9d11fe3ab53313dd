package deployment

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// safeAlphabet is apimachinery's rand.SafeEncodeString alphabet: digits and
// consonants only, so that no generated name spells a word.
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// template is a one-container pod template; each mutator changes one thing.
func template(mutate ...func(*corev1.PodTemplateSpec)) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
	}
	for _, m := range mutate {
		m(t)
	}
	return t
}

func image(img string) func(*corev1.PodTemplateSpec) {
	return func(t *corev1.PodTemplateSpec) { t.Spec.Containers[0].Image = img }
}

func label(k, v string) func(*corev1.PodTemplateSpec) {
	return func(t *corev1.PodTemplateSpec) {
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels[k] = v
	}
}

func TestTemplateHash(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   *corev1.PodTemplateSpec
		ca, cb *int32
		same   bool
	}{
		{name: "two separately built but equal templates hash the same",
			a: template(), b: template(), same: true},
		{name: "labels added in a different order hash the same, since JSON sorts map keys",
			a: template(label("x", "1"), label("y", "2")), b: template(label("y", "2"), label("x", "1")), same: true},
		{name: "equal templates with equal collision counts hash the same",
			a: template(), b: template(), ca: ptr(int32(2)), cb: ptr(int32(2)), same: true},
		{name: "a different image gives a different hash",
			a: template(), b: template(image("nginx:1.28"))},
		{name: "a different label gives a different hash",
			a: template(), b: template(label("tier", "back"))},
		{name: "a collision count salts the hash of the same template",
			a: template(), b: template(), cb: ptr(int32(1))},
		{name: "two different collision counts give different hashes",
			a: template(), b: template(), ca: ptr(int32(1)), cb: ptr(int32(2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ha, hb := templateHash(tc.a, tc.ca), templateHash(tc.b, tc.cb)
			if again := templateHash(tc.a, tc.ca); again != ha {
				t.Errorf("hashing the same template twice gave %q then %q", ha, again)
			}
			if (ha == hb) != tc.same {
				t.Errorf("hashes %q and %q: same = %v, want %v", ha, hb, ha == hb, tc.same)
			}
			for _, h := range []string{ha, hb} {
				if h == "" || strings.Trim(h, safeAlphabet) != "" {
					t.Errorf("hash %q is empty or uses characters outside SafeEncodeString's alphabet %q", h, safeAlphabet)
				}
			}
		})
	}
}

func TestEqualIgnoreHash(t *testing.T) {
	withHash := func(h string) func(*corev1.PodTemplateSpec) { return label(hashLabel, h) }
	noLabels := func(t *corev1.PodTemplateSpec) { t.Labels = nil }
	for _, tc := range []struct {
		name     string
		rs, d    *corev1.PodTemplateSpec
		expected bool
	}{
		{name: "a ReplicaSet template that only adds the pod-template-hash label equals the Deployment's",
			rs: template(withHash("5d8f7c9b4")), d: template(), expected: true},
		{name: "different pod-template-hash values on both sides are ignored",
			rs: template(withHash("5d8f7c9b4")), d: template(withHash("6c7d8f9b5")), expected: true},
		{name: "a template whose only label is the hash equals one without labels",
			rs: template(noLabels, withHash("5d8f7c9b4")), d: template(noLabels), expected: true},
		{name: "a different image is a different template",
			rs: template(withHash("5d8f7c9b4"), image("nginx:1.28")), d: template()},
		{name: "another label is not ignored",
			rs: template(withHash("5d8f7c9b4"), label("tier", "back")), d: template()},
		{name: "an extra label besides the hash is not ignored",
			rs: template(withHash("5d8f7c9b4"), label("canary", "true")), d: template()},
		{name: "annotations count too",
			rs: template(withHash("5d8f7c9b4"), func(t *corev1.PodTemplateSpec) { t.Annotations = map[string]string{"a": "b"} }), d: template()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rsBefore, dBefore := tc.rs.DeepCopy(), tc.d.DeepCopy()
			if got := equalIgnoreHash(tc.rs, tc.d); got != tc.expected {
				t.Errorf("equalIgnoreHash = %v, want %v", got, tc.expected)
			}
			if got := equalIgnoreHash(tc.d, tc.rs); got != tc.expected {
				t.Errorf("equalIgnoreHash with the arguments swapped = %v, want %v", got, tc.expected)
			}
			if tc.rs.Labels[hashLabel] != rsBefore.Labels[hashLabel] || tc.d.Labels[hashLabel] != dBefore.Labels[hashLabel] {
				t.Errorf("equalIgnoreHash removed the hash label from its arguments instead of from copies")
			}
		})
	}
}
