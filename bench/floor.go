// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// floorResult is what the floor client prints.
type floorResult struct {
	Sent   int64 `json:"sent"`
	OK     int64 `json:"ok"`
	Events int64 `json:"events"`
}

// runFloor is the floor client: the least a Go program can do for the same
// load as the exporter. It sends the same open-loop Poisson stream of
// streaming requests with net/http and reads each body with a bufio
// reader that only counts `data:` lines: no JSON, no timestamps, no
// metrics, no IPC. The exporter's CPU per probe is judged against it.
func runFloor(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	url := fs.String("url", "", "chat completions URL")
	rate := fs.Float64("rate", 100, "probes per second")
	dur := fs.Duration("duration", 10*time.Second, "how long to send")
	maxTokens := fs.Int("max-tokens", 32, "max_tokens")
	_ = fs.Parse(args)
	body := []byte(fmt.Sprintf(`{"model":"sim-model","messages":[{"role":"user","content":"Say hello."}],"max_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, *maxTokens))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4096, MaxIdleConns: 4096, DisableCompression: true}}
	var res floorResult
	var wg sync.WaitGroup
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	t := 0.0
	timer := time.NewTimer(0)
	<-timer.C
	for {
		t += rng.ExpFloat64() / *rate
		at := start.Add(time.Duration(t * float64(time.Second)))
		if at.Sub(start) > *dur {
			break
		}
		if d := time.Until(at); d > 0 {
			timer.Reset(d)
			<-timer.C
		}
		wg.Add(1)
		atomic.AddInt64(&res.Sent, 1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			n := int64(0)
			for {
				line, err := br.ReadSlice('\n')
				if bytes.HasPrefix(line, []byte("data:")) {
					n++
					if bytes.HasPrefix(line, []byte("data: [DONE]")) {
						atomic.AddInt64(&res.OK, 1)
						break
					}
				}
				if err != nil {
					break
				}
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			atomic.AddInt64(&res.Events, n)
		}()
	}
	wg.Wait()
	return json.NewEncoder(os.Stdout).Encode(res)
}
