package simulator

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// This file holds what differs between the simulated APIs on the request
// side: how a request body is read, how an error body looks, and which
// wire renders the stream. The timing, the plan and the failure injection
// are shared (generate.go).

// apiSpec describes one simulated API.
type apiSpec struct {
	// name is the API's value in TruthRecord.API.
	name string
	// reasoning reports whether the API has a separate channel for
	// reasoning text (Config.ReasoningTokens applies only then).
	reasoning bool
	// decode reads the request; it returns a message for a 400 when the
	// request is invalid.
	decode func(r *http.Request, body []byte) (norm, string)
	// newWire returns the renderer of one streamed response.
	newWire func(c wireContext) wire
	// appendError appends an error body for status, in the API's own
	// shape, and returns it with its content type.
	appendError func(dst []byte, status int, msg, requestID string) ([]byte, string)
}

// norm is a request reduced to what the simulator acts on, whatever the
// API.
type norm struct {
	model  string
	stream bool
	// limit is the output cap the request set (nil: none).
	limit *int
	// exact reports that the request forces exactly limit tokens
	// (ignore_eos, or TensorRT-LLM's min_length).
	exact bool
	// usage reports that the request asks for token counts in the stream
	// where the API makes them optional (OpenAI include_usage, TGI
	// details, Triton return_num_output_tokens); APIs that always report
	// them set it.
	usage bool
	// continuous is vLLM's continuous_usage_stats.
	continuous bool
	// prompt is the prompt-token estimate.
	prompt int
}

// errStreamOnly is the 400 message of a non-streaming request to an API
// the simulator streams only.
const errStreamOnly = "llmsim simulates this API in streaming mode only"

// checkLimit validates a requested output cap.
func checkLimit(name string, v *int) string {
	if v == nil {
		return ""
	}
	if *v < 1 {
		return name + " must be at least 1"
	}
	if *v > MaxOutputTokens {
		return name + " exceeds the simulator's limit of " + strconv.Itoa(MaxOutputTokens) + " tokens"
	}
	return ""
}

// decodeJSON decodes body into v, returning a 400 message on failure.
func decodeJSON(body []byte, v any) string {
	if err := json.Unmarshal(body, v); err != nil {
		return "invalid JSON request body: " + err.Error()
	}
	return ""
}

// noLimitIfNegative turns a negative cap (llama.cpp's n_predict -1,
// Ollama's num_predict -1 or -2: "no limit") into none.
func noLimitIfNegative(v *int) *int {
	if v != nil && *v < 0 {
		return nil
	}
	return v
}

// message is a chat message whose text is counted for the prompt
// estimate.
type message struct {
	Content any `json:"content"`
}

func countMessages(ms []message) int {
	n := 0
	for i := range ms {
		n += countWords(ms[i].Content)
	}
	return n
}

// The APIs. chat and completions are OpenAI's (openai.go holds their
// wire); the others are in wire_native.go.
var (
	apiChat        = &apiSpec{name: APIChat, reasoning: true, decode: decodeOpenAI(APIChat), newWire: newOpenAIWire, appendError: appendOpenAIError}
	apiCompletions = &apiSpec{name: APICompletions, decode: decodeOpenAI(APICompletions), newWire: newOpenAIWire, appendError: appendOpenAIError}
	apiAnthropic   = &apiSpec{name: APIAnthropic, reasoning: true, decode: decodeAnthropic, newWire: newAnthropicWire, appendError: appendAnthropicError}
	apiTGI         = &apiSpec{name: APITGI, decode: decodeTGI, newWire: newTGIWire, appendError: appendTGIError}
	apiTriton      = &apiSpec{name: APITriton, decode: decodeTriton, newWire: newTritonWire, appendError: appendTritonError}
	apiLlamaCpp    = &apiSpec{name: APILlamaCpp, decode: decodeLlamaCpp, newWire: newLlamaCppWire, appendError: appendLlamaCppError}
	apiOllama      = &apiSpec{name: APIOllama, reasoning: true, decode: decodeOllama, newWire: newOllamaWire, appendError: appendOllamaError}
	apiSGLang      = &apiSpec{name: APISGLang, decode: decodeSGLang, newWire: newSGLangWire, appendError: appendSGLangError}
)

