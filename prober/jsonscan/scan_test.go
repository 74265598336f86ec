// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// validCases lists inputs with whether they are valid JSON. Each is also
// checked against encoding/json.Valid so that the table cannot drift.
var validCases = []struct {
	in    string
	valid bool
}{
	{`null`, true},
	{`true`, true},
	{`false`, true},
	{`0`, true},
	{`-0`, true},
	{`1`, true},
	{`-12.5e+10`, true},
	{`1E5`, true},
	{`1e-5`, true},
	{`0.0`, true},
	{`123456789012345678901234567890`, true},
	{`""`, true},
	{`"a"`, true},
	{`"\"\\\/\b\f\n\r\t"`, true},
	{`"\u0000\uD83D\uDE00\udbff"`, true},
	{`"\\"`, true},
	{`"\\\""`, true},
	{"\"\xff\xfe\"", true}, // invalid UTF-8 is accepted, as by encoding/json
	{"\"\u00e9\u4e16\"", true},
	{`{}`, true},
	{`[]`, true},
	{` { "a" : [ 1 , { "b" : null } ] , "c" : "d" } `, true},
	{"\t\r\n[1]\n", true},
	{`[[[[[]]]]]`, true},
	{`{"a":{"b":{"c":[true,false,null]}}}`, true},
	{`{"":""}`, true},
	{`{"a":1,"a":2}`, true},
	{``, false},
	{` `, false},
	{`nul`, false},
	{`nulll`, false},
	{`True`, false},
	{`tru`, false},
	{`falsey`, false},
	{`01`, false},
	{`-`, false},
	{`-a`, false},
	{`+1`, false},
	{`1.`, false},
	{`.5`, false},
	{`1.e5`, false},
	{`1e`, false},
	{`1e+`, false},
	{`1ee5`, false},
	{`0x10`, false},
	{`NaN`, false},
	{`Infinity`, false},
	{`"abc`, false},
	{`"\"`, false},
	{`"\\\"`, false},
	{`"\x"`, false},
	{`"\u12"`, false},
	{`"\u12G4"`, false},
	{`"\u`, false},
	{`"\`, false},
	{"\"a\nb\"", false},
	{"\"\x00\"", false},
	{"\"\x1f\"", false},
	{`'a'`, false},
	{`{`, false},
	{`}`, false},
	{`[`, false},
	{`]`, false},
	{`[1,]`, false},
	{`[,1]`, false},
	{`[1 2]`, false},
	{`[1,,2]`, false},
	{`{"a"}`, false},
	{`{"a":}`, false},
	{`{"a":1,}`, false},
	{`{,"a":1}`, false},
	{`{"a" 1}`, false},
	{`{a:1}`, false},
	{`{1:1}`, false},
	{`{"a":1 "b":2}`, false},
	{`{"a":1]`, false},
	{`[1}`, false},
	{`{} {}`, false},
	{`1 2`, false},
	{`[] x`, false},
	{`{"a":[1,2}`, false},
	{`{"a":"b\"}`, false},
	{"\xef\xbb\xbf{}", false}, // a BOM is not JSON
	{`[tru]`, false},
	{`[-]`, false},
	{`{"a":-}`, false},
	{`{"a":01}`, false},
}

func TestValid(t *testing.T) {
	for _, tc := range validCases {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			if ref := json.Valid([]byte(tc.in)); ref != tc.valid {
				t.Fatalf("table says valid=%v but encoding/json says %v", tc.valid, ref)
			}
			if got := Valid([]byte(tc.in)); got != tc.valid {
				t.Errorf("Valid = %v, want %v", got, tc.valid)
			}
			_, err := Parse([]byte(tc.in))
			if tc.valid != (err == nil) {
				t.Errorf("Parse error = %v, want valid=%v", err, tc.valid)
			}
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("error %T is not a *SyntaxError", err)
				}
				if se.Offset < 0 || se.Offset > len(tc.in) {
					t.Errorf("offset %d outside the input of %d bytes", se.Offset, len(tc.in))
				}
				if se.Msg == "" || !strings.HasPrefix(err.Error(), "jsonscan: ") {
					t.Errorf("error text %q", err.Error())
				}
			}
			// Walking the top level validates everything, so a walk
			// must fail exactly on invalid input of its kind.
			objErr := ObjectEach([]byte(tc.in), func(_, _ Value) error { return nil })
			arrErr := ArrayEach([]byte(tc.in), func(int, Value) error { return nil })
			trimmed := strings.TrimLeft(tc.in, " \t\r\n")
			isObj := strings.HasPrefix(trimmed, "{")
			isArr := strings.HasPrefix(trimmed, "[")
			if want := tc.valid && isObj; (objErr == nil) != want {
				t.Errorf("ObjectEach error = %v, want success=%v", objErr, want)
			}
			if want := tc.valid && isArr; (arrErr == nil) != want {
				t.Errorf("ArrayEach error = %v, want success=%v", arrErr, want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		kind Kind
		raw  string
	}{
		{` null `, Null, `null`},
		{"\ttrue", Bool, `true`},
		{"false\n", Bool, `false`},
		{` -1.5e3 `, Number, `-1.5e3`},
		{` "a\"b" `, String, `"a\"b"`},
		{` {"a":[1]} `, Object, `{"a":[1]}`},
		{`[ ]`, Array, `[ ]`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			v, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind != tc.kind || string(v.Raw) != tc.raw {
				t.Errorf("Parse = {%v %q}, want {%v %q}", v.Kind, v.Raw, tc.kind, tc.raw)
			}
		})
	}
}

func TestSyntaxErrorOffsets(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{``, 0, msgEmptyInput},
		{`   `, 3, msgEnd},
		{`{"a":1,}`, 7, msgKey},
		{`{"a" 1}`, 5, msgColon},
		{`[1 2]`, 3, msgAfterArray},
		{`{"a":1 "b":2}`, 7, msgAfterObject},
		{`"ab`, 3, msgEndOfString},
		{`"a\qb"`, 3, msgEscape},
		{`"\u12x4"`, 5, msgEscape},
		{"\"a\x01\"", 2, msgControl},
		{`[tx]`, 2, msgLiteral},
		{`[01]`, 2, msgAfterArray},
		{`1.x`, 2, msgNumber},
		{`{} x`, 3, msgTrailing},
		{`[`, 1, msgEnd},
		{`?`, 0, msgValue},
	}
	for _, tc := range tests {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse error = %v, want a *SyntaxError", err)
			}
			if se.Offset != tc.offset || se.Msg != tc.msg {
				t.Errorf("error at %d %q, want at %d %q", se.Offset, se.Msg, tc.offset, tc.msg)
			}
		})
	}
}

