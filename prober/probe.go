// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package prober is the worker side of the exporter: it runs a share of
// each target's Poisson schedule, sends the probes, times their streams and
// reports one record.Record per probe. It knows nothing of metric
// registries, HTTP endpoints or flags; the supervisor owns all of that.
package prober

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	promconfig "github.com/prometheus/common/config"

	"github.com/llmslo/llm_slo_exporter/config"
	"github.com/llmslo/llm_slo_exporter/prober/api"
	"github.com/llmslo/llm_slo_exporter/record"
)

// errStall is the cancellation cause of a probe whose stream went silent
// for longer than its idle timeout.
var errStall = errors.New("no bytes for the idle timeout")

// errTimeout is the cancellation cause of a probe over its deadline.
var errTimeout = errors.New("probe timeout")

// maxErrorBody bounds what is read of a non-2xx response body.
const maxErrorBody = 4 << 10

// Target is one target as a worker probes it.
type Target struct {
	// ID is the target's id in the supervisor's plan.
	ID uint32
	// Name is the configured name.
	Name string

	u       *url.URL
	getBody func() (io.ReadCloser, error)
	client  *http.Client
	adapter api.Adapter
	body    []byte
	header  http.Header
	timeout time.Duration
	idle    time.Duration
	limits  Limits

	// secrets are scrubbed from failure details.
	secrets []string

	readers sync.Pool // eventReader
	parsers sync.Pool // api.Parser
}

// NewTarget prepares t for probing: builds its HTTP client and its request
// body once, so that a probe only clones headers and sends.
func NewTarget(id uint32, t *config.Target, userAgent string, maxIdleConns int) (*Target, error) {
	ad, ok := api.Lookup(t.API)
	if !ok {
		return nil, fmt.Errorf("target %q: unknown api %q", t.Name, t.API)
	}
	body, err := ad.Body(api.Spec{
		Model:     t.Model,
		Prompt:    t.Request.Prompt,
		MaxTokens: t.Request.MaxTokens,
		IgnoreEOS: t.Request.IgnoreEOS,
		ExtraBody: t.Request.ExtraBody,
	})
	if err != nil {
		return nil, fmt.Errorf("target %q: building request body: %w", t.Name, err)
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("target %q: parsing url: %w", t.Name, err)
	}
	// The User-Agent is set in the request's headers below rather than
	// with common's WithUserAgent, whose round tripper clones every
	// request once more.
	client, err := promconfig.NewClientFromConfig(t.HTTPClientConfig, "llm_slo_exporter_"+t.Name,
		promconfig.WithIdleConnTimeout(90*time.Second),
	)
	if err != nil {
		return nil, fmt.Errorf("target %q: building HTTP client: %w", t.Name, err)
	}
	setIdlePool(client.Transport, maxIdleConns)
	userHeaders := make([]string, 0, len(t.Request.Headers))
	for k := range t.Request.Headers {
		userHeaders = append(userHeaders, k)
	}
	stripOnCrossHostRedirect(client, userHeaders)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if ad.Framing() == api.SSE {
		h.Set("Accept", "text/event-stream")
	}
	// No compression: a compressing proxy may buffer a stream into bursts,
	// and decompression costs CPU on the timed path.
	h.Set("Accept-Encoding", "identity")
	h.Set("User-Agent", userAgent)
	for k, v := range t.Request.Headers {
		h.Set(k, string(v))
	}
	for k, v := range ad.Headers() {
		h.Set(k, v)
	}
	tg := &Target{
		u:       u,
		getBody: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		secrets: secretValues(t),
		ID:      id,
		Name:    t.Name,
		client:  client,
		adapter: ad,
		body:    body,
		header:  h,
		timeout: time.Duration(t.Timeout),
		idle:    time.Duration(t.IdleTimeout),
		limits:  Limits{MaxEventBytes: t.MaxEventBytes, MaxStreamBytes: t.MaxStreamBytes, MaxEvents: t.MaxEvents},
	}
	tg.parsers.New = func() any { return ad.NewParser() }
	tg.readers.New = func() any { return newEventReader(ad.Framing(), tg.limits.MaxEventBytes) }
	return tg, nil
}

