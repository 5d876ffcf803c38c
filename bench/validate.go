package bench

import (
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/serverctl"
)

// validate checks what can be checked before the first network call, so
// that a bad value is a usage error at once rather than a failure after
// the readiness wait.
func validate(cfg *Config) error {
	if err := checkTarget(cfg); err != nil {
		return err
	}
	spec, _ := backend.Lookup(cfg.Backend)
	// The reference prints these (trt, truss) and exits 1, trt's before
	// the readiness wait and truss's after it.
	if cfg.Model == nil && spec.NeedsModel != "" {
		return usage("%s", spec.NeedsModel)
	}
	ds := datasetSpec(cfg.DatasetName)
	if spec.Embedding && ds.NoEmbeddings {
		return usage("%s dataset is unsupported for embeddings benchmark", cfg.DatasetName)
	}
	if cfg.ReplayPlan == nil { // a plan's bodies carry the documents and the audio
		if err := checkRerank(cfg, spec); err != nil {
			return err
		}
		if err := checkAudio(cfg, spec, ds); err != nil {
			return err
		}
	}
	if cfg.NumPrompts == 0 && !ds.ZeroPrompts {
		return usage("--num-prompts 0: --dataset-name %s would send no requests; give at least 1", cfg.DatasetName)
	}
	switch {
	case cfg.ConsistencyProbes < 0:
		return usage("--consistency-probes %d: give a number of probes >= 0", cfg.ConsistencyProbes)
	case cfg.ConsistencyProbes > 0 && spec.Embedding:
		return usage("--consistency-probes: %s generates no text to compare", cfg.Backend)
	case cfg.ConsistencyProbes > 0 && spec.AudioIn:
		return usage("--consistency-probes: the probes are text prompts, and %s takes audio", cfg.Backend)
	}
	if err := dataset.Preflight(datasetParams(cfg, "")); err != nil {
		return usage("%v", err)
	}
	return nil
}

// datasetBackend is what the datasets know of the backend name: its
// capabilities from the table, and names for the messages. An unknown
// name has none (backend.New refuses it later); "" is the zero Backend.
func datasetBackend(name string) dataset.Backend {
	if name == "" {
		return dataset.Backend{}
	}
	s, _ := backend.Lookup(name)
	return dataset.Backend{Name: name, Chat: s.Chat, Images: datasetImages(s.Images),
		ChatNames:  backend.NamesOf(func(s backend.Spec) bool { return s.Chat }),
		ImageNames: backend.NamesOf(func(s backend.Spec) bool { return s.Images != backend.ImagesNone })}
}

func datasetImages(im backend.Images) dataset.Images {
	switch im {
	case backend.ImagesNative:
		return dataset.ImagesNative
	case backend.ImagesChat:
		return dataset.ImagesChat
	}
	return dataset.ImagesNone
}

// datasetSpec is the table's row of the named dataset (the zero Spec for
// an unknown name, which dataset.Load refuses).
func datasetSpec(name string) dataset.Spec {
	s, _ := dataset.Lookup(name)
	return s
}

// checkTarget refuses a server address that no connection could reach:
// a port out of range, a host that is a URL or carries a port, or a
// --base-url that is not an http(s) URL.
func checkTarget(cfg *Config) error {
	if cfg.BaseURL == nil {
		if cfg.Port != nil && (*cfg.Port < 1 || *cfg.Port > 65535) {
			return usage("--port %d: must be between 1 and 65535", *cfg.Port)
		}
		return checkHost(cfg.Host)
	}
	if !strings.Contains(*cfg.BaseURL, ",") {
		return checkBaseURL(*cfg.BaseURL)
	}
	items, err := splitBaseURL(*cfg.BaseURL)
	if err != nil {
		return err
	}
	for _, it := range items {
		if err := checkBaseURL(it); err != nil {
			return err
		}
	}
	return nil
}

// checkBaseURL refuses one --base-url that is not an http(s) URL.
func checkBaseURL(raw string) error {
	shown := serverctl.Redact(raw)
	if !strings.Contains(raw, "://") {
		// url.Parse reads "localhost:3000" as scheme "localhost".
		return usage("--base-url %s: no scheme; did you mean --base-url http://%s?", shown, strings.TrimLeft(shown, "/"))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return usage("--base-url %s: not a URL (%v)", shown, unquoteURLErr(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return usage("--base-url %s: unsupported scheme %s:// (use http:// or https://)", shown, u.Scheme)
	}
	if u.Hostname() == "" {
		return usage("--base-url %s: no host", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return usage("--base-url %s: port %s is out of range (1-65535)", shown, p)
		}
	}
	return nil
}

// checkHost refuses a --host that is a URL or has a port: baseURL would
// read "localhost:3000" as an IPv6 address.
func checkHost(host string) error {
	if strings.Contains(host, "://") {
		return usage("--host %s: a host name, not a URL; use --base-url %s", host, host)
	}
	if !strings.Contains(host, ":") {
		return nil
	}
	ip := strings.Trim(host, "[]")
	if i := strings.IndexByte(ip, '%'); i >= 0 {
		ip = ip[:i] // an IPv6 zone: fe80::1%eth0
	}
	if net.ParseIP(ip) != nil {
		return nil
	}
	if h, p, err := net.SplitHostPort(host); err == nil {
		return usage("--host %s: give the port with --port (--host %s --port %s)", host, h, p)
	}
	return usage("--host %s: not a host name or IP address", host)
}

// unquoteURLErr drops the URL that url.Parse repeats in its errors: the
// message already shows it, with any password hidden.
func unquoteURLErr(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err.Error()
	}
	return strings.TrimSpace(err.Error())
}

// checkAudio: a transcription backend needs audio rows, and only it
// takes them.
func checkAudio(cfg *Config, spec backend.Spec, ds dataset.Spec) error {
	audio := strings.Join(dataset.NamesOf(func(s dataset.Spec) bool { return s.Audio }), " or ")
	switch {
	case spec.AudioIn && !ds.Audio:
		return usage("--backend %s: --dataset-name %s has no audio; use --dataset-name %s", cfg.Backend, cfg.DatasetName, audio)
	case !spec.AudioIn && ds.Audio:
		return usage("--dataset-name %s: --backend %s takes no audio; use %s", cfg.DatasetName, cfg.Backend, strings.Join(backend.NamesOf(func(s backend.Spec) bool { return s.AudioIn }), ", "))
	}
	return nil
}

// checkRerank: a rerank backend needs rows of a query and documents
// (--rerank-docs with random or random-ids), and only it takes them.
func checkRerank(cfg *Config, spec backend.Spec) error {
	readers := dataset.Readers("--rerank-docs")
	switch {
	case spec.Rerank && cfg.RerankDocs < 1:
		return usage("--backend %s: give --rerank-docs N (documents per query, with --dataset-name %s)", cfg.Backend, strings.Join(readers, " or "))
	case spec.Rerank && !slices.Contains(readers, cfg.DatasetName):
		return usage("--backend %s: --dataset-name %s has no documents; use %s with --rerank-docs", cfg.Backend, cfg.DatasetName, strings.Join(readers, " or "))
	case !spec.Rerank && cfg.RerankDocs != 0:
		return usage("--rerank-docs: --backend %s scores no documents; use %s", cfg.Backend, strings.Join(backend.NamesOf(func(s backend.Spec) bool { return s.Rerank }), ", "))
	}
	return nil
}
