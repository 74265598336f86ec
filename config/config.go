// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package config loads and validates the exporter's YAML configuration.
// Loading is strict: an unknown key is an error that names the file, the
// line and the field, and a semantic error names the field's line too, so a
// bad reload can be fixed from the log line alone.
package config

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/llmslo/llm_slo_exporter/prober/api"
)

// Defaults.
const (
	DefaultWorkers       = 2
	DefaultMaxInFlight   = 64
	DefaultTimeout       = Duration(60 * time.Second)
	DefaultMaxTokens     = 32
	DefaultPrompt        = "Write a haiku about monitoring."
	DefaultMaxEventBytes = 16 << 20
	// DefaultMaxStreamBytes and DefaultMaxEvents bound a stream far above
	// any probe's needs (a probe asks for tens of tokens) while keeping a
	// runaway stream from costing a worker unbounded time.
	DefaultMaxStreamBytes = 256 << 20
	DefaultMaxEvents      = 1 << 20
	// MaxWorkers bounds the number of worker processes.
	MaxWorkers = 256
)

// Config is the whole configuration file.
type Config struct {
	// Workers is the number of prober worker processes.
	Workers int `yaml:"workers"`
	// Seed makes schedules reproducible; 0 draws a random seed at start.
	Seed uint64 `yaml:"seed"`
	// Budget caps all targets together; its zero value caps nothing.
	Budget Budget `yaml:"budget"`
	// Targets are the endpoints to probe.
	Targets []Target `yaml:"targets"`
}

// Budget caps what probing may cost per hour: probes sent and output tokens
// received. Arrivals over a cap are dropped with reason budget. 0 means no
// cap. A cap is a token bucket that holds one hour's allowance and refills
// continuously, so a burst may spend a whole hour's budget at once and
// then runs at the refill rate.
type Budget struct {
	ProbesPerHour       float64 `yaml:"probes_per_hour"`
	OutputTokensPerHour float64 `yaml:"output_tokens_per_hour"`
}

// Default per-target budget. Probing a paid API costs money, so a target
// may by default send at most 36,000 probes (an average of 10 per second)
// and receive at most 2,000,000 output tokens an hour, and a rate whose
// hourly count exceeds its probe budget is a configuration error: a typo
// like rate: 1000 cannot reach a paid endpoint without an explicit,
// larger (or 0, no cap) budget.
var DefaultTargetBudget = Budget{ProbesPerHour: 36000, OutputTokensPerHour: 2000000}

// Target is one endpoint to probe.
type Target struct {
	// Name identifies the target; it is the value of the target label.
	Name string `yaml:"name"`
	// URL is the full endpoint URL, for example
	// http://127.0.0.1:8000/v1/chat/completions.
	URL string `yaml:"url"`
	// API selects the adapter: openai-chat, openai-completions, anthropic,
	// tgi, triton, llamacpp, ollama or sglang (docs/apis.md).
	API string `yaml:"api"`
	// Model is sent in the request and is the value of the model label.
	Model string `yaml:"model"`
	// Rate is the mean number of probes per second, summed over all
	// workers; arrivals are Poisson.
	Rate float64 `yaml:"rate"`
	// MaxInFlight caps the probes in flight for this target, split evenly
	// over the workers. An arrival over the cap is dropped, not queued.
	MaxInFlight int `yaml:"max_in_flight"`
	// Timeout bounds one probe from dispatch to the end of the stream.
	Timeout Duration `yaml:"timeout"`
	// IdleTimeout ends a probe when no byte arrived for this long (keep-alive
	// comments count as bytes); 0 disables it.
	IdleTimeout Duration `yaml:"idle_timeout"`
	// MaxEventBytes caps one stream event.
	MaxEventBytes int `yaml:"max_event_bytes"`
	// MaxStreamBytes caps one response body.
	MaxStreamBytes int64 `yaml:"max_stream_bytes"`
	// MaxEvents caps the events of one stream.
	MaxEvents int `yaml:"max_events"`
	// Request shapes the request body and headers.
	Request Request `yaml:"request"`
	// Buckets overrides the classic histogram bucket edges, per family.
	Buckets Buckets `yaml:"buckets"`
	// Budget caps this target's probes and output tokens per hour.
	Budget Budget `yaml:"budget"`
	// HTTPClientConfig configures authentication, TLS and proxies.
	HTTPClientConfig promconfig.HTTPClientConfig `yaml:"http_client_config"`
}