// setIdlePool sizes the idle connection pool of the innermost
// *http.Transport to the worker's in-flight cap, so that every connection
// a probe opened can be reused by a later one instead of paying TCP and TLS
// again. The common config wraps the transport in round trippers; the
// transport is reached through their unexported fields only when it is
// the client's own, so this is best effort: the default pool of
// prometheus/common (1000 per host) already exceeds the usual caps.
func setIdlePool(rt http.RoundTripper, n int) {
	if t, ok := rt.(*http.Transport); ok && n > 0 {
		t.MaxIdleConnsPerHost = n
		t.MaxIdleConns = max(t.MaxIdleConns, n)
	}
}

// CloseIdle closes the target's idle connections.
func (t *Target) CloseIdle() { t.client.CloseIdleConnections() }

// ServiceStats accumulates the service times of the events a worker
// handles (stream reads), the inputs of the Pollaczek-Khinchine
// prediction of the worker's queueing delay.
type ServiceStats struct {
	mu    sync.Mutex
	n     uint64
	sum   float64
	sumSq float64
}

// Add records one event's service time.
func (s *ServiceStats) Add(d time.Duration) {
	x := d.Seconds()
	s.mu.Lock()
	s.n++
	s.sum += x
	s.sumSq += x * x
	s.mu.Unlock()
}

// Read returns the cumulative count, sum and sum of squares (seconds).
func (s *ServiceStats) Read() (n uint64, sum, sumSq float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n, s.sum, s.sumSq
}

// meteredBody wraps a response body. It stamps the time each Read returns
// (the reader hands that stamp to the SSE reader, one clock read per Read),
// measures the time the probe spent handling the previous read's data
// before asking for more (the service time of one event in the M/G/1 view
// of the worker), and re-arms the stall timer whenever bytes arrive.
type meteredBody struct {
	r       io.Reader
	stats   *ServiceStats
	stall   *time.Timer
	idle    time.Duration
	lastRet time.Time
	n       int64
	limit   int64
}

func (m *meteredBody) Read(p []byte) (int, error) {
	if !m.lastRet.IsZero() {
		m.stats.Add(time.Since(m.lastRet))
	}
	if m.limit > 0 && m.n >= m.limit {
		return 0, errStreamTooLarge
	}
	n, err := m.r.Read(p)
	m.lastRet = time.Now()
	m.n += int64(n)
	if n > 0 && m.stall != nil {
		m.stall.Reset(m.idle)
	}
	return n, err
}

func (m *meteredBody) now() time.Time { return m.lastRet }

