// Package sim is a simulated inference server: it speaks the wire formats
// of SGLang, vLLM/OpenAI, TensorRT-LLM (Triton) and Truss, and times its
// replies with an engine model (continuous batching, a KV-cache budget, a
// prefix cache, optional speculative decoding) rather than fixed sleeps.
// It records what it actually did for every request and serves that at
// GET /sim/truth, so a client's measurements can be checked exactly.
// docs/sim.md describes the model, the presets and the truth schema.
package sim

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"benchserve/internal/clock"
	"benchserve/tokenizer"
	"benchserve/wire/netstamp"
)

// Version is reported by /server_info.
const Version = "benchserve-sim/1"

// Server is a simulated inference server. Its engine runs from New until
// Close; Handler serves HTTP with or without Start.
type Server struct {
	cfg    Config
	tok    tokenizer.Tokenizer
	vocab  *vocab
	eng    *engine
	truth  *truthLog
	met    *metrics
	start  time.Time // monotonic origin of all truth times, and its wall clock
	modelQ []byte    // the model name as a JSON string
	seq    atomic.Uint64
	// closing counts responses whose last write has begun but whose truth
	// record is not kept yet; /sim/truth waits for them.
	closing atomic.Int64
	handler http.Handler

	cancel    context.CancelFunc
	engDone   chan struct{}
	closeOnce sync.Once

	tls *tls.Config // nil: cleartext

	mu  sync.Mutex
	srv *http.Server
	ln  net.Listener
}

// New validates cfg, loads the tokenizer and starts the engine.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	tok, err := tokenizer.Resolve(context.Background(), cfg.Tokenizer, tokenizer.ResolveOptions{Getenv: cfg.Getenv})
	if err != nil {
		return nil, fmt.Errorf("--tokenizer: %w", err)
	}
	v, err := newVocab(tok)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:     cfg,
		tok:     tok,
		vocab:   v,
		truth:   &truthLog{cap: cfg.TruthCapacity},
		met:     newMetrics(),
		start:   time.Now(),
		modelQ:  quoted(cfg.Model),
		engDone: make(chan struct{}),
	}
	if s.tls, err = cfg.tlsConfig(); err != nil {
		return nil, err
	}
	s.eng = newEngine(cfg, v, clock.WaitUntil)
	var ctx context.Context
	ctx, s.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(s.engDone)
		s.eng.run(ctx)
	}()
	s.handler = s.routes()
	return s, nil
}

// Config returns the configuration the server runs with.
func (s *Server) Config() Config { return s.cfg }

// Handler returns the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

// Start serves on ln in the background.
func (s *Server) Start(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return errors.New("sim: server already started")
	}
	s.ln = ln
	// HTTP/1.1, and h2c with prior knowledge (benchserve --h2c) on the
	// same port: a connection that opens with h2's preface speaks h2.
	// Over TLS, HTTP/1.1 and h2 by ALPN (benchserve --http2).
	var protos http.Protocols
	protos.SetHTTP1(true)
	s.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: time.Minute, ConnContext: withConn, Protocols: &protos}
	if s.tls != nil {
		protos.SetHTTP2(true)
		s.srv.TLSConfig = s.tls
		go s.srv.ServeTLS(netstamp.Listen(ln), "", "") //nolint:errcheck // as Serve's
		return nil
	}
	protos.SetUnencryptedHTTP2(true)
	go s.srv.Serve(netstamp.Listen(ln)) //nolint:errcheck // Serve's error after Close is ErrServerClosed.
	return nil
}

// URL is the base URL of the listener given to Start ("" before Start).
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	if s.tls != nil {
		return "https://" + s.ln.Addr().String()
	}
	return "http://" + s.ln.Addr().String()
}

// Close stops serving, closes open connections and stops the engine.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.srv != nil {
			err = s.srv.Close()
		}
		s.mu.Unlock()
		s.cancel()
		<-s.engDone
	})
	return err
}