// Request shapes a probe's request.
type Request struct {
	// Prompt is the user prompt.
	Prompt string `yaml:"prompt"`
	// MaxTokens caps the output length.
	MaxTokens int `yaml:"max_tokens"`
	// IgnoreEOS asks the server to generate exactly MaxTokens tokens.
	IgnoreEOS bool `yaml:"ignore_eos"`
	// ExtraBody is merged into the top level of the JSON body.
	ExtraBody map[string]any `yaml:"extra_body,omitempty"`
	// Headers are added to every request. Their values are treated as
	// secrets (API keys often travel in headers) and never shown.
	Headers map[string]promconfig.Secret `yaml:"headers,omitempty"`
}

// Buckets holds optional classic bucket edges, in seconds.
type Buckets struct {
	TTFT  []float64 `yaml:"ttft,omitempty"`
	TTFA  []float64 `yaml:"ttfa,omitempty"`
	TPOT  []float64 `yaml:"tpot,omitempty"`
	ITL   []float64 `yaml:"itl,omitempty"`
	NTPOT []float64 `yaml:"ntpot,omitempty"`
	E2E   []float64 `yaml:"e2e,omitempty"`
}

// UnmarshalYAML implements the yaml.Unmarshaler interface and sets the
// defaults of a Config.
func (c *Config) UnmarshalYAML(unmarshal func(any) error) error {
	type plain Config
	*c = Config{Workers: DefaultWorkers}
	return unmarshal((*plain)(c))
}

// UnmarshalYAML implements the yaml.Unmarshaler interface and sets the
// defaults of a Target.
func (t *Target) UnmarshalYAML(unmarshal func(any) error) error {
	type plain Target
	*t = Target{
		API:              "openai-chat",
		MaxInFlight:      DefaultMaxInFlight,
		Timeout:          DefaultTimeout,
		MaxEventBytes:    DefaultMaxEventBytes,
		MaxStreamBytes:   DefaultMaxStreamBytes,
		MaxEvents:        DefaultMaxEvents,
		Budget:           DefaultTargetBudget,
		Request:          Request{Prompt: DefaultPrompt, MaxTokens: DefaultMaxTokens},
		HTTPClientConfig: promconfig.DefaultHTTPClientConfig,
	}
	return unmarshal((*plain)(t))
}

// Duration is a duration in Prometheus' format (1m30s, 500ms, 2h). Unlike
// model.Duration it reports the line of a bad value.
type Duration time.Duration

// UnmarshalYAML implements the yaml.Unmarshaler interface.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	md, err := model.ParseDuration(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: not a valid duration: %q", n.Line, n.Value)}}
	}
	*d = Duration(md)
	return nil
}

// MarshalYAML implements the yaml.Marshaler interface.
func (d Duration) MarshalYAML() (any, error) { return model.Duration(d).String(), nil }

// String returns the duration in Prometheus' format.
func (d Duration) String() string { return model.Duration(d).String() }

// Error is a configuration error at a place in a file.
type Error struct {
	File  string
	Line  int    // 0 when unknown
	Field string // for example targets[0].rate; "" when unknown
	Msg   string
}

// Error implements the error interface: "file:line: field: message".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadFile reads and validates the configuration file at path.
func LoadFile(path string) (*Config, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading config file: %w", err)
	}
	c, err := Parse(data, path)
	if err != nil {
		return nil, nil, err
	}
	return c, data, nil
}

