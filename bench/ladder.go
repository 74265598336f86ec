// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmslo/llm_slo_exporter/record"
)

// rateResult is one row of the ladder.
type rateResult struct {
	Rate              float64 `json:"rate"`
	Achieved          float64 `json:"achieved_rate"`
	Probes            int     `json:"probes"`
	Failures          int     `json:"failures"`
	LagSeconds        summary `json:"schedule_lag_seconds"`
	LateOver1msShare  float64 `json:"late_over_1ms_share"`
	MaxUtilization    float64 `json:"max_utilization"`
	PredictedWait     float64 `json:"predicted_wait_seconds"`
	MeasuredLagMean   float64 `json:"measured_schedule_lag_mean_seconds"`
	MeasuredLoopLag   float64 `json:"measured_loop_lag_mean_seconds"`
	TTFTBias          summary `json:"ttft_bias_seconds"`
	E2EBias           summary `json:"e2e_bias_seconds"`
	TPOTBias          summary `json:"tpot_bias_seconds"`
	Joined            int     `json:"joined_with_truth"`
	ClientCPUPerProbe float64 `json:"client_cpu_seconds_per_probe"`
	FloorCPUPerProbe  float64 `json:"floor_cpu_seconds_per_probe"`
	CPURatio          float64 `json:"client_to_floor_cpu_ratio"`
	SimCPUPerProbe    float64 `json:"sim_cpu_seconds_per_probe"`
	PeakRSSBytes      uint64  `json:"peak_rss_bytes"`
	PeakPSSBytes      uint64  `json:"peak_pss_bytes"`
	KS                float64 `json:"ks_statistic"`
	KSCritical        float64 `json:"ks_critical_1pct"`
}

type ladderResult struct {
	Date      string       `json:"date"`
	Host      string       `json:"host"`
	CPUs      int          `json:"cpus"`
	GoVersion string       `json:"go_version"`
	Workers   int          `json:"workers"`
	Duration  string       `json:"duration"`
	Warmup    string       `json:"warmup"`
	Tokens    int          `json:"output_tokens"`
	TTFT      string       `json:"sim_ttft"`
	ITL       string       `json:"sim_itl"`
	Rows      []rateResult `json:"rows"`
}

type benchOpts struct {
	bin       string
	exporter  string
	noBudget  bool
	workers   int
	duration  time.Duration
	warmup    time.Duration
	maxTokens int
	ttft, itl time.Duration
	dir       string
}

