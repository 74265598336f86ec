package simulator

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "nl\nc\rt\t", "\x00\x1f\x7f", "ünï©ødé 🦙", "bad\xffutf8\xc3", "\u2028"} {
		got := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("%q: invalid JSON %s: %v", s, got, err)
			continue
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want {
			t.Errorf("%q: round trip gives %q, want %q", s, back, want)
		}
	}
}

// TestRenderedChunksAreJSON checks every event the renderer produces, with a
// hostile model name and request ID, against encoding/json.
func TestRenderedChunksAreJSON(t *testing.T) {
	for _, api := range []string{APIChat, APICompletions} {
		for _, usage := range []bool{false, true} {
			r := newRenderer(api, "id\"\n", "mo\\del\x01\xff", 1700000000, usage, usage, 7)
			events := [][]byte{
				r.appendRole(nil),
				r.appendContent(nil, 3, 3, false),
				r.appendContent(nil, 1, 4, true),
				r.appendFinish(nil, "stop", 4),
				r.appendUsage(nil, 3),
				[]byte(midstreamErrorEvent),
			}
			for _, ev := range events {
				s := string(ev)
				data, ok := strings.CutPrefix(s, "data: ")
				if !ok || !strings.HasSuffix(data, "\n\n") || strings.Count(data, "\n") != 2 {
					t.Fatalf("%s: bad framing %q", api, s)
				}
				if !json.Valid([]byte(data)) {
					t.Errorf("%s: invalid JSON %s", api, data)
				}
			}
			for _, body := range [][]byte{
				r.appendResponse(nil, 2, "length", usage),
				appendErrorBody(nil, 503, "x\"y"),
			} {
				if !json.Valid(body) {
					t.Errorf("%s: invalid JSON %s", api, body)
				}
			}
		}
	}
}

func TestTruthRingWraps(t *testing.T) {
	r := truthRing{cap: 3}
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		r.add(TruthRecord{RequestID: id})
	}
	var ids []string
	for _, rec := range r.snapshot("") {
		ids = append(ids, rec.RequestID)
	}
	if got := strings.Join(ids, ""); got != "cde" {
		t.Errorf("ring holds %q, want the 3 newest oldest first: cde", got)
	}
	if got := r.snapshot("a"); len(got) != 0 {
		t.Errorf("evicted record still found: %+v", got)
	}
	if got := r.snapshot("d"); len(got) != 1 {
		t.Errorf("snapshot(d) = %+v", got)
	}
	r.clear()
	if got := r.snapshot(""); len(got) != 0 {
		t.Errorf("after clear: %+v", got)
	}
	off := truthRing{}
	off.add(TruthRecord{RequestID: "x"})
	if got := off.snapshot(""); len(got) != 0 {
		t.Errorf("capacity 0 keeps %+v", got)
	}
}

