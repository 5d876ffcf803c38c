package report

import (
	"os"
	"strings"
	"testing"

	"benchserve/metrics"
	"benchserve/serverctl"
)

func scrapeOf(t *testing.T, text string) serverctl.Scrape {
	t.Helper()
	fams, err := serverctl.ParseMetrics([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return serverctl.Scrape{Fams: fams}
}

func rowText(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.Label + " " + r.Value + "\n")
	}
	return b.String()
}

// llama.cpp's series (llama-server --metrics) fill the server view: its
// requests processing and deferred, its prompt tokens (with the note that
// they leave out the cached ones) and its generated tokens beside the
// client's.
func TestServerViewLlamaCpp(t *testing.T) {
	before, err := os.ReadFile("../serverctl/testdata/metrics/llama-cpp.txt")
	if err != nil {
		t.Fatal(err)
	}
	after := strings.NewReplacer("llamacpp:tokens_predicted_total 3469", "llamacpp:tokens_predicted_total 3589",
		"llamacpp:prompt_tokens_total 6886", "llamacpp:prompt_tokens_total 7386",
		"llamacpp:requests_processing 0", "llamacpp:requests_processing 8",
		"llamacpp:requests_deferred 0", "llamacpp:requests_deferred 2").Replace(string(before))
	v := metrics.ServerSummary(serverctl.Snapshots([]serverctl.Scrape{scrapeOf(t, string(before)), scrapeOf(t, after)}), 0)
	got := rowText(serverRows(&v, "", metrics.Summary{TotalInput: 3566, TotalOutput: 120}))
	for _, want := range []string{
		"Running requests (mean / max): 4.00 / 8.00\n",
		"Waiting requests (mean / max): 1.00 / 2.00\n",
		"Prompt tokens (server): 500 (client 3566): llama.cpp counts only the tokens not found in its cache\n",
		"Generated tokens (server): 120 (client 120)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rows lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "none with a name") {
		t.Errorf("known names called unknown:\n%s", got)
	}
}

// TGI counts tokens in histograms and Triton's TensorRT-LLM backend tells
// its request counts apart by a label: both are read.
func TestServerViewTGITriton(t *testing.T) {
	tgi := func(gen, queue string) string {
		return `# TYPE tgi_queue_size gauge
tgi_queue_size ` + queue + `
# TYPE tgi_batch_current_size gauge
tgi_batch_current_size 4
# TYPE tgi_request_generated_tokens histogram
tgi_request_generated_tokens_bucket{le="+Inf"} 3
tgi_request_generated_tokens_sum ` + gen + `
tgi_request_generated_tokens_count 3
`
	}
	v := metrics.ServerSummary(serverctl.Snapshots([]serverctl.Scrape{scrapeOf(t, tgi("0", "0")), scrapeOf(t, tgi("300", "6"))}), 0)
	got := rowText(serverRows(&v, "", metrics.Summary{TotalOutput: 300}))
	for _, want := range []string{"Running requests (mean / max): 4.00 / 4.00\n", "Waiting requests (mean / max): 3.00 / 6.00\n", "Generated tokens (server): 300 (client 300)\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("TGI rows lack %q:\n%s", want, got)
		}
	}
	triton := func(active, fraction string) string {
		return `# TYPE nv_trt_llm_request_metrics gauge
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="max",version="1"} 512
nv_trt_llm_request_metrics{model="tensorrt_llm",request_type="active",version="1"} ` + active + `
# TYPE nv_trt_llm_kv_cache_block_metrics gauge
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="max",model="tensorrt_llm",version="1"} 6239
nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type="fraction",model="tensorrt_llm",version="1"} ` + fraction + `
`
	}
	v = metrics.ServerSummary(serverctl.Snapshots([]serverctl.Scrape{scrapeOf(t, triton("2", "0.1")), scrapeOf(t, triton("6", "0.3"))}), 0)
	got = rowText(serverRows(&v, "", metrics.Summary{}))
	for _, want := range []string{"Running requests (mean / max): 4.00 / 6.00\n", "KV cache usage (%, mean / max): 20.00 / 30.00\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("Triton rows lack %q:\n%s", want, got)
		}
	}
}

// Series with names the view does not know get one line saying so.
func TestServerViewUnknownNames(t *testing.T) {
	text := "# TYPE myengine_tokens_total counter\nmyengine_tokens_total 5\n# TYPE myengine_busy gauge\nmyengine_busy 1\n"
	v := metrics.ServerSummary(serverctl.Snapshots([]serverctl.Scrape{scrapeOf(t, text), scrapeOf(t, text)}), 0)
	got := rowText(serverRows(&v, "", metrics.Summary{}))
	want := "Server metrics: 2 series read, none with a name benchserve knows (it knows those of vLLM, SGLang, llama.cpp, TGI and TRT-LLM on Triton); they are in server_metrics\n"
	if strings.Count(got, "none with a name") != 1 || !strings.Contains(got, want) {
		t.Errorf("rows:\n%s", got)
	}
}