// Checksum returns the SHA-256 of a configuration file's bytes; a reload
// with an unchanged checksum is a no-op.
func Checksum(data []byte) string {
	return fmt.Sprintf("%x", sha256.Sum256(data))
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): (.*)$`)

// Parse parses and validates a configuration. filename is used in errors
// and to resolve relative file paths (credentials, TLS files).
func Parse(data []byte, filename string) (*Config, error) {
	c := &Config{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			// An empty file is a valid configuration with no targets.
			c = &Config{Workers: DefaultWorkers}
		} else {
			return nil, yamlError(filename, err)
		}
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	dir := filepath.Dir(filename)
	for i := range c.Targets {
		c.Targets[i].HTTPClientConfig.SetDirectory(dir)
	}
	if err := c.validate(); err != nil {
		var ve *validationError
		if errors.As(err, &ve) {
			return nil, &Error{File: filename, Line: lineOf(&root, ve.path), Field: ve.field(), Msg: ve.msg}
		}
		return nil, &Error{File: filename, Msg: err.Error()}
	}
	return c, nil
}

// yamlError turns a yaml.v3 error into an *Error, keeping the first line
// number it reports. Several problems are joined with "; ".
func yamlError(filename string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		e := &Error{File: filename}
		msgs := make([]string, 0, len(te.Errors))
		for _, m := range te.Errors {
			if sm := yamlLineRE.FindStringSubmatch(m); sm != nil {
				if e.Line == 0 {
					e.Line, _ = strconv.Atoi(sm[1])
					msgs = append(msgs, sm[2])
					continue
				}
			}
			msgs = append(msgs, m)
		}
		e.Msg = strings.Join(msgs, "; ")
		return e
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: filename, Msg: msg}
	if sm := yamlLineRE.FindStringSubmatch(msg); sm != nil {
		e.Line, _ = strconv.Atoi(sm[1])
		e.Msg = sm[2]
	}
	return e
}

// validationError is a semantic error at a path of keys and indices.
type validationError struct {
	path []any // string keys and int indices
	msg  string
}

func (v *validationError) Error() string { return v.field() + ": " + v.msg }

func (v *validationError) field() string {
	var b strings.Builder
	for _, p := range v.path {
		switch p := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

func verr(msg string, path ...any) error { return &validationError{path: path, msg: msg} }

// lineOf returns the line of the node at path, or of its nearest existing
// ancestor (a missing required field is reported at its parent).
func lineOf(root *yaml.Node, path []any) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, p := range path {
		var next *yaml.Node
		switch p := p.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == p {
						next = n.Content[i+1]
						if next.Kind == yaml.MappingNode || next.Kind == yaml.SequenceNode {
							line = n.Content[i].Line
						} else {
							line = next.Line
						}
						break
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && p < len(n.Content) {
				next = n.Content[p]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

func (c *Config) validate() error {
	if c.Workers < 1 || c.Workers > MaxWorkers {
		return verr(fmt.Sprintf("must be between 1 and %d, got %d", MaxWorkers, c.Workers), "workers")
	}
	if err := c.Budget.check(); err != nil {
		return verr(err.Error(), "budget")
	}
	names := map[string]int{}
	for i := range c.Targets {
		t := &c.Targets[i]
		at := func(msg string, path ...any) error {
			return verr(msg, append([]any{"targets", i}, path...)...)
		}
		if t.Name == "" {
			return at("is required", "name")
		}
		if j, dup := names[t.Name]; dup {
			return at(fmt.Sprintf("duplicate target name %q (also targets[%d])", t.Name, j), "name")
		}
		names[t.Name] = i
		u, err := url.Parse(t.URL)
		switch {
		case t.URL == "":
			return at("is required", "url")
		case err != nil:
			return at("invalid URL", "url")
		case u.Scheme != "http" && u.Scheme != "https":
			return at(fmt.Sprintf("scheme must be http or https, got %q", u.Scheme), "url")
		case u.Host == "":
			return at("has no host", "url")
		}
		ad, ok := api.Lookup(t.API)
		if !ok {
			return at(fmt.Sprintf("unknown api %q (known: %s)", t.API, strings.Join(api.Names(), ", ")), "api")
		}
		if t.Model == "" {
			return at("is required", "model")
		}
		if math.IsNaN(t.Rate) || math.IsInf(t.Rate, 0) || t.Rate <= 0 {
			return at(fmt.Sprintf("must be > 0, got %v", t.Rate), "rate")
		}
		if t.MaxInFlight < c.Workers {
			return at(fmt.Sprintf("must be at least workers (%d), since the cap is split over the workers; got %d", c.Workers, t.MaxInFlight), "max_in_flight")
		}
		if err := t.Budget.check(); err != nil {
			return at(err.Error(), "budget")
		}
		if b := t.Budget.ProbesPerHour; b > 0 && t.Rate*3600 > b {
			return at(fmt.Sprintf("rate %g probes/s is %g probes/hour, over budget.probes_per_hour (%g): probing paid APIs costs money, so raise the budget explicitly (0 means no cap)", t.Rate, t.Rate*3600, b), "rate")
		}
		if t.Timeout <= 0 {
			return at("must be > 0", "timeout")
		}
		if t.IdleTimeout < 0 {
			return at("must be >= 0", "idle_timeout")
		}
		if t.MaxEventBytes < 1024 {
			return at(fmt.Sprintf("must be at least 1024, got %d", t.MaxEventBytes), "max_event_bytes")
		}
		if t.MaxStreamBytes < 0 {
			return at("must be >= 0 (0: no cap)", "max_stream_bytes")
		}
		if t.MaxEvents < 0 {
			return at("must be >= 0 (0: no cap)", "max_events")
		}
		if t.Request.MaxTokens < 0 {
			return at("must be >= 0", "request", "max_tokens")
		}
		// Build the request body once here, so that what the API cannot
		// accept fails at load rather than in every probe.
		if _, err := ad.Body(api.Spec{Model: t.Model, Prompt: t.Request.Prompt, MaxTokens: t.Request.MaxTokens,
			IgnoreEOS: t.Request.IgnoreEOS, ExtraBody: t.Request.ExtraBody}); err != nil {
			return at(err.Error(), "request")
		}
		for _, fam := range []struct {
			name  string
			edges []float64
		}{{"ttft", t.Buckets.TTFT}, {"ttfa", t.Buckets.TTFA}, {"tpot", t.Buckets.TPOT}, {"itl", t.Buckets.ITL}, {"ntpot", t.Buckets.NTPOT}, {"e2e", t.Buckets.E2E}} {
			if err := checkBuckets(fam.edges); err != nil {
				return at(err.Error(), "buckets", fam.name)
			}
		}
		if err := t.HTTPClientConfig.Validate(); err != nil {
			return at(err.Error(), "http_client_config")
		}
	}
	return nil
}

func (b Budget) check() error {
	for _, v := range []float64{b.ProbesPerHour, b.OutputTokensPerHour} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("caps must be >= 0 (0: no cap), got %v", v)
		}
	}
	return nil
}

func checkBuckets(edges []float64) error {
	for i, e := range edges {
		if math.IsNaN(e) || math.IsInf(e, 0) || e <= 0 {
			return fmt.Errorf("edge %v must be a positive finite number", e)
		}
		if i > 0 && edges[i-1] >= e {
			return fmt.Errorf("edges must be strictly increasing (%v after %v)", e, edges[i-1])
		}
	}
	return nil
}

// TargetNames returns the names of the targets in order.
func (c *Config) TargetNames() []string {
	names := make([]string, len(c.Targets))
	for i, t := range c.Targets {
		names[i] = t.Name
	}
	return names
}

// Redacted returns the configuration as YAML with every secret replaced by
// <secret>: secret fields of http_client_config, request header values and
// the password and query values of URLs.
func (c *Config) Redacted() ([]byte, error) {
	cp := *c
	cp.Targets = slices.Clone(c.Targets)
	for i := range cp.Targets {
		cp.Targets[i].URL = RedactURL(cp.Targets[i].URL)
	}
	return yaml.Marshal(&cp)
}

// RedactURL hides a URL's password and query values, where API keys are
// sometimes passed.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "<invalid url>"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
	}
	// Query values are replaced by a literal <secret>, built by hand so
	// that it is not percent-encoded and nothing else in the URL changes.
	q, _ := url.ParseQuery(u.RawQuery)
	u.RawQuery = ""
	out := u.String()
	if len(q) > 0 {
		keys := slices.Sorted(maps.Keys(q))
		for i, k := range keys {
			keys[i] = url.QueryEscape(k) + "=<secret>"
		}
		out += "?" + strings.Join(keys, "&")
	}
	return out
}
