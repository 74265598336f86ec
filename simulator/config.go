package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Distribution names the shape from which a latency (TTFT or ITL) is drawn.
type Distribution string

// The supported latency distributions. Each is parameterised by a mean and a
// standard deviation; draws below zero are clamped to zero.
const (
	// Constant always returns the mean; the standard deviation is ignored.
	Constant Distribution = "constant"
	// Normal draws from a normal distribution with the given mean and
	// standard deviation.
	Normal Distribution = "normal"
	// LogNormal draws from a log-normal distribution whose own mean and
	// standard deviation (not those of the underlying normal) are the given
	// values: σ² = ln(1 + sd²/mean²), μ = ln(mean) − σ²/2.
	LogNormal Distribution = "lognormal"
)

// Distributions lists the valid Distribution values, for flag enums.
var Distributions = []string{string(Constant), string(Normal), string(LogNormal)}

// MaxOutputTokens is the largest output length the simulator will generate for
// one request, whether it comes from max_tokens or from the configuration.
const MaxOutputTokens = 1 << 20

// Config is the runtime-adjustable behaviour of the simulator. The zero value
// is not valid; start from DefaultConfig. Its JSON form (used by
// /admin/config) has snake_case keys and durations as Go duration strings
// such as "50ms"; unmarshalling JSON into a Config merges the fields present
// in the document into the existing values (a partial update).
type Config struct {
	// TTFT is the mean time from receiving a request to writing its first
	// content chunk.
	TTFT time.Duration
	// TTFTDistribution is the shape from which TTFT is drawn per request.
	TTFTDistribution Distribution
	// TTFTStddev is the standard deviation of TTFT (ignored for Constant).
	TTFTStddev time.Duration
	// ITL is the mean inter-token latency. A chunk that carries k tokens is
	// written k ITL draws after the previous one.
	ITL time.Duration
	// ITLDistribution is the shape from which each token's ITL is drawn.
	ITLDistribution Distribution
	// ITLStddev is the standard deviation of ITL (ignored for Constant).
	ITLStddev time.Duration
	// OutputTokens is the mean output length used when a request does not
	// force one (see the package documentation for the exact rule).
	OutputTokens int
	// OutputTokensStddev, when positive, draws the output length from a
	// normal distribution (rounded, at least 1) instead of using
	// OutputTokens as a constant.
	OutputTokensStddev float64
	// TokensPerChunk is the number of tokens carried by each content chunk;
	// the last chunk may carry fewer.
	TokensPerChunk int
	// ReasoningTokens is how many of each output's tokens, at its start,
	// are reasoning: sent in the API's reasoning channel (OpenAI chat's
	// delta.reasoning, Anthropic's thinking block, Ollama's
	// message.thinking) before the answer. APIs without one send them as
	// ordinary text. Zero (the default) sends no reasoning.
	ReasoningTokens int
	// Usage makes the simulator honour stream_options.include_usage (and
	// report usage in non-streaming responses). When false no usage is ever
	// reported.
	Usage bool
	// RoleChunk makes chat streams start with a role-only chunk
	// ({"role":"assistant","content":""}) written together with the
	// response headers. When false the role rides on the first content
	// chunk instead.
	RoleChunk bool
	// ErrorRate is the probability (0..1) that a request is answered with
	// ErrorStatus and an OpenAI-style error body instead of a stream.
	ErrorRate float64
	// ErrorStatus is the HTTP status (400..599) used for ErrorRate.
	ErrorStatus int
	// MidstreamErrorRate is the probability that a stream is ended half-way
	// by an error event followed by [DONE].
	MidstreamErrorRate float64
	// TruncateRate is the probability that a stream is cut half-way: the
	// connection is aborted without a finish chunk, usage or [DONE].
	TruncateRate float64
	// StallRate is the probability that a stream stalls for Stall after its
	// first content chunk.
	StallRate float64
	// Stall is the length of an injected stall; zero means the stream hangs
	// until the client goes away.
	Stall time.Duration
}

// DefaultConfig returns the simulator's default behaviour: TTFT 100ms and ITL
// 10ms (constant), 128 output tokens, one token per chunk, usage and role
// chunk on, no failure injection (ErrorStatus 500 when enabled).
func DefaultConfig() Config {
	return Config{
		TTFT:             100 * time.Millisecond,
		TTFTDistribution: Constant,
		ITL:              10 * time.Millisecond,
		ITLDistribution:  Constant,
		OutputTokens:     128,
		TokensPerChunk:   1,
		Usage:            true,
		RoleChunk:        true,
		ErrorStatus:      500,
	}
}

