package sim

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	"benchserve/internal/audiofile"
)

// /v1/audio/transcriptions outside the engine: a file of S seconds of
// audio is transcribed in S/cfg.TranscriptionRTF seconds, into
// transcriptWordsPerS words a second of audio, which leave evenly over
// that time (word k of n at k/n of it), so that the reply ends
// S/TranscriptionRTF after it arrived whatever the load.
const transcriptWordsPerS = 2.5

// transcriptWords are the words a transcript is made of.
var transcriptWords = []string{"the", "model", "serves", "tokens", "quickly", "under", "load",
	"and", "every", "request", "waits", "its", "turn", "while", "batches", "grow"}

// transcription is POST /v1/audio/transcriptions: a multipart form with
// file, model, stream and response_format (json or text). Streamed, the
// reply is OpenAI's events: transcript.text.delta with each word, then
// transcript.text.done with the text and the usage.
func (s *Server) transcription(w http.ResponseWriter, r *http.Request) {
	at := arrival(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeOAIError(w, http.StatusBadRequest, "BadRequestError", "reading the request body: "+err.Error(), "")
		return
	}
	q, e := readTranscriptionForm(r.Header.Get("Content-Type"), body)
	if e == nil {
		_, e = s.checkModel(q.model, nil)
	}
	if e != nil {
		writeOAIError(w, e.status, e.typ, e.message, e.param)
		return
	}
	n := s.seq.Add(1)
	id := "transcription-" + strconv.FormatUint(n, 10)
	if rid := r.Header.Get("X-Request-Id"); plainID(rid) {
		id = rid
	}
	w.Header().Set("X-Request-Id", id)
	sum := sha256.Sum256(q.file)
	words := max(1, int(math.Round(q.seconds*transcriptWordsPerS)))
	rec := newTruthRec(id, r.URL.Path, q.stream, s.since(at))
	rec.body, rec.promptTokens, rec.enqueued = sha256.Sum256(body), int(math.Round(q.seconds*50)), rec.arrival
	took := time.Duration(q.seconds / s.cfg.TranscriptionRTF * float64(time.Second))

	// Each delta is a word, after the first with its space before it.
	deltas := make([][]byte, words)
	var text []byte
	for k := range words {
		start := len(text)
		if k > 0 {
			text = append(text, ' ')
		}
		text = append(text, transcriptWords[(int(sum[k%len(sum)])+k)%len(transcriptWords)]...)
		deltas[k] = text[start:len(text):len(text)]
	}
	usage := func(b []byte) []byte {
		b = append(b, `"usage":{"type":"tokens","input_tokens":`...)
		b = strconv.AppendInt(b, int64(rec.promptTokens), 10)
		b = append(b, `,"output_tokens":`...)
		b = strconv.AppendInt(b, int64(words), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(rec.promptTokens+words), 10)
		return append(b, '}')
	}

	h := w.Header()
	switch {
	case q.stream:
		h.Set("Content-Type", "text/event-stream")
	case q.format == "text":
		h.Set("Content-Type", "text/plain; charset=utf-8")
	default:
		h.Set("Content-Type", "application/json")
	}
	pw := s.paced(w, r, rec)
	rec.finish = "stop"
	if !q.stream {
		if !pw.wait(at.Add(took)) {
			return
		}
		var b []byte
		if q.format == "text" {
			b = append(text, '\n')
		} else {
			b = append(b, `{"text":`...)
			b = appendJSONString(b, string(text))
			b = usage(append(b, ','))
			b = append(b, '}')
		}
		s.closing.Add(1)
		defer s.closing.Add(-1)
		w.WriteHeader(http.StatusOK)
		if pw.send(b, words) {
			s.eng.stats.genTokens.Add(uint64(words))
		}
		pw.end()
		return
	}
	w.WriteHeader(http.StatusOK)
	var b []byte
	for k := 1; k <= words; k++ {
		b = append(b, `data: {"type":"transcript.text.delta","delta":`...)
		b = appendJSONString(b, string(deltas[k-1]))
		b = append(b, "}\n\n"...)
		if k == words {
			b = append(b, `data: {"type":"transcript.text.done","text":`...)
			b = appendJSONString(b, string(text))
			b = usage(append(b, ','))
			b = append(b, "}\n\n"...)
			s.closing.Add(1)
			defer s.closing.Add(-1)
		}
		if !pw.wait(at.Add(took * time.Duration(k) / time.Duration(words))) {
			return
		}
		if !pw.send(b, 1) {
			break
		}
		s.eng.stats.genTokens.Add(1)
		b = b[:0]
	}
	pw.end()
}

// transcriptionForm is what the simulator reads of the form.
type transcriptionForm struct {
	model   *string
	stream  bool
	format  string
	seconds float64
	file    []byte
}

// readTranscriptionForm reads the multipart form: the file's header gives
// its duration (WAV or FLAC; others are refused, as a server that cannot
// decode them would).
func readTranscriptionForm(contentType string, body []byte) (transcriptionForm, *apiError) {
	var q transcriptionForm
	bad := func(param, msg string) (transcriptionForm, *apiError) {
		return q, &apiError{status: http.StatusBadRequest, typ: "BadRequestError", message: msg, param: param}
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return bad("", "expected a multipart/form-data body with a boundary, got Content-Type "+strconv.Quote(contentType))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var file []byte
	seen := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bad("", "reading the form: "+err.Error())
		}
		v, err := io.ReadAll(p)
		if err != nil {
			return bad("", "reading the form: "+err.Error())
		}
		switch p.FormName() {
		case "file":
			file, seen = v, true
		case "model":
			m := string(v)
			q.model = &m
		case "stream":
			q.stream = string(v) == "true"
		case "response_format":
			q.format = string(v)
		}
	}
	switch {
	case !seen:
		return bad("file", "file: the form has no file")
	case q.format != "" && q.format != "json" && q.format != "text":
		return bad("response_format", "response_format: the simulator serves json and text")
	case q.stream && q.format == "text":
		return bad("response_format", "response_format: a stream carries json events")
	}
	in, err := audiofile.Read(file)
	if err != nil {
		return bad("file", "file: "+err.Error())
	}
	if in.Seconds <= 0 {
		return bad("file", "file: the audio is empty")
	}
	q.seconds, q.file = in.Seconds, file
	return q, nil
}
