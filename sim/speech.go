package sim

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"benchserve/internal/audiofile"
)

// /v1/audio/speech outside the engine: a reply's audio lasts
// speechSamplesPerWord (0.4 s) per word of the input, and its chunks of
// speechChunk of audio leave paced at cfg.SpeechRTF, so that the reply
// ends (audio seconds)/SpeechRTF after it arrived whatever the load.
const (
	speechSamplesPerWord = speechRate * 4 / 10
	speechChunk          = 100 * time.Millisecond
	speechRate           = 24000 // OpenAI's pcm: 24 kHz, 16-bit, mono
	speechChunkBytes     = speechRate * 2 * int(speechChunk/time.Millisecond) / 1000
)

// speechTone is one chunk of a 440 Hz tone, the audio of every chunk.
var speechTone = func() []byte {
	b := make([]byte, speechChunkBytes)
	for i := range speechChunkBytes / 2 {
		v := int16(8000 * math.Sin(2*math.Pi*440*float64(i)/speechRate))
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b
}()

// speech is POST /v1/audio/speech: stream_format "sse" streams
// speech.audio.delta events of base64 audio, then speech.audio.done;
// otherwise the body is the audio itself (WAV, or raw pcm), written as it
// is made.
func (s *Server) speech(w http.ResponseWriter, r *http.Request) {
	at := arrival(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeOAIError(w, http.StatusBadRequest, "BadRequestError", "reading the request body: "+err.Error(), "")
		return
	}
	var q struct {
		Model          *string `json:"model"`
		Input          string  `json:"input"`
		ResponseFormat string  `json:"response_format"`
		StreamFormat   string  `json:"stream_format"`
	}
	if e := decodeBody(body, &q); e != nil {
		writeOAIError(w, e.status, e.typ, e.message, e.param)
		return
	}
	if _, e := s.checkModel(q.Model, nil); e != nil {
		writeOAIError(w, e.status, e.typ, e.message, e.param)
		return
	}
	words := len(strings.Fields(q.Input))
	sse := q.StreamFormat == "sse"
	switch {
	case words == 0:
		writeOAIError(w, http.StatusBadRequest, "BadRequestError", "input: the text is empty", "input")
		return
	case q.StreamFormat != "" && q.StreamFormat != "audio" && !sse:
		writeOAIError(w, http.StatusBadRequest, "BadRequestError", "stream_format: must be audio or sse", "stream_format")
		return
	case q.ResponseFormat != "" && q.ResponseFormat != "wav" && q.ResponseFormat != "pcm":
		writeOAIError(w, http.StatusBadRequest, "BadRequestError", "response_format: the simulator serves wav and pcm", "response_format")
		return
	case sse && q.ResponseFormat == "wav":
		writeOAIError(w, http.StatusBadRequest, "BadRequestError", "response_format: sse streams pcm", "response_format")
		return
	}
	n := s.seq.Add(1)
	id := "speech-" + strconv.FormatUint(n, 10)
	if rid := r.Header.Get("X-Request-Id"); plainID(rid) {
		id = rid
	}
	w.Header().Set("X-Request-Id", id)
	rec := newTruthRec(id, r.URL.Path, sse, s.since(at))
	rec.body, rec.promptTokens, rec.enqueued = sha256.Sum256(body), words, rec.arrival
	samples := words * speechSamplesPerWord
	audio := time.Duration(float64(samples) / speechRate * float64(time.Second))
	bytes := samples * 2
	chunks := (bytes + speechChunkBytes - 1) / speechChunkBytes

	h := w.Header()
	switch {
	case sse:
		h.Set("Content-Type", "text/event-stream")
	case q.ResponseFormat == "pcm":
		h.Set("Content-Type", "audio/pcm")
	default:
		h.Set("Content-Type", "audio/wav")
	}
	w.WriteHeader(http.StatusOK)
	pw := s.paced(w, r, rec)
	var b []byte
	if !sse && q.ResponseFormat != "pcm" {
		b = audiofile.AppendWAVHeader(b, speechRate, 1, bytes)
	}
	rec.finish = "stop"
	for k := 1; k <= chunks; k++ {
		size := min(speechChunkBytes, bytes-(k-1)*speechChunkBytes)
		if sse {
			b = append(b, `data: {"type":"speech.audio.delta","audio":"`...)
			b = base64.StdEncoding.AppendEncode(b, speechTone[:size])
			b = append(b, "\"}\n\n"...)
		} else {
			b = append(b, speechTone[:size]...)
		}
		if k == chunks {
			if sse {
				b = append(b, `data: {"type":"speech.audio.done","usage":{"input_tokens":`...)
				b = strconv.AppendInt(b, int64(words), 10)
				b = append(b, `,"output_tokens":`...)
				b = strconv.AppendInt(b, int64(chunks), 10)
				b = append(b, `,"total_tokens":`...)
				b = strconv.AppendInt(b, int64(words+chunks), 10)
				b = append(b, "}}\n\n"...)
			}
			s.closing.Add(1)
			defer s.closing.Add(-1)
		}
		// The chunk leaves when its audio's end is due at the factor.
		due := at.Add(time.Duration(float64(min(time.Duration(k)*speechChunk, audio)) / s.cfg.SpeechRTF))
		if !pw.wait(due) {
			return
		}
		if !pw.send(b, 1) {
			break
		}
		b = b[:0]
	}
	pw.end()
}
