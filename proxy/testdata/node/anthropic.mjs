// The official Anthropic TypeScript SDK through the proxy, as a harness
// uses it: baseURL is the proxy, Promptloom-Call is a per-request header,
// retries are the SDK's own (maxRetries 2, retry-after-ms honoured).
import Anthropic from '@anthropic-ai/sdk';
import { env, system, staleSystem, describe, run } from './common.mjs';

const client = new Anthropic({ apiKey: env.key, baseURL: env.url });
const model = 'claude-sonnet-4-5';
const call = (name) => ({ headers: { 'Promptloom-Call': name } });
const text = (m) => m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
const tools = [{
  name: 'read_file',
  description: 'Read a file of the repository.',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
}];

await run({
  // Two turns: the model asks for a tool, the harness answers it.
  async turns() {
    const messages = [{ role: 'user', content: 'What is in main.go?' }];
    const first = await client.messages.create({ model, max_tokens: 256, system, tools, messages }, call('turn-1'));
    const use = first.content.find((b) => b.type === 'tool_use');
    messages.push({ role: 'assistant', content: first.content });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'package main' }] });
    const second = await client.messages.create({ model, max_tokens: 256, system, tools, messages }, call('turn-2'));
    return {
      first: { text: text(first), stop: first.stop_reason, tool: { id: use.id, name: use.name, input: use.input } },
      second: { text: text(second), stop: second.stop_reason },
    };
  },
  // A stream, assembled by the SDK's MessageStream.
  async stream() {
    const s = client.messages.stream(
      { model, max_tokens: 256, system, messages: [{ role: 'user', content: 'Say something long.' }] }, call('stream'));
    let deltas = 0;
    s.on('text', () => deltas++);
    const m = await s.finalMessage();
    return { text: text(m), deltas, stop: m.stop_reason, output_tokens: m.usage.output_tokens };
  },
  // The upstream answers 429 (retry-after-ms 1) then 200: the SDK retries.
  async retry() {
    const m = await client.messages.create(
      { model, max_tokens: 256, system, messages: [{ role: 'user', content: 'Are you there?' }] }, call('retry'));
    return { text: text(m) };
  },
  // A stale system prompt: the proxy refuses it, in Anthropic's error shape.
  async stale() {
    try {
      await client.messages.create(
        { model, max_tokens: 256, system: staleSystem, messages: [{ role: 'user', content: 'hi' }] }, call('stale'));
      return { error: null };
    } catch (e) {
      return { error: describe(e), badRequest: e instanceof Anthropic.BadRequestError };
    }
  },
});
