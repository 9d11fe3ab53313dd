// Package envvars is a container's environment as the kubelet makes it
// when it creates the container: upstream's pkg/kubelet/envvars (the
// service variables), the container env assembly of kubelet_pods.go's
// makeEnvironmentVariables, and third_party/forked/golang/expansion
// ($(VAR) expansion). It serves seed 000's step 12 (a container created
// with its env) and seed 003's ConfigMap and Secret keys as variables; a
// reference to what is missing fails the creation as
// CreateContainerConfigError, retried until the object exists.
//
// A node's Builder reads what the kubelet has (its ConfigMaps, Secrets,
// Services, the downward API's fields), passed in as func fields.
//
// Where things live:
//
//	file           what it holds
//	envvars.go     makeEnv: envFrom, env (valueFrom resolved), service variables; their order
//	container.go   the Builder: ContainerEnv of a container, ConfigError when it cannot be made; NotFound's wording
//	expansion.go   Expand and ExpandArgs: $(VAR) in env, command and args
//	doc.go         this map
package envvars
