package backend

import (
	"errors"
	"time"

	"benchserve/internal/jsonscan"
	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// OpenAI transcription (POST /v1/audio/transcriptions): an audio file in,
// as a multipart form (file, model, stream, and the extra body's keys as
// fields), its transcript out. Streamed, the reply is SSE of OpenAI's
// events ("transcript.text.delta", ended by "transcript.text.done" with
// the usage) or of vLLM's chunks (object "transcription.chunk", the text
// in choices[0].delta.content, ended by data: [DONE]); each piece of text
// is a chunk, so TTFT is the time to the first words. Not streamed, the
// reply is {"text": ...} (or the bare text, response_format "text").
var protoTranscription = &protocol{
	name: "transcription", path: "/v1/audio/transcriptions",
	raw:         transcriptionBody,
	contentType: "multipart/form-data; boundary=" + formBoundary,
	events:      true,
	event:       transcriptEvent,
	whole:       transcriptWhole,
	output:      outputCount,
	end:         "transcript.text.done or data: [DONE]",
	finishes:    true,
	audioIn:     true,
}

// formBoundary separates the form's parts. It is fixed, so that a body is
// the same from run to run (--save-plan); 40 random-looking characters
// are as unlikely in audio bytes as a fresh random boundary would be.
const formBoundary = "benchserve-7f3c1a9e5d2b8046-audio-form-b1"

// transcriptionBody is the multipart form of in.Audio.
func transcriptionBody(c *Client, in *Input) []byte {
	a := in.Audio
	if a == nil {
		a = &Audio{Name: "empty.wav"}
	}
	b := make([]byte, 0, len(a.Head)+len(a.Data)+512)
	b = formField(b, "model", []byte(in.Model))
	if c.streams() {
		b = formField(b, "stream", []byte("true"))
	}
	if in.Extra != nil {
		for _, k := range in.Extra.Keys() {
			if in.Probe && k == "temperature" {
				continue
			}
			v, _ := in.Extra.Get(k)
			if s, err := jsonscan.Parse(v); err == nil && s.Kind == jsonscan.String {
				v = s.AppendString(nil)
			}
			b = formField(b, k, v)
		}
	}
	if in.Probe {
		b = formField(b, "temperature", []byte("0"))
	}
	b = append(b, "--"+formBoundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\""...)
	b = append(b, a.Name...)
	b = append(b, "\"\r\nContent-Type: "...)
	b = append(b, audioType(a.Name)...)
	b = append(b, "\r\n\r\n"...)
	b = append(b, a.Head...)
	b = append(b, a.Data...)
	return append(b, "\r\n--"+formBoundary+"--\r\n"...)
}

func formField(b []byte, name string, v []byte) []byte {
	b = append(b, "--"+formBoundary+"\r\nContent-Disposition: form-data; name=\""...)
	b = append(b, name...)
	b = append(b, "\"\r\n\r\n"...)
	b = append(b, v...)
	return append(b, "\r\n"...)
}

// audioType is the part's media type by the file's extension.
func audioType(name string) string {
	if n := len(name); n > 5 && name[n-5:] == ".flac" {
		return "audio/flac"
	}
	return "audio/wav"
}

// transcriptEvent reads one document of a streamed transcript: an OpenAI
// event by its type, or a vLLM chunk (no type).
func transcriptEvent(p *parser, t []byte, v jsonscan.Value, at time.Time) error {
	switch string(t) {
	case "transcript.text.delta":
		return p.delta(p.ev.delta, false, at)
	case "transcript.text.done":
		transcriptUsage(p, p.ev.usage)
		p.done, p.finished, p.stop = true, true, stopOther
		return nil
	case "":
		transcriptUsage(p, p.ev.usage)
		ch, _ := v.Get("choices")
		first, ok := ch.First()
		if !ok {
			return nil // the usage chunk
		}
		if fr, _ := first.Get("finish_reason"); fr.Truthy() {
			p.finished, p.stop = true, stopOther
		}
		d, _ := first.Get("delta")
		c, _ := d.Get("content")
		return p.delta(c, false, at)
	}
	return nil // transcript.text.segment and the like carry nothing new
}

// transcriptUsage reads a usage object: OpenAI's output_tokens or the
// chat-like completion_tokens (vLLM). Whisper-1's usage is in seconds of
// audio, no tokens.
func transcriptUsage(p *parser, u jsonscan.Value) {
	for _, k := range []string{"output_tokens", "completion_tokens"} {
		if n, ok := intMember(u, k); ok {
			p.outputLen, p.reported, p.served = n, n, true
			return
		}
	}
}

// transcriptWhole reads a whole reply: {"text": ...}, or the text itself.
func transcriptWhole(p *parser, doc []byte, at time.Time) error {
	p.stop = stopOther
	if doc[0] != '{' {
		return p.delta(jsonscan.Value{Kind: jsonscan.String, Raw: pyjson.String(string(doc))}, false, at)
	}
	v, err := jsonscan.Parse(doc)
	if err != nil {
		return err
	}
	if e, ok := v.Get("error"); ok && e.Truthy() {
		return serverError(errorMessage(e))
	}
	text, ok := v.Get("text")
	if !ok || text.Kind != jsonscan.String {
		return errors.New(`a transcription has no "text" string`)
	}
	u, _ := v.Get("usage")
	transcriptUsage(p, u)
	return p.delta(text, false, at)
}

// Audio is the audio file a transcription request uploads: Head then
// Data are its bytes; Seconds is its duration (for the real-time factor).
// Size stands for their length when they are not held (a replayed plan's
// body carries the file).
type Audio struct {
	Name       string
	Head, Data []byte
	Seconds    float64
	Size       int
}

// countAudioIn notes the uploaded audio in the record: the audio figures
// of a transcription run are of what was sent.
func countAudioIn(in *Input, rec *record.Record) {
	if a := in.Audio; a != nil {
		rec.AudioBytes = len(a.Head) + len(a.Data)
		if rec.AudioBytes == 0 {
			rec.AudioBytes = a.Size
		}
		rec.AudioSeconds = a.Seconds
	}
}