// Validate reports the first problem found in c, or nil if c is usable.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	checkDist := func(name string, d Distribution) {
		switch d {
		case Constant, Normal, LogNormal:
		default:
			errs = append(errs, fmt.Errorf("%s: unknown distribution %q (want one of %s)", name, d, strings.Join(Distributions, ", ")))
		}
	}
	checkRate := func(name string, r float64) {
		check(r >= 0 && r <= 1, "%s: %v is not a probability in [0, 1]", name, r)
	}
	check(c.TTFT >= 0, "ttft: must not be negative (got %s)", c.TTFT)
	check(c.TTFTStddev >= 0, "ttft_stddev: must not be negative (got %s)", c.TTFTStddev)
	checkDist("ttft_distribution", c.TTFTDistribution)
	check(c.ITL >= 0, "itl: must not be negative (got %s)", c.ITL)
	check(c.ITLStddev >= 0, "itl_stddev: must not be negative (got %s)", c.ITLStddev)
	checkDist("itl_distribution", c.ITLDistribution)
	check(c.OutputTokens >= 1 && c.OutputTokens <= MaxOutputTokens, "output_tokens: must be in [1, %d] (got %d)", MaxOutputTokens, c.OutputTokens)
	check(c.OutputTokensStddev >= 0 && !math.IsInf(c.OutputTokensStddev, 0), "output_tokens_stddev: must be a finite number >= 0 (got %v)", c.OutputTokensStddev)
	check(c.ReasoningTokens >= 0 && c.ReasoningTokens <= MaxOutputTokens, "reasoning_tokens: must be in [0, %d] (got %d)", MaxOutputTokens, c.ReasoningTokens)
	check(c.TokensPerChunk >= 1 && c.TokensPerChunk <= MaxOutputTokens, "tokens_per_chunk: must be in [1, %d] (got %d)", MaxOutputTokens, c.TokensPerChunk)
	checkRate("error_rate", c.ErrorRate)
	check(c.ErrorStatus >= 400 && c.ErrorStatus <= 599, "error_status: must be an HTTP error status in [400, 599] (got %d)", c.ErrorStatus)
	checkRate("midstream_error_rate", c.MidstreamErrorRate)
	checkRate("truncate_rate", c.TruncateRate)
	checkRate("stall_rate", c.StallRate)
	check(c.Stall >= 0, "stall: must not be negative (got %s)", c.Stall)
	return errors.Join(errs...)
}

// configJSON is the wire form of Config. Pointer fields let an update leave
// absent fields alone.
type configJSON struct {
	TTFT               *jsonDuration `json:"ttft,omitempty"`
	TTFTDistribution   *Distribution `json:"ttft_distribution,omitempty"`
	TTFTStddev         *jsonDuration `json:"ttft_stddev,omitempty"`
	ITL                *jsonDuration `json:"itl,omitempty"`
	ITLDistribution    *Distribution `json:"itl_distribution,omitempty"`
	ITLStddev          *jsonDuration `json:"itl_stddev,omitempty"`
	OutputTokens       *int          `json:"output_tokens,omitempty"`
	OutputTokensStddev *float64      `json:"output_tokens_stddev,omitempty"`
	TokensPerChunk     *int          `json:"tokens_per_chunk,omitempty"`
	ReasoningTokens    *int          `json:"reasoning_tokens,omitempty"`
	Usage              *bool         `json:"usage,omitempty"`
	RoleChunk          *bool         `json:"role_chunk,omitempty"`
	ErrorRate          *float64      `json:"error_rate,omitempty"`
	ErrorStatus        *int          `json:"error_status,omitempty"`
	MidstreamErrorRate *float64      `json:"midstream_error_rate,omitempty"`
	TruncateRate       *float64      `json:"truncate_rate,omitempty"`
	StallRate          *float64      `json:"stall_rate,omitempty"`
	Stall              *jsonDuration `json:"stall,omitempty"`
}

// jsonDuration is a time.Duration that travels as a Go duration string.
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a Go duration string such as \"50ms\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = jsonDuration(v)
	return nil
}

// MarshalJSON renders every field of c, with snake_case keys and durations as
// Go duration strings.
func (c Config) MarshalJSON() ([]byte, error) {
	dur := func(d time.Duration) *jsonDuration { j := jsonDuration(d); return &j }
	return json.Marshal(configJSON{
		TTFT:               dur(c.TTFT),
		TTFTDistribution:   &c.TTFTDistribution,
		TTFTStddev:         dur(c.TTFTStddev),
		ITL:                dur(c.ITL),
		ITLDistribution:    &c.ITLDistribution,
		ITLStddev:          dur(c.ITLStddev),
		OutputTokens:       &c.OutputTokens,
		OutputTokensStddev: &c.OutputTokensStddev,
		TokensPerChunk:     &c.TokensPerChunk,
		ReasoningTokens:    &c.ReasoningTokens,
		Usage:              &c.Usage,
		RoleChunk:          &c.RoleChunk,
		ErrorRate:          &c.ErrorRate,
		ErrorStatus:        &c.ErrorStatus,
		MidstreamErrorRate: &c.MidstreamErrorRate,
		TruncateRate:       &c.TruncateRate,
		StallRate:          &c.StallRate,
		Stall:              dur(c.Stall),
	})
}

