// Writes tokenizer/testdata/golden/tiktoken.json.gz: ids from OpenAI's tiktoken
// (Rust, through its WASM build) for the built-in encodings, over a corpus
// made here from a fixed seed. benchserve's TestTiktokenGolden must match.
//   node tools/tokgolden/tiktoken.js
const fs = require("fs");
const path = require("path");
const { get_encoding } = require("tiktoken");

const alphabet = ["a", "b", "Z", "e", "é", "ß", "ı", "İ", "ǅ", " ", "  ", "\n", "\r\n", "\t", "0", "12", "345",
  "'s", "'LL", "’", "!", "?!", ".", "/", "//", "世", "界", "日本", "한", "ب", "😀", "👩‍💻", "\u0301", "a\u0301",
  "\u00a0", "\u2028", "<|endoftext|>", "https://x.y/z?q=1", "x_y", "$", "€", "\x00", "\x1b[", "\x7f", "ǅa", "ＡＢ"];
let seed = 12345;
function rnd(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; }
const texts = [];
for (let i = 0; i < 2000; i++) {
  let s = "";
  const k = rnd(30);
  for (let j = 0; j < k; j++) s += alphabet[rnd(alphabet.length)];
  texts.push(s);
}
texts.push("a".repeat(500), " ".repeat(300), "1234567".repeat(50), "ab ".repeat(400), "\n    \n", "a\x7fb");
// Prose, code, numbers, CJK and emoji: mixedText(4096) of tiktoken_test.go.
function mixedText(n) {
  const parts = [
    "The quick brown fox jumps over the lazy dog. ",
    "func main() {\n\tfmt.Println(\"hello, world\")\n}\n",
    "Revenue grew 12.5% to $3,141,592 in Q3 2024; margins held at 0.618. ",
    "机器学习模型的推理速度很重要。",
    "Les élèves étudient l'histoire de l'Europe. ",
    "🚀🔥 emoji run 🦀🐍 ",
    "    indented    spaces\n\n\n",
    "<div class=\"row\"><span>42</span></div>\n",
  ];
  let s = "";
  for (let i = 0; Buffer.byteLength(s) < n; i++) s += parts[(i * 7 + Math.floor(i / parts.length)) % parts.length];
  return s;
}
texts.push(mixedText(4096));
const out = { texts, ids: {} };
for (const name of ["o200k_base", "cl100k_base"]) {
  const enc = get_encoding(name);
  out.ids[name] = texts.map((t) => Array.from(enc.encode_ordinary(t)));
  enc.free();
}
const file = path.join(__dirname, "..", "..", "tokenizer", "testdata", "golden", "tiktoken.json.gz");
fs.writeFileSync(file, require("zlib").gzipSync(JSON.stringify(out), { level: 9 }));
console.log("wrote", file, texts.length, "texts");