// decodeOpenAI reads an OpenAI chat or completions request.
func decodeOpenAI(api string) func(*http.Request, []byte) (norm, string) {
	return func(_ *http.Request, body []byte) (norm, string) {
		var req genRequest
		if msg := decodeJSON(body, &req); msg != "" {
			return norm{model: req.Model}, msg
		}
		n := norm{model: req.Model, stream: req.Stream, exact: req.IgnoreEOS, prompt: req.promptTokens(), limit: req.MaxTokens}
		if msg := checkLimit("max_tokens", req.MaxTokens); msg != "" {
			return n, msg
		}
		if api == APIChat {
			if msg := checkLimit("max_completion_tokens", req.MaxCompletionTokens); msg != "" {
				return n, msg
			}
			if req.MaxCompletionTokens != nil {
				n.limit = req.MaxCompletionTokens
			}
		}
		if req.StreamOptions != nil {
			n.usage = req.StreamOptions.IncludeUsage
			n.continuous = req.StreamOptions.ContinuousUsageStats
		}
		return n, ""
	}
}

// decodeAnthropic reads a Messages request: max_tokens is required, as
// Anthropic requires it.
func decodeAnthropic(_ *http.Request, body []byte) (norm, string) {
	var req struct {
		Model     string    `json:"model"`
		MaxTokens *int      `json:"max_tokens"`
		Stream    bool      `json:"stream"`
		System    any       `json:"system"`
		Messages  []message `json:"messages"`
	}
	if msg := decodeJSON(body, &req); msg != "" {
		return norm{}, msg
	}
	n := norm{model: req.Model, stream: req.Stream, limit: req.MaxTokens, usage: true,
		prompt: countWords(req.System) + countMessages(req.Messages)}
	if req.MaxTokens == nil {
		return n, "max_tokens: Field required"
	}
	if msg := checkLimit("max_tokens", req.MaxTokens); msg != "" {
		return n, msg
	}
	if !req.Stream {
		return n, errStreamOnly
	}
	return n, ""
}

// decodeTGI reads a /generate_stream request (always streamed). Counts
// come with parameters.details.
func decodeTGI(_ *http.Request, body []byte) (norm, string) {
	var req struct {
		Inputs     string `json:"inputs"`
		Parameters struct {
			MaxNewTokens *int `json:"max_new_tokens"`
			Details      bool `json:"details"`
		} `json:"parameters"`
	}
	if msg := decodeJSON(body, &req); msg != "" {
		return norm{}, msg
	}
	n := norm{stream: true, limit: req.Parameters.MaxNewTokens, usage: req.Parameters.Details, prompt: countWords(req.Inputs)}
	return n, checkLimit("max_new_tokens", req.Parameters.MaxNewTokens)
}

// decodeTriton reads a generate_stream request of the TensorRT-LLM
// ensemble (always streamed; the model is in the path). min_length at
// least max_tokens forces the length; return_num_output_tokens (the vLLM
// backend's) asks for counts.
func decodeTriton(r *http.Request, body []byte) (norm, string) {
	var req struct {
		TextInput             string `json:"text_input"`
		MaxTokens             *int   `json:"max_tokens"`
		MinLength             *int   `json:"min_length"`
		ReturnNumOutputTokens bool   `json:"return_num_output_tokens"`
	}
	n := norm{model: r.PathValue("model"), stream: true}
	if msg := decodeJSON(body, &req); msg != "" {
		return n, msg
	}
	n.limit, n.usage, n.prompt = req.MaxTokens, req.ReturnNumOutputTokens, countWords(req.TextInput)
	n.exact = req.MaxTokens != nil && req.MinLength != nil && *req.MinLength >= *req.MaxTokens
	return n, checkLimit("max_tokens", req.MaxTokens)
}

// decodeLlamaCpp reads a /completion request; n_predict -1 means no cap.
func decodeLlamaCpp(_ *http.Request, body []byte) (norm, string) {
	var req struct {
		Model     string `json:"model"`
		Prompt    any    `json:"prompt"`
		NPredict  *int   `json:"n_predict"`
		IgnoreEOS bool   `json:"ignore_eos"`
		Stream    bool   `json:"stream"`
	}
	if msg := decodeJSON(body, &req); msg != "" {
		return norm{}, msg
	}
	n := norm{model: req.Model, stream: req.Stream, limit: noLimitIfNegative(req.NPredict), exact: req.IgnoreEOS, usage: true,
		prompt: countWords(req.Prompt)}
	if msg := checkLimit("n_predict", n.limit); msg != "" {
		return n, msg
	}
	if !req.Stream {
		return n, errStreamOnly
	}
	return n, ""
}

