// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package jsonscan

import (
	"encoding/json"
	"testing"
)

func BenchmarkValid(b *testing.B) {
	chunk := []byte(sampleChunk)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(chunk) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkEncodingJSONValid(b *testing.B) {
	chunk := []byte(sampleChunk)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(chunk) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkWalkChunk walks a chat chunk down to delta.content the way an
// adapter does.
func BenchmarkWalkChunk(b *testing.B) {
	chunk := []byte(sampleChunk)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		found := false
		it := IterObject(chunk)
		for it.Next() {
			if !it.Key().StringEquals("choices") {
				continue
			}
			ch := IterArray(it.Value().Raw)
			for ch.Next() {
				c := IterObject(ch.Value().Raw)
				for c.Next() {
					if c.Key().StringEquals("delta") {
						d := IterObject(c.Value().Raw)
						for d.Next() {
							if d.Key().StringEquals("content") && d.Value().IsNonEmptyString() {
								found = true
							}
						}
					}
				}
			}
		}
		if it.Err() != nil || !found {
			b.Fatal("walk failed")
		}
	}
}

// BenchmarkWalkChunkMembers is BenchmarkWalkChunk with the nested walks
// through Members and Elements, which do not validate again.
func BenchmarkWalkChunkMembers(b *testing.B) {
	chunk := []byte(sampleChunk)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		found := false
		it := IterObject(chunk)
		for it.Next() {
			if !it.Key().StringEquals("choices") {
				continue
			}
			ch := it.Value().Elements()
			for ch.Next() {
				c := ch.Value().Members()
				for c.Next() {
					if c.Key().StringEquals("delta") {
						d := c.Value().Members()
						for d.Next() {
							if d.Key().StringEquals("content") && d.Value().IsNonEmptyString() {
								found = true
							}
						}
					}
				}
			}
		}
		if it.Err() != nil || !found {
			b.Fatal("walk failed")
		}
	}
}

func BenchmarkGet(b *testing.B) {
	chunk := []byte(sampleChunk)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		v, err := Get(chunk, "choices", "0", "delta", "content")
		if err != nil || !v.Exists() {
			b.Fatal("Get failed")
		}
	}
}

// BenchmarkEncodingJSONUnmarshal is the cost this package avoids: decoding
// the same chunk into a minimal struct.
func BenchmarkEncodingJSONUnmarshal(b *testing.B) {
	chunk := []byte(sampleChunk)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	for b.Loop() {
		var c struct {
			Choices []struct {
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(chunk, &c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnquote(b *testing.B) {
	v := Value{Kind: String, Raw: []byte(`"Hello \"world\" \u00e9\ud83d\ude00 and some more plain text here"`)}
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = v.Unquote(buf[:0])
	}
}
