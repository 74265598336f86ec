// Package simulator implements llmsim, an LLM inference endpoint with
// controllable behaviour and server-side truth. It is the default target
// of the llm_slo_exporter demo, tests and benchmarks.
//
// It serves OpenAI's POST /v1/chat/completions and POST /v1/completions,
// streaming (Server-Sent Events, "data: {json}\n\n" events ending with
// "data: [DONE]\n\n") or not, and, streaming only and with the same
// controls, Anthropic's POST /v1/messages, TGI's POST /generate_stream,
// Triton's POST /v2/models/{model}/generate_stream, llama.cpp's
// POST /completion, Ollama's POST /api/chat (NDJSON) and SGLang's
// POST /generate, each in its own wire format and error shapes (see
// README.md). It shares no code with the prober: its wire formats are
// written independently from each API's documentation, so that a bug on
// one side is caught by the other.
//
// # Streams
//
// A chat stream is, in order: an optional role-only chunk
// ({"delta":{"role":"assistant","content":""}}, sent with the response
// headers, before the first token; when Config.RoleChunk is off the role
// rides on the first content chunk instead), content chunks carrying
// Config.TokensPerChunk tokens each (the last may carry fewer), a finish chunk
// with an empty delta and finish_reason, a usage chunk with "choices":[] if
// the request asked for stream_options.include_usage and Config.Usage is on
// (every other chunk then carries "usage":null; with vLLM's
// stream_options.continuous_usage_stats it carries the cumulative usage
// instead), and [DONE]. Completions
// streams have the same structure with object "text_completion", the text in
// choices[0].text and no role chunk. The finish chunk, usage chunk and [DONE]
// are written and flushed together.
//
// Every token is the word TokenText (" tok"), so one token is one
// whitespace-separated word.
//
// # Output length
//
// Let L be the request's max_completion_tokens (chat) or else max_tokens, and D
// the configured length (Config.OutputTokens, or a normal draw around it when
// Config.OutputTokensStddev > 0). With L and ignore_eos the output is exactly
// L tokens and finish_reason is "length". With L and no ignore_eos it is
// min(L, D) tokens, "length" if that equals L, else "stop". Without L it is D
// tokens and "stop".
//
// Prompt tokens, reported in usage, are estimated as the number of
// whitespace-separated words in the prompt (completions; a prompt of token IDs
// counts one per ID) or in the text of all messages (chat).
//
// # Timing
//
// All writes are scheduled at absolute deadlines from the moment the request
// was received, so scheduling error does not accumulate: content chunk 0 is
// due at received + TTFT, and chunk i > 0 carrying k tokens is due k ITL draws
// after chunk i−1 was due. TTFT and ITL are drawn per request and per token
// from Config's distributions. Each request runs on its own goroutine with one
// reusable timer.
//
// # Failure injection
//
// Each request draws its fate once: with probability ErrorRate it gets
// ErrorStatus and an error body before any stream; otherwise with probability
// MidstreamErrorRate it gets a mid-stream error; otherwise with probability
// TruncateRate it is truncated. Independently, with probability StallRate it
// stalls after its first content chunk. The mid-stream error and the
// truncation strike when content chunk ⌊⌊N/2⌋/K⌋ was due (N output tokens, K
// tokens per chunk), i.e. after half the tokens rounded down to whole chunks:
//
//   - error status: {"error":{"message":"llmsim: injected error","type":..,
//     "param":null,"code":<status>}} with the status (429 and 503 add
//     Retry-After: 1);
//   - mid-stream error: data: {"error":{"message":..,"type":"InternalServerError",
//     "param":null,"code":500}} then data: [DONE], as vLLM does;
//     non-streaming requests get a 500 error body instead;
//   - truncation: the handler panics with http.ErrAbortHandler after the
//     last chunk was flushed, so net/http closes the connection (HTTP/1.1:
//     without the terminating zero-length chunk) or resets the stream
//     (HTTP/2); the client reads an unexpected EOF and never sees a finish
//     chunk, usage or [DONE]. Middleware that recovers panics would defeat
//     this; serve Handler directly;
//   - stall: after the first content chunk nothing is written for
//     Config.Stall and the rest of the schedule shifts by it; a zero stall
//     hangs until the client goes away.
//
// # Truth
//
// For every request the simulator keeps a TruthRecord (received, first
// content chunk written, each content chunk written, end written, tokens,
// status, outcome), taken right after Flush returns, in a bounded ring served
// as JSON lines on GET /admin/truth, and exports the same timings as
// Prometheus histograms on GET /metrics.
package simulator