// decodeOllama reads an /api/chat request: it streams unless "stream" is
// false; options.num_predict caps the output (negative: no cap); there is
// no way to force a length.
func decodeOllama(_ *http.Request, body []byte) (norm, string) {
	var req struct {
		Model    string    `json:"model"`
		Messages []message `json:"messages"`
		Stream   *bool     `json:"stream"`
		Options  struct {
			NumPredict *int `json:"num_predict"`
		} `json:"options"`
	}
	if msg := decodeJSON(body, &req); msg != "" {
		return norm{}, msg
	}
	n := norm{model: req.Model, stream: req.Stream == nil || *req.Stream, limit: noLimitIfNegative(req.Options.NumPredict), usage: true,
		prompt: countMessages(req.Messages)}
	if msg := checkLimit("num_predict", n.limit); msg != "" {
		return n, msg
	}
	if !n.stream {
		return n, errStreamOnly
	}
	return n, ""
}

// decodeSGLang reads a native /generate request.
func decodeSGLang(_ *http.Request, body []byte) (norm, string) {
	var req struct {
		Text           any `json:"text"`
		SamplingParams struct {
			MaxNewTokens *int `json:"max_new_tokens"`
			IgnoreEOS    bool `json:"ignore_eos"`
		} `json:"sampling_params"`
		Stream bool `json:"stream"`
	}
	if msg := decodeJSON(body, &req); msg != "" {
		return norm{}, msg
	}
	n := norm{stream: req.Stream, limit: req.SamplingParams.MaxNewTokens, exact: req.SamplingParams.IgnoreEOS, usage: true,
		prompt: countWords(req.Text)}
	if msg := checkLimit("max_new_tokens", n.limit); msg != "" {
		return n, msg
	}
	if !req.Stream {
		return n, errStreamOnly
	}
	return n, ""
}

// appendOpenAIError is the OpenAI/vLLM error body (see appendErrorBody).
func appendOpenAIError(dst []byte, status int, msg, _ string) ([]byte, string) {
	return appendErrorBody(dst, status, msg), "application/json"
}

// anthropicErrorType maps a status to Anthropic's error types.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	if status < 500 {
		return "invalid_request_error"
	}
	return "api_error"
}

// appendAnthropicError appends {"type":"error","error":{"type","message"},"request_id"}.
func appendAnthropicError(dst []byte, status int, msg, requestID string) ([]byte, string) {
	dst = append(dst, `{"type":"error","error":{"type":"`...)
	dst = append(dst, anthropicErrorType(status)...)
	dst = append(dst, `","message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `},"request_id":`...)
	dst = appendJSONString(dst, "req_"+requestID)
	return append(dst, "}\n"...), "application/json"
}

// tgiErrorType maps a status to TGI's error_type values.
func tgiErrorType(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "overloaded"
	case http.StatusFailedDependency:
		return "generation"
	case http.StatusInternalServerError:
		return "incomplete_generation"
	}
	if status < 500 {
		return "validation"
	}
	return "generation"
}

// appendTGIError appends {"error": msg, "error_type": ...}.
func appendTGIError(dst []byte, status int, msg, _ string) ([]byte, string) {
	dst = append(dst, `{"error":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"error_type":"`...)
	dst = append(dst, tgiErrorType(status)...)
	return append(dst, "\"}\n"...), "application/json"
}

// appendTritonError appends {"error": msg}, Triton's and Ollama's shape.
func appendTritonError(dst []byte, _ int, msg, _ string) ([]byte, string) {
	dst = append(dst, `{"error":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, "}\n"...), "application/json"
}

// appendOllamaError is Triton's shape: {"error": msg}.
func appendOllamaError(dst []byte, status int, msg, id string) ([]byte, string) {
	return appendTritonError(dst, status, msg, id)
}

// llamaCppErrorType maps a status to llama.cpp's error types.
func llamaCppErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusNotImplemented:
		return "not_supported_error"
	case http.StatusServiceUnavailable:
		return "unavailable_error"
	}
	if status < 500 {
		return "invalid_request_error"
	}
	return "server_error"
}

// appendLlamaCppError appends {"error":{"code","message","type"}}.
func appendLlamaCppError(dst []byte, status int, msg, _ string) ([]byte, string) {
	dst = append(dst, `{"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, llamaCppErrorType(status)...)
	return append(dst, "\"}}\n"...), "application/json"
}

// appendSGLangError appends SGLang's top-level error object
// {"object":"error","message","type","param":null,"code"}.
func appendSGLangError(dst []byte, status int, msg, _ string) ([]byte, string) {
	dst = append(dst, `{"object":"error","message":`...)
	dst = appendJSONString(dst, msg)
	dst = append(dst, `,"type":"`...)
	dst = append(dst, errorType(status)...)
	dst = append(dst, `","param":null,"code":`...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	return append(dst, "}\n"...), "application/json"
}
