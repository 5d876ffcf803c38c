package sim

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"benchserve/internal/audiofile"
)

// form is a transcription request's multipart body and its Content-Type.
func form(t *testing.T, file []byte, fields ...string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	if file != nil {
		f, _ := w.CreateFormFile("file", "a.wav")
		f.Write(file)
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

func postForm(t *testing.T, url, ct string, body []byte) reply {
	t.Helper()
	resp, err := http.Post(url, ct, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, body: b}
}

// /v1/audio/transcriptions: 2.5 words a second of audio, as JSON with the
// usage, as text, or as transcript.text.delta events (one a word, the
// text joined from them) ended by transcript.text.done; what is not a
// form with a WAV or FLAC file is refused with the parameter named. The
// words depend on the audio alone: one file, one transcript.
func TestTranscription(t *testing.T) {
	_, base := newTestServer(t, func(c *Config) { c.TranscriptionRTF = 1e6 })
	url := base + "/v1/audio/transcriptions"
	wav := append(audiofile.AppendWAVHeader(nil, 16000, 1, 64000), make([]byte, 64000)...) // 2 s: 5 words

	ct, body := form(t, wav, "model", "benchserve-sim")
	r := postForm(t, url, ct, body)
	d := decode[struct {
		Text  string
		Usage struct {
			OutputTokens int `json:"output_tokens"`
		}
	}](t, r.body)
	if r.status != 200 || len(strings.Fields(d.Text)) != 5 || d.Usage.OutputTokens != 5 {
		t.Fatalf("json: %d %s", r.status, r.body)
	}
	ct, body = form(t, wav, "response_format", "text")
	if r := postForm(t, url, ct, body); r.status != 200 || strings.TrimSpace(string(r.body)) != d.Text {
		t.Errorf("text: %d %q, want %q", r.status, r.body, d.Text)
	}

	ct, body = form(t, wav, "stream", "true")
	evs := events(t, postForm(t, url, ct, body).body)
	var joined string
	for _, e := range evs[:len(evs)-1] {
		x := decode[struct{ Type, Delta string }](t, []byte(e))
		if x.Type != "transcript.text.delta" {
			t.Fatalf("event %s", e)
		}
		joined += x.Delta
	}
	done := decode[struct{ Type, Text string }](t, []byte(evs[len(evs)-1]))
	if len(evs) != 6 || joined != d.Text || done.Type != "transcript.text.done" || done.Text != d.Text {
		t.Errorf("stream: %d events, deltas %q, done %+v; want %q", len(evs), joined, done, d.Text)
	}

	type bad struct {
		ct    string
		body  []byte
		param string
	}
	mk := func(file []byte, param string, fields ...string) bad {
		ct, body := form(t, file, fields...)
		return bad{ct, body, param}
	}
	for name, c := range map[string]bad{
		"no file":  mk(nil, "file", "model", "benchserve-sim"),
		"not wav":  mk([]byte("ID3 mp3"), "file"),
		"not form": {"application/json", []byte(`{"file":"x"}`), ""},
		"format":   mk(wav, "response_format", "response_format", "srt"),
	} {
		r := postForm(t, url, c.ct, c.body)
		if r.status != 400 || c.param != "" && !strings.Contains(string(r.body), `"param":"`+c.param+`"`) {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
}