// since is t in nanoseconds since the server started.
func (s *Server) since(t time.Time) int64 { return int64(t.Sub(s.start)) }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	gen := func(f format) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { s.generate(w, r, f) }
	}
	mux.HandleFunc("POST /generate", gen(nativeFormat{}))
	mux.HandleFunc("PUT /generate", gen(nativeFormat{}))
	mux.HandleFunc("POST /v1/completions", gen(completionsFormat{}))
	mux.HandleFunc("POST /v1/chat/completions", gen(chatFormat{}))
	mux.HandleFunc("POST /v1/responses", gen(responsesFormat{}))
	mux.HandleFunc("POST /v1/messages", gen(messagesFormat{}))
	mux.HandleFunc("POST /v1/models/model:predict", gen(completionsFormat{truss: true}))
	mux.HandleFunc("POST /v2/models/{model}/generate_stream", gen(trtFormat{stream: true}))
	mux.HandleFunc("POST /v2/models/{model}/generate", gen(trtFormat{}))
	mux.HandleFunc("POST /v1/embeddings", gen(embedFormat{}))
	mux.HandleFunc("POST /v1/audio/speech", s.speech)
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcription)
	mux.HandleFunc("POST /v1/rerank", gen(rerankFormat{}))
	mux.HandleFunc("POST /v2/rerank", gen(rerankFormat{}))
	mux.HandleFunc("POST /classify", gen(classifyFormat{}))
	mux.HandleFunc("POST /rerank", gen(rerankFormat{}))
	mux.HandleFunc("POST /score", gen(rerankFormat{score: true}))

	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /model_info", s.modelInfo)
	mux.HandleFunc("GET /get_model_info", s.modelInfo)
	mux.HandleFunc("GET /server_info", s.serverInfo)
	mux.HandleFunc("GET /get_server_info", s.serverInfo)
	mux.HandleFunc("/flush_cache", s.flushCache)
	mux.HandleFunc("POST /reset_prefix_cache", s.resetPrefixCache)
	mux.HandleFunc("/start_profile", s.text("Start profiling.\n"))
	mux.HandleFunc("/stop_profile", s.text("Stop profiling. This will take some time.\n"))
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /health_generate", s.health)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /sim/truth", s.getTruth)
	mux.HandleFunc("POST /sim/truth/reset", s.resetTruth)
	// Triton answers on its base URL; benchserve polls it for trt readiness.
	mux.HandleFunc("GET /{$}", s.text("benchserve simulator\n"))
	if s.cfg.APIKey == "" {
		return mux
	}
	want, key := []byte("Bearer "+s.cfg.APIKey), []byte(s.cfg.APIKey)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if path == "/health" || path == "/health_generate" ||
			subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) == 1 ||
			path == "/v1/messages" && subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Api-Key")), key) == 1 {
			mux.ServeHTTP(w, r)
			return
		}
		switch path {
		case "/v1/messages":
			writeAnthropicError(w, http.StatusUnauthorized, "invalid x-api-key")
		case "/v1/responses":
			writeResponsesError(w, http.StatusUnauthorized,
				"Incorrect API key provided: send the header \"Authorization: Bearer <key>\" with the simulator's --api-key.", "")
		default:
			writeOAIError(w, http.StatusUnauthorized, "AuthenticationError",
				"Incorrect API key provided: send the header \"Authorization: Bearer <key>\" with the simulator's --api-key.", "")
		}
	})
}

// writeJSON sends a complete JSON body with its length.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do.
}

// writeOAIError sends the OpenAI error body vLLM sends:
// {"error":{"message","type","param","code"}}, code being the status.
func writeOAIError(w http.ResponseWriter, status int, typ, msg, param string) {
	b := append([]byte(`{"error":{"message":`), quoted(msg)...)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, typ)
	b = append(b, `,"param":`...)
	if param == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, param)
	}
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, "}}"...)
	writeJSON(w, status, b)
}
