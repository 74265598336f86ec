// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package jsonscan is a small, strict JSON scanner over []byte that
// allocates nothing on its success paths. It is built for the prober's hot
// path, where every streamed event is a small JSON object of which only a
// few members matter: instead of decoding a whole event into Go values, a
// caller walks the members it needs and looks at their raw bytes.
//
// Every function validates what it walks against RFC 8259: a scan either
// succeeds on well-formed JSON or returns a *SyntaxError that says where and
// why it stopped. Malformed input never causes a panic or an unbounded loop.
// Nesting is capped at MaxDepth. Like encoding/json, the scanner does not
// reject invalid UTF-8 inside strings; Value.Unquote replaces it with
// U+FFFD, as encoding/json does.
//
// The one shortcut: a Value that this package returned was validated when
// it was produced, so walking into it with Value.Members or Value.Elements
// does not validate its bytes a second time. A typical reader validates an
// event once with IterObject at the top level and descends with Members.
//
// Values alias the input and keys are compared without unescaping in the
// common case, so none of this allocates; the error paths allocate the
// *SyntaxError only.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// MaxDepth is the deepest nesting of objects and arrays the scanner
// accepts, counted from the value it was handed. Deeper input is an error
// wrapping ErrTooDeep (encoding/json accepts up to 10000 levels; the events
// this package reads nest four or five levels deep).
const MaxDepth = 512

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds of JSON values. Invalid is the zero Kind: the Kind of a Value
// that does not exist, for example the result of Get for a missing member.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Object
	Array
)

var kindNames = [...]string{
	Invalid: "invalid",
	Null:    "null",
	Bool:    "bool",
	Number:  "number",
	String:  "string",
	Object:  "object",
	Array:   "array",
}

// String returns the lower-case name of k.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ErrTooDeep is wrapped by the *SyntaxError returned for input nested
// deeper than MaxDepth.
var ErrTooDeep = errors.New("nesting deeper than " + strconv.Itoa(MaxDepth) + " levels")

// SyntaxError describes malformed JSON.
type SyntaxError struct {
	// Offset is the byte offset, in the input handed to the function that
	// failed, where the problem was found.
	Offset int
	// Msg says what was wrong.
	Msg string

	err error // ErrTooDeep or nil
}