func nested(depth int, open, close, inner string) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(close, depth)
}

func TestDepth(t *testing.T) {
	tests := []struct {
		name string
		in   string
		deep bool
	}{
		{"arrays at the cap", nested(MaxDepth, "[", "]", ""), false},
		{"arrays over the cap", nested(MaxDepth+1, "[", "]", ""), true},
		{"objects at the cap", nested(MaxDepth-1, `{"a":`, "}", "{}"), false},
		{"objects over the cap", nested(MaxDepth, `{"a":`, "}", "{}"), true},
		{"mixed over the cap", nested(MaxDepth/2+1, `[{"a":`, "}]", "1"), true},
		{"unclosed and too deep", strings.Repeat("[", 100000), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if got := errors.Is(err, ErrTooDeep); got != tc.deep {
				t.Fatalf("Parse error = %v, want too deep: %v", err, tc.deep)
			}
			if !tc.deep && err != nil {
				t.Fatalf("Parse error = %v", err)
			}
			// An iterator counts its own container as level 1.
			var iterErr error
			if tc.in[0] == '{' {
				iterErr = ObjectEach([]byte(tc.in), func(_, _ Value) error { return nil })
			} else {
				iterErr = ArrayEach([]byte(tc.in), func(int, Value) error { return nil })
			}
			if errors.Is(iterErr, ErrTooDeep) != tc.deep {
				t.Errorf("iteration error = %v, want too deep: %v", iterErr, tc.deep)
			}
		})
	}
}

