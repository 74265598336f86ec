// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package jsonscan

import "errors"

// Stop can be returned by the function passed to ObjectEach or ArrayEach to
// end the iteration early; the iterating function then returns nil. The
// rest of the input is not validated.
var Stop = errors.New("jsonscan: stop iteration")

// The states of an iterator.
const (
	iterStart = iota
	iterRunning
	iterDone
)

// ObjectIter walks the members of an object in input order, validating
// each member as it goes. Use it like bufio.Scanner:
//
//	it := jsonscan.IterObject(raw)
//	for it.Next() {
//		key, val := it.Key(), it.Value()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// A completed walk from IterObject (Next returned false and Err is nil) has
// validated the whole input; one from Value.Members skips what was
// validated before. An ObjectIter is a plain value: declared in a
// function, it stays on the stack.
type ObjectIter struct {
	data     []byte
	pos      int
	state    uint8
	trusted  bool // data was validated before: skip values without checking
	key, val Value
	err      error
}

// IterObject returns an iterator over the members of the object in raw.
// raw must hold exactly one object with optional whitespace around it;
// anything else makes Err return a *SyntaxError.
func IterObject(raw []byte) ObjectIter { return ObjectIter{data: raw} }

// Next advances to the next member and reports whether there is one. It
// returns false at the end of the object and on malformed input.
func (it *ObjectIter) Next() bool {
	d := it.data
	switch it.state {
	case iterStart:
		i := skipWS(d, 0)
		if i >= len(d) {
			return it.fail(syntaxErr(i, msgEnd))
		}
		if d[i] != '{' {
			if _, _, err := scanValue(d, i, 0); err != nil {
				return it.fail(err)
			}
			return it.fail(syntaxErr(i, msgNotObject))
		}
		i = skipWS(d, i+1)
		if i < len(d) && d[i] == '}' {
			return it.finish(i + 1)
		}
		it.state = iterRunning
		return it.member(i)
	case iterRunning:
		i := skipWS(d, it.pos)
		if i >= len(d) {
			return it.fail(syntaxErr(i, msgEnd))
		}
		switch d[i] {
		case '}':
			return it.finish(i + 1)
		case ',':
			return it.member(i + 1)
		default:
			return it.fail(syntaxErr(i, msgAfterObject))
		}
	default:
		return false
	}
}

// member scans the member that starts at or after d[i].
func (it *ObjectIter) member(i int) bool {
	d := it.data
	i = skipWS(d, i)
	if i >= len(d) {
		return it.fail(syntaxErr(i, msgEnd))
	}
	if d[i] != '"' {
		return it.fail(syntaxErr(i, msgKey))
	}
	var end int
	var err error
	if it.trusted {
		end = skipString(d, i)
	} else if end, err = scanString(d, i); err != nil {
		return it.fail(err)
	}
	it.key = Value{Kind: String, Raw: d[i:end], checked: true}
	i = skipWS(d, end)
	if i >= len(d) {
		return it.fail(syntaxErr(i, msgEnd))
	}
	if d[i] != ':' {
		return it.fail(syntaxErr(i, msgColon))
	}
	i = skipWS(d, i+1)
	var kind Kind
	if it.trusted {
		end, kind = skipValue(d, i)
	} else if end, kind, err = scanValue(d, i, 1); err != nil {
		return it.fail(err)
	}
	if kind == Invalid { // only for trusted data changed since it was checked
		return it.fail(syntaxErr(i, msgValue))
	}
	it.val = Value{Kind: kind, Raw: d[i:end], checked: true}
	it.pos = end
	return true
}

// finish checks that only whitespace follows the closing brace at d[i-1].
func (it *ObjectIter) finish(i int) bool {
	if j := skipWS(it.data, i); j != len(it.data) {
		return it.fail(syntaxErr(j, msgTrailing))
	}
	it.state = iterDone
	it.key, it.val = Value{}, Value{}
	return false
}

func (it *ObjectIter) fail(err error) bool {
	it.err = err
	it.state = iterDone
	it.key, it.val = Value{}, Value{}
	return false
}

// Key returns the key of the current member: a Value of kind String whose
// Raw includes the quotes and any escapes.
func (it *ObjectIter) Key() Value { return it.key }

// Value returns the value of the current member.
func (it *ObjectIter) Value() Value { return it.val }

// Err returns the error that ended the walk, or nil.
func (it *ObjectIter) Err() error { return it.err }

// ArrayIter walks the elements of an array in order, validating each as it
// goes. It is used like ObjectIter.
type ArrayIter struct {
	data    []byte
	pos     int
	index   int
	state   uint8
	trusted bool // as in ObjectIter
	val     Value
	err     error
}