func runLadder(args []string) error {
	fs := flag.NewFlagSet("ladder", flag.ExitOnError)
	rates := fs.String("rates", "50,200,500,1000", "comma-separated probe rates (probes/s)")
	var o benchOpts
	fs.StringVar(&o.bin, "bin", ".bin", "directory with llm_slo_exporter and llmsim")
	fs.StringVar(&o.exporter, "exporter", "", "exporter binary (default <bin>/llm_slo_exporter): another build to compare")
	fs.BoolVar(&o.noBudget, "no-budget-key", false, "leave budget: out of the exporter's configuration (builds older than the cost guard reject it)")
	fs.IntVar(&o.workers, "workers", 4, "exporter worker processes")
	fs.DurationVar(&o.duration, "duration", 20*time.Second, "measurement window per rate")
	fs.DurationVar(&o.warmup, "warmup", 3*time.Second, "warm-up before each window")
	fs.IntVar(&o.maxTokens, "tokens", 32, "output tokens per probe")
	fs.DurationVar(&o.ttft, "ttft", 100*time.Millisecond, "simulator TTFT")
	fs.DurationVar(&o.itl, "itl", 10*time.Millisecond, "simulator ITL")
	out := fs.String("out", "", "JSON result file (default bench/results/<date>-<host>.json)")
	_ = fs.Parse(args)

	var rs []float64
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return fmt.Errorf("bad rate %q", f)
		}
		rs = append(rs, r)
	}
	dir, err := os.MkdirTemp("", "llmslo-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.dir = dir
	res := ladderResult{
		Date: time.Now().UTC().Format(time.RFC3339), Host: hostname(), CPUs: runtime.NumCPU(), GoVersion: runtime.Version(),
		Workers: o.workers, Duration: o.duration.String(), Warmup: o.warmup.String(), Tokens: o.maxTokens, TTFT: o.ttft.String(), ITL: o.itl.String(),
	}
	fmt.Printf("llmslo-bench ladder: %d workers, %v window (+%v warm-up) per rate, %d tokens, sim TTFT %v ITL %v, %d CPUs\n",
		o.workers, o.duration, o.warmup, o.maxTokens, o.ttft, o.itl, runtime.NumCPU())
	for _, r := range rs {
		row, err := runRate(o, r)
		if err != nil {
			return fmt.Errorf("rate %g: %w", r, err)
		}
		res.Rows = append(res.Rows, row)
		fmt.Fprintf(os.Stderr, "rate %g done\n", r)
	}
	printTable(res.Rows)
	path := *out
	if path == "" {
		path = filepath.Join("bench", "results", time.Now().UTC().Format("2006-01-02")+"-"+hostname()+".json")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", path)
	return nil
}

func runRate(o benchOpts, rate float64) (rateResult, error) {
	row := rateResult{Rate: rate}
	simAddr, err := freeAddr()
	if err != nil {
		return row, err
	}
	sim, err := start(o.dir, "llmsim", filepath.Join(o.bin, "llmsim"),
		"--listen-address="+simAddr, "--ttft="+o.ttft.String(), "--itl="+o.itl.String(),
		"--truth.capacity=1000000", "--log.level=warn")
	if err != nil {
		return row, err
	}
	defer sim.stop()
	simURL := "http://" + simAddr
	if err := waitHTTP(simURL+"/health", 10*time.Second); err != nil {
		return row, err
	}

	// Phase 1: the exporter.
	expAddr, err := freeAddr()
	if err != nil {
		return row, err
	}
	cfgPath := filepath.Join(o.dir, "bench.yml")
	cfg := exporterConfig(simAddr, o.workers, rate, o.maxTokens)
	if o.noBudget {
		cfg = strings.Replace(cfg, "    budget: {probes_per_hour: 0, output_tokens_per_hour: 0}\n", "", 1)
	}
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return row, err
	}
	recPath := filepath.Join(o.dir, fmt.Sprintf("records-%g.bin", rate))
	expBin := o.exporter
	if expBin == "" {
		expBin = filepath.Join(o.bin, "llm_slo_exporter")
	}
	exp, err := start(o.dir, "exporter", expBin,
		"--config.file="+cfgPath, "--web.listen-address="+expAddr, "--debug.probe-record-file="+recPath, "--log.level=warn")
	if err != nil {
		return row, err
	}
	expURL := "http://" + expAddr
	if err := waitHTTP(expURL+"/-/ready", 20*time.Second); err != nil {
		exp.stop()
		return row, err
	}
	ctx := context.Background()
	ctxSleep(ctx, o.warmup)
	m0, err := scrape(expURL + "/metrics")
	if err != nil {
		exp.stop()
		return row, err
	}
	t0 := time.Now()
	c0 := sampleTree(exp.pid())
	s0, _ := procCPU(sim.pid())
	peak, peakPSS := c0.RSS, c0.PSS
	maxRho := 0.0
	var predicted []float64
	for time.Since(t0) < o.duration {
		ctxSleep(ctx, time.Second)
		s := sampleTree(exp.pid())
		peak, peakPSS = max(peak, s.RSS), max(peakPSS, s.PSS)
		if mfs, err := scrape(expURL + "/metrics"); err == nil {
			for _, v := range gaugeValues(mfs, "llm_prober_utilization") {
				maxRho = max(maxRho, v)
			}
			predicted = append(predicted, gaugeValues(mfs, "llm_prober_predicted_queue_wait_seconds")...)
		}
	}
	t1 := time.Now()
	c1 := sampleTree(exp.pid())
	s1, _ := procCPU(sim.pid())
	m1, err := scrape(expURL + "/metrics")
	if err != nil {
		exp.stop()
		return row, err
	}
	// Let the probes dispatched in the window finish before stopping, so
	// that none of them ends as canceled.
	ctxSleep(ctx, o.ttft+time.Duration(o.maxTokens)*o.itl+2*time.Second)
	exp.stop()
	recs, err := readRecords(recPath)
	if err != nil {
		return row, err
	}
	truths, err := fetchTruth(simURL)
	if err != nil {
		return row, err
	}

	// Probes dispatched in the window; CPU per probe counts the probes that
	// finished in it.
	var lags, ttftB, e2eB, tpotB, dispatch []float64
	finished := 0
	for _, r := range recs {
		end := r.dispatch + int64(max(r.e2e, 0))
		if end >= t0.UnixNano() && end < t1.UnixNano() {
			finished++
		}
		if r.dispatch < t0.UnixNano() || r.dispatch >= t1.UnixNano() {
			continue
		}
		row.Probes++
		dispatch = append(dispatch, float64(r.dispatch)/1e9)
		lags = append(lags, r.lag.Seconds())
		if r.reason != record.OK {
			if !r.reason.IsDrop() {
				row.Failures++
			}
			continue
		}
		tr, ok := truths[r.id]
		if !ok || tr.FirstByteWritten == 0 || tr.EndWritten == 0 {
			continue
		}
		row.Joined++
		ttftB = append(ttftB, r.ttft.Seconds()-float64(tr.FirstByteWritten-tr.Received)/1e9)
		e2eB = append(e2eB, r.e2e.Seconds()-float64(tr.EndWritten-tr.Received)/1e9)
		if n := len(tr.ChunksWritten); r.hasTPOT && n >= 2 && tr.OutputTokens >= 2 {
			srv := float64(tr.ChunksWritten[n-1]-tr.ChunksWritten[0]) / 1e9 / float64(tr.OutputTokens-1)
			tpotB = append(tpotB, r.tpot.Seconds()-srv)
		}
	}
	wall := t1.Sub(t0).Seconds()
	row.Achieved = float64(row.Probes) / wall
	row.LagSeconds = summarize(lags)
	late := 0
	for _, l := range lags {
		if l > 0.001 {
			late++
		}
	}
	if len(lags) > 0 {
		row.LateOver1msShare = float64(late) / float64(len(lags))
	}
	row.MeasuredLagMean = row.LagSeconds.Mean
	ls0, lc0 := histSums(m0, "llm_prober_loop_lag_seconds")
	ls1, lc1 := histSums(m1, "llm_prober_loop_lag_seconds")
	if lc1 > lc0 {
		row.MeasuredLoopLag = (ls1 - ls0) / float64(lc1-lc0)
	}
	row.PredictedWait = summarize(predicted).Mean
	row.MaxUtilization = maxRho
	row.TTFTBias, row.E2EBias, row.TPOTBias = summarize(ttftB), summarize(e2eB), summarize(tpotB)
	if finished > 0 {
		row.ClientCPUPerProbe = (c1.CPU - c0.CPU).Seconds() / float64(finished)
		row.SimCPUPerProbe = (s1 - s0).Seconds() / float64(finished)
	}
	row.PeakRSSBytes, row.PeakPSSBytes = peak, peakPSS
	slices.Sort(dispatch)
	if len(dispatch) > 1 {
		gaps := make([]float64, len(dispatch)-1)
		for i := 1; i < len(dispatch); i++ {
			gaps[i-1] = dispatch[i] - dispatch[i-1]
		}
		row.KS, row.KSCritical = ksExp(gaps, rate), ksCritical(len(gaps))
	}

	// Phase 2: the floor client, same simulator, same load.
	fcpu, fprobes, err := runFloorPhase(o, simURL, rate)
	if err != nil {
		return row, err
	}
	if fprobes > 0 {
		row.FloorCPUPerProbe = fcpu / float64(fprobes)
	}
	if row.FloorCPUPerProbe > 0 {
		row.CPURatio = row.ClientCPUPerProbe / row.FloorCPUPerProbe
	}
	return row, nil
}

