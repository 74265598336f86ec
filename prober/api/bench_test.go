// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package api

import (
	"strconv"
	"testing"
)

// chatStream32 is a 32-event chat stream as vLLM sends it with usage:
// a role chunk, 29 content chunks, a usage chunk and [DONE]; the last
// content chunk carries finish_reason.
func chatStream32(continuous bool) [][]byte {
	words := []string{"The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", "."}
	head := `{"id":"chatcmpl-b6a1d0e6f2c44b8f9e0b3c1d2e3f4a5b","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":`
	usage := func(n int) string {
		if !continuous {
			return `"usage":null}`
		}
		return `"usage":{"prompt_tokens":42,"total_tokens":` + strconv.Itoa(42+n) + `,"completion_tokens":` + strconv.Itoa(n) + `}}`
	}
	var evs [][]byte
	evs = append(evs, []byte(head+`{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],`+usage(0)))
	for i := 1; i <= 29; i++ {
		fr := `null`
		if i == 29 {
			fr = `"length"`
		}
		evs = append(evs, []byte(head+`{"content":"`+words[i%len(words)]+`"},"logprobs":null,"finish_reason":`+fr+`}],`+usage(i)))
	}
	evs = append(evs, []byte(`{"id":"chatcmpl-b6a1d0e6f2c44b8f9e0b3c1d2e3f4a5b","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":42,"total_tokens":71,"completion_tokens":29}}`))
	evs = append(evs, []byte("[DONE]"))
	return evs
}

func benchStream(b *testing.B, evs [][]byte) {
	a, _ := Lookup("openai-chat")
	p := a.NewParser()
	total := 0
	for _, e := range evs {
		total += len(e)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		p.Reset()
		outputs := 0
		for _, e := range evs {
			info, err := p.Event(nil, e)
			if err != nil {
				b.Fatal(err)
			}
			if info.Output {
				outputs++
			}
		}
		if outputs != 29 || p.Usage().CompletionTokens != 29 {
			b.Fatalf("outputs %d, usage %+v", outputs, p.Usage())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}

// BenchmarkChatStream32 parses a 32-event stream (usage null on chunks);
// ns/op is per stream, ns/event per event.
func BenchmarkChatStream32(b *testing.B) { benchStream(b, chatStream32(false)) }

// BenchmarkChatStream32Continuous is the same stream with vLLM's
// continuous usage stats on every chunk.
func BenchmarkChatStream32Continuous(b *testing.B) { benchStream(b, chatStream32(true)) }
