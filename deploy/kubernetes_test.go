// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/llmslo/llm_slo_exporter/deploy/internal/rulegen"
)

// Sizing of the Deployment's resource requests, per worker process and for
// the supervisor; deployment.yaml and docs/operations.md explain the figures.
const (
	cpuPerWorker        = "100m"
	cpuForSupervisor    = "50m"
	memoryPerWorker     = "32Mi"
	memoryForSupervisor = "64Mi"
)

// kustomizations returns the kustomization directories under deploy/ that
// the tests render.
func kustomizations() []string {
	return []string{"kubernetes", "kubernetes-sharded"}
}

// rendered is a kustomize build, every object strictly decoded into its Go
// type.
type rendered struct {
	deployments     []*appsv1.Deployment
	services        []*corev1.Service
	configMaps      []*corev1.ConfigMap
	pdbs            []*policyv1.PodDisruptionBudget
	serviceMonitors []*monitoringv1.ServiceMonitor
	prometheusRules []*monitoringv1.PrometheusRule
}

// decodeObject strictly decodes one object (JSON) into the Go type of its
// kind, the way the API server's strict field validation does: unknown
// fields, duplicate fields and fields in the wrong case are errors.
func (r *rendered) decodeObject(apiVersion, kind string, data []byte) error {
	var obj any
	switch apiVersion + " " + kind {
	case "apps/v1 Deployment":
		o := &appsv1.Deployment{}
		r.deployments, obj = append(r.deployments, o), o
	case "v1 Service":
		o := &corev1.Service{}
		r.services, obj = append(r.services, o), o
	case "v1 ConfigMap":
		o := &corev1.ConfigMap{}
		r.configMaps, obj = append(r.configMaps, o), o
	case "policy/v1 PodDisruptionBudget":
		o := &policyv1.PodDisruptionBudget{}
		r.pdbs, obj = append(r.pdbs, o), o
	case "monitoring.coreos.com/v1 ServiceMonitor":
		o := &monitoringv1.ServiceMonitor{}
		r.serviceMonitors, obj = append(r.serviceMonitors, o), o
	case "monitoring.coreos.com/v1 PrometheusRule":
		o := &monitoringv1.PrometheusRule{}
		r.prometheusRules, obj = append(r.prometheusRules, o), o
	default:
		return fmt.Errorf("no Go type for %s %s: add it to decodeObject", apiVersion, kind)
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	return errors.Join(strictErrs...)
}

// render builds the kustomization in dir with kustomize's Go API (the version
// pinned in go.mod) and strictly decodes every object.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	r := &rendered{}
	for _, res := range m.Resources() {
		data, err := res.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", res.CurId(), err)
		}
		if err := r.decodeObject(res.GetApiVersion(), res.GetKind(), data); err != nil {
			t.Errorf("%s %s %q does not decode strictly: %v", res.GetApiVersion(), res.GetKind(), res.GetName(), err)
		}
	}
	return r
}

