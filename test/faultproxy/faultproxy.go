// Package faultproxy is a reverse proxy for tests that sits between a
// Kubernetes client and an API server and injects the faults production
// clusters show: throttling, server errors, connection resets, latency
// spikes, cut watch streams, and writes the server applied whose answer
// never reaches the client.
//
// Every decision is drawn from a seed: the k-th request of a verb and
// resource (the k-th Job create, say) gets the same fault on every run with
// that seed, whatever other traffic goes through the proxy. Concurrent clients still decide which request is the
// k-th, so a replay gives the same fault pattern per request class, not the
// same request-by-request trace.
//
// The proxy serves TLS with a self-signed certificate of its own and only on
// loopback; clients point at URL with insecure-skip-tls-verify and keep their
// own credentials, which the proxy passes through.
package faultproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Kind is a kind of fault.
type Kind string

const (
	// None: the request went through untouched.
	None Kind = ""
	// Throttle answers 429 with a Retry-After of 1 to MaxRetryAfter
	// seconds, without forwarding.
	Throttle Kind = "429"
	// ServerError answers 500 without forwarding.
	ServerError Kind = "500"
	// Unavailable answers 503 (no Retry-After) without forwarding.
	Unavailable Kind = "503"
	// Reset resets the connection before forwarding: the client sees the
	// connection die with its request in flight.
	Reset Kind = "reset"
	// Latency holds the request MinLatency to MaxLatency, then forwards it.
	Latency Kind = "latency"
	// WatchCut forwards a watch and cuts its stream after a random time up
	// to MaxWatchAge. Only watches match it.
	WatchCut Kind = "watch-cut"
	// AppliedError forwards a write, lets the API server apply it, and
	// answers 500 instead of the server's answer. Only writes match it.
	AppliedError Kind = "applied-500"
	// AppliedReset forwards a write, lets the API server apply it, and
	// resets the connection instead of answering. Only writes match it.
	AppliedReset Kind = "applied-reset"
)

// Kinds lists every fault kind, in the order reports print them.
var Kinds = []Kind{Throttle, ServerError, Unavailable, Reset, Latency, WatchCut, AppliedError, AppliedReset}

// Rule injects one kind of fault into a share of the requests it matches.
type Rule struct {
	Kind Kind
	// Rate is the share of matching requests faulted, 0 to 1.
	Rate float64
	// Verbs restricts the rule to these Kubernetes verbs (get, list, watch,
	// create, update, patch, delete, deletecollection); empty: all.
	Verbs []string
	// Resources restricts the rule to these resources, with the subresource
	// after a slash ("jobs", "cronjobs/status"); empty: all, and requests
	// outside the resource API (discovery, /version) too.
	Resources []string
}

// matches reports whether the rule applies to a request.
func (r Rule) matches(info RequestInfo) bool {
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, info.Verb) {
		return false
	}
	if len(r.Resources) > 0 && !slices.Contains(r.Resources, info.FullResource()) {
		return false
	}
	switch r.Kind {
	case WatchCut:
		return info.Verb == "watch"
	case AppliedError, AppliedReset:
		return info.IsWrite()
	}
	return true
}

// Spread is the rule set of a proxy faulting a share rate of all requests,
// split evenly across every kind that fits each request: a watch can be
// throttled, failed, reset, delayed or cut, a write can also be applied
// and its answer lost.
func Spread(rate float64) []Rule {
	// Each request sees the rules in order and takes the first that fires;
	// scaling each rule's rate by the share still left keeps every kind
	// that fits a request equally likely, with the total at rate.
	var rules []Rule
	add := func(kinds []Kind, verbs []string) {
		share := rate / float64(len(kinds))
		for i, k := range kinds {
			left := 1 - share*float64(i)
			rules = append(rules, Rule{Kind: k, Rate: share / left, Verbs: verbs})
		}
	}
	add([]Kind{Throttle, ServerError, Unavailable, Reset, Latency, AppliedError, AppliedReset}, []string{"create", "update", "patch", "delete", "deletecollection"})
	add([]Kind{Throttle, ServerError, Unavailable, Reset, Latency, WatchCut}, []string{"watch"})
	add([]Kind{Throttle, ServerError, Unavailable, Reset, Latency}, []string{"get", "list"})
	return rules
}

// Config configures a Proxy.
type Config struct {
	// Target is the API server's URL, https://127.0.0.1:port. Its
	// certificate is not checked: loopback only.
	Target string
	// Seed drives every fault decision.
	Seed uint64
	// Rules are tried in order; the first that fires decides the fault.
	Rules []Rule
	// MinLatency and MaxLatency bound a Latency fault (default 1 s and 5 s).
	MinLatency, MaxLatency time.Duration
	// MaxRetryAfter bounds a Throttle's Retry-After (default 3 s).
	MaxRetryAfter time.Duration
	// MaxWatchAge bounds how long a WatchCut lets a watch run (default 30 s).
	MaxWatchAge time.Duration
	// Disarmed starts the proxy forwarding everything untouched until Arm.
	Disarmed bool
	// Logger receives a line per fault injected (default: none).
	Logger *slog.Logger
}

