// Package sse reads Server-Sent Events from an LLM streaming response and
// stamps every event with the time its first byte arrived.
//
// The exporter measures time to first token as the time from dispatch to the
// arrival of the first byte of the first output-carrying event, so the reader
// must know when each event's bytes arrived, not when the caller got around to
// parsing or decoding it. A user-space reader cannot see packet arrival times;
// the closest observable point is the return of the Read call that delivered
// the bytes. Reader therefore takes one clock reading per Read that returns
// data and attributes to each event the reading of the Read that delivered the
// first byte of the event's first field line. Several events delivered by one
// Read share its time (they arrived together), an event split across several
// Reads gets the time of the first of them, and comments and blank lines that
// precede an event do not lend it their time (a keep-alive is not output).
// Taking the time when an event is dispatched instead would add the time
// spent receiving the rest of a large event and parsing the events before it.
//
// Reader does not use bufio.Scanner or bufio.Reader: Scanner fails on lines
// longer than 64 KiB by default (first chunks with prompt token ids and
// logprob events exceed it), its ScanLines does not treat a lone CR as a line
// ending as the SSE specification requires, and both hide the boundaries of
// the underlying Read calls, which are exactly what the timestamps need.
// Reader instead owns one growable buffer, scans it with bytes.IndexByte,
// and returns slices into that buffer where it can, so that reading a stream
// does not allocate per event once the buffers have grown to the size the
// stream needs.
//
// Parsing follows the WHATWG "Server-sent events" event stream
// interpretation, plus what LLM servers actually send: CRLF, LF and lone CR
// line endings (also a CR and its LF split across two Reads), `data:` with or
// without the space, a leading UTF-8 BOM, comment keep-alives, a
// non-standard `error:` field line (llama.cpp before ggml-org/llama.cpp#16109)
// and a final `data: [DONE]` without its blank line (llama.cpp), which the
// spec would discard but Reader returns once, marked Unterminated.
package sse
