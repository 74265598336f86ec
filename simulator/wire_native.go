package simulator

import (
	"strconv"
)

// This file renders the streams of the APIs other than OpenAI's, each
// written from that API's documented wire format (see simulator/README.md
// for the exact events). Like the OpenAI renderer, they append bytes:
// no encoding/json or fmt per chunk.

// appendTokenIDs appends n token ids, first to first+n-1, as a JSON array.
func appendTokenIDs(dst []byte, first, n int) []byte {
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, int64(tokenID+first+i), 10)
	}
	return append(dst, ']')
}

// tokenID is the id of the first generated token; token i has id
// tokenID+i. eosID is the id of the EOS token.
const (
	tokenID = 1000
	eosID   = 2
)

func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// --- Anthropic Messages ---

// anthropicWire renders a Messages stream: message_start,
// content_block_start and a ping with the headers; content_block_delta
// events (thinking_delta for reasoning tokens, text_delta for the
// answer); at the switch from thinking to text a signature_delta,
// content_block_stop and the text block's content_block_start; then
// content_block_stop, message_delta (stop_reason, cumulative usage) and
// message_stop.
type anthropicWire struct {
	c     wireContext
	block int  // index of the open content block
	text  bool // the open block is the text block
}

func newAnthropicWire(c wireContext) wire { return &anthropicWire{c: c, text: c.reasoning == 0} }

func (w *anthropicWire) contentType() string { return "text/event-stream" }

func appendAnthropicEvent(dst []byte, name string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	return append(dst, "\ndata: "...)
}