// Entry is one request through the proxy.
type Entry struct {
	Seq  uint64
	Time time.Time
	RequestInfo
	Fault Kind
	// Forwarded says the API server got the request.
	Forwarded bool
	// UpstreamCode is the API server's status code (0: not forwarded, or the
	// transport failed).
	UpstreamCode int
	// Code is the status code the client got (0: the connection was reset,
	// or a watch cut after its headers).
	Code int
}

// Applied reports whether the API server accepted the request, whatever
// the client was told.
func (e Entry) Applied() bool { return e.Forwarded && e.UpstreamCode >= 200 && e.UpstreamCode < 300 }

// Proxy is a running fault-injecting proxy.
type Proxy struct {
	// URL is where clients connect: https://127.0.0.1:port.
	URL string

	cfg     Config
	server  *httptest.Server
	reverse *httputil.ReverseProxy
	armed   atomic.Bool
	seq     atomic.Uint64
	// matched counts the requests each rule matched per verb and
	// resource, so the k-th Job create (say) draws the same numbers on every
	// run, however other requests interleave with it.
	matchedMu sync.Mutex
	matched   map[classKey]uint64

	mu      sync.Mutex
	entries []Entry

	// watches are the watches in flight, for CutWatches.
	watchesMu sync.Mutex
	watches   map[*watch]struct{}
}

// watch is a watch in flight through the proxy.
type watch struct {
	cancel context.CancelFunc
	wasCut atomic.Bool
}

// cut ends the watch's stream abruptly.
func (w *watch) cut() {
	w.wasCut.Store(true)
	w.cancel()
}

// decision travels with a forwarded request to the response hooks.
type decision struct {
	kind Kind
	// entry is filled in as the request goes.
	entry *Entry
}

type decisionKey struct{}

// classKey is a rule and a class of requests it matches.
type classKey struct {
	rule           int
	verb, resource string
}

// errAnswerLost makes the reverse proxy drop the API server's answer.
var errAnswerLost = errors.New("faultproxy: answer dropped")

// New starts a proxy in front of cfg.Target.
func New(cfg Config) (*Proxy, error) {
	target, err := url.Parse(cfg.Target)
	if err != nil {
		return nil, fmt.Errorf("faultproxy: target: %w", err)
	}
	if host := target.Hostname(); host != "127.0.0.1" && host != "::1" && host != "localhost" {
		return nil, fmt.Errorf("faultproxy: target %s is not loopback", cfg.Target)
	}
	if cfg.MinLatency == 0 {
		cfg.MinLatency = time.Second
	}
	if cfg.MaxLatency < cfg.MinLatency {
		cfg.MaxLatency = max(cfg.MinLatency, 5*time.Second)
	}
	if cfg.MaxRetryAfter < time.Second {
		cfg.MaxRetryAfter = 3 * time.Second
	}
	if cfg.MaxWatchAge == 0 {
		cfg.MaxWatchAge = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{cfg: cfg, matched: map[classKey]uint64{}, watches: map[*watch]struct{}{}}
	p.armed.Store(!cfg.Disarmed)

	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // loopback test server
	transport.MaxIdleConnsPerHost = 100
	p.reverse = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		Transport: transport,
		// Watches are streams: pass every event on at once.
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	// HTTP/1.1 only: a reset fault hijacks the connection, which HTTP/2
	// cannot do, and each request on its own connection keeps a reset from
	// taking unrelated requests with it.
	p.server = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.server.Config.ErrorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	p.server.StartTLS()
	p.URL = p.server.URL
	return p, nil
}

// Close stops the proxy and cuts every connection through it.
func (p *Proxy) Close() {
	p.server.CloseClientConnections()
	p.server.Close()
}

// Arm starts injecting faults; Disarm stops it.
func (p *Proxy) Arm()    { p.armed.Store(true) }
func (p *Proxy) Disarm() { p.armed.Store(false) }

// CutWatches cuts every watch in flight, as a restarting load balancer or
// API server would: the watches a client opened before Arm meet the
// faults too once they are opened again. It returns how many it cut.
func (p *Proxy) CutWatches() int {
	p.watchesMu.Lock()
	defer p.watchesMu.Unlock()
	for w := range p.watches {
		w.cut()
	}
	return len(p.watches)
}

// Entries returns a copy of every request recorded so far, in the order
// they finished.
func (p *Proxy) Entries() []Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.entries)
}

