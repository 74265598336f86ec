package jsonscan

import "testing"

func BenchmarkTmpTopOnly(b *testing.B) {
	chunk := []byte(sampleChunk)
	for b.Loop() {
		it := IterObject(chunk)
		for it.Next() {
		}
	}
}

func BenchmarkTmpTrustedTop(b *testing.B) {
	v, _ := Parse([]byte(sampleChunk))
	for b.Loop() {
		it := v.Members()
		for it.Next() {
		}
	}
}

func BenchmarkTmpChoicesTrusted(b *testing.B) {
	v, _ := Get([]byte(sampleChunk), "choices")
	for b.Loop() {
		ch := v.Elements()
		for ch.Next() {
			c := ch.Value().Members()
			for c.Next() {
				if c.Key().StringEquals("delta") {
					d := c.Value().Members()
					for d.Next() {
					}
				}
			}
		}
	}
}
