// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmslo/llm_slo_exporter/record"
)

// proc is a started child process.
type proc struct {
	cmd  *exec.Cmd
	name string
	log  *os.File
}

func start(dir, name string, bin string, args ...string) (*proc, error) {
	lf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &proc{cmd: cmd, name: name, log: lf}, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM and waits, killing after 15 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	p.log.Close()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHTTP polls url until it answers 200 or the deadline passes.
func waitHTTP(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v", url, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// gaugeValues returns the values of a gauge family.
func gaugeValues(mfs map[string]*dto.MetricFamily, name string) []float64 {
	var out []float64
	if mf := mfs[name]; mf != nil {
		for _, m := range mf.Metric {
			if m.Gauge != nil {
				out = append(out, m.Gauge.GetValue())
			}
		}
	}
	return out
}

// histSums returns the summed sample sum and count of a histogram family.
func histSums(mfs map[string]*dto.MetricFamily, name string) (sum float64, count uint64) {
	if mf := mfs[name]; mf != nil {
		for _, m := range mf.Metric {
			if h := m.Histogram; h != nil {
				sum += h.GetSampleSum()
				count += h.GetSampleCount()
			}
		}
	}
	return sum, count
}

// truth is llmsim's per-request record (the fields the bench uses).
type truth struct {
	RequestID        string  `json:"request_id"`
	Received         int64   `json:"received"`
	FirstByteWritten int64   `json:"first_byte_written"`
	ChunksWritten    []int64 `json:"chunks_written"`
	EndWritten       int64   `json:"end_written"`
	OutputTokens     int     `json:"output_tokens"`
	Outcome          string  `json:"outcome"`
}

func fetchTruth(simURL string) (map[string]truth, error) {
	resp, err := http.Get(simURL + "/admin/truth")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]truth{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var t truth
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return nil, err
		}
		out[t.RequestID] = t
	}
	return out, sc.Err()
}

// probeRec is one client record, copied out of the reader's reuse.
type probeRec struct {
	id        string
	reason    record.Reason
	dispatch  int64 // unix ns
	lag       time.Duration
	ttft, e2e time.Duration
	tpot      time.Duration
	hasTPOT   bool
	tokens    int
}

func readRecords(path string) ([]probeRec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := record.NewReader(f)
	var out []probeRec
	for {
		k, err := rd.Next()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if k != record.KindRecord {
			continue
		}
		r, err := rd.Record()
		if err != nil {
			return out, err
		}
		tp, ok := r.TPOT()
		out = append(out, probeRec{
			id: record.RequestIDString(r.RequestID), reason: r.Reason, dispatch: r.Scheduled + int64(r.Lag),
			lag: r.Lag, ttft: r.TTFT, e2e: r.E2E, tpot: tp, hasTPOT: ok, tokens: r.OutputTokens,
		})
	}
}

// exporterConfig is the exporter's configuration for one bench run.
func exporterConfig(simAddr string, workers int, rate float64, maxTokens int) string {
	inFlight := max(256, int(rate*2)+workers)
	return fmt.Sprintf(`workers: %d
seed: 1
targets:
  - name: sim
    url: http://%s/v1/chat/completions
    api: openai-chat
    model: sim-model
    rate: %g
    budget: {probes_per_hour: 0, output_tokens_per_hour: 0}
    max_in_flight: %d
    timeout: 30s
    request:
      prompt: "Say hello."
      max_tokens: %d
      ignore_eos: true
`, workers, simAddr, rate, inFlight, maxTokens)
}

func ms(d float64) string { return fmt.Sprintf("%.3f", d*1e3) }

func ctxSleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func hostname() string {
	h, _ := os.Hostname()
	return strings.ReplaceAll(h, "/", "_")
}
