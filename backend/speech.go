package backend

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// OpenAI speech (POST /v1/audio/speech): text in, audio out. Streamed, it
// asks for stream_format "sse" and raw PCM: "speech.audio.delta" events
// carry base64 audio (each one a chunk: TTFT is the time to the first
// audio byte), "speech.audio.done" ends the stream with the usage. Not
// streamed, the body is a WAV file read whole.
var protoSpeech = &protocol{
	name: "speech", path: "/v1/audio/speech",
	body:   speechBody,
	events: true,
	event:  speechEvent,
	whole:  speechWhole,
	output: func(p *parser, r *record.Record) {
		// The usage's output_tokens are audio tokens, which no text
		// count or server metric matches: the audio is the output.
		r.OutputLen = 0
		r.AudioBytes = p.audioBytes
		r.AudioSeconds = audioSeconds(p.audioHead, p.audioBytes)
	},
	end:   "speech.audio.done",
	audio: true,
}

// pcmRate is the sample rate of OpenAI's "pcm" format: 24 kHz, 16-bit
// little-endian, mono.
const pcmRate = 24000

// wavHeader is the length of a canonical WAV header (RIFF, fmt, data).
const wavHeader = 44

func speechBody(c *Client, in *Input) *pyjson.Object {
	o := &pyjson.Object{}
	o.Set("model", pyjson.String(in.Model))
	o.Set("input", pyjson.String(in.Text))
	o.Set("voice", pyjson.String("alloy"))
	if c.streams() {
		o.Set("response_format", pyjson.String("pcm"))
		o.Set("stream_format", pyjson.String("sse"))
	} else {
		o.Set("response_format", pyjson.String("wav"))
	}
	o.Update(in.Extra)
	return o
}

func speechEvent(p *parser, t []byte, v jsonscan.Value, at time.Time) error {
	switch string(t) {
	case "speech.audio.delta":
		a, _ := v.Get("audio")
		if a.Kind != jsonscan.String {
			return fmt.Errorf("speech.audio.delta without an audio string")
		}
		p.chunk = a.AppendString(p.chunk[:0])
		n, err := base64.StdEncoding.Decode(p.chunk, p.chunk)
		if err != nil {
			return fmt.Errorf("speech.audio.delta: audio is not base64: %w", err)
		}
		if n > 0 {
			p.audio(p.chunk[:n])
			p.token(at, n)
		}
	case "speech.audio.done":
		p.done, p.finished = true, true
	}
	return nil
}

// speechWhole reads a WAV body: its audio arrived whole at at.
func speechWhole(p *parser, doc []byte, at time.Time) error {
	if doc[0] == '{' {
		if err := embeddingsDoc(doc); err != nil {
			return err
		}
	}
	if len(doc) < wavHeader || string(doc[:4]) != "RIFF" || string(doc[8:12]) != "WAVE" {
		return fmt.Errorf("expected a WAV file (RIFF/WAVE header)")
	}
	p.audio(doc)
	p.token(at, len(doc))
	return nil
}

// audio takes a piece of the audio: its bytes counted, the first ones
// kept for a WAV header.
func (p *parser) audio(b []byte) {
	if k := wavHeader - len(p.audioHead); k > 0 {
		p.audioHead = append(p.audioHead, b[:min(k, len(b))]...)
	}
	p.audioBytes += len(b)
}

// audioSeconds is the duration of n bytes of audio beginning with head:
// by the WAV header's byte rate (its header not counted), else as
// OpenAI's pcm.
func audioSeconds(head []byte, n int) float64 {
	if len(head) >= wavHeader && string(head[:4]) == "RIFF" && string(head[8:12]) == "WAVE" {
		if rate := binary.LittleEndian.Uint32(head[28:32]); rate > 0 {
			return float64(max(n-wavHeader, 0)) / float64(rate)
		}
	}
	return float64(n) / (pcmRate * 2)
}
