package simulator

import (
	"sync"
)

// Outcome values recorded in TruthRecord.Outcome and in the outcome label of
// llmsim_requests_total.
const (
	// OutcomeSuccess means the full stream (or response) was written.
	OutcomeSuccess = "success"
	// OutcomeStalled means the full stream was written, but an injected
	// stall delayed it.
	OutcomeStalled = "stalled"
	// OutcomeErrorStatus means an injected HTTP error status was returned.
	OutcomeErrorStatus = "error_status"
	// OutcomeMidstreamError means an injected error event ended the stream
	// (or, without streaming, a 500 replaced the response).
	OutcomeMidstreamError = "midstream_error"
	// OutcomeTruncated means the response was aborted half-way on purpose.
	OutcomeTruncated = "truncated"
	// OutcomeCanceled means the client went away (or a write failed) before
	// the end was written.
	OutcomeCanceled = "canceled"
	// OutcomeBadRequest means the request could not be decoded or was
	// invalid, and got a 400.
	OutcomeBadRequest = "bad_request"
)

// API values recorded in TruthRecord.API.
const (
	// APIChat is POST /v1/chat/completions.
	APIChat = "chat"
	// APICompletions is POST /v1/completions.
	APICompletions = "completions"
	// APIAnthropic is POST /v1/messages (Anthropic Messages).
	APIAnthropic = "anthropic"
	// APITGI is POST /generate_stream (Hugging Face TGI).
	APITGI = "tgi"
	// APITriton is POST /v2/models/{model}/generate_stream (Triton,
	// TensorRT-LLM).
	APITriton = "triton"
	// APILlamaCpp is POST /completion (llama.cpp's llama-server).
	APILlamaCpp = "llamacpp"
	// APIOllama is POST /api/chat (Ollama, NDJSON).
	APIOllama = "ollama"
	// APISGLang is POST /generate (SGLang's native API).
	APISGLang = "sglang"
)

// TruthRecord is the server-side truth about one request: what the simulator
// did and when. Timestamps are Unix nanoseconds; every timestamp after
// Received is Received plus a monotonic-clock offset, so differences between
// them are immune to wall-clock steps. Write timestamps are taken right after
// the write and Flush of the corresponding bytes returned.
type TruthRecord struct {
	// RequestID is the request's x-request-id header, or a generated ID.
	RequestID string `json:"request_id"`
	// Model is the model named in the request body.
	Model string `json:"model"`
	// API is one of the API constants (APIChat, APIAnthropic, ...).
	API string `json:"api"`
	// Stream reports whether the request asked for a stream.
	Stream bool `json:"stream"`
	// Received is when the handler started (before the body was read).
	Received int64 `json:"received"`
	// FirstByteWritten is when the first content chunk was written and
	// flushed (0 if none was). For a non-streaming request it is when the
	// response body was written.
	FirstByteWritten int64 `json:"first_byte_written"`
	// ChunksWritten holds one timestamp per content chunk written, in order.
	// Each chunk carries TokensPerChunk tokens except possibly the last.
	ChunksWritten []int64 `json:"chunks_written"`
	// EndWritten is when the end of the response was written: the write of
	// [DONE] (after a finish or mid-stream error), the abort of a truncated
	// stream, an error body, or the moment the client was found gone.
	EndWritten int64 `json:"end_written"`
	// OutputTokens is the number of content tokens actually written,
	// reasoning tokens included.
	OutputTokens int `json:"output_tokens"`
	// ReasoningTokens is how many of them were sent as reasoning (in the
	// API's reasoning channel), at the start of the stream.
	ReasoningTokens int `json:"reasoning_tokens"`
	// PromptTokens is the simulator's estimate of the prompt length.
	PromptTokens int `json:"prompt_tokens"`
	// TokensPerChunk is the chunk size in force for this request.
	TokensPerChunk int `json:"tokens_per_chunk"`
	// FinishReason is why the generation ended, "stop" or "length" (each
	// API renders it in its own terms: Anthropic's end_turn or
	// max_tokens, TGI's eos_token or length, ...), or "" if the stream
	// did not end normally.
	FinishReason string `json:"finish_reason"`
	// Status is the HTTP status code sent (0 if none was, e.g. a
	// non-streaming request aborted before its headers).
	Status int `json:"status"`
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
}

// truthRing is a bounded ring of the most recent TruthRecords.
type truthRing struct {
	mu   sync.Mutex
	cap  int
	recs []TruthRecord
	next int // index of the oldest record once len(recs) == cap
}

func (t *truthRing) add(r TruthRecord) {
	if t.cap <= 0 {
		return
	}
	t.mu.Lock()
	if len(t.recs) < t.cap {
		t.recs = append(t.recs, r)
	} else {
		t.recs[t.next] = r
		t.next = (t.next + 1) % t.cap
	}
	t.mu.Unlock()
}

// snapshot returns the records oldest first; requestID, if not empty, keeps
// only the records with that ID. The returned records share their
// ChunksWritten slices with the ring, which never modifies them.
func (t *truthRing) snapshot(requestID string) []TruthRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []TruthRecord
	if requestID == "" {
		out = make([]TruthRecord, 0, len(t.recs))
	}
	for i := range t.recs {
		r := &t.recs[(t.next+i)%len(t.recs)]
		if requestID == "" || r.RequestID == requestID {
			out = append(out, *r)
		}
	}
	return out
}

func (t *truthRing) clear() {
	t.mu.Lock()
	t.recs = nil
	t.next = 0
	t.mu.Unlock()
}