func (w *anthropicWire) appendBlockStart(dst []byte) []byte {
	dst = appendAnthropicEvent(dst, "content_block_start")
	dst = append(dst, `{"type":"content_block_start","index":`...)
	dst = appendInt(dst, w.block)
	if w.text {
		dst = append(dst, `,"content_block":{"type":"text","text":""}}`...)
	} else {
		dst = append(dst, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	}
	return append(dst, "\n\n"...)
}

func (w *anthropicWire) appendBlockStop(dst []byte) []byte {
	dst = appendAnthropicEvent(dst, "content_block_stop")
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = appendInt(dst, w.block)
	return append(dst, "}\n\n"...)
}

func (w *anthropicWire) appendStart(dst []byte) []byte {
	dst = appendAnthropicEvent(dst, "message_start")
	dst = append(dst, `{"type":"message_start","message":{"id":`...)
	dst = appendJSONString(dst, "msg_"+w.c.requestID)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = appendJSONString(dst, w.c.model)
	dst = append(dst, `,"content":[],"stop_reason":null,"stop_sequence":null`...)
	if w.c.usage {
		dst = append(dst, `,"usage":{"input_tokens":`...)
		dst = appendInt(dst, w.c.prompt)
		dst = append(dst, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}`...)
	}
	dst = append(dst, "}}\n\n"...)
	dst = w.appendBlockStart(dst)
	return append(dst, "event: ping\ndata: {\"type\": \"ping\"}\n\n"...)
}

func (w *anthropicWire) appendChunk(dst []byte, c chunk) []byte {
	if !c.reasoning && !w.text {
		// The thinking block ends with its signature.
		dst = appendAnthropicEvent(dst, "content_block_delta")
		dst = append(dst, `{"type":"content_block_delta","index":`...)
		dst = appendInt(dst, w.block)
		dst = append(dst, `,"delta":{"type":"signature_delta","signature":"bGxtc2ltIHNpZ25hdHVyZQ=="}}`+"\n\n"...)
		dst = w.appendBlockStop(dst)
		w.block++
		w.text = true
		dst = w.appendBlockStart(dst)
	}
	dst = appendAnthropicEvent(dst, "content_block_delta")
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = appendInt(dst, w.block)
	if c.reasoning {
		dst = append(dst, `,"delta":{"type":"thinking_delta","thinking":"`...)
	} else {
		dst = append(dst, `,"delta":{"type":"text_delta","text":"`...)
	}
	dst = appendTokens(dst, c.n)
	return append(dst, "\"}}\n\n"...)
}

func (w *anthropicWire) appendEnd(dst []byte, finish string, tokens int) []byte {
	dst = w.appendBlockStop(dst)
	dst = appendAnthropicEvent(dst, "message_delta")
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":"`...)
	if finish == "length" {
		dst = append(dst, "max_tokens"...)
	} else {
		dst = append(dst, "end_turn"...)
	}
	dst = append(dst, `","stop_sequence":null}`...)
	if w.c.usage {
		dst = append(dst, `,"usage":{"output_tokens":`...)
		dst = appendInt(dst, tokens)
		dst = append(dst, '}')
	}
	dst = append(dst, "}\n\n"...)
	return append(dst, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
}

// appendStreamError appends Anthropic's error event; the stream then ends
// without message_stop.
func (w *anthropicWire) appendStreamError(dst []byte) []byte {
	return append(dst, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"llmsim: injected mid-stream error\"}}\n\n"...)
}

// --- TGI /generate_stream ---

// tgiWire renders a TGI stream: one `data:{...}` event (no space after
// the colon, as axum writes it) per token; a chunk of k tokens is k events
// in one write. The last token's event carries generated_text and, when
// the request asked for details, the details; a generation that ends on
// EOS ends with an extra event for the EOS token (special: true), which
// TGI counts in generated_tokens.
type tgiWire struct {
	c wireContext
}

func newTGIWire(c wireContext) wire { return &tgiWire{c: c} }

func (w *tgiWire) contentType() string { return "text/event-stream" }

func (w *tgiWire) appendStart(dst []byte) []byte { return dst }

// appendToken appends one token event; index is 1-based. end, when not
// "", makes it the last event, with that finish reason, tokens counted.
func (w *tgiWire) appendToken(dst []byte, index int, special bool, end string, tokens int) []byte {
	dst = append(dst, `data:{"index":`...)
	dst = appendInt(dst, index)
	if special {
		dst = append(dst, `,"token":{"id":`...)
		dst = appendInt(dst, eosID)
		dst = append(dst, `,"text":"</s>","logprob":-0.01,"special":true}`...)
	} else {
		dst = append(dst, `,"token":{"id":`...)
		dst = appendInt(dst, tokenID+index-1)
		dst = append(dst, `,"text":"`+TokenText+`","logprob":-0.1,"special":false}`...)
	}
	if end == "" {
		return append(dst, `,"generated_text":null,"details":null}`+"\n\n"...)
	}
	dst = append(dst, `,"generated_text":"`...)
	// generated_text is the text of the tokens, the EOS excluded.
	text := tokens
	if special {
		text--
	}
	dst = appendTokens(dst, text)
	dst = append(dst, '"')
	if w.c.usage {
		dst = append(dst, `,"details":{"finish_reason":"`...)
		dst = append(dst, end...)
		dst = append(dst, `","generated_tokens":`...)
		dst = appendInt(dst, tokens)
		dst = append(dst, `,"seed":null,"input_length":`...)
		dst = appendInt(dst, w.c.prompt)
		dst = append(dst, '}')
	} else {
		dst = append(dst, `,"details":null`...)
	}
	return append(dst, "}\n\n"...)
}

func (w *tgiWire) appendChunk(dst []byte, c chunk) []byte {
	for i := c.cum - c.n + 1; i <= c.cum; i++ {
		end := ""
		if c.last && c.finish == "length" && i == c.cum {
			end = "length"
		}
		dst = w.appendToken(dst, i, false, end, c.cum)
	}
	return dst
}

func (w *tgiWire) appendEnd(dst []byte, finish string, tokens int) []byte {
	if finish == "length" {
		return dst // the last token's event ended the stream
	}
	return w.appendToken(dst, tokens+1, true, "eos_token", tokens+1)
}

func (w *tgiWire) appendStreamError(dst []byte) []byte {
	return append(dst, `data:{"error":"llmsim: injected mid-stream error","error_type":"generation"}`+"\n\n"...)
}

// --- Triton generate_stream (TensorRT-LLM ensemble) ---

// tritonWire renders a Triton generate_stream: one event per response
// with the chunk's text in text_output (a delta), plus num_output_tokens
// when the request asked for it (the vLLM backend's
// return_num_output_tokens). There is no end marker: the body ends.
type tritonWire struct {
	c    wireContext
	head []byte
}

func newTritonWire(c wireContext) wire {
	h := append([]byte(`data: {"model_name":`), nil...)
	h = appendJSONString(h, c.model)
	h = append(h, `,"model_version":"1","sequence_end":false,"sequence_id":0,"sequence_start":false,`...)
	return &tritonWire{c: c, head: h}
}

func (w *tritonWire) contentType() string { return "text/event-stream; charset=utf-8" }

func (w *tritonWire) appendStart(dst []byte) []byte { return dst }

func (w *tritonWire) appendChunk(dst []byte, c chunk) []byte {
	dst = append(dst, w.head...)
	if w.c.usage {
		dst = append(dst, `"num_output_tokens":`...)
		dst = appendInt(dst, c.n)
		dst = append(dst, ',')
	}
	dst = append(dst, `"text_output":"`...)
	dst = appendTokens(dst, c.n)
	return append(dst, "\"}\n\n"...)
}

func (w *tritonWire) appendEnd(dst []byte, _ string, _ int) []byte { return dst }

func (w *tritonWire) appendStreamError(dst []byte) []byte {
	return append(dst, `data: {"error":"llmsim: injected mid-stream error"}`+"\n\n"...)
}

// --- llama.cpp /completion ---

// llamaCppWire renders a llama-server /completion stream: partial events
// {"index","content","tokens","stop":false,"id_slot","tokens_predicted",
// "tokens_evaluated"} and a final event with "stop": true, stop_type and
// the timings. With Config.Usage off the counts and timings are left out
// (no llama.cpp does that; it lets a client's estimate be tested).
type llamaCppWire struct {
	c wireContext
}

func newLlamaCppWire(c wireContext) wire { return &llamaCppWire{c: c} }

func (w *llamaCppWire) contentType() string { return "text/event-stream" }

func (w *llamaCppWire) appendStart(dst []byte) []byte { return dst }

func (w *llamaCppWire) appendChunk(dst []byte, c chunk) []byte {
	dst = append(dst, `data: {"index":0,"content":"`...)
	dst = appendTokens(dst, c.n)
	dst = append(dst, `","tokens":`...)
	if w.c.usage {
		dst = appendTokenIDs(dst, c.cum-c.n, c.n)
	} else {
		dst = append(dst, "[]"...)
	}
	dst = append(dst, `,"stop":false,"id_slot":0`...)
	if w.c.usage {
		dst = append(dst, `,"tokens_predicted":`...)
		dst = appendInt(dst, c.cum)
		dst = append(dst, `,"tokens_evaluated":`...)
		dst = appendInt(dst, w.c.prompt)
	}
	return append(dst, "}\n\n"...)
}

func (w *llamaCppWire) appendEnd(dst []byte, finish string, tokens int) []byte {
	dst = append(dst, `data: {"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":`...)
	dst = appendJSONString(dst, w.c.model)
	if w.c.usage {
		dst = append(dst, `,"tokens_predicted":`...)
		dst = appendInt(dst, tokens)
		dst = append(dst, `,"tokens_evaluated":`...)
		dst = appendInt(dst, w.c.prompt)
	}
	dst = append(dst, `,"has_new_line":false,"truncated":false,"stop_type":"`...)
	if finish == "length" {
		dst = append(dst, "limit"...)
	} else {
		dst = append(dst, "eos"...)
	}
	dst = append(dst, `","stopping_word":""`...)
	if w.c.usage {
		dst = append(dst, `,"tokens_cached":`...)
		dst = appendInt(dst, w.c.prompt+tokens)
		dst = append(dst, `,"timings":{"cache_n":0,"prompt_n":`...)
		dst = appendInt(dst, w.c.prompt)
		dst = append(dst, `,"prompt_ms":0,"prompt_per_token_ms":0,"prompt_per_second":0,"predicted_n":`...)
		dst = appendInt(dst, tokens)
		dst = append(dst, `,"predicted_ms":0,"predicted_per_token_ms":0,"predicted_per_second":0}`...)
	}
	return append(dst, "}\n\n"...)
}

func (w *llamaCppWire) appendStreamError(dst []byte) []byte {
	return append(dst, `data: {"error":{"code":500,"message":"llmsim: injected mid-stream error","type":"server_error"}}`+"\n\n"...)
}

// --- Ollama /api/chat ---

// ollamaWire renders an Ollama /api/chat stream: NDJSON lines
// {"model","created_at","message":{"role","content"[,"thinking"]},"done":false},
// reasoning tokens in message.thinking, and a last line with "done": true,
// done_reason and, with Config.Usage on, the counts and durations (Ollama
// omits zero counts).
type ollamaWire struct {
	c    wireContext
	head []byte
}

func newOllamaWire(c wireContext) wire {
	h := append([]byte(`{"model":`), nil...)
	h = appendJSONString(h, c.model)
	h = append(h, `,"created_at":`...)
	h = appendJSONString(h, c.createdAt)
	h = append(h, `,"message":{"role":"assistant","content":"`...)
	return &ollamaWire{c: c, head: h}
}

func (w *ollamaWire) contentType() string { return "application/x-ndjson" }

func (w *ollamaWire) appendStart(dst []byte) []byte { return dst }

func (w *ollamaWire) appendChunk(dst []byte, c chunk) []byte {
	dst = append(dst, w.head...)
	if c.reasoning {
		dst = append(dst, `","thinking":"`...)
	}
	dst = appendTokens(dst, c.n)
	return append(dst, "\"},\"done\":false}\n"...)
}

func (w *ollamaWire) appendEnd(dst []byte, finish string, tokens int) []byte {
	dst = append(dst, w.head...)
	dst = append(dst, `"},"done":true,"done_reason":"`...)
	dst = append(dst, finish...)
	dst = append(dst, '"')
	if w.c.usage {
		dst = append(dst, `,"total_duration":1,"load_duration":1,"prompt_eval_count":`...)
		dst = appendInt(dst, w.c.prompt)
		dst = append(dst, `,"prompt_eval_duration":1,"eval_count":`...)
		dst = appendInt(dst, tokens)
		dst = append(dst, `,"eval_duration":1`...)
	}
	return append(dst, "}\n"...)
}

func (w *ollamaWire) appendStreamError(dst []byte) []byte {
	return append(dst, `{"error":"llmsim: injected mid-stream error"}`+"\n"...)
}

// --- SGLang /generate ---

// sglangWire renders an SGLang native /generate stream: events
// {"text","meta_info":{"id","finish_reason","prompt_tokens",
// "completion_tokens","cached_tokens"},"index":0} whose text is the whole
// text so far (SGLang's default), the last with finish_reason
// {"type":"length","length":N} or {"type":"stop","matched":EOS}, then
// data: [DONE]. With Config.Usage off the counts are left out.
type sglangWire struct {
	c  wireContext
	id []byte
}

func newSGLangWire(c wireContext) wire {
	return &sglangWire{c: c, id: appendJSONString(nil, c.requestID)}
}

func (w *sglangWire) contentType() string { return "text/event-stream" }

func (w *sglangWire) appendStart(dst []byte) []byte { return dst }

func (w *sglangWire) appendChunk(dst []byte, c chunk) []byte {
	dst = append(dst, `data: {"text":"`...)
	dst = appendTokens(dst, c.cum)
	dst = append(dst, `","meta_info":{"id":`...)
	dst = append(dst, w.id...)
	dst = append(dst, `,"finish_reason":`...)
	switch {
	case !c.last:
		dst = append(dst, "null"...)
	case c.finish == "length":
		dst = append(dst, `{"type":"length","length":`...)
		dst = appendInt(dst, c.cum)
		dst = append(dst, '}')
	default:
		dst = append(dst, `{"type":"stop","matched":`...)
		dst = appendInt(dst, eosID)
		dst = append(dst, '}')
	}
	if w.c.usage {
		dst = append(dst, `,"prompt_tokens":`...)
		dst = appendInt(dst, w.c.prompt)
		dst = append(dst, `,"completion_tokens":`...)
		dst = appendInt(dst, c.cum)
		dst = append(dst, `,"cached_tokens":0`...)
	}
	return append(dst, "},\"index\":0}\n\n"...)
}

func (w *sglangWire) appendEnd(dst []byte, _ string, _ int) []byte {
	return append(dst, doneEvent...)
}

func (w *sglangWire) appendStreamError(dst []byte) []byte {
	return append(append(dst, `data: {"error":{"message":"llmsim: injected mid-stream error"}}`+"\n\n"...), doneEvent...)
}
