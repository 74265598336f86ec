// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

// FinishReasoner is implemented by parsers that remember why the server
// ended generation (OpenAI's finish_reason, for example "stop" or
// "length"). It is optional, so that Parser stays small for APIs without
// one; callers type-assert. With a forced length (ignore_eos) a reason
// other than "length" shows that the server ignored the request.
type FinishReasoner interface {
	// FinishReason returns the last finish reason the stream carried, or
	// "" when it carried none.
	FinishReason() string
}