// Counts returns how many faults of each kind the proxy injected, and how
// many requests it saw in all.
func (p *Proxy) Counts() (requests int, faults map[Kind]int) {
	faults = map[Kind]int{}
	for _, e := range p.Entries() {
		requests++
		if e.Fault != None {
			faults[e.Fault]++
		}
	}
	return requests, faults
}

func (p *Proxy) record(e *Entry) {
	p.mu.Lock()
	p.entries = append(p.entries, *e)
	p.mu.Unlock()
}

// decide picks the fault for a request; rng is the request's own source of
// numbers for the fault's parameters.
func (p *Proxy) decide(info RequestInfo) (Kind, *rand.Rand) {
	if !p.armed.Load() {
		return None, nil
	}
	for i, rule := range p.cfg.Rules {
		if !rule.matches(info) {
			continue
		}
		class := classKey{rule: i, verb: info.Verb, resource: info.Group + "/" + info.FullResource()}
		p.matchedMu.Lock()
		k := p.matched[class]
		p.matched[class]++
		p.matchedMu.Unlock()
		h := fnv.New64a()
		_, _ = h.Write([]byte{byte(i), byte(i >> 8)})
		_, _ = io.WriteString(h, class.verb+" "+class.resource)
		rng := rand.New(rand.NewPCG(p.cfg.Seed^h.Sum64(), k))
		if rng.Float64() < rule.Rate {
			return rule.Kind, rng
		}
	}
	return None, nil
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	info := ParseRequest(r)
	if info.Verb == "create" {
		// The name of a created object is in the body; keep a copy to
		// forward.
		body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			http.Error(w, "faultproxy: reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		info.Name = objectName(body)
	}
	e := &Entry{Seq: p.seq.Add(1), Time: time.Now(), RequestInfo: info}
	kind, rng := p.decide(info)
	e.Fault = kind
	defer p.record(e)
	if kind != None {
		p.cfg.Logger.Debug("Injecting a fault", "fault", kind, "verb", info.Verb, "resource", info.FullResource(),
			"namespace", info.Namespace, "name", info.Name, "seq", e.Seq)
	}

	switch kind {
	case Throttle:
		secs := 1 + rng.IntN(int(p.cfg.MaxRetryAfter/time.Second))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		e.Code = writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, "faultproxy: throttled")
		return
	case ServerError:
		e.Code = writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "faultproxy: injected server error")
		return
	case Unavailable:
		e.Code = writeStatus(w, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "faultproxy: injected unavailability")
		return
	case Reset:
		reset(w)
		return
	case Latency:
		span := p.cfg.MaxLatency - p.cfg.MinLatency
		delay := p.cfg.MinLatency + time.Duration(rng.Int64N(int64(span)+1))
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if info.Verb == "watch" {
		// Every watch can be cut: by its own fault after a random time,
		// or by CutWatches.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		cw := &watch{cancel: cancel}
		if kind == WatchCut {
			age := time.Duration(rng.Int64N(int64(p.cfg.MaxWatchAge)) + 1)
			stop := time.AfterFunc(age, cw.cut)
			defer stop.Stop()
		}
		p.watchesMu.Lock()
		p.watches[cw] = struct{}{}
		p.watchesMu.Unlock()
		defer func() {
			p.watchesMu.Lock()
			delete(p.watches, cw)
			p.watchesMu.Unlock()
		}()
		// The stream ends without its terminating chunk, as when a load
		// balancer drops it: the client cannot take it for a watch the
		// server ended. (The reverse proxy mostly does this itself when
		// the upstream request is cancelled; this makes sure.)
		defer func() {
			if cw.wasCut.Load() {
				e.Fault = WatchCut
				panic(http.ErrAbortHandler)
			}
		}()
		r = r.WithContext(ctx)
	}
	e.Forwarded = true
	d := &decision{kind: kind, entry: e}
	rec := &codeRecorder{ResponseWriter: w}
	p.reverse.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), decisionKey{}, d)))
	if e.Code == 0 {
		e.Code = rec.code
	}
}

// modifyResponse sees the API server's answer before the client does; for
// the applied faults it throws the answer away.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	d, _ := resp.Request.Context().Value(decisionKey{}).(*decision)
	if d == nil {
		return nil
	}
	d.entry.UpstreamCode = resp.StatusCode
	if d.kind == AppliedError || d.kind == AppliedReset {
		// Read the answer to its end: the server has done its work.
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return errAnswerLost
	}
	return nil
}

