// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package prober

import (
	"net/http"
	"strings"
)

// unaskedEncoding returns the Content-Encoding of a response whose body
// the prober cannot read, and whether there is one. The prober asks for
// identity (Accept-Encoding: identity), and Go's transport decodes only
// the gzip it asked for itself, so a compressed body reaches the event
// reader as binary: a proxy that compresses regardless. The probe ends as
// decode rather than as a truncated or garbled stream.
func unaskedEncoding(h http.Header) (string, bool) {
	for _, v := range h.Values("Content-Encoding") {
		for _, ce := range strings.Split(v, ",") {
			if ce = strings.TrimSpace(ce); ce != "" && !strings.EqualFold(ce, "identity") {
				return ce, true
			}
		}
	}
	return "", false
}