// TestKustomizeSourcesStrict checks every YAML file of the kustomizations
// for duplicate keys, which kustomize itself silently resolves.
func TestKustomizeSourcesStrict(t *testing.T) {
	for _, dir := range kustomizations() {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
				return err
			}
			t.Run(path, func(t *testing.T) {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := sigsyaml.YAMLToJSONStrict(data); err != nil {
					t.Error(err)
				}
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestKustomizeRender renders every kustomization, strictly decodes every
// object into its Kubernetes or Prometheus Operator type, and checks that the
// objects agree with each other and with the exporter.
func TestKustomizeRender(t *testing.T) {
	version := readVersion(t)
	for _, dir := range kustomizations() {
		t.Run(dir, func(t *testing.T) {
			r := render(t, dir)
			if len(r.deployments) == 0 {
				t.Fatal("no Deployment")
			}
			if n := len(r.prometheusRules); n != 1 {
				t.Errorf("got %d PrometheusRules, want exactly 1 (several shards must not load the rules twice)", n)
			}
			for _, d := range r.deployments {
				t.Run("Deployment/"+d.Name, func(t *testing.T) {
					checkDeployment(t, r, d, version)
				})
			}
			for _, sm := range r.serviceMonitors {
				t.Run("ServiceMonitor/"+sm.Name, func(t *testing.T) {
					checkServiceMonitor(t, r, sm)
				})
			}
			checkSelectorsDisjoint(t, r)
		})
	}
}

// checkDeployment checks one Deployment: security, probes, sizing for the
// worker count of its configuration, and the objects that go with it.
func checkDeployment(t *testing.T, r *rendered, d *appsv1.Deployment, version string) {
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("got %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]

	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("selector %v does not match the pod template's labels %v", sel, d.Spec.Template.Labels)
	}

	// Image: the released tag of this version.
	if want := ":v" + version; !strings.HasSuffix(c.Image, want) {
		t.Errorf("image %q does not end in %q (VERSION)", c.Image, want)
	}

	// Security: non-root, read-only root filesystem, nothing to escalate to.
	checks := []struct {
		name string
		ok   bool
	}{
		{"pod runAsNonRoot", pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot},
		{"pod runAsUser 65534", pod.SecurityContext != nil && pod.SecurityContext.RunAsUser != nil && *pod.SecurityContext.RunAsUser == 65534},
		{"pod seccomp RuntimeDefault", pod.SecurityContext != nil && pod.SecurityContext.SeccompProfile != nil && pod.SecurityContext.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault},
		{"no service account token", pod.AutomountServiceAccountToken != nil && !*pod.AutomountServiceAccountToken},
		{"container readOnlyRootFilesystem", c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem},
		{"container allowPrivilegeEscalation false", c.SecurityContext != nil && c.SecurityContext.AllowPrivilegeEscalation != nil && !*c.SecurityContext.AllowPrivilegeEscalation},
		{"container drops ALL capabilities", c.SecurityContext != nil && c.SecurityContext.Capabilities != nil && slices.Equal(c.SecurityContext.Capabilities.Drop, []corev1.Capability{"ALL"})},
		{"readiness on /-/ready", c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path == "/-/ready" && c.ReadinessProbe.HTTPGet.Port.String() == "web"},
		{"liveness on /-/healthy", c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path == "/-/healthy" && c.LivenessProbe.HTTPGet.Port.String() == "web"},
		{"port web 10240", len(c.Ports) == 1 && c.Ports[0].Name == "web" && c.Ports[0].ContainerPort == 10240},
		{"no CPU limit", c.Resources.Limits.Cpu().IsZero()},
		{"memory limit", !c.Resources.Limits.Memory().IsZero()},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("check failed: %s", ch.name)
		}
	}

	// Configuration: the ConfigMap mounted by the volume named config, at the
	// directory of --config.file.
	configFile := flagValue(c.Args, "--config.file")
	if configFile == "" {
		t.Fatal("no --config.file argument")
	}
	cm := mountedConfigMap(t, r, pod, c, filepath.Dir(configFile))
	data, ok := cm.Data[filepath.Base(configFile)]
	if !ok {
		t.Fatalf("ConfigMap %q has no key %q", cm.Name, filepath.Base(configFile))
	}
	cfg, err := parseExporterConfig([]byte(data))
	if err != nil {
		t.Fatalf("ConfigMap %q: %v", cm.Name, err)
	}

	// Sizing: requests follow the worker count of the configuration.
	workers := int64(cfg.workers())
	wantCPU := scaled(cpuPerWorker, workers, cpuForSupervisor)
	wantMemory := scaled(memoryPerWorker, workers, memoryForSupervisor)
	if got := c.Resources.Requests.Cpu(); got.Cmp(wantCPU) != 0 {
		t.Errorf("CPU request %s, want %s for %d workers (%s each + %s)", got, &wantCPU, workers, cpuPerWorker, cpuForSupervisor)
	}
	if got := c.Resources.Requests.Memory(); got.Cmp(wantMemory) != 0 {
		t.Errorf("memory request %s, want %s for %d workers (%s each + %s)", got, &wantMemory, workers, memoryPerWorker, memoryForSupervisor)
	}
	if c.Resources.Limits.Memory().Cmp(wantMemory) < 0 {
		t.Errorf("memory limit %s is below the request %s", c.Resources.Limits.Memory(), &wantMemory)
	}

	// Credentials: every credentials file lies in a mounted Secret.
	for _, tg := range cfg.Targets {
		f := tg.HTTPClientConfig.Authorization.CredentialsFile
		if f == "" {
			continue
		}
		if !mountedSecret(pod, c, filepath.Dir(f)) {
			t.Errorf("target %q: credentials_file %s is not in a mounted Secret", tg.Name, f)
		}
	}

	// A Service, a PodDisruptionBudget that lets a drain proceed one pod at
	// a time.
	podLabels := labels.Set(d.Spec.Template.Labels)
	var services int
	for _, s := range r.services {
		if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(podLabels) {
			services++
			if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].TargetPort.String() != "web" {
				t.Errorf("Service %q does not target the port web", s.Name)
			}
		}
	}
	if services != 1 {
		t.Errorf("%d Services select the pods, want 1", services)
	}
	var pdbs int
	for _, p := range r.pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		if !sel.Matches(podLabels) {
			continue
		}
		pdbs++
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		if p.Spec.MinAvailable == nil || p.Spec.MinAvailable.IntValue() >= int(replicas) {
			t.Errorf("PodDisruptionBudget %q: minAvailable %v must be below the %d replicas, or no drain can proceed", p.Name, p.Spec.MinAvailable, replicas)
		}
	}
	if pdbs != 1 {
		t.Errorf("%d PodDisruptionBudgets select the pods, want 1", pdbs)
	}
}