// UnmarshalJSON merges the fields present in b into c; absent or null fields
// keep their values. Unknown fields and badly typed values are errors, in
// which case c is left unchanged. It does not validate the result; call
// Validate.
func (c *Config) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p configJSON
	if err := dec.Decode(&p); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON object")
	}
	n := *c
	setDur := func(dst *time.Duration, src *jsonDuration) {
		if src != nil {
			*dst = time.Duration(*src)
		}
	}
	setDur(&n.TTFT, p.TTFT)
	setDur(&n.TTFTStddev, p.TTFTStddev)
	setDur(&n.ITL, p.ITL)
	setDur(&n.ITLStddev, p.ITLStddev)
	setDur(&n.Stall, p.Stall)
	setField(&n.TTFTDistribution, p.TTFTDistribution)
	setField(&n.ITLDistribution, p.ITLDistribution)
	setField(&n.OutputTokens, p.OutputTokens)
	setField(&n.OutputTokensStddev, p.OutputTokensStddev)
	setField(&n.TokensPerChunk, p.TokensPerChunk)
	setField(&n.ReasoningTokens, p.ReasoningTokens)
	setField(&n.Usage, p.Usage)
	setField(&n.RoleChunk, p.RoleChunk)
	setField(&n.ErrorRate, p.ErrorRate)
	setField(&n.ErrorStatus, p.ErrorStatus)
	setField(&n.MidstreamErrorRate, p.MidstreamErrorRate)
	setField(&n.TruncateRate, p.TruncateRate)
	setField(&n.StallRate, p.StallRate)
	*c = n
	return nil
}

func setField[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// latency is a compiled latency distribution: the parameters a draw needs,
// computed once per configuration change rather than per draw.
type latency struct {
	dist   Distribution
	mean   float64 // nanoseconds
	stddev float64 // nanoseconds
	mu     float64 // log-normal location
	sigma  float64 // log-normal scale
}

func newLatency(dist Distribution, mean, stddev time.Duration) latency {
	l := latency{dist: dist, mean: float64(mean), stddev: float64(stddev)}
	if stddev == 0 || mean == 0 {
		l.dist = Constant
	}
	if l.dist == LogNormal {
		s2 := math.Log1p(l.stddev * l.stddev / (l.mean * l.mean))
		l.sigma = math.Sqrt(s2)
		l.mu = math.Log(l.mean) - s2/2
	}
	return l
}

// draw returns one sample, clamped at zero.
func (l *latency) draw(r *rand.Rand) time.Duration {
	var v float64
	switch l.dist {
	case Normal:
		v = l.mean + l.stddev*r.NormFloat64()
	case LogNormal:
		v = math.Exp(l.mu + l.sigma*r.NormFloat64())
	default:
		return time.Duration(l.mean)
	}
	if v <= 0 {
		return 0
	}
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(v)
}

// compiled is a validated Config plus the derived values the hot path uses.
// It is immutable once published through Server.cfg.
type compiled struct {
	Config
	ttft latency
	itl  latency
}

func compile(c Config) (*compiled, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &compiled{
		Config: c,
		ttft:   newLatency(c.TTFTDistribution, c.TTFT, c.TTFTStddev),
		itl:    newLatency(c.ITLDistribution, c.ITL, c.ITLStddev),
	}, nil
}

// drawOutputTokens returns the configured output length for one request.
func (c *compiled) drawOutputTokens(r *rand.Rand) int {
	if c.OutputTokensStddev <= 0 {
		return c.OutputTokens
	}
	v := math.Round(float64(c.OutputTokens) + c.OutputTokensStddev*r.NormFloat64())
	return int(min(max(v, 1), MaxOutputTokens))
}

// drawSum returns the sum of n draws: the gap before a chunk of n tokens.
func (l *latency) drawSum(r *rand.Rand, n int) time.Duration {
	if l.dist == Constant {
		return time.Duration(n) * time.Duration(l.mean)
	}
	var sum time.Duration
	for range n {
		sum += l.draw(r)
	}
	return sum
}
