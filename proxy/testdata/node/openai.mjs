// The official OpenAI TypeScript SDK through the proxy: baseURL is the
// proxy's /v1, Promptloom-Call is a per-request header, retries are the
// SDK's own (maxRetries 2, retry-after-ms honoured). Chat Completions for
// the turns, the retry and the refusal; a stream of each API.
import OpenAI from 'openai';
import { env, system, staleSystem, describe, run } from './common.mjs';

const client = new OpenAI({ apiKey: env.key, baseURL: env.url + '/v1' });
const model = 'gpt-4.1';
const call = (name) => ({ headers: { 'Promptloom-Call': name } });
const tools = [{
  type: 'function',
  function: {
    name: 'read_file',
    description: 'Read a file of the repository.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
}];

await run({
  // Two turns: the model asks for a tool, the harness answers it.
  async turns() {
    const messages = [{ role: 'system', content: system }, { role: 'user', content: 'What is in main.go?' }];
    const first = await client.chat.completions.create({ model, messages, tools }, call('turn-1'));
    const msg = first.choices[0].message;
    const tc = msg.tool_calls[0];
    messages.push(msg);
    messages.push({ role: 'tool', tool_call_id: tc.id, content: 'package main' });
    const second = await client.chat.completions.create({ model, messages, tools }, call('turn-2'));
    return {
      first: {
        text: msg.content, stop: first.choices[0].finish_reason,
        tool: { id: tc.id, name: tc.function.name, input: JSON.parse(tc.function.arguments) },
      },
      second: { text: second.choices[0].message.content, stop: second.choices[0].finish_reason },
    };
  },
  // A Chat Completions stream, assembled by the SDK's ChatCompletionStream.
  async stream() {
    const s = client.chat.completions.stream({
      model, stream_options: { include_usage: true },
      messages: [{ role: 'system', content: system }, { role: 'user', content: 'Say something long.' }],
    }, call('stream'));
    let deltas = 0;
    s.on('content', () => deltas++);
    const c = await s.finalChatCompletion();
    return { text: c.choices[0].message.content, deltas, stop: c.choices[0].finish_reason, output_tokens: c.usage?.completion_tokens ?? null };
  },
  // A Responses API stream, assembled by the SDK's ResponseStream.
  async responses() {
    const s = client.responses.stream({ model, instructions: system, input: 'Say something else.' }, call('responses'));
    let deltas = 0;
    s.on('response.output_text.delta', () => deltas++);
    const r = await s.finalResponse();
    return { text: r.output_text, deltas, status: r.status, output_tokens: r.usage?.output_tokens ?? null };
  },
  // The upstream answers 429 (retry-after-ms 1) then 200: the SDK retries.
  async retry() {
    const c = await client.chat.completions.create({
      model, messages: [{ role: 'system', content: system }, { role: 'user', content: 'Are you there?' }],
    }, call('retry'));
    return { text: c.choices[0].message.content };
  },
  // A stale system prompt: the proxy refuses it, in OpenAI's error shape.
  async stale() {
    try {
      await client.chat.completions.create({
        model, messages: [{ role: 'system', content: staleSystem }, { role: 'user', content: 'hi' }],
      }, call('stale'));
      return { error: null };
    } catch (e) {
      return { error: { ...describe(e), code: e.code ?? null }, badRequest: e instanceof OpenAI.BadRequestError };
    }
  },
});