// checkServiceMonitor checks that a ServiceMonitor selects exactly one
// Service, by a port that Service has.
func checkServiceMonitor(t *testing.T, r *rendered, sm *monitoringv1.ServiceMonitor) {
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	var matched []*corev1.Service
	for _, s := range r.services {
		if sel.Matches(labels.Set(s.Labels)) {
			matched = append(matched, s)
		}
	}
	if len(matched) != 1 {
		t.Fatalf("selects %d Services, want 1 (a pod scraped twice doubles every sum)", len(matched))
	}
	for _, ep := range sm.Spec.Endpoints {
		if ep.Port != matched[0].Spec.Ports[0].Name {
			t.Errorf("endpoint port %q is not the port of Service %q", ep.Port, matched[0].Name)
		}
		if ep.Path != "/metrics" {
			t.Errorf("endpoint path %q, want /metrics", ep.Path)
		}
	}
}

// checkSelectorsDisjoint checks that no pod template is selected by another
// Deployment: shards must not adopt each other's pods.
func checkSelectorsDisjoint(t *testing.T, r *rendered) {
	for _, a := range r.deployments {
		for _, b := range r.deployments {
			if a == b {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(a.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Matches(labels.Set(b.Spec.Template.Labels)) {
				t.Errorf("Deployment %q selects the pods of Deployment %q", a.Name, b.Name)
			}
		}
	}
}

// TestShardsProbeDistinctTargets checks the sharded example: every target is
// probed by exactly one shard, so that no target is probed twice as often
// as configured and the shards' series never collide.
func TestShardsProbeDistinctTargets(t *testing.T) {
	r := render(t, "kubernetes-sharded")
	owner := map[string]string{}
	for _, cm := range r.configMaps {
		cfg, err := parseExporterConfig([]byte(cm.Data["config.yml"]))
		if err != nil {
			t.Fatalf("ConfigMap %q: %v", cm.Name, err)
		}
		if len(cfg.Targets) == 0 {
			t.Errorf("ConfigMap %q has no targets", cm.Name)
		}
		for _, tg := range cfg.Targets {
			if prev, ok := owner[tg.Name]; ok {
				t.Errorf("target %q is in ConfigMaps %q and %q", tg.Name, prev, cm.Name)
			}
			owner[tg.Name] = cm.Name
		}
	}
	if len(r.deployments) < 2 {
		t.Errorf("got %d Deployments, want at least 2 shards", len(r.deployments))
	}
}

// TestKustomizeConfigsValid runs the exporter's --config.check on the
// configuration of every rendered ConfigMap.
func TestKustomizeConfigsValid(t *testing.T) {
	bin := exporterBinary(t)
	for _, dir := range kustomizations() {
		r := render(t, dir)
		for _, cm := range r.configMaps {
			t.Run(dir+"/"+cm.Name, func(t *testing.T) {
				if err := checkConfig(bin, []byte(cm.Data["config.yml"]), t.TempDir()); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// TestPrometheusRuleUpToDate fails when kubernetes/prometheusrule.yaml is not
// what `make deploy-manifests` generates from the mixin's rule files.
func TestPrometheusRuleUpToDate(t *testing.T) {
	var sources []rulegen.Source
	for _, name := range []string{"mixin/prometheus_rules.yaml", "mixin/prometheus_alerts.yaml"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, name))
		if errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s does not exist: kubernetes/prometheusrule.yaml cannot be checked against the mixin; generate the mixin, then run make deploy-manifests", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, rulegen.Source{Name: name, Data: data})
	}
	want, err := rulegen.Generate(rulegen.DefaultObject(), sources...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("kubernetes", "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("kubernetes/prometheusrule.yaml is out of date with the mixin: run make deploy-manifests")
	}
}

// flagValue returns the value of --name=value in args, or "".
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// mountedConfigMap returns the ConfigMap mounted at dir in container c.
func mountedConfigMap(t *testing.T, r *rendered, pod corev1.PodSpec, c corev1.Container, dir string) *corev1.ConfigMap {
	t.Helper()
	v := volumeAt(pod, c, dir)
	if v == nil || v.ConfigMap == nil {
		t.Fatalf("no ConfigMap volume is mounted at %s", dir)
	}
	for _, cm := range r.configMaps {
		if cm.Name == v.ConfigMap.Name {
			return cm
		}
	}
	t.Fatalf("the volume %q refers to ConfigMap %q, which the kustomization does not create", v.Name, v.ConfigMap.Name)
	return nil
}

// mountedSecret reports whether a Secret volume is mounted at dir in c.
func mountedSecret(pod corev1.PodSpec, c corev1.Container, dir string) bool {
	v := volumeAt(pod, c, dir)
	return v != nil && v.Secret != nil && v.Secret.SecretName != ""
}

// volumeAt returns the volume mounted (without subPath) at dir in c.
func volumeAt(pod corev1.PodSpec, c corev1.Container, dir string) *corev1.Volume {
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) != filepath.Clean(dir) || m.SubPath != "" {
			continue
		}
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == m.Name {
				return &pod.Volumes[i]
			}
		}
	}
	return nil
}

// scaled returns per×n + base, quantities in Kubernetes notation.
func scaled(per string, n int64, base string) resource.Quantity {
	p, b := resource.MustParse(per), resource.MustParse(base)
	return *resource.NewMilliQuantity(p.MilliValue()*n+b.MilliValue(), p.Format)
}