// Error implements the error interface.
func (e *SyntaxError) Error() string {
	return "jsonscan: " + e.Msg + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns ErrTooDeep for input nested too deeply, nil otherwise.
func (e *SyntaxError) Unwrap() error { return e.err }

// The messages of SyntaxError. They are constants so that building an error
// costs one allocation only.
const (
	msgEnd          = "unexpected end of input"
	msgValue        = "invalid character, expected a value"
	msgKey          = "invalid character, expected a string object key"
	msgColon        = "invalid character, expected ':' after object key"
	msgAfterObject  = "invalid character, expected ',' or '}' after object member"
	msgAfterArray   = "invalid character, expected ',' or ']' after array element"
	msgTrailing     = "invalid character after top-level value"
	msgEscape       = "invalid escape sequence in string"
	msgControl      = "control character in string"
	msgLiteral      = "invalid literal"
	msgNumber       = "invalid number"
	msgNotObject    = "value is not an object"
	msgNotArray     = "value is not an array"
	msgEndOfString  = "unexpected end of input in string"
	msgDeep         = "nesting too deep"
	msgEmptyInput   = "empty input"
	msgNotContainer = "value is neither an object nor an array"
)

func syntaxErr(off int, msg string) error { return &SyntaxError{Offset: off, Msg: msg} }

func tooDeep(off int) error { return &SyntaxError{Offset: off, Msg: msgDeep, err: ErrTooDeep} }

// skipWS returns the index of the first byte at or after i that is not JSON
// whitespace.
func skipWS(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// strPlain marks the bytes that may appear unescaped in a string and need
// no attention: everything but '"', '\\' and control characters.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// hexVal is the value of a hexadecimal digit, or 0xff for other bytes.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

// Constants of the SWAR byte tests in hasSpecial.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasSpecial reports whether any of the eight bytes packed in x is '"',
// '\\' or a control character (< 0x20). The tests are the classic exact
// "has zero byte" and "has byte less than n" bit tricks.
func hasSpecial(x uint64) bool {
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((x-ones*0x20)&^x|(q-ones)&^q|(b-ones)&^b)&highs != 0
}

// scanString validates the string whose opening quote is d[i] and returns
// the index just past its closing quote.
func scanString(d []byte, i int) (int, error) {
	i++
	for {
		// The plain-byte loops are the hot ones: strings are most of an
		// event's bytes. Eight bytes at a time while none is special,
		// then byte by byte up to the special one.
		for i+8 <= len(d) && !hasSpecial(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		for i < len(d) && strPlain[d[i]] {
			i++
		}
		if i >= len(d) {
			return i, syntaxErr(i, msgEndOfString)
		}
		switch d[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(d) {
				return i + 1, syntaxErr(i+1, msgEndOfString)
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) {
					// Report a bad digit before a short input.
					for j := i + 2; j < len(d); j++ {
						if hexVal[d[j]] == 0xff {
							return j, syntaxErr(j, msgEscape)
						}
					}
					return len(d), syntaxErr(len(d), msgEndOfString)
				}
				for j := i + 2; j < i+6; j++ {
					if hexVal[d[j]] == 0xff {
						return j, syntaxErr(j, msgEscape)
					}
				}
				i += 6
			default:
				return i + 1, syntaxErr(i+1, msgEscape)
			}
		default: // a control character
			return i, syntaxErr(i, msgControl)
		}
	}
}

// scanNumber validates the number that starts at d[i] and returns the index
// just past it. What follows the number is checked by the caller.
func scanNumber(d []byte, i int) (int, error) {
	if d[i] == '-' {
		i++
	}
	switch {
	case i >= len(d):
		return i, syntaxErr(i, msgEnd)
	case d[i] == '0':
		i++
	case d[i] >= '1' && d[i] <= '9':
		i++
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		return i, syntaxErr(i, msgNumber)
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) {
			return i, syntaxErr(i, msgEnd)
		}
		if d[i] < '0' || d[i] > '9' {
			return i, syntaxErr(i, msgNumber)
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) {
			return i, syntaxErr(i, msgEnd)
		}
		if d[i] < '0' || d[i] > '9' {
			return i, syntaxErr(i, msgNumber)
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	return i, nil
}

// scanLiteral checks that d[i:] starts with lit and returns the index past it.
func scanLiteral(d []byte, i int, lit string) (int, error) {
	for j := 0; j < len(lit); j++ {
		if i+j >= len(d) {
			return i + j, syntaxErr(i+j, msgEnd)
		}
		if d[i+j] != lit[j] {
			return i + j, syntaxErr(i+j, msgLiteral)
		}
	}
	return i + len(lit), nil
}

// scanValue validates the value that starts at d[i] (no leading whitespace)
// and returns the index just past it and its kind. depth is the nesting
// level of the context the value sits in (0 at the top level).
func scanValue(d []byte, i, depth int) (int, Kind, error) {
	if i >= len(d) {
		return i, Invalid, syntaxErr(i, msgEnd)
	}
	var err error
	switch c := d[i]; c {
	case '"':
		i, err = scanString(d, i)
		return i, String, err
	case '{':
		i, err = scanComposite(d, i, depth)
		return i, Object, err
	case '[':
		i, err = scanComposite(d, i, depth)
		return i, Array, err
	case 't':
		i, err = scanLiteral(d, i, "true")
		return i, Bool, err
	case 'f':
		i, err = scanLiteral(d, i, "false")
		return i, Bool, err
	case 'n':
		i, err = scanLiteral(d, i, "null")
		return i, Null, err
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			i, err = scanNumber(d, i)
			return i, Number, err
		}
		return i, Invalid, syntaxErr(i, msgValue)
	}
}

// The states of scanComposite.
const (
	stOpen  = iota // d[i] opens a container
	stKey          // expect an object key
	stValue        // expect a value
	stAfter        // after a value: expect ',' or the closing bracket
	stClose        // a container was just closed
)

// scanComposite validates the object or array that starts at d[i] and
// returns the index just past it. It is iterative: the kinds of the open
// containers live in a bit stack on the goroutine stack, so deep input costs
// neither heap nor recursion.
func scanComposite(d []byte, i, depth int) (int, error) {
	var stack [MaxDepth/64 + 1]uint64 // bit set: the container is an object
	rel := 0                          // containers open in this call
	state := stOpen
	var err error
	for {
		switch state {
		case stOpen:
			depth++
			if depth > MaxDepth {
				return i, tooDeep(i)
			}
			rel++
			obj := d[i] == '{'
			if obj {
				stack[rel>>6] |= 1 << (rel & 63)
			} else {
				stack[rel>>6] &^= 1 << (rel & 63)
			}
			i = skipWS(d, i+1)
			if i >= len(d) {
				return i, syntaxErr(i, msgEnd)
			}
			switch {
			case obj && d[i] == '}', !obj && d[i] == ']':
				i++
				state = stClose
			case obj:
				state = stKey
			default:
				state = stValue
			}
		case stKey:
			i = skipWS(d, i)
			if i >= len(d) {
				return i, syntaxErr(i, msgEnd)
			}
			if d[i] != '"' {
				return i, syntaxErr(i, msgKey)
			}
			if i, err = scanString(d, i); err != nil {
				return i, err
			}
			i = skipWS(d, i)
			if i >= len(d) {
				return i, syntaxErr(i, msgEnd)
			}
			if d[i] != ':' {
				return i, syntaxErr(i, msgColon)
			}
			i++
			state = stValue
		case stValue:
			i = skipWS(d, i)
			if i >= len(d) {
				return i, syntaxErr(i, msgEnd)
			}
			if c := d[i]; c == '{' || c == '[' {
				state = stOpen
				continue
			}
			if i, _, err = scanValue(d, i, depth); err != nil {
				return i, err
			}
			state = stAfter
		case stAfter:
			i = skipWS(d, i)
			if i >= len(d) {
				return i, syntaxErr(i, msgEnd)
			}
			obj := stack[rel>>6]&(1<<(rel&63)) != 0
			switch c := d[i]; {
			case c == ',':
				i++
				if obj {
					state = stKey
				} else {
					state = stValue
				}
			case obj && c == '}', !obj && c == ']':
				i++
				state = stClose
			case obj:
				return i, syntaxErr(i, msgAfterObject)
			default:
				return i, syntaxErr(i, msgAfterArray)
			}
		case stClose:
			rel--
			depth--
			if rel == 0 {
				return i, nil
			}
			state = stAfter
		}
	}
}

// Parse validates raw, which must hold exactly one JSON value with optional
// whitespace around it, and returns that value without the whitespace.
func Parse(raw []byte) (Value, error) {
	i := skipWS(raw, 0)
	if i >= len(raw) {
		if len(raw) == 0 {
			return Value{}, syntaxErr(0, msgEmptyInput)
		}
		return Value{}, syntaxErr(i, msgEnd)
	}
	end, kind, err := scanValue(raw, i, 0)
	if err != nil {
		return Value{}, err
	}
	if j := skipWS(raw, end); j != len(raw) {
		return Value{}, syntaxErr(j, msgTrailing)
	}
	return Value{Kind: kind, Raw: raw[i:end], checked: true}, nil
}

// Valid reports whether raw is exactly one well-formed JSON value with
// optional whitespace around it, nested at most MaxDepth levels.
func Valid(raw []byte) bool {
	_, err := Parse(raw)
	return err == nil
}

// skipString returns the index just past the string whose opening quote is
// d[i], without validating it. It is for data validated before; on other
// data it returns a wrong but in-range index.
func skipString(d []byte, i int) int {
	i++
	for i < len(d) {
		// bytes.IndexByte costs more than it saves on the short strings
		// of events; eight bytes at a time, then byte by byte.
		for i+8 <= len(d) && !hasQuoteOrBackslash(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		for i < len(d) && d[i] != '"' && d[i] != '\\' {
			i++
		}
		if i >= len(d) {
			break
		}
		if d[i] == '"' {
			return i + 1
		}
		i += 2 // a backslash and the byte it escapes
	}
	return len(d)
}

// hasQuoteOrBackslash reports whether any of the eight bytes packed in x is
// '"' or '\\'.
func hasQuoteOrBackslash(x uint64) bool {
	q := x ^ (ones * '"')
	b := x ^ (ones * '\\')
	return ((q-ones)&^q|(b-ones)&^b)&highs != 0
}

// numberByte marks the bytes a number can hold.
var numberByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eE") {
		t[c] = true
	}
	return t
}()

// skipValue returns the end and kind of the value that starts at d[i],
// without validating it, for data validated before. Whatever the data, it
// returns an index in (i, len(d)] and ends; Kind is Invalid for a byte
// that starts no value.
func skipValue(d []byte, i int) (int, Kind) {
	if i >= len(d) {
		return len(d), Invalid
	}
	switch d[i] {
	case '"':
		return skipString(d, i), String
	case '{', '[':
		kind := Object
		if d[i] == '[' {
			kind = Array
		}
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				i = skipString(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, kind
				}
			}
			i++
		}
		return len(d), kind
	case 't':
		return min(i+4, len(d)), Bool
	case 'n':
		return min(i+4, len(d)), Null
	case 'f':
		return min(i+5, len(d)), Bool
	default:
		if !numberByte[d[i]] {
			return i + 1, Invalid
		}
		j := i + 1
		for j < len(d) && numberByte[d[j]] {
			j++
		}
		return j, Number
	}
}
