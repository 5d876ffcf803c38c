package jsonscan

import (
	"encoding/json"
	"testing"
)

var benchDoc = []byte(`{"id":"cmpl-8a1f0c2e9b7d4e3f","object":"text_completion","created":1732900000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":" the","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":null}`)

func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if _, err := Parse(benchDoc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdValid(b *testing.B) {
	b.SetBytes(int64(len(benchDoc)))
	for b.Loop() {
		if !json.Valid(benchDoc) {
			b.Fatal("invalid")
		}
	}
}