// IterArray returns an iterator over the elements of the array in raw.
// raw must hold exactly one array with optional whitespace around it.
func IterArray(raw []byte) ArrayIter { return ArrayIter{data: raw, index: -1} }

// Next advances to the next element and reports whether there is one.
func (it *ArrayIter) Next() bool {
	d := it.data
	switch it.state {
	case iterStart:
		i := skipWS(d, 0)
		if i >= len(d) {
			return it.fail(syntaxErr(i, msgEnd))
		}
		if d[i] != '[' {
			if _, _, err := scanValue(d, i, 0); err != nil {
				return it.fail(err)
			}
			return it.fail(syntaxErr(i, msgNotArray))
		}
		i = skipWS(d, i+1)
		if i < len(d) && d[i] == ']' {
			return it.finish(i + 1)
		}
		it.state = iterRunning
		return it.element(i)
	case iterRunning:
		i := skipWS(d, it.pos)
		if i >= len(d) {
			return it.fail(syntaxErr(i, msgEnd))
		}
		switch d[i] {
		case ']':
			return it.finish(i + 1)
		case ',':
			return it.element(i + 1)
		default:
			return it.fail(syntaxErr(i, msgAfterArray))
		}
	default:
		return false
	}
}

func (it *ArrayIter) element(i int) bool {
	d := it.data
	i = skipWS(d, i)
	var end int
	var kind Kind
	var err error
	if it.trusted {
		end, kind = skipValue(d, i)
	} else if end, kind, err = scanValue(d, i, 1); err != nil {
		return it.fail(err)
	}
	if kind == Invalid { // only for trusted data changed since it was checked
		return it.fail(syntaxErr(i, msgValue))
	}
	it.val = Value{Kind: kind, Raw: d[i:end], checked: true}
	it.pos = end
	it.index++
	return true
}

func (it *ArrayIter) finish(i int) bool {
	if j := skipWS(it.data, i); j != len(it.data) {
		return it.fail(syntaxErr(j, msgTrailing))
	}
	it.state = iterDone
	it.val = Value{}
	return false
}

func (it *ArrayIter) fail(err error) bool {
	it.err = err
	it.state = iterDone
	it.val = Value{}
	return false
}

// Value returns the current element.
func (it *ArrayIter) Value() Value { return it.val }

// Index returns the index of the current element, counting from 0.
func (it *ArrayIter) Index() int { return it.index }

// Err returns the error that ended the walk, or nil.
func (it *ArrayIter) Err() error { return it.err }

// ObjectEach calls fn for each member of the object in raw, in input order.
// It returns the first error fn returns (nil for Stop) or the *SyntaxError
// that ended the walk. fn does not escape, so a closure passed to ObjectEach
// costs no allocation.
func ObjectEach(raw []byte, fn func(key, val Value) error) error {
	it := IterObject(raw)
	for it.Next() {
		if err := fn(it.key, it.val); err != nil {
			if err == Stop {
				return nil
			}
			return err
		}
	}
	return it.err
}

// ArrayEach calls fn for each element of the array in raw, in order, with
// its index. It returns like ObjectEach.
func ArrayEach(raw []byte, fn func(i int, val Value) error) error {
	it := IterArray(raw)
	for it.Next() {
		if err := fn(it.index, it.val); err != nil {
			if err == Stop {
				return nil
			}
			return err
		}
	}
	return it.err
}

// Get validates all of raw and returns the value at path: each element of
// path is an object key or, where the value is an array, a decimal index.
// A missing value is not an error: Get returns a Value of kind Invalid (see
// Value.Exists). When an object has a key more than once the last one
// wins, as in encoding/json. Keys are compared after unescaping.
func Get(raw []byte, path ...string) (Value, error) {
	v, err := Parse(raw)
	if err != nil {
		return Value{}, err
	}
	for _, seg := range path {
		switch v.Kind {
		case Object:
			var found Value
			it := v.Members()
			for it.Next() {
				if it.key.StringEquals(seg) {
					found = it.val
				}
			}
			if it.err != nil { // unreachable: Parse validated v
				return Value{}, it.err
			}
			v = found
		case Array:
			n, ok := parseIndex(seg)
			if !ok {
				return Value{}, nil
			}
			var found Value
			it := v.Elements()
			for it.Next() {
				if it.index == n {
					found = it.val
					break
				}
			}
			v = found
		default:
			return Value{}, nil
		}
		if v.Kind == Invalid {
			return Value{}, nil
		}
	}
	return v, nil
}

// parseIndex parses a canonical non-negative decimal array index.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}