type member struct{ key, kind, raw string }

func TestObjectIter(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		members []member
		wantErr string // a substring of the error; "" for none
	}{
		{"empty", ` { } `, nil, ""},
		{"kinds", `{"n":null,"b":true,"i":-1,"s":"x","o":{"a":[]},"a":[1,{}]}`, []member{
			{"n", "null", "null"}, {"b", "bool", "true"}, {"i", "number", "-1"},
			{"s", "string", `"x"`}, {"o", "object", `{"a":[]}`}, {"a", "array", `[1,{}]`},
		}, ""},
		{"whitespace", "{ \"a\" :\n1 ,\t\"b\" : \"c\" }", []member{{"a", "number", "1"}, {"b", "string", `"c"`}}, ""},
		{"escaped key", `{"c\u006fntent":"x","a\"b":1}`, []member{{"content", "string", `"x"`}, {`a"b`, "number", "1"}}, ""},
		{"duplicates kept", `{"a":1,"a":2}`, []member{{"a", "number", "1"}, {"a", "number", "2"}}, ""},
		{"members before an error", `{"a":1,"b":[1,2}`, []member{{"a", "number", "1"}}, msgAfterArray},
		{"trailing data", `{"a":1} 2`, []member{{"a", "number", "1"}}, msgTrailing},
		{"not an object", `[1]`, nil, msgNotObject},
		{"malformed non-object", `[1`, nil, msgEnd},
		{"empty input", ``, nil, msgEnd},
		{"unterminated", `{"a":1`, []member{{"a", "number", "1"}}, msgEnd},
		{"missing key", `{"a":1,}`, []member{{"a", "number", "1"}}, msgKey},
		{"missing colon", `{"a" 1}`, nil, msgColon},
		{"bad separator", `{"a":1;"b":2}`, []member{{"a", "number", "1"}}, msgAfterObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []member
			it := IterObject([]byte(tc.in))
			for it.Next() {
				got = append(got, member{string(it.Key().Unquote(nil)), it.Value().Kind.String(), string(it.Value().Raw)})
			}
			if !reflect.DeepEqual(got, tc.members) {
				t.Errorf("members = %q, want %q", got, tc.members)
			}
			err := it.Err()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Err() = %v, want %q", err, tc.wantErr)
			}
			if it.Next() {
				t.Error("Next after the end returned true")
			}
		})
	}
}

func TestArrayIter(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		raws    []string
		wantErr string
	}{
		{"empty", `[ ]`, nil, ""},
		{"kinds", `[null, true ,"a,b" ,{"x":[1]},[[]],-0.5e-3]`, []string{`null`, `true`, `"a,b"`, `{"x":[1]}`, `[[]]`, `-0.5e-3`}, ""},
		{"error after elements", `[1,2,}`, []string{"1", "2"}, msgValue},
		{"trailing comma", `[1,]`, []string{"1"}, msgValue},
		{"not an array", `{"a":1}`, nil, msgNotArray},
		{"trailing data", `[1]]`, []string{"1"}, msgTrailing},
		{"missing comma", `[1 2]`, []string{"1"}, msgAfterArray},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			it := IterArray([]byte(tc.in))
			for it.Next() {
				if it.Index() != len(got) {
					t.Errorf("Index() = %d, want %d", it.Index(), len(got))
				}
				got = append(got, string(it.Value().Raw))
			}
			if !reflect.DeepEqual(got, tc.raws) {
				t.Errorf("elements = %q, want %q", got, tc.raws)
			}
			err := it.Err()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Err() = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestEachStopAndErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name  string
		in    string
		stopK string
		ret   error
		want  error
		calls int
	}{
		{"stop ends without error and without validating the rest", `{"a":1,"b":2,"c":x}`, "b", Stop, nil, 2},
		{"callback error is returned", `{"a":1,"b":2,"c":3}`, "a", boom, boom, 1},
		{"syntax error after the callbacks", `{"a":1,"b":2,"c":x}`, "", nil, nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := ObjectEach([]byte(tc.in), func(k, _ Value) error {
				calls++
				if tc.stopK != "" && k.StringEquals(tc.stopK) {
					return tc.ret
				}
				return nil
			})
			if calls != tc.calls {
				t.Errorf("calls = %d, want %d", calls, tc.calls)
			}
			if tc.want != nil && err != tc.want {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if tc.want == nil && tc.stopK == "" {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Msg != msgValue {
					t.Errorf("err = %v, want a syntax error", err)
				}
			} else if tc.want == nil && err != nil {
				t.Errorf("err = %v, want nil", err)
			}
		})
	}
	t.Run("array stop", func(t *testing.T) {
		n := 0
		err := ArrayEach([]byte(`[1,2,3,`), func(i int, _ Value) error {
			n++
			if i == 1 {
				return Stop
			}
			return nil
		})
		if err != nil || n != 2 {
			t.Errorf("err = %v, calls = %d, want nil, 2", err, n)
		}
	})
	t.Run("array callback error", func(t *testing.T) {
		err := ArrayEach([]byte(`[1]`), func(int, Value) error { return boom })
		if err != boom {
			t.Errorf("err = %v, want boom", err)
		}
	})
}

