// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/llmslo/llm_slo_exporter/config"
)

// secretValues returns the credentials a target sends, inline or from
// files, so that a failure detail that echoes one (a server that quotes
// the request's headers in its error body, for example) can be scrubbed.
// Values shorter than 4 bytes are skipped: they would scrub ordinary text.
func secretValues(t *config.Target) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); len(s) >= 4 {
			out = append(out, s)
		}
	}
	file := func(path string) {
		if path == "" {
			return
		}
		if b, err := os.ReadFile(path); err == nil {
			add(string(b))
		}
	}
	for _, v := range t.Request.Headers {
		add(string(v))
	}
	h := t.HTTPClientConfig
	add(string(h.BearerToken))
	file(h.BearerTokenFile)
	if a := h.Authorization; a != nil {
		add(string(a.Credentials))
		file(a.CredentialsFile)
	}
	if b := h.BasicAuth; b != nil {
		add(string(b.Password))
		file(b.PasswordFile)
	}
	if o := h.OAuth2; o != nil {
		add(string(o.ClientSecret))
		file(o.ClientSecretFile)
	}
	if h.HTTPHeaders != nil {
		for _, hv := range h.HTTPHeaders.Headers {
			for _, s := range hv.Secrets {
				add(string(s))
			}
			for _, f := range hv.Files {
				file(f)
			}
		}
	}
	return out
}

// scrub replaces every secret value in s.
func scrub(s string, secrets []string) string {
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "<secret>")
		}
	}
	return s
}

// errTooManyRedirects ends a redirect chain.
var errTooManyRedirects = errors.New("stopped after 10 redirects")

// stripOnCrossHostRedirect makes client drop the configured request
// headers (treated as secrets: API keys travel there) when a redirect
// leaves the target's host. Go's client already drops Authorization and
// cookies on such redirects, and prometheus/common drops its http_headers,
// but it copies every other header, an x-api-key among them.
func stripOnCrossHostRedirect(client *http.Client, headers []string) {
	if client.CheckRedirect != nil || len(headers) == 0 {
		return // redirects are not followed at all
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errTooManyRedirects
		}
		if req.URL.Hostname() != via[0].URL.Hostname() {
			for _, h := range headers {
				req.Header.Del(h)
			}
		}
		return nil
	}
}