// Probe sends one probe scheduled at scheduled and fills rec with its
// result. It never returns an error: every failure is a reason in rec.
// When ctx is canceled (shutdown or target removed) rec.Reason is
// record.Canceled.
func (t *Target) Probe(ctx context.Context, scheduled time.Time, id uint64, stats *ServiceStats, rec *record.Record) {
	rec.Reset()
	rec.TargetID = t.ID
	rec.RequestID = id
	rec.Scheduled = scheduled.UnixNano()

	// Only a target with an idle timeout needs a cancelable context (the
	// stall timer cancels it); the others save its allocation.
	pctx, cancel := ctx, context.CancelCauseFunc(func(error) {})
	if t.idle > 0 {
		pctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
	}
	tctx, tcancel := context.WithTimeoutCause(pctx, t.timeout, errTimeout)
	defer tcancel()

	// The URL was parsed once; the transport only reads it.
	req, err := http.NewRequestWithContext(tctx, http.MethodPost, "", nil)
	if err != nil {
		rec.Reason, rec.Detail = record.Request, "building request failed"
		return
	}
	req.URL, req.Host = t.u, t.u.Host
	req.Body, req.GetBody, req.ContentLength = io.NopCloser(bytes.NewReader(t.body)), t.getBody, int64(len(t.body))
	req.Header = t.header.Clone()
	req.Header.Set("X-Request-Id", record.RequestIDString(id))

	dispatched := time.Now()
	rec.Lag = dispatched.Sub(scheduled)
	end := func(r record.Reason, detail string) {
		rec.Reason, rec.Detail = r, scrub(detail, t.secrets)
		rec.E2E = time.Since(dispatched)
	}

	resp, err := t.client.Do(req)
	if err != nil {
		r, detail := classifyError(tctx, ctx, err)
		end(r, detail)
		return
	}
	defer resp.Body.Close()
	rec.HTTPStatus = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		r := record.HTTPOther
		switch {
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			r = record.HTTP4xx
		case resp.StatusCode >= 500 && resp.StatusCode < 600:
			r = record.HTTP5xx
		}
		detail := fmt.Sprintf("HTTP %d", resp.StatusCode)
		if msg := t.adapter.ErrorDetail(b); msg != "" {
			detail += ": " + msg
		}
		end(r, detail)
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt == "text/html" {
			end(record.Decode, "HTTP 200 with Content-Type "+sanitize(ct, 64)+", not a stream")
			return
		}
	}

	if ce, ok := unaskedEncoding(resp.Header); ok {
		end(record.Decode, "HTTP 200 with Content-Encoding "+sanitize(ce, 32)+", which the prober did not ask for")
		return
	}

	mb := &meteredBody{r: resp.Body, stats: stats, idle: t.idle, limit: t.limits.MaxStreamBytes}
	if t.idle > 0 {
		mb.stall = time.AfterFunc(t.idle, func() { cancel(errStall) })
		defer mb.stall.Stop()
	}
	rd := t.readers.Get().(eventReader)
	defer t.readers.Put(rd)
	rd.Reset(mb)
	rd.SetNow(mb.now)
	parser := t.parsers.Get().(api.Parser)
	defer t.parsers.Put(parser)
	parser.Reset()

	st := &Stream{ITL: rec.ITL[:0]}
	if err := consume(rd, parser, t.limits, st); err != nil {
		switch {
		case tctx.Err() != nil:
			st.Reason, st.Detail = classifyError(tctx, ctx, err)
		default:
			st.Reason, st.Detail = classifyReadError(err, t.limits)
		}
	}
	rec.ITL = st.ITL
	rec.OutputEvents = st.OutputEvents
	if st.OutputEvents > 0 {
		rec.TTFT = st.First.Sub(dispatched)
		rec.Gen = st.Last.Sub(st.First)
	}
	if !st.FirstAnswerAt.IsZero() {
		rec.TTFA = st.FirstAnswerAt.Sub(dispatched)
	}
	if st.Reason != record.OK {
		end(st.Reason, st.Detail)
		return
	}
	// Read what follows the end marker (normally nothing) so that the
	// connection goes back to the pool.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	rec.E2E = st.Done.Sub(dispatched)
	rec.PromptTokens = st.Usage.PromptTokens
	rec.OutputTokens, rec.Estimated = st.Tokens()
	rec.Reason = record.OK
}

// classifyError maps a transport or read error to a reason. tctx is the
// probe's context (timeout, stall), parent the worker's (shutdown).
func classifyError(tctx, parent context.Context, err error) (record.Reason, string) {
	switch {
	case parent.Err() != nil:
		return record.Canceled, "canceled: target removed or exporter stopping"
	case errors.Is(context.Cause(tctx), errStall):
		return record.Stall, "no bytes received for the idle timeout"
	case errors.Is(context.Cause(tctx), errTimeout), errors.Is(err, context.DeadlineExceeded):
		return record.Timeout, "the probe exceeded its timeout"
	}
	var (
		op   *net.OpError
		dns  *net.DNSError
		ua   x509.UnknownAuthorityError
		hn   x509.HostnameError
		ci   x509.CertificateInvalidError
		rh   tls.RecordHeaderError
		cv   *tls.CertificateVerificationError
		alrt tls.AlertError
	)
	switch {
	case errors.As(err, &dns), errors.As(err, &ua), errors.As(err, &hn), errors.As(err, &ci),
		errors.As(err, &rh), errors.As(err, &cv), errors.As(err, &alrt):
		return record.Connect, errDetail(err)
	case errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect"):
		return record.Connect, errDetail(err)
	}
	return record.Reset, errDetail(err)
}

// errDetail returns an error's message without the request URL, which
// may carry credentials in its query.
func errDetail(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return sanitize(err.Error(), 200)
}

// sanitize bounds s and replaces control characters and invalid UTF-8, so
// that server-provided text is safe in logs and HTML.
func sanitize(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