// runFloorPhase runs the floor client for warm-up + duration and returns
// its CPU seconds and completed probes over the whole run (process start
// costs are a few milliseconds against seconds of work).
func runFloorPhase(o benchOpts, simURL string, rate float64) (float64, int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	f, err := start(o.dir, "floor", self, "floor", "--url="+simURL+"/v1/chat/completions",
		fmt.Sprintf("--rate=%g", rate), "--duration="+(o.warmup+o.duration).String(), fmt.Sprintf("--max-tokens=%d", o.maxTokens))
	if err != nil {
		return 0, 0, err
	}
	if err := f.cmd.Wait(); err != nil {
		f.log.Close()
		return 0, 0, fmt.Errorf("floor client: %w", err)
	}
	f.log.Close()
	st := f.cmd.ProcessState
	cpu := (st.UserTime() + st.SystemTime()).Seconds()
	b, err := os.ReadFile(filepath.Join(o.dir, "floor.log"))
	if err != nil {
		return 0, 0, err
	}
	var fr floorResult
	if err := json.Unmarshal(b, &fr); err != nil {
		return 0, 0, fmt.Errorf("floor output %q: %w", b, err)
	}
	return cpu, fr.OK, nil
}

func printTable(rows []rateResult) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rate\tachieved\tprobes\tfail\tlag p50 ms\tlag p99 ms\tlag max ms\t>1ms late\tmax ρ\tP-K wait µs\tmean lag µs\tTTFT bias mean ms\tp50\tp99\tmax\tE2E bias mean ms\tp99\tTPOT bias mean µs\tp99\tCPU µs/probe\tfloor µs/probe\tratio\tsim µs/probe\tpeak RSS MB\tpeak PSS MB\tKS D (crit)\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%g\t%.1f\t%d\t%d\t%s\t%s\t%s\t%.2f%%\t%.3f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.0f\t%.0f\t%.2f\t%.0f\t%.1f\t%.1f\t%.4f (%.4f)\t\n",
			r.Rate, r.Achieved, r.Probes, r.Failures,
			ms(r.LagSeconds.P50), ms(r.LagSeconds.P99), ms(r.LagSeconds.Max), r.LateOver1msShare*100,
			r.MaxUtilization, r.PredictedWait*1e6, r.MeasuredLagMean*1e6,
			ms(r.TTFTBias.Mean), ms(r.TTFTBias.P50), ms(r.TTFTBias.P99), ms(r.TTFTBias.Max),
			ms(r.E2EBias.Mean), ms(r.E2EBias.P99), r.TPOTBias.Mean*1e6, r.TPOTBias.P99*1e6,
			r.ClientCPUPerProbe*1e6, r.FloorCPUPerProbe*1e6, r.CPURatio, r.SimCPUPerProbe*1e6,
			float64(r.PeakRSSBytes)/(1<<20), float64(r.PeakPSSBytes)/(1<<20), r.KS, r.KSCritical)
	}
	tw.Flush()
}
