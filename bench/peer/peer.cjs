// The peer side of bench/peer: the same prioritized chunks rendered by
// @vscode/prompt-tsx in process, held to the same budget, bytes as tokens.
// Usage: node peer.cjs CHUNKS.json BUDGET RUNS
// Prints the median milliseconds of RUNS renders (after one warm-up) and
// how many chunks survived.
'use strict';
const fs = require('fs');
const tsx = require('@vscode/prompt-tsx');
const { PromptElement, SystemMessage, TextChunk, OutputMode, Raw, renderPrompt } = tsx;

const [file, budgetArg, runsArg] = process.argv.slice(2);
const chunks = JSON.parse(fs.readFileSync(file, 'utf8'));
const budget = Number(budgetArg);
const runs = Number(runsArg || 3);

// Bytes as tokens, as promptloom's --counter bytes.
const bytes = (s) => Buffer.byteLength(s, 'utf8');
const tokenizer = {
  mode: OutputMode.Raw,
  tokenLength(part) {
    return part.type === Raw.ChatCompletionContentPartKind.Text ? bytes(part.text) : 0;
  },
  countMessageTokens(message) {
    let n = 0;
    for (const part of message.content) {
      if (part.type === Raw.ChatCompletionContentPartKind.Text) n += bytes(part.text);
    }
    return n;
  },
};

// One system message of prioritized chunks: prompt-tsx prunes the lowest
// priority first until the prompt fits, as promptloom sheds the lowest rank.
class Prompt extends PromptElement {
  render() {
    return vscpp(SystemMessage, null,
      ...this.props.chunks.map((c) => vscpp(TextChunk, { priority: c.rank }, c.text)));
  }
}

async function once() {
  const start = process.hrtime.bigint();
  const out = await renderPrompt(Prompt, { chunks }, { modelMaxPromptTokens: budget }, tokenizer);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  return { ms, tokens: out.tokenCount };
}

(async () => {
  await once();
  const times = [];
  let last;
  for (let i = 0; i < runs; i++) {
    last = await once();
    times.push(last.ms);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ median_ms: times[Math.floor(times.length / 2)], runs: times, tokens: last.tokens }));
})().catch((e) => { console.error(e); process.exit(1); });
