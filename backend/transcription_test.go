package backend

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
	"benchserve/record"
)

// The body is a multipart form a form parser reads back: model, stream
// when streaming, the extra body's keys as fields (strings unquoted), and
// the file, byte for byte, under its name; the client's Content-Type
// names the boundary.
func TestTranscriptionBody(t *testing.T) {
	head, data := []byte("RIFF----WAVEfmt "), bytes.Repeat([]byte{0, 1, '-', '\r', '\n'}, 300)
	extra := &pyjson.Object{}
	extra.Set("language", pyjson.String("en"))
	extra.Set("temperature", pyjson.Float(0.2))
	for _, stream := range []bool{true, false} {
		c := client(t, "openai-transcription", Options{Stream: stream})
		body := c.Body(&Input{Model: "whisper-1", Extra: extra, Audio: &Audio{Name: "a.wav", Head: head, Data: data, Seconds: 1}})
		req, _ := http.NewRequest(http.MethodPost, c.URL(), bytes.NewReader(body))
		req.Header = c.headerFor(&Input{})
		mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/form-data" {
			t.Fatalf("Content-Type %q: %v", req.Header.Get("Content-Type"), err)
		}
		mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		got := map[string]string{}
		var file []byte
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			v, _ := io.ReadAll(p)
			if p.FormName() == "file" {
				file = v
				if p.FileName() != "a.wav" || p.Header.Get("Content-Type") != "audio/wav" {
					t.Errorf("file part: name %q, type %q", p.FileName(), p.Header.Get("Content-Type"))
				}
				continue
			}
			got[p.FormName()] = string(v)
		}
		want := map[string]string{"model": "whisper-1", "language": "en", "temperature": "0.2"}
		if stream {
			want["stream"] = "true"
		}
		if len(got) != len(want) {
			t.Errorf("stream %v: fields %v, want %v", stream, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("stream %v: %s = %q, want %q", stream, k, got[k], v)
			}
		}
		if !bytes.Equal(file, append(head, data...)) {
			t.Errorf("stream %v: the file part is %d bytes, not the %d of the audio", stream, len(file), len(head)+len(data))
		}
	}
	// A probe goes at temperature 0, whatever the extra body says.
	c := client(t, "openai-transcription", Options{})
	probe := string(c.Body(&Input{Model: "m", Extra: extra, Probe: true, Audio: &Audio{Name: "a.wav"}}))
	if strings.Count(probe, `name="temperature"`) != 1 || !strings.Contains(probe, "name=\"temperature\"\r\n\r\n0\r\n") {
		t.Errorf("a probe's form:\n%s", probe)
	}
}

// OpenAI's events (deltas, then done with the usage: the output count is
// the server's) and vLLM's chunks (choices[0].delta.content, a usage chunk
// with no choices, [DONE]) give the same record, whatever the splits.
func TestTranscriptionStreams(t *testing.T) {
	c := client(t, "openai-transcription", Options{Stream: true})
	openai := `data: {"type":"transcript.text.delta","delta":"the"}

data: {"type":"transcript.text.delta","delta":" model"}

data: {"type":"transcript.text.delta","delta":" serves"}

data: {"type":"transcript.text.done","text":"the model serves","usage":{"type":"tokens","input_tokens":250,"output_tokens":3,"total_tokens":253}}

`
	vllm := `data: {"id":"trsc-1","object":"transcription.chunk","created":1,"model":"w","choices":[{"delta":{"content":"the"}}]}

data: {"id":"trsc-1","object":"transcription.chunk","created":1,"model":"w","choices":[{"delta":{"content":" model"}}]}

data: {"id":"trsc-1","object":"transcription.chunk","created":1,"model":"w","choices":[{"delta":{"content":" serves"},"finish_reason":"stop","stop_reason":null}]}

data: {"id":"trsc-1","object":"transcription.chunk","created":1,"model":"w","choices":[],"usage":{"prompt_tokens":250,"completion_tokens":3,"total_tokens":253}}

data: [DONE]

`
	for name, body := range map[string]string{"openai": openai, "vllm": vllm} {
		for seed := range 20 {
			rec := parse(c, []byte(body), seed, 0, 0)
			check(t, name, rec, want{true, "the model serves", 3, 0, 2, ""})
			if rec.OutputSource != record.OutputServer || rec.Stream != record.StreamRead {
				t.Fatalf("%s: output from %v, stream flags %v", name, rec.OutputSource, rec.Stream)
			}
		}
	}
	// Cut before its end, either stream is incomplete.
	for name, body := range map[string]string{"openai": openai[:strings.Index(openai, `data: {"type":"transcript.text.done"`)], "vllm": vllm[:strings.Index(vllm, "data: [DONE]")]} {
		rec := parse(c, []byte(body), 1, 0, 0)
		if rec.Success || rec.ErrorKind != record.KindIncomplete {
			t.Errorf("%s without its end: success %v, %s %q", name, rec.Success, rec.ErrorKind, rec.Error)
		}
	}
}

// Not streamed, the reply is {"text": ...} with or without usage, or the
// text itself (response_format text); an error object is the server's.
func TestTranscriptionWhole(t *testing.T) {
	c := client(t, "openai-transcription", Options{})
	rec := parse(c, []byte(`{"text":"hello there","usage":{"type":"tokens","input_tokens":9,"output_tokens":2,"total_tokens":11}}`), 0, 0, 0)
	check(t, "json", rec, want{true, "hello there", 2, 0, 0, ""})
	rec = parse(c, []byte("hello there\n"), 0, 0, 0)
	check(t, "text", rec, want{true, "hello there", 0, 0, 0, ""}) // no tokenizer here: no count
	rec = parse(c, []byte(`{"error":{"message":"bad audio"}}`), 0, 0, 0)
	check(t, "error", rec, want{false, "", 0, 0, 0, "bad audio"})
	rec = parse(c, []byte(`{"duration":3}`), 0, 0, 0)
	check(t, "no text", rec, want{false, "", 0, 0, 0, `no "text" string`})
}

// The record counts the uploaded audio: its bytes and seconds.
func TestTranscriptionCountsAudio(t *testing.T) {
	rec := &record.Record{}
	countAudioIn(&Input{Audio: &Audio{Head: make([]byte, 44), Data: make([]byte, 32000), Seconds: 1}}, rec)
	if rec.AudioBytes != 32044 || rec.AudioSeconds != 1 {
		t.Errorf("%d bytes, %v s", rec.AudioBytes, rec.AudioSeconds)
	}
}
