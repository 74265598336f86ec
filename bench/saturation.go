// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"

	"github.com/llmslo/llm_slo_exporter/record"
)

// satSecond is one second of the saturation experiment.
type satSecond struct {
	T             int     `json:"t_seconds"`
	Hogs          int     `json:"hogs"`
	Policy        string  `json:"worker_policy"`
	Utilization   float64 `json:"utilization"`
	PredictedWait float64 `json:"predicted_wait_seconds"`
	LoopLagMean   float64 `json:"loop_lag_mean_seconds"`
	Probes        int     `json:"probes"`
	LagMean       float64 `json:"schedule_lag_mean_seconds"`
	LagP99        float64 `json:"schedule_lag_p99_seconds"`
	TTFTBiasMean  float64 `json:"ttft_bias_mean_seconds"`
	TTFTBiasP99   float64 `json:"ttft_bias_p99_seconds"`
	ClientTTFT    float64 `json:"client_ttft_mean_seconds"`
	ServerTTFT    float64 `json:"server_ttft_mean_seconds"`
}

// runSaturation starves one worker of its CPU with busy processes pinned
// to the same core, in steps, and records each second what the exporter
// says about itself (ρ, P-K prediction, loop lag) beside what it measured
// (schedule lag, TTFT) and the server's truth (TTFT bias).
func runSaturation(args []string) error {
	fs := flag.NewFlagSet("saturation", flag.ExitOnError)
	var o benchOpts
	fs.StringVar(&o.bin, "bin", ".bin", "directory with llm_slo_exporter and llmsim")
	rate := fs.Float64("rate", 100, "probes per second")
	fs.IntVar(&o.maxTokens, "tokens", 32, "output tokens per probe")
	fs.DurationVar(&o.ttft, "ttft", 100*time.Millisecond, "simulator TTFT")
	fs.DurationVar(&o.itl, "itl", 10*time.Millisecond, "simulator ITL")
	steps := fs.String("steps", "0:15s,1:15s,1/nice:15s,1/idle:15s,2/idle:15s,0:15s", "steps hogs[/policy]:duration; policy is the worker's scheduling against the hogs: normal, nice (nice 19) or idle (SCHED_IDLE)")
	out := fs.String("out", "", "JSON result file (default bench/results/<date>-<host>-saturation.json)")
	plot := fs.String("plot", "docs/saturation.png", "PNG plot file ('' for none)")
	hogNice := fs.Int("hog-nice", 0, "nice value of the busy processes: below the worker's 0 they win the core, as a higher-priority neighbour would (needs root or CAP_SYS_NICE; at equal priority Linux's scheduler favours the mostly sleeping worker and barely starves it)")
	_ = fs.Parse(args)
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("needs 2 CPUs: one for the starved worker, one for the rest")
	}
	type step struct {
		hogs   int
		policy string // normal, nice (19) or idle (SCHED_IDLE): the worker's standing against the hogs
		d      time.Duration
	}
	var plan []step
	for _, f := range strings.Split(*steps, ",") {
		st := step{policy: "normal"}
		hp, ds, ok := strings.Cut(f, ":")
		if !ok {
			return fmt.Errorf("bad step %q (want hogs[/policy]:duration)", f)
		}
		h, pol, hasPol := strings.Cut(hp, "/")
		if hasPol {
			st.policy = pol
		}
		if st.policy != "normal" && st.policy != "nice" && st.policy != "idle" {
			return fmt.Errorf("bad policy %q in step %q (normal, nice or idle)", st.policy, f)
		}
		if _, err := fmt.Sscan(h, &st.hogs); err != nil {
			return fmt.Errorf("bad step %q: %w", f, err)
		}
		d, err := time.ParseDuration(ds)
		if err != nil {
			return fmt.Errorf("bad step %q: %w", f, err)
		}
		st.d = d
		plan = append(plan, st)
	}
	dir, err := os.MkdirTemp("", "llmslo-sat-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.dir = dir

	simAddr, _ := freeAddr()
	sim, err := start(dir, "llmsim", filepath.Join(o.bin, "llmsim"), "--listen-address="+simAddr,
		"--ttft="+o.ttft.String(), "--itl="+o.itl.String(), "--truth.capacity=1000000", "--log.level=warn")
	if err != nil {
		return err
	}
	defer sim.stop()
	simURL := "http://" + simAddr
	if err := waitHTTP(simURL+"/health", 10*time.Second); err != nil {
		return err
	}
	expAddr, _ := freeAddr()
	cfg := filepath.Join(dir, "sat.yml")
	if err := os.WriteFile(cfg, []byte(exporterConfig(simAddr, 1, *rate, o.maxTokens)), 0o644); err != nil {
		return err
	}
	recPath := filepath.Join(dir, "records.bin")
	exp, err := start(dir, "exporter", filepath.Join(o.bin, "llm_slo_exporter"), "--config.file="+cfg,
		"--web.listen-address="+expAddr, "--debug.probe-record-file="+recPath, "--log.level=warn")
	if err != nil {
		return err
	}
	expURL := "http://" + expAddr
	if err := waitHTTP(expURL+"/-/ready", 20*time.Second); err != nil {
		exp.stop()
		return err
	}
	kids := children(exp.pid())
	if len(kids) != 1 {
		exp.stop()
		return fmt.Errorf("expected 1 worker, found %v", kids)
	}
	worker := kids[0]
	// The worker and the hogs share core 0; everything else runs on core 1.
	var core0, core1 unix.CPUSet
	core0.Set(0)
	core1.Set(1)
	// Affinity is per thread on Linux: pin every thread of the worker.
	wtids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", worker))
	for _, t := range wtids {
		var tid int
		if _, err := fmt.Sscan(filepath.Base(t), &tid); err == nil {
			if err := unix.SchedSetaffinity(tid, &core0); err != nil {
				return fmt.Errorf("pinning worker: %w", err)
			}
		}
	}
	// Scheduling policy is per thread on Linux: setPolicy sets it on
	// every thread of the worker.
	setPolicy := func(policy string) error {
		tids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", worker))
		for _, t := range tids {
			var tid int
			if _, err := fmt.Sscan(filepath.Base(t), &tid); err != nil {
				continue
			}
			attr := unix.SchedAttr{Size: unix.SizeofSchedAttr} // SCHED_OTHER, nice 0
			switch policy {
			case "nice":
				attr.Nice = 19
			case "idle":
				attr.Policy = 5 // SCHED_IDLE
			}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil {
				return fmt.Errorf("scheduling policy %s for the worker: %w", policy, err)
			}
		}
		return nil
	}
	self, _ := os.Executable()
	var hogs []*exec.Cmd
	setHogs := func(n int) {
		for len(hogs) > n {
			h := hogs[len(hogs)-1]
			_ = h.Process.Kill()
			_ = h.Wait()
			hogs = hogs[:len(hogs)-1]
		}
		for len(hogs) < n {
			h := exec.Command(self, "hog", fmt.Sprint(*hogNice), "0")
			h.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := h.Start(); err != nil {
				return
			}
			hogs = append(hogs, h)
		}
	}
	defer setHogs(0)

	ctx := context.Background()
	ctxSleep(ctx, 3*time.Second)
	start := time.Now()
	var secs []satSecond
	prev, _ := scrape(expURL + "/metrics")
	sec := 0
	for _, st := range plan {
		setHogs(st.hogs)
		if err := setPolicy(st.policy); err != nil {
			return err
		}
		stepEnd := time.Since(start) + st.d
		for time.Since(start) < stepEnd {
			ctxSleep(ctx, start.Add(time.Duration(sec+1)*time.Second).Sub(time.Now()))
			m, err := scrape(expURL + "/metrics")
			if err != nil {
				continue
			}
			s := satSecond{T: sec, Hogs: st.hogs, Policy: st.policy}
			if v := gaugeValues(m, "llm_prober_utilization"); len(v) > 0 {
				s.Utilization = v[0]
			}
			if v := gaugeValues(m, "llm_prober_predicted_queue_wait_seconds"); len(v) > 0 {
				s.PredictedWait = v[0]
			}
			ls0, lc0 := histSums(prev, "llm_prober_loop_lag_seconds")
			ls1, lc1 := histSums(m, "llm_prober_loop_lag_seconds")
			if lc1 > lc0 {
				s.LoopLagMean = (ls1 - ls0) / float64(lc1-lc0)
			}
			prev = m
			secs = append(secs, s)
			sec++
		}
	}
	setHogs(0)
	_ = setPolicy("normal")
	ctxSleep(ctx, o.ttft+time.Duration(o.maxTokens)*o.itl+2*time.Second)
	exp.stop()
	recs, err := readRecords(recPath)
	if err != nil {
		return err
	}
	truths, err := fetchTruth(simURL)
	if err != nil {
		return err
	}
	// Per second of dispatch: schedule lag and TTFT bias.
	type acc struct{ lag, bias, cl, sv []float64 }
	per := make([]acc, len(secs))
	for _, r := range recs {
		i := int((r.dispatch - start.UnixNano()) / int64(time.Second))
		if i < 0 || i >= len(per) {
			continue
		}
		per[i].lag = append(per[i].lag, r.lag.Seconds())
		if r.reason != record.OK {
			continue
		}
		if tr, ok := truths[r.id]; ok && tr.FirstByteWritten > 0 {
			srv := float64(tr.FirstByteWritten-tr.Received) / 1e9
			per[i].bias = append(per[i].bias, r.ttft.Seconds()-srv)
			per[i].cl = append(per[i].cl, r.ttft.Seconds())
			per[i].sv = append(per[i].sv, srv)
		}
	}
	for i := range secs {
		l, b := summarize(per[i].lag), summarize(per[i].bias)
		secs[i].Probes = l.N
		secs[i].LagMean, secs[i].LagP99 = l.Mean, l.P99
		secs[i].TTFTBiasMean, secs[i].TTFTBiasP99 = b.Mean, b.P99
		secs[i].ClientTTFT, secs[i].ServerTTFT = summarize(per[i].cl).Mean, summarize(per[i].sv).Mean
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "t s\thogs\tworker\tρ\tP-K wait ms\tloop lag ms\tprobes\tsched lag mean ms\tp99 ms\tTTFT bias mean ms\tp99 ms\tclient TTFT ms\tserver TTFT ms\t")
	for _, s := range secs {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.3f\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.T, s.Hogs, s.Policy, s.Utilization, msInf(s.PredictedWait), ms(s.LoopLagMean),
			s.Probes, ms(s.LagMean), ms(s.LagP99), ms(s.TTFTBiasMean), ms(s.TTFTBiasP99), ms(s.ClientTTFT), ms(s.ServerTTFT))
	}
	tw.Flush()
	path := *out
	if path == "" {
		path = filepath.Join("bench", "results", time.Now().UTC().Format("2006-01-02")+"-"+hostname()+"-saturation.json")
	}
	_ = os.MkdirAll(filepath.Dir(path), 0o755)
	b, _ := json.MarshalIndent(struct {
		Date    string      `json:"date"`
		Rate    float64     `json:"rate"`
		Steps   string      `json:"steps"`
		Seconds []satSecond `json:"seconds"`
	}{time.Now().UTC().Format(time.RFC3339), *rate, *steps, secs}, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Println("wrote", path)
	if *plot != "" {
		if err := plotSaturation(secs, *plot); err != nil {
			return err
		}
		fmt.Println("wrote", *plot)
	}
	return nil
}

func msInf(v float64) string {
	if v > 1e300 {
		return "inf"
	}
	return ms(v)
}

// runHog burns CPU until killed, at the nice value given as its first
// argument, on the CPU given as its second: it pins the thread that spins
// (affinity is per thread, and a Go process has several).
func runHog(args []string) {
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	if len(args) > 1 {
		var cpu int
		if _, err := fmt.Sscan(args[1], &cpu); err == nil {
			var set unix.CPUSet
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				fmt.Fprintln(os.Stderr, "hog: setaffinity:", err)
			}
		}
	}
	if len(args) > 0 {
		var nice int
		if _, err := fmt.Sscan(args[0], &nice); err == nil {
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice); err != nil {
				fmt.Fprintln(os.Stderr, "hog: setpriority:", err)
			}
		}
	}
	x := 0
	for {
		x++
	}
}