// refGet navigates a value decoded by encoding/json along path.
func refGet(v any, path ...string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			n, ok := parseIndex(seg)
			if !ok || n >= len(x) {
				return nil, false
			}
			v = x[n]
		default:
			return nil, false
		}
	}
	return v, true
}

func decodeRef(t testing.TB, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", raw, err)
	}
	return v
}

// checkGet compares Get against encoding/json for one path.
func checkGet(t testing.TB, raw []byte, ref any, path ...string) {
	t.Helper()
	got, err := Get(raw, path...)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", raw, path, err)
	}
	want, ok := refGet(ref, path...)
	if got.Exists() != ok {
		t.Fatalf("Get(%q, %q) exists = %v, encoding/json says %v", raw, path, got.Exists(), ok)
	}
	if !ok {
		return
	}
	if gv := decodeRef(t, got.Raw); !reflect.DeepEqual(gv, want) {
		t.Fatalf("Get(%q, %q) = %s, encoding/json has %#v", raw, path, got.Raw, want)
	}
	switch w := want.(type) {
	case string:
		if s := got.Unquote(nil); string(s) != w {
			t.Fatalf("Unquote of %s = %q, encoding/json has %q", got.Raw, s, w)
		}
		if !got.StringEquals(w) {
			t.Fatalf("%s.StringEquals(%q) = false", got.Raw, w)
		}
		if got.IsEmptyString() != (w == "") {
			t.Fatalf("%s.IsEmptyString() = %v", got.Raw, got.IsEmptyString())
		}
	case json.Number:
		n, ok := got.Int()
		wn, err := strconv.ParseInt(string(w), 10, 64)
		if ok != (err == nil) || ok && n != wn {
			t.Fatalf("%s.Int() = %d, %v; strconv says %d, %v", got.Raw, n, ok, wn, err)
		}
		f, ok := got.Float()
		wf, err := w.Float64()
		if ok != (err == nil) || ok && f != wf {
			t.Fatalf("%s.Float() = %v, %v; encoding/json says %v, %v", got.Raw, f, ok, wf, err)
		}
	case bool:
		if b, ok := got.Bool(); !ok || b != w {
			t.Fatalf("%s.Bool() = %v, %v", got.Raw, b, ok)
		}
	case nil:
		if !got.IsNull() {
			t.Fatalf("%s.IsNull() = false", got.Raw)
		}
	}
}

