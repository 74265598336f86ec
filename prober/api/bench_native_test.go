// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"strconv"
	"strings"
	"testing"
)

// nativeStream32 returns a 32-event stream of api as its server sends
// it: 30 output events of one token between its opening and closing
// events (SSE type and data of each).
func nativeStream32(api string) []typedStep {
	const n = 30
	tok := " tok"
	var evs []typedStep
	add := func(typ, data string) { evs = append(evs, typedStep{typ: typ, data: data}) }
	switch api {
	case "anthropic":
		add("message_start", `{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
		for range n {
			add("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+tok+`"}}`)
		}
		add("message_stop", `{"type":"message_stop"}`)
	case "tgi":
		for i := 1; i <= n+1; i++ {
			add("", `{"index":`+strconv.Itoa(i)+`,"token":{"id":`+strconv.Itoa(1000+i)+`,"text":"`+tok+`","logprob":-0.12,"special":false},"generated_text":null,"details":null}`)
		}
		add("", `{"index":32,"token":{"id":2,"text":"</s>","logprob":-0.01,"special":true},"generated_text":"`+strings.Repeat(tok, n+1)+`","details":{"finish_reason":"eos_token","generated_tokens":32,"seed":null,"input_length":5}}`)
	case "triton":
		for range n + 2 {
			add("", `{"context_logits":0.0,"cum_log_probs":0.0,"generation_logits":0.0,"model_name":"ensemble","model_version":"1","output_log_probs":0.0,"sequence_end":false,"sequence_id":0,"sequence_start":false,"text_output":"`+tok+`"}`)
		}
	case "llamacpp":
		for i := 1; i <= n+1; i++ {
			add("", `{"index":0,"content":"`+tok+`","tokens":[`+strconv.Itoa(1000+i)+`],"stop":false,"id_slot":0,"tokens_predicted":`+strconv.Itoa(i)+`,"tokens_evaluated":5}`)
		}
		add("", `{"index":0,"content":"","tokens":[],"id_slot":0,"stop":true,"model":"gemma","tokens_predicted":31,"tokens_evaluated":5,"has_new_line":false,"truncated":false,"stop_type":"limit","stopping_word":"","tokens_cached":36,"timings":{"cache_n":0,"prompt_n":5,"prompt_ms":12.1,"prompt_per_token_ms":2.4,"prompt_per_second":413.2,"predicted_n":31,"predicted_ms":310.3,"predicted_per_token_ms":10.0,"predicted_per_second":99.8}}`)
	case "ollama":
		for range n + 1 {
			add("", `{"model":"llama3.2","created_at":"2025-10-26T17:15:24.155176Z","message":{"role":"assistant","content":"`+tok+`"},"done":false}`)
		}
		add("", `{"model":"llama3.2","created_at":"2025-10-26T17:15:24.166576Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":174560334,"load_duration":101397084,"prompt_eval_count":11,"prompt_eval_duration":13074791,"eval_count":31,"eval_duration":52479709}`)
	case "sglang":
		// Cumulative text: the events grow with the stream.
		for i := 1; i <= n+1; i++ {
			add("", `{"text":"`+strings.Repeat(tok, i)+`","meta_info":{"id":"a1b2c3","finish_reason":null,"prompt_tokens":7,"completion_tokens":`+strconv.Itoa(i)+`,"cached_tokens":0},"index":0}`)
		}
		add("", "[DONE]")
	}
	return evs
}

// BenchmarkNativeStream32 parses a 32-event stream of each API; ns/op is
// per stream, ns/event per event. Every parser allocates nothing per
// event once its buffers have grown (TestNativeNoAllocsPerEvent).
func BenchmarkNativeStream32(b *testing.B) {
	for _, api := range []string{"anthropic", "tgi", "triton", "llamacpp", "ollama", "sglang"} {
		b.Run(api, func(b *testing.B) {
			evs := nativeStream32(api)
			typs, datas := make([][]byte, len(evs)), make([][]byte, len(evs))
			total := 0
			for i, e := range evs {
				if e.typ != "" {
					typs[i] = []byte(e.typ)
				}
				datas[i] = []byte(e.data)
				total += len(e.data)
			}
			p := mustLookup(b, api).NewParser()
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				p.Reset()
				outputs, done := 0, false
				for i := range datas {
					info, err := p.Event(typs[i], datas[i])
					if err != nil {
						b.Fatal(err)
					}
					if info.Output {
						outputs++
					}
					done = done || info.Done
				}
				if outputs < 30 || (api != "triton" && !done) {
					b.Fatalf("%d outputs, done %v", outputs, done)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
		})
	}
}
