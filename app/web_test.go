// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package app

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// writeCert writes a self-signed certificate for 127.0.0.1 and its key,
// and returns a pool that trusts it.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "llm_slo_exporter test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// startProcess runs the exporter as a real process (this test binary in
// exporter mode, see TestMain) and returns its stderr buffer.
func startProcess(t *testing.T, args ...string) (*syncBuffer, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), workerEnv+"=1")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("exporter output:\n%s", logs.String())
		}
	})
	return logs, cmd.Process.Pid
}

func TestTLSAndBasicAuth(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := writeCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret-pass"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yml")
	_ = os.WriteFile(web, []byte(fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n", certFile, keyFile, hash)), 0o600)
	_, simURL := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	cfg := filepath.Join(dir, "config.yml")
	_ = os.WriteFile(cfg, []byte(demoConfig(simURL, 1, 2, "")), 0o600)
	addr := freePort(t)
	_, _ = startProcess(t, "--config.file="+cfg, "--web.listen-address="+addr, "--web.config.file="+web)

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	url := "https://" + addr
	do := func(method, path, user, pass string) int {
		t.Helper()
		req, _ := http.NewRequest(method, url+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor(t, 30*time.Second, "the TLS endpoint", func() bool { return do("GET", "/-/healthy", "prom", "s3cret-pass") == 200 })
	tests := []struct {
		method, path, user, pass string
		want                     int
	}{
		{"GET", "/metrics", "prom", "s3cret-pass", 200},
		{"GET", "/metrics", "", "", 401},
		{"GET", "/metrics", "prom", "wrong", 401},
		{"GET", "/config", "", "", 401},
		{"GET", "/probes", "", "", 401},
		{"POST", "/-/reload", "", "", 401},
		{"GET", "/-/reload", "prom", "s3cret-pass", 405},
		{"POST", "/-/reload", "prom", "s3cret-pass", 200},
	}
	for _, tc := range tests {
		t.Run(tc.method+tc.path+"/"+tc.user+tc.pass, func(t *testing.T) {
			if got := do(tc.method, tc.path, tc.user, tc.pass); got != tc.want {
				t.Errorf("%s %s as %q = %d, want %d", tc.method, tc.path, tc.user, got, tc.want)
			}
		})
	}
	// Plain HTTP gets no metrics.
	resp, err := http.Get("http://" + addr + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served /metrics")
		}
	}
}

// TestNoSecretAnywhere runs the exporter process at debug level with
// credentials in every place the configuration allows, against a target
// that fails (and echoes them back) and one that works, and looks for the
// secrets in its logs (the workers' included), /config, /probes and
// /metrics.
func TestNoSecretAnywhere(t *testing.T) {
	dir := t.TempDir()
	credFile := filepath.Join(dir, "token")
	_ = os.WriteFile(credFile, []byte("file-secret-token\n"), 0o600)
	echo := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"error":{"message":"denied %s %s"}}`, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
	}
	srv := &http.Server{Handler: http.HandlerFunc(echo)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	_, simURL := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	cfg := filepath.Join(dir, "config.yml")
	_ = os.WriteFile(cfg, []byte(fmt.Sprintf(`workers: 1
targets:
  - name: echo
    url: http://%s/v1/chat/completions?api_key=query-secret-key
    model: m
    rate: 5
    request:
      headers:
        X-Api-Key: header-secret-key
    http_client_config:
      authorization:
        credentials_file: %s
  - name: sim
    url: %s/v1/chat/completions
    model: m
    rate: 5
    http_client_config:
      basic_auth:
        username: u
        password: basic-secret-pass
`, l.Addr(), credFile, simURL)), 0o600)
	addr := freePort(t)
	logs, _ := startProcess(t, "--config.file="+cfg, "--web.listen-address="+addr, "--log.level=debug")
	base := "http://" + addr
	waitFor(t, 30*time.Second, "failures and successes", func() bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		s := b.String()
		return strings.Contains(s, `llm_probe_failures_total{api="openai-chat",model="m",reason="http_4xx",target="echo"} `) &&
			!strings.Contains(s, `reason="http_4xx",target="echo"} 0`) &&
			strings.Contains(s, `llm_probe_request_duration_seconds_count{api="openai-chat",model="m",target="sim"}`)
	})
	pages := map[string]string{"logs": logs.String()}
	for _, p := range []string{"/config", "/probes", "/probes?format=json", "/metrics"} {
		pages[p] = get(t, base+p)
	}
	if !strings.Contains(pages["/probes?format=json"], `denied \u003csecret\u003e Bearer \u003csecret\u003e`) {
		t.Errorf("/probes lacks the scrubbed failure detail:\n%s", pages["/probes?format=json"])
	}
	for _, secret := range []string{"header-secret-key", "file-secret-token", "basic-secret-pass", "query-secret-key"} {
		for where, text := range pages {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows %q", where, secret)
			}
		}
	}
}

// TestAutoReload changes the configuration file under a running exporter
// started with --config.auto-reload-interval and waits for the new target.
func TestAutoReload(t *testing.T) {
	dir := t.TempDir()
	_, simURL := startSim(t, simConfig(time.Millisecond, time.Millisecond))
	cfg := filepath.Join(dir, "config.yml")
	_ = os.WriteFile(cfg, []byte(demoConfig(simURL, 1, 2, "")), 0o600)
	addr := freePort(t)
	_, _ = startProcess(t, "--config.file="+cfg, "--web.listen-address="+addr, "--config.auto-reload-interval=100ms")
	base := "http://" + addr
	waitFor(t, 30*time.Second, "the exporter", func() bool { return strings.Contains(tryGet(base+"/metrics"), `target="sim"`) })
	_ = os.WriteFile(cfg, []byte(strings.Replace(demoConfig(simURL, 1, 2, ""), "name: sim", "name: renamed", 1)), 0o600)
	waitFor(t, 30*time.Second, "the reloaded target", func() bool {
		m := tryGet(base + "/metrics")
		return strings.Contains(m, `target="renamed"`) && !strings.Contains(m, `target="sim"`)
	})
	if m := tryGet(base + "/metrics"); !strings.Contains(m, `llm_slo_exporter_config_reloads_total{result="success"} 2`) {
		t.Errorf("want 2 successful loads (start and the change); /metrics has:\n%s", grepLines(m, "config_reloads_total"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