func TestGet(t *testing.T) {
	doc := `{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \"you\"\n"},"finish_reason":null},` +
		`{"index":1,"delta":{"c\u006fntent":"\ud83d\ude00"}}],"usage":{"completion_tokens":31,"prompt_tokens":-2},` +
		`"dup":1,"dup":{"x":2},"e":1.5e2,"t":true,"n":null,"": "empty key","0":"zero"}`
	ref := decodeRef(t, []byte(doc))
	paths := [][]string{
		{},
		{"id"},
		{"choices"},
		{"choices", "0"},
		{"choices", "0", "delta", "content"},
		{"choices", "0", "delta", "role"},
		{"choices", "1", "delta", "content"},
		{"choices", "2"},
		{"choices", "-1"},
		{"choices", "01"},
		{"choices", "x"},
		{"choices", "0", "finish_reason"},
		{"usage", "completion_tokens"},
		{"usage", "prompt_tokens"},
		{"usage", "total_tokens"},
		{"dup"},
		{"dup", "x"},
		{"e"},
		{"t"},
		{"n"},
		{"n", "x"},
		{""},
		{"0"},
		{"id", "x"},
		{"missing", "deeper"},
	}
	for _, p := range paths {
		t.Run(strings.Join(p, "."), func(t *testing.T) { checkGet(t, []byte(doc), ref, p...) })
	}
	t.Run("explicit values", func(t *testing.T) {
		v, _ := Get([]byte(doc), "dup", "x")
		if n, ok := v.Int(); !ok || n != 2 {
			t.Errorf("dup.x = %s, want 2 (last duplicate wins)", v.Raw)
		}
		v, _ = Get([]byte(doc), "choices", "1", "delta", "content")
		if got := string(v.Unquote(nil)); got != "\U0001F600" {
			t.Errorf("surrogate pair unquoted to %q", got)
		}
	})
	t.Run("invalid input is an error even past the match", func(t *testing.T) {
		v, err := Get([]byte(`{"a":1,"b":}`), "a")
		if err == nil || v.Exists() {
			t.Errorf("Get = %v, %v; want an error", v, err)
		}
	})
}

func TestUnquote(t *testing.T) {
	tests := []struct {
		lit  string
		want string
	}{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\u0000"`, "\x00"},
		{`"\u00e9\u4E16"`, "é世"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud83d"`, "\uFFFD"},
		{`"\ude00"`, "\uFFFD"},
		{`"\ud83dx"`, "\uFFFDx"},
		{`"\ud83d\u0041"`, "\uFFFDA"},
		{`"\ud83d\ud83d\ude00"`, "\uFFFD😀"},
		{`"\ude00\ud83d"`, "\uFFFD\uFFFD"},
		{"\"a\xffb\"", "a\uFFFDb"},
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"}, // an encoded surrogate is invalid UTF-8
		{"\"\xef\xbf\xbd\"", "\uFFFD"},
		{"\"\\n\xff\"", "\n\uFFFD"},
		{`"\\\""`, `\"`},
		{`"   "`, "   "},
	}
	for _, tc := range tests {
		t.Run(tc.lit, func(t *testing.T) {
			var ref string
			if err := json.Unmarshal([]byte(tc.lit), &ref); err != nil {
				t.Fatal(err)
			}
			if ref != tc.want {
				t.Fatalf("table wants %q but encoding/json gives %q", tc.want, ref)
			}
			v, err := Parse([]byte(tc.lit))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(v.Unquote([]byte("pre:"))); got != "pre:"+tc.want {
				t.Errorf("Unquote = %q, want %q", got, "pre:"+tc.want)
			}
			if !v.StringEquals(tc.want) {
				t.Errorf("StringEquals(%q) = false", tc.want)
			}
			if v.StringEquals(tc.want + "x") {
				t.Errorf("StringEquals(%q) = true", tc.want+"x")
			}
			if tc.want != "" && v.StringEquals(tc.want[:len(tc.want)-1]) {
				t.Errorf("StringEquals of a prefix = true")
			}
		})
	}
}

func TestUnquoteHandBuilt(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{Value{Kind: String, Raw: []byte(`"a\u00"`)}, "a"},
		{Value{Kind: String, Raw: []byte(`"a\uZZZZb"`)}, "a"},
		{Value{Kind: String, Raw: []byte(`"a\qb"`)}, "a"},
		{Value{Kind: String, Raw: []byte(`"a\"`)}, "a"},
		{Value{Kind: String, Raw: []byte(`"\ud83d\u12"`)}, "\uFFFD"},
		{Value{Kind: String, Raw: []byte(`x`)}, ""},
		{Value{Kind: Number, Raw: []byte(`"a"`)}, ""},
	}
	for _, tc := range tests {
		t.Run(string(tc.v.Raw), func(t *testing.T) {
			if got := string(tc.v.Unquote([]byte("p"))); got != "p"+tc.want {
				t.Errorf("Unquote = %q, want %q", got, "p"+tc.want)
			}
		})
	}
}

