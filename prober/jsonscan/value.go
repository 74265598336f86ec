// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package jsonscan

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Value is one JSON value as it appears in the input: its kind and its raw
// bytes (a string's Raw includes the quotes and escapes). Raw aliases the
// input; copy it to keep it past the input's lifetime. Values returned by
// this package are well formed; the methods are still safe on a Value built
// by hand, returning false or nothing for bytes that do not fit its Kind.
type Value struct {
	Kind Kind
	// checked is set on every Value this package returns: its Raw was
	// validated when it was produced, so Members and Elements need not
	// validate it again. A Value built by hand has it unset. (Placed here
	// it shares Kind's word: a Value is 32 bytes.)
	checked bool
	Raw     []byte
}

// Members returns an iterator over the members of the object v. For a
// Value this package returned, the walk does not validate the members
// again (they were validated when v was produced) and is about twice as
// fast as IterObject(v.Raw); for a Value built by hand it validates, like
// IterObject. Either way it is memory safe and ends on any input.
func (v Value) Members() ObjectIter {
	return ObjectIter{data: v.Raw, trusted: v.checked && v.Kind == Object}
}

// Elements returns an iterator over the elements of the array v, with the
// same fast path as Members.
func (v Value) Elements() ArrayIter {
	return ArrayIter{data: v.Raw, index: -1, trusted: v.checked && v.Kind == Array}
}

// Exists reports whether v is a value at all: false for the zero Value that
// Get returns for a missing path.
func (v Value) Exists() bool { return v.Kind != Invalid }

// IsNull reports whether v is the literal null.
func (v Value) IsNull() bool { return v.Kind == Null }

// Bool returns the value of a true or false literal; ok is false for any
// other value.
func (v Value) Bool() (b, ok bool) {
	if v.Kind != Bool {
		return false, false
	}
	return len(v.Raw) == 4, true // "true"; "false" has 5 bytes
}

// Int returns the value of a number written as an integer (an optional
// minus sign and decimal digits) that fits in an int64. A fraction or an
// exponent makes ok false even when the value is integral ("3.0", "1e3"),
// as when encoding/json decodes into an int64.
func (v Value) Int() (n int64, ok bool) {
	b := v.Raw
	if v.Kind != Number || len(b) == 0 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0') // 19 digits cannot overflow a uint64
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// Float returns the value of a number as the nearest float64; ok is false
// for other kinds and for numbers out of the float64 range.
func (v Value) Float() (f float64, ok bool) {
	if v.Kind != Number || len(v.Raw) == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v.Raw), 64)
	return f, err == nil
}

// IsEmptyString reports whether v is the empty string "".
func (v Value) IsEmptyString() bool {
	return v.Kind == String && len(v.Raw) == 2
}

// IsNonEmptyString reports whether v is a string with at least one
// character (whitespace counts).
func (v Value) IsNonEmptyString() bool {
	return v.Kind == String && len(v.Raw) > 2
}

// IsEmpty reports whether v is an empty string, array or object ("", [],
// {}, with any whitespace inside the brackets).
func (v Value) IsEmpty() bool {
	switch v.Kind {
	case String:
		return len(v.Raw) == 2
	case Array, Object:
		return len(v.Raw) >= 2 && skipWS(v.Raw, 1) == len(v.Raw)-1
	}
	return false
}

// content returns the bytes between a string's quotes, or ok false.
func (v Value) content() ([]byte, bool) {
	if v.Kind != String || len(v.Raw) < 2 || v.Raw[0] != '"' || v.Raw[len(v.Raw)-1] != '"' {
		return nil, false
	}
	return v.Raw[1 : len(v.Raw)-1], true
}

// StringEquals reports whether v is a string whose unescaped value is s. It
// compares the way encoding/json decodes: escapes are resolved and invalid
// UTF-8 stands for U+FFFD, so an s that is not valid UTF-8 never matches.
// It does not allocate.
func (v Value) StringEquals(s string) bool {
	c, ok := v.content()
	if !ok {
		return false
	}
	if bytes.IndexByte(c, '\\') < 0 {
		// Common case. Equal bytes are equal values only when they are
		// valid UTF-8; the check runs on a match only.
		if string(c) == s {
			return utf8.ValidString(s)
		}
		// Unequal bytes can still decode equal when c holds invalid
		// UTF-8 and s the U+FFFD (EF BF BD) that replaces it.
		if strings.IndexByte(s, 0xEF) < 0 {
			return false
		}
	}
	// Each byte of s comes from at most 6 bytes of escaped input.
	if len(c) > 6*len(s) {
		return false
	}
	var buf [utf8.UTFMax]byte
	j := 0
	for i := 0; i < len(c); {
		var ch []byte
		ch, i = appendChar(buf[:0], c, i)
		if len(ch) == 0 || j+len(ch) > len(s) || string(ch) != s[j:j+len(ch)] {
			return false
		}
		j += len(ch)
	}
	return j == len(s)
}

// Unquote appends the unescaped value of the string v to dst and returns
// the extended slice. It resolves every escape, including \uXXXX and UTF-16
// surrogate pairs, and like encoding/json replaces a lone surrogate and
// each invalid UTF-8 byte with U+FFFD. For a value that is not a string it
// returns dst unchanged.
func (v Value) Unquote(dst []byte) []byte {
	c, ok := v.content()
	if !ok {
		return dst
	}
	if bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		return append(dst, c...)
	}
	for i := 0; i < len(c); {
		n := len(dst)
		dst, i = appendChar(dst, c, i)
		if len(dst) == n { // a malformed escape in a hand-built Value
			break
		}
	}
	return dst
}

// appendChar appends the character of string content c that starts at
// c[i] (an escape sequence or a UTF-8 sequence) to dst and returns dst and
// the index of the next character. It appends nothing for a malformed
// escape, which a validated Value cannot hold.
func appendChar(dst, c []byte, i int) ([]byte, int) {
	b := c[i]
	if b != '\\' {
		if b < utf8.RuneSelf {
			return append(dst, b), i + 1
		}
		r, size := utf8.DecodeRune(c[i:])
		if r == utf8.RuneError && size == 1 {
			return utf8.AppendRune(dst, utf8.RuneError), i + 1
		}
		return append(dst, c[i:i+size]...), i + size
	}
	if i+1 >= len(c) {
		return dst, len(c)
	}
	switch c[i+1] {
	case '"', '\\', '/':
		return append(dst, c[i+1]), i + 2
	case 'b':
		return append(dst, '\b'), i + 2
	case 'f':
		return append(dst, '\f'), i + 2
	case 'n':
		return append(dst, '\n'), i + 2
	case 'r':
		return append(dst, '\r'), i + 2
	case 't':
		return append(dst, '\t'), i + 2
	case 'u':
		r, ok := hex4(c, i+2)
		if !ok {
			return dst, len(c)
		}
		i += 6
		if utf16.IsSurrogate(r) {
			// Same rule as encoding/json: take a following \uXXXX only
			// when it completes a valid pair.
			if i+1 < len(c) && c[i] == '\\' && c[i+1] == 'u' {
				if r2, ok := hex4(c, i+2); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						return utf8.AppendRune(dst, dec), i + 6
					}
				}
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(dst, r), i
	default:
		return dst, len(c)
	}
}

// hex4 decodes the four hexadecimal digits at c[i:].
func hex4(c []byte, i int) (rune, bool) {
	if i+4 > len(c) {
		return 0, false
	}
	var r rune
	for _, h := range c[i : i+4] {
		x := hexVal[h]
		if x == 0xff {
			return 0, false
		}
		r = r<<4 | rune(x)
	}
	return r, true
}