// TestLatencyDistributions checks the sample mean and standard deviation of
// each distribution against its parameters, with a fixed seed.
func TestLatencyDistributions(t *testing.T) {
	const mean, sd = 10 * time.Millisecond, 3 * time.Millisecond
	for _, d := range []Distribution{Constant, Normal, LogNormal} {
		l := newLatency(d, mean, sd)
		r := rand.New(rand.NewPCG(1, 2))
		const n = 100000
		var sum, sum2 float64
		for range n {
			v := float64(l.draw(r))
			if v < 0 {
				t.Fatalf("%s: negative draw", d)
			}
			sum += v
			sum2 += v * v
		}
		m := sum / n
		s := math.Sqrt(sum2/n - m*m)
		wantSD := float64(sd)
		if d == Constant {
			wantSD = 0
		}
		if math.Abs(m-float64(mean)) > 0.01*float64(mean) || math.Abs(s-wantSD) > 0.02*float64(mean) {
			t.Errorf("%s: mean %s sd %s, want %s and %s", d, time.Duration(m), time.Duration(s), mean, time.Duration(wantSD))
		}
		if got, want := l.drawSum(rand.New(rand.NewPCG(1, 2)), 0), time.Duration(0); got != want {
			t.Errorf("%s: drawSum(0) = %s", d, got)
		}
	}
	if l := newLatency(Constant, mean, sd); l.drawSum(nil, 3) != 3*mean {
		got := l.drawSum(nil, 3)
		t.Errorf("constant drawSum(3) = %s", got)
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	c := DefaultConfig()
	c.TTFT, c.ITLDistribution, c.ITLStddev, c.Stall, c.TruncateRate = 1500*time.Microsecond, Normal, time.Millisecond, 2*time.Second, 0.125
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back != c {
		t.Errorf("round trip\n got %+v\nwant %+v", back, c)
	}
	// A failed merge leaves the target unchanged.
	keep := c
	if err := json.Unmarshal([]byte(`{"ttft":"1s","nope":true}`), &keep); err == nil || keep != c {
		t.Errorf("failed merge: err %v, config %+v", err, keep)
	}
}

func TestPlanOutputLength(t *testing.T) {
	c := DefaultConfig() // 128 tokens
	c.ReasoningTokens = 3
	cc, err := compile(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		api           *apiSpec
		body          string
		wantTokens    int
		wantFinish    string
		wantReasoning int
	}{
		{"no limit", apiChat, `{}`, 128, "stop", 3},
		{"limit below drawn", apiChat, `{"max_tokens":10}`, 10, "length", 3},
		{"limit above drawn", apiChat, `{"max_tokens":500}`, 128, "stop", 3},
		{"ignore_eos forces limit", apiChat, `{"max_tokens":500,"ignore_eos":true}`, 500, "length", 3},
		{"ignore_eos without limit", apiChat, `{"ignore_eos":true}`, 128, "stop", 3},
		{"max_completion_tokens wins in chat", apiChat, `{"max_tokens":5,"max_completion_tokens":7,"ignore_eos":true}`, 7, "length", 3},
		{"max_completion_tokens ignored in completions", apiCompletions, `{"max_tokens":5,"max_completion_tokens":7,"ignore_eos":true}`, 5, "length", 0},
		{"reasoning capped by the output", apiChat, `{"max_tokens":2,"ignore_eos":true}`, 2, "length", 2},
		{"anthropic cannot force a length", apiAnthropic, `{"max_tokens":500,"stream":true,"ignore_eos":true}`, 128, "stop", 3},
		{"anthropic below drawn", apiAnthropic, `{"max_tokens":5,"stream":true}`, 5, "length", 3},
		{"tgi max_new_tokens", apiTGI, `{"inputs":"x","parameters":{"max_new_tokens":7}}`, 7, "length", 0},
		{"tgi cannot force a length", apiTGI, `{"inputs":"x","parameters":{"max_new_tokens":700}}`, 128, "stop", 0},
		{"triton min_length forces", apiTriton, `{"text_input":"x","max_tokens":700,"min_length":700}`, 700, "length", 0},
		{"triton short min_length does not", apiTriton, `{"text_input":"x","max_tokens":700,"min_length":10}`, 128, "stop", 0},
		{"llamacpp ignore_eos", apiLlamaCpp, `{"prompt":"x","n_predict":700,"ignore_eos":true,"stream":true}`, 700, "length", 0},
		{"llamacpp n_predict -1 is no limit", apiLlamaCpp, `{"prompt":"x","n_predict":-1,"ignore_eos":true,"stream":true}`, 128, "stop", 0},
		{"ollama num_predict", apiOllama, `{"options":{"num_predict":9}}`, 9, "length", 3},
		{"ollama cannot force a length", apiOllama, `{"options":{"num_predict":900}}`, 128, "stop", 3},
		{"sglang ignore_eos", apiSGLang, `{"text":"x","sampling_params":{"max_new_tokens":900,"ignore_eos":true},"stream":true}`, 900, "length", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/v2/models/m/generate_stream", nil)
			req, msg := tc.api.decode(r, []byte(tc.body))
			if msg != "" {
				t.Fatalf("decode: %s", msg)
			}
			p := makePlan(cc, &req, tc.api, rand.New(rand.NewPCG(1, 1)))
			if p.outputTokens != tc.wantTokens || p.finishReason != tc.wantFinish || p.reasoningTokens != tc.wantReasoning ||
				p.failure != failNone || p.stall {
				t.Errorf("plan %+v, want %d tokens, %q, %d reasoning", p, tc.wantTokens, tc.wantFinish, tc.wantReasoning)
			}
		})
	}
}

func TestChunkAt(t *testing.T) {
	// 10 tokens, 3 of them reasoning, 2 per chunk: r r | r | a a | a a | a a | a
	var got []string
	n, r, k := 10, 3, 2
	rc := (r + k - 1) / k
	for i := range rc + (n-r+k-1)/k {
		size, reasoning := chunkAt(i, n, r, k, rc)
		got = append(got, strings.Repeat(map[bool]string{true: "r", false: "a"}[reasoning], size))
	}
	if want := []string{"rr", "r", "aa", "aa", "aa", "a"}; !slices.Equal(got, want) {
		t.Errorf("chunks %q, want %q", got, want)
	}
}