func TestStringEquals(t *testing.T) {
	tests := []struct {
		v    Value
		s    string
		want bool
	}{
		{Value{Kind: String, Raw: []byte(`"content"`)}, "content", true},
		{Value{Kind: String, Raw: []byte(`"content"`)}, "Content", false},
		{Value{Kind: String, Raw: []byte(`"c\u006Fntent"`)}, "content", true},
		{Value{Kind: String, Raw: []byte(`"\u0063\u006f\u006e\u0074\u0065\u006e\u0074"`)}, "content", true},
		{Value{Kind: String, Raw: []byte(`"conten\t"`)}, "conten\t", true},
		{Value{Kind: String, Raw: []byte(`"conten\t"`)}, "content", false},
		{Value{Kind: String, Raw: []byte("\"a\xff\"")}, "a\xff", false}, // decodes to U+FFFD
		{Value{Kind: String, Raw: []byte("\"a\xff\"")}, "a\uFFFD", true},
		{Value{Kind: String, Raw: []byte(`""`)}, "", true},
		{Value{Kind: String, Raw: []byte(`"a"`)}, "", false},
		{Value{Kind: Number, Raw: []byte(`1`)}, "1", false},
		{Value{Kind: String, Raw: []byte(`"`)}, "", false},      // hand-built, malformed
		{Value{Kind: String, Raw: []byte(`"\u00"`)}, "", false}, // hand-built, malformed
		{Value{}, "", false},
	}
	for _, tc := range tests {
		t.Run(string(tc.v.Raw)+"=="+tc.s, func(t *testing.T) {
			if got := tc.v.StringEquals(tc.s); got != tc.want {
				t.Errorf("StringEquals = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestScalars(t *testing.T) {
	tests := []struct {
		raw     string
		i       int64
		iok     bool
		f       float64
		fok     bool
		nonEmpt bool
	}{
		{`0`, 0, true, 0, true, false},
		{`-0`, 0, true, 0, true, false},
		{`42`, 42, true, 42, true, false},
		{`-42`, -42, true, -42, true, false},
		{`9223372036854775807`, 1<<63 - 1, true, 9223372036854775807, true, false},
		{`9223372036854775808`, 0, false, 9223372036854775808, true, false},
		{`-9223372036854775808`, -1 << 63, true, -9223372036854775808, true, false},
		{`-9223372036854775809`, 0, false, -9223372036854775809, true, false},
		{`99999999999999999999`, 0, false, 1e20, true, false},
		{`3.0`, 0, false, 3, true, false},
		{`1e3`, 0, false, 1000, true, false},
		{`1e999`, 0, false, 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			v, err := Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if i, ok := v.Int(); i != tc.i || ok != tc.iok {
				t.Errorf("Int() = %d, %v; want %d, %v", i, ok, tc.i, tc.iok)
			}
			if f, ok := v.Float(); ok != tc.fok || ok && f != tc.f {
				t.Errorf("Float() = %v, %v; want %v, %v", f, ok, tc.f, tc.fok)
			}
		})
	}
	t.Run("other kinds", func(t *testing.T) {
		s := Value{Kind: String, Raw: []byte(`"1"`)}
		if _, ok := s.Int(); ok {
			t.Error("Int of a string succeeded")
		}
		if _, ok := s.Float(); ok {
			t.Error("Float of a string succeeded")
		}
		if _, ok := s.Bool(); ok {
			t.Error("Bool of a string succeeded")
		}
		if b, ok := (Value{Kind: Bool, Raw: []byte("true")}).Bool(); !b || !ok {
			t.Error("Bool(true) failed")
		}
		if b, ok := (Value{Kind: Bool, Raw: []byte("false")}).Bool(); b || !ok {
			t.Error("Bool(false) failed")
		}
		if !(Value{Kind: String, Raw: []byte(`" "`)}).IsNonEmptyString() || (Value{Kind: String, Raw: []byte(`""`)}).IsNonEmptyString() {
			t.Error("IsNonEmptyString wrong")
		}
		if (Value{Kind: Array, Raw: []byte(`[]`)}).IsEmptyString() || !(Value{Kind: String, Raw: []byte(`""`)}).IsEmptyString() {
			t.Error("IsEmptyString wrong")
		}
		for raw, want := range map[string]bool{`""`: true, `[]`: true, "[ \n]": true, `{}`: true, `{ }`: true,
			`" "`: false, `[0]`: false, `{"a":1}`: false, `0`: false, `null`: false, `false`: false} {
			v, err := Parse([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			if v.IsEmpty() != want {
				t.Errorf("%s.IsEmpty() = %v, want %v", raw, v.IsEmpty(), want)
			}
		}
		if (Value{Kind: Array, Raw: []byte("[")}).IsEmpty() {
			t.Error("IsEmpty of a malformed hand-built array = true")
		}
		if Invalid.String() != "invalid" || Array.String() != "array" || Kind(99).String() != "kind(99)" {
			t.Error("Kind.String wrong")
		}
	})
}

func TestNoAllocs(t *testing.T) {
	chunk := []byte(sampleChunk)
	escKey := Value{Kind: String, Raw: []byte(`"c\u006fntent"`)}
	buf := make([]byte, 0, 256)
	tests := []struct {
		name string
		fn   func()
	}{
		{"Valid", func() { Valid(chunk) }},
		{"ObjectEach with a capturing closure", func() {
			n := 0
			_ = ObjectEach(chunk, func(k, v Value) error {
				if k.StringEquals("choices") {
					n += len(v.Raw)
				}
				return nil
			})
		}},
		{"iterators", func() {
			it := IterObject(chunk)
			for it.Next() {
				if it.Key().StringEquals("choices") {
					a := IterArray(it.Value().Raw)
					for a.Next() {
					}
				}
			}
		}},
		{"Members and Elements", func() {
			v, _ := Parse(chunk)
			it := v.Members()
			for it.Next() {
				if it.Key().StringEquals("choices") {
					a := it.Value().Elements()
					for a.Next() {
						m := a.Value().Members()
						for m.Next() {
						}
					}
				}
			}
		}},
		{"Get", func() { _, _ = Get(chunk, "choices", "0", "delta", "content") }},
		{"escaped StringEquals", func() { escKey.StringEquals("content") }},
		{"Unquote into capacity", func() { buf = escKey.Unquote(buf[:0]) }},
		{"Float", func() { _, _ = (Value{Kind: Number, Raw: []byte("-12.5e3")}).Float() }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tc.fn); n != 0 {
				t.Errorf("%v allocations per run, want 0", n)
			}
		})
	}
}

const sampleChunk = `{"id":"chatcmpl-9f3a1c2b7e","object":"chat.completion.chunk","created":1694268190,"model":"meta-llama/Llama-3.1-8B-Instruct",` +
	`"choices":[{"index":0,"delta":{"content":" quick brown"},"logprobs":null,"finish_reason":null}],"usage":null}`

func TestHasSpecial(t *testing.T) {
	// Every byte value in every lane, against the byte table.
	for c := 0; c < 256; c++ {
		for lane := 0; lane < 8; lane++ {
			var buf [8]byte
			for k := range buf {
				buf[k] = 'a'
			}
			buf[lane] = byte(c)
			x := uint64(0)
			for k := 7; k >= 0; k-- {
				x = x<<8 | uint64(buf[k])
			}
			if got, want := hasSpecial(x), !strPlain[c]; got != want {
				t.Fatalf("hasSpecial with byte %#x in lane %d = %v, want %v", c, lane, got, want)
			}
		}
	}
	// High bytes next to special ones must not hide or fake a match.
	for _, s := range []string{"\xff\xff\xff\xff\xff\xff\xff\xff", "\x80\x1f\x80\x80\x80\x80\x80\x80", "\xa2\xdc\xa2\xdc\xa2\xdc\xa2\xdc", "\x21\x21\x23\x5b\x5d\x5c\x7f\x20"} {
		x := uint64(0)
		want := false
		for k := 7; k >= 0; k-- {
			x = x<<8 | uint64(s[k])
			want = want || !strPlain[s[k]]
		}
		if got := hasSpecial(x); got != want {
			t.Errorf("hasSpecial(%q) = %v, want %v", s, got, want)
		}
	}
}

// walk lists every value under v as "path kind raw" lines, descending with
// Members and Elements when fast is set and with IterObject and IterArray
// otherwise. It stops descending at depth 600 so that garbage input in the
// fuzz target cannot recurse without bound.
func walk(v Value, fast bool, path string, depth int, out *[]string) error {
	*out = append(*out, path+" "+v.Kind.String()+" "+string(v.Raw))
	if depth > 600 {
		return nil
	}
	switch v.Kind {
	case Object:
		it := IterObject(v.Raw)
		if fast {
			it = v.Members()
		}
		for it.Next() {
			if err := walk(it.Value(), fast, path+"/"+string(it.Key().Unquote(nil)), depth+1, out); err != nil {
				return err
			}
		}
		return it.Err()
	case Array:
		it := IterArray(v.Raw)
		if fast {
			it = v.Elements()
		}
		for it.Next() {
			if err := walk(it.Value(), fast, path+"/"+strconv.Itoa(it.Index()), depth+1, out); err != nil {
				return err
			}
		}
		return it.Err()
	}
	return nil
}

func TestMembersAndElements(t *testing.T) {
	for _, tc := range validCases {
		if !tc.valid {
			continue
		}
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			v, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var slow, fast []string
			if err := walk(v, false, "", 0, &slow); err != nil {
				t.Fatal(err)
			}
			if err := walk(v, true, "", 0, &fast); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(slow, fast) {
				t.Errorf("Members/Elements walk\n%q\ndiffers from IterObject/IterArray walk\n%q", fast, slow)
			}
		})
	}
	t.Run("hand-built values are validated", func(t *testing.T) {
		it := Value{Kind: Object, Raw: []byte(`{"a":1,"b":x}`)}.Members()
		for it.Next() {
		}
		if it.Err() == nil {
			t.Error("Members of a hand-built malformed object succeeded")
		}
		a := Value{Kind: Array, Raw: []byte(`[1,"]`)}.Elements()
		for a.Next() {
		}
		if a.Err() == nil {
			t.Error("Elements of a hand-built malformed array succeeded")
		}
	})
	t.Run("wrong kind", func(t *testing.T) {
		v, _ := Parse([]byte(`[1]`))
		it := v.Members()
		if it.Next() || it.Err() == nil {
			t.Error("Members of an array succeeded")
		}
	})
	t.Run("checked garbage ends without panic", func(t *testing.T) {
		for _, raw := range []string{`{"a`, `{"a":`, `{"a":"\`, `{"a":[`, `{"a":t`, `{"a":?}`, `{"a":1 x`, `[`, `[{`, `["\"`, `[1,`, `{`, `[nul`, "{\"a\":1e\x00}"} {
			var out []string
			_ = walk(Value{Kind: Object, Raw: []byte(raw), checked: true}, true, "", 0, &out)
			_ = walk(Value{Kind: Array, Raw: []byte(raw), checked: true}, true, "", 0, &out)
		}
	})
}