func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	d, _ := r.Context().Value(decisionKey{}).(*decision)
	if errors.Is(err, errAnswerLost) && d != nil {
		if d.kind == AppliedReset {
			reset(w)
			return
		}
		d.entry.Code = writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "faultproxy: injected server error after the write was applied")
		return
	}
	if r.Context().Err() != nil {
		// The client left, or a watch was cut before its headers: no
		// answer, the connection just ends (an empty 200 would look like
		// a watch that ended cleanly).
		panic(http.ErrAbortHandler)
	}
	p.cfg.Logger.Info("Forwarding failed", "err", err, "method", r.Method, "path", r.URL.Path)
	code := writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable, "faultproxy: "+err.Error())
	if d != nil {
		d.entry.Code = code
	}
}

// writeStatus answers with a metav1.Status, as the API server does, so
// clients turn it into the usual typed errors.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) int {
	status := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Reason: reason, Message: message,
	}
	body, _ := json.Marshal(status)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
	return code
}

// reset drops the client's connection with a TCP reset and no answer.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	// Under the TLS layer, SO_LINGER 0 turns the close into a RST.
	if tc, ok := conn.(*tls.Conn); ok {
		if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
			_ = tcp.Close()
			return
		}
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// codeRecorder remembers the status code written through it.
type codeRecorder struct {
	http.ResponseWriter
	code int
}

func (c *codeRecorder) WriteHeader(code int) {
	if c.code == 0 {
		c.code = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *codeRecorder) Write(b []byte) (int, error) {
	if c.code == 0 {
		c.code = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack.
func (c *codeRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *codeRecorder) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *codeRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(c.ResponseWriter).Hijack()
}

// protobufMagic starts every Kubernetes protobuf body.
var protobufMagic = []byte("k8s\x00")

// objectName reads metadata.name from a request body in JSON or in
// Kubernetes protobuf; "" when it cannot.
func objectName(body []byte) string {
	if rest, ok := bytes.CutPrefix(body, protobufMagic); ok {
		var u runtime.Unknown
		if err := u.Unmarshal(rest); err != nil {
			return ""
		}
		// Every built-in object's first field is its ObjectMeta, as in
		// PartialObjectMetadata; the generated decoder skips the rest.
		var m metav1.PartialObjectMetadata
		if err := m.Unmarshal(u.Raw); err != nil {
			return ""
		}
		return nameOrGenerate(m.ObjectMeta)
	}
	var m metav1.PartialObjectMetadata
	if err := json.Unmarshal(body, &m); err != nil {
		return ""
	}
	return nameOrGenerate(m.ObjectMeta)
}

func nameOrGenerate(m metav1.ObjectMeta) string {
	if m.Name == "" && m.GenerateName != "" {
		return m.GenerateName + "*"
	}
	return m.Name
}

// RequestInfo is what a request does, in the API server's terms.
type RequestInfo struct {
	Method string
	// Verb is the Kubernetes verb, or the lower-case method outside the
	// resource API.
	Verb                                    string
	Group, Resource, Subresource, Namespace string
	// Name is the object's: from the path, or from the body of a create.
	Name string
}

// FullResource is the resource with its subresource, as rules name it.
func (i RequestInfo) FullResource() string {
	if i.Subresource != "" {
		return i.Resource + "/" + i.Subresource
	}
	return i.Resource
}

// IsWrite reports whether the request changes state on the server.
func (i RequestInfo) IsWrite() bool {
	switch i.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// ParseRequest reads the verb, resource, namespace and name off a request
// to the resource API (/api/v1/..., /apis/group/version/...).
func ParseRequest(r *http.Request) RequestInfo {
	info := RequestInfo{Method: r.Method, Verb: strings.ToLower(r.Method)}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		info.Group = parts[1]
		parts = parts[3:]
	default:
		return info
	}
	watchPath := false
	if parts[0] == "watch" {
		// The deprecated /watch/ prefix.
		watchPath, parts = true, parts[1:]
	}
	// namespaces/NS/resource... is namespaced; namespaces/NS alone (or with
	// a subresource such as finalize) is the namespace object itself.
	if len(parts) >= 3 && parts[0] == "namespaces" {
		info.Namespace, parts = parts[1], parts[2:]
	} else if len(parts) >= 2 && parts[0] == "namespaces" {
		info.Namespace = parts[1]
	}
	if len(parts) == 0 {
		return info
	}
	info.Resource = parts[0]
	if len(parts) > 1 {
		info.Name = parts[1]
	}
	if len(parts) > 2 {
		info.Subresource = parts[2]
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watchPath || isTrue(r.URL.Query().Get("watch")):
			info.Verb = "watch"
		case info.Name == "":
			info.Verb = "list"
		default:
			info.Verb = "get"
		}
	case http.MethodPost:
		info.Verb = "create"
	case http.MethodPut:
		info.Verb = "update"
	case http.MethodPatch:
		info.Verb = "patch"
	case http.MethodDelete:
		info.Verb = "delete"
		if info.Name == "" {
			info.Verb = "deletecollection"
		}
	}
	return info
}

func isTrue(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}
